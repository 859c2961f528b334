"""Per-run memories on chromadb: a context memory and an analysis memory, partitioned by dimension.

*Context memory* holds the debate's speeches, chunked, with speaker/index metadata (every dimension reads the same
transcript, so one copy per run serves them all); *analysis memory* holds each dimension's own analysis of each
speech (ids and metadata carry the dimension, and a dimension reads only its own). Collections are named by run id,
so runs never see each other's memories, and a resumed run finds its own (writes are upserts, so repeating a step
is harmless).

chromadb is the store of record, but every operation costs milliseconds of CPU and dozens of thread hand-offs
(measured here: ~5 ms per small upsert, ~25 ms for the 42 speech chunks of debateart_0466, ~2.5 ms per filtered get), which
over many concurrent runs cost more than the model's own latency. So a run touches chromadb a fixed few times,
whatever the number of speeches and dimensions: two collections opened; one read of what a resumed run wrote
earlier (skipped for a new run id); the speeches in one upsert when the run's memory opens, if anything
will read them (retrieval, which filters on ``index < i`` so no speech ever sees a later one, or ``keep``; with
neither, as in the paper's default, nothing ever reads the context memory and the write would cost a quarter of a
16-debate batch's time); all analyses in one upsert when the run finishes (:meth:`RunMemory.flush`); two deletes
(unless ``keep``). In between, a dimension reads its earlier analyses from an in-process mirror of what it wrote;
retrieval queries go to chromadb."""

from __future__ import annotations

import asyncio
import re
import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import chromadb
from chromadb.config import Settings as ChromaSettings

from debatrix.errors import ConfigurationError, ServiceUnavailable
from debatrix.models import Debate, SpeechAnalysis
from debatrix.settings import MemorySettings
from debatrix.tokens import encoding

from .embeddings import make_embedding

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

_SAFE = re.compile(r"[^a-zA-Z0-9._-]")


def chunk_text(text: str, max_tokens: int, tokenizer: str = "o200k_base") -> list[str]:
    """Split on paragraphs, packing them up to ``max_tokens``; split paragraphs that are longer on tokens."""
    enc = encoding(tokenizer)
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for para in [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]:
        tokens = enc.encode(para, disallowed_special=())
        if len(tokens) > max_tokens:
            if current:
                chunks.append("\n\n".join(current))
                current, size = [], 0
            chunks.extend(enc.decode(tokens[i : i + max_tokens]) for i in range(0, len(tokens), max_tokens))
            continue
        if size + len(tokens) > max_tokens and current:
            chunks.append("\n\n".join(current))
            current, size = [], 0
        current.append(para)
        size += len(tokens)
    if current:
        chunks.append("\n\n".join(current))
    return chunks


class MemoryStore:
    """Holds one chromadb client (embedded, persistent or HTTP) for the runs of a judge context."""

    def __init__(self, settings: MemorySettings):
        self.settings = settings
        self._client: Any = None
        self._lock = threading.Lock()
        self._runs: dict[str, RunMemory] = {}
        self._runs_lock = threading.Lock()

    @property
    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _connect(self) -> Any:
        chroma = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        s = self.settings
        if s.backend == "ephemeral":
            return chromadb.EphemeralClient(settings=chroma)
        if s.backend == "persistent":
            if s.path is None:
                raise ConfigurationError("memory.backend=persistent needs memory.path")
            return chromadb.PersistentClient(path=str(s.path), settings=chroma)
        try:
            client = chromadb.HttpClient(host=s.host, port=s.port, settings=chroma)
            client.heartbeat()
            return client
        except Exception as e:  # chromadb raises plain ValueError/ConnectionError here
            raise ServiceUnavailable(f"cannot reach the chromadb server at {s.host}:{s.port} "
                                     f"({type(e).__name__}); start it or choose --memory ephemeral") from None

    def check(self) -> None:
        """Open the memory backend now (a folder, a server), so a bad option or a server that is down is found
        before the first LLM call rather than after some were paid for."""
        _ = self.client

    def run(self, run_id: str, debate: Debate | None = None, resumed: bool = True) -> RunMemory:
        """The memories of one run, opened once; on opening, the debate's speeches go into the context memory when
        something will read them (retrieval, or ``keep`` for inspection afterwards). ``resumed=False``: a new run
        id, so there is nothing of it to read back from chromadb."""
        with self._runs_lock:
            mem = self._runs.get(run_id)
            if mem is None:
                mem = RunMemory(self, run_id, resumed=resumed)
                if debate is not None and (self.settings.retrieval or self.settings.keep):
                    mem.add_speeches(debate)
                self._runs[run_id] = mem
            return mem

    def column(self, run_id: str, dimension: str, debate: Debate | None = None,
               resumed: bool = True) -> ColumnMemory:
        """One dimension's view of the run's memories."""
        return ColumnMemory(self.run(run_id, debate, resumed), dimension)

    async def acolumn(self, run_id: str, dimension: str, debate: Debate | None = None,
                      resumed: bool = True) -> ColumnMemory:
        """:meth:`column` without a thread hand-off once the run's memory is open."""
        mem = self._runs.get(run_id)
        if mem is None:
            mem = await asyncio.to_thread(self.run, run_id, debate, resumed)
        return ColumnMemory(mem, dimension)

    def finish(self, run_id: str) -> None:
        """End of a run: write its analyses (one upsert), then delete its collections unless ``keep``."""
        with self._runs_lock:
            mem = self._runs.pop(run_id, None)
        if mem is not None:
            mem.flush()
        if self.settings.keep:
            return
        for name in RunMemory.names(run_id):
            try:
                self.client.delete_collection(name)
            except Exception:  # never created (the run failed before opening its memory)
                pass
        if self.settings.backend == "persistent":
            self._sweep()

    def _sweep(self) -> None:
        """chromadb leaves a deleted collection's index folder behind (one per run, forever): remove the index
        folders no segment refers to any more. Folders of live collections, ours or another process's, are
        referred to and stay."""
        root = Path(self.settings.path or ".")
        try:
            with sqlite3.connect(root / "chroma.sqlite3", timeout=30) as db:
                live = {row[0] for row in db.execute("SELECT id FROM segments")}
        except sqlite3.Error:
            return  # not the layout we know: leave everything as it is
        for folder in root.iterdir():
            if folder.is_dir() and _UUID.fullmatch(folder.name) and folder.name not in live:
                shutil.rmtree(folder, ignore_errors=True)


class RunMemory:
    def __init__(self, store: MemoryStore, run_id: str, resumed: bool = True):
        self.store = store
        ctx, ana = self.names(run_id)
        # Vectors matter only where memory is searched by similarity: the context memory when retrieval is on.
        # The analysis memory is read back in speech order, so it never pays for the neural embedder.
        retrieval = store.settings.retrieval
        self.context = store.client.get_or_create_collection(
            ctx, embedding_function=make_embedding(store.settings.embedding if retrieval else "hash"))
        self.analysis = store.client.get_or_create_collection(ana, embedding_function=make_embedding("hash"))
        # a resumed run's earlier analyses (a run id made by this store is new: nothing to read)
        got = self.analysis.get() if resumed else {"documents": [], "metadatas": []}
        self._analyses: dict[tuple[str, int], SpeechAnalysis] = {}
        for d, m in zip(got["documents"] or [], got["metadatas"] or []):
            a = SpeechAnalysis(dimension=m["dimension"], index=m["index"], speaker=m["speaker"], analysis=d)
            self._analyses[(a.dimension, a.index)] = a
        self._pending: dict[tuple[str, int], SpeechAnalysis] = {}
        self._lock = threading.Lock()

    @staticmethod
    def names(run_id: str) -> tuple[str, str]:
        base = _SAFE.sub("-", f"dbx-{run_id}")[:500]
        return f"{base}-ctx", f"{base}-ana"

    def add_speeches(self, debate: Debate) -> int:
        """Every speech, chunked, in one upsert; returns the number of chunks."""
        ids: list[str] = []
        docs: list[str] = []
        metas: list[dict[str, Any]] = []
        for index, speech in enumerate(debate.speeches):
            chunks = chunk_text(speech.content, self.store.settings.chunk_tokens)
            ids += [f"s{index:04d}-c{k:04d}" for k in range(len(chunks))]
            docs += chunks
            metas += [{"index": index, "speaker": speech.speaker, "chunk": k} for k in range(len(chunks))]
        if ids:
            self.context.upsert(ids=ids, documents=docs, metadatas=metas)
        return len(ids)

    def relevant(self, index: int, text: str, top_k: int) -> list[dict[str, Any]]:
        """Chunks of earlier speeches nearest to ``text``, in debate order."""
        if index == 0:
            return []
        got = self.context.query(query_texts=[text[:4000]], n_results=top_k, where={"index": {"$lt": index}})
        items = [{"index": m["index"], "speaker": m["speaker"], "chunk": m["chunk"], "text": d}
                 for d, m in zip(got["documents"][0], got["metadatas"][0])]
        return sorted(items, key=lambda x: (x["index"], x["chunk"]))

    def add_analysis(self, a: SpeechAnalysis) -> None:
        """Into the mirror now, into chromadb at the next :meth:`flush` (a repeated speech keeps the latest)."""
        with self._lock:
            self._analyses[(a.dimension, a.index)] = self._pending[(a.dimension, a.index)] = a

    def flush(self) -> int:
        """Write the analyses added since the last flush in one upsert; returns how many."""
        with self._lock:
            pending = list(self._pending.values())
            self._pending = {}
        if pending:
            self.analysis.upsert(
                ids=[f"{a.dimension}-a{a.index:04d}" for a in pending], documents=[a.analysis for a in pending],
                metadatas=[{"dimension": a.dimension, "index": a.index, "speaker": a.speaker} for a in pending])
        return len(pending)

    def analyses_before(self, dimension: str, index: int) -> list[SpeechAnalysis]:
        with self._lock:
            return sorted((a for (d, i), a in self._analyses.items() if d == dimension and i < index),
                          key=lambda a: a.index)


class ColumnMemory:
    """One dimension's context and analysis memory (a view of the run's collections)."""

    def __init__(self, run: RunMemory, dimension: str):
        self.run = run
        self.dimension = dimension

    def relevant(self, index: int, text: str, top_k: int) -> list[dict[str, Any]]:
        return self.run.relevant(index, text, top_k)

    def add_analysis(self, a: SpeechAnalysis) -> None:
        if a.dimension != self.dimension:
            raise ValueError(f"an analysis of {a.dimension} does not belong to the {self.dimension} memory")
        self.run.add_analysis(a)

    def analyses_before(self, index: int) -> list[SpeechAnalysis]:
        return self.run.analyses_before(self.dimension, index)
