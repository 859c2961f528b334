"""Per-debate, per-dimension memories on chromadb.

*Context memory* holds the speeches, chunked, with speaker/index metadata; *analysis memory* holds the judge's own
analysis of each speech. Collections are named by run id and dimension, so runs never see each other's memories and
a resumed run finds its own (writes are upserts, so repeating a step is harmless)."""

from __future__ import annotations

import re
import threading
from typing import Any

import chromadb
from chromadb.config import Settings as ChromaSettings

from debatrix.errors import ConfigurationError
from debatrix.models import SpeechAnalysis
from debatrix.settings import MemorySettings
from debatrix.tokens import encoding

from .embeddings import make_embedding

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
        self._columns: dict[tuple[str, str], ColumnMemory] = {}
        self._columns_lock = threading.Lock()

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
            return chromadb.HttpClient(host=s.host, port=s.port, settings=chroma)
        except Exception as e:  # chromadb raises plain ValueError/ConnectionError here
            raise ConfigurationError(f"cannot reach the chromadb server at {s.host}:{s.port}: {e}") from None

    def column(self, run_id: str, dimension: str) -> ColumnMemory:
        """The memories of one run's dimension, opened once (a server round trip per collection)."""
        key = (run_id, dimension)
        with self._columns_lock:
            col = self._columns.get(key)
            if col is None:
                col = self._columns[key] = ColumnMemory(self, run_id, dimension)
            return col

    def drop(self, run_id: str, dimensions: list[str]) -> None:
        if self.settings.keep:
            return
        for dim in dimensions:
            with self._columns_lock:
                self._columns.pop((run_id, dim), None)
            for name in ColumnMemory.names(run_id, dim):
                try:
                    self.client.delete_collection(name)
                except Exception:  # already gone (never created, or dropped by another branch)
                    pass


class ColumnMemory:
    def __init__(self, store: MemoryStore, run_id: str, dimension: str):
        self.store = store
        ctx, ana = self.names(run_id, dimension)
        # Vectors matter only where memory is searched by similarity: the context memory when retrieval is on.
        # The analysis memory is read back in speech order, so it never pays for the neural embedder.
        retrieval = store.settings.retrieval
        self.context = store.client.get_or_create_collection(
            ctx, embedding_function=make_embedding(store.settings.embedding if retrieval else "hash"))
        self.analysis = store.client.get_or_create_collection(ana, embedding_function=make_embedding("hash"))
        self.dimension = dimension

    @staticmethod
    def names(run_id: str, dimension: str) -> tuple[str, str]:
        base = _SAFE.sub("-", f"dbx-{run_id}-{dimension}")[:500]
        return f"{base}-ctx", f"{base}-ana"

    def add_speech(self, index: int, speaker: str, text: str) -> int:
        chunks = chunk_text(text, self.store.settings.chunk_tokens)
        self.context.upsert(
            ids=[f"s{index:04d}-c{k:04d}" for k in range(len(chunks))],
            documents=chunks,
            metadatas=[{"index": index, "speaker": speaker, "chunk": k} for k in range(len(chunks))],
        )
        return len(chunks)

    def relevant(self, index: int, text: str, top_k: int) -> list[dict[str, Any]]:
        """Chunks of earlier speeches nearest to ``text``, in debate order."""
        if index == 0:
            return []
        got = self.context.query(query_texts=[text[:4000]], n_results=top_k, where={"index": {"$lt": index}})
        items = [{"index": m["index"], "speaker": m["speaker"], "chunk": m["chunk"], "text": d}
                 for d, m in zip(got["documents"][0], got["metadatas"][0])]
        return sorted(items, key=lambda x: (x["index"], x["chunk"]))

    def add_analysis(self, a: SpeechAnalysis) -> None:
        self.analysis.upsert(ids=[f"a{a.index:04d}"], documents=[a.analysis],
                             metadatas=[{"index": a.index, "speaker": a.speaker}])

    def analyses_before(self, index: int) -> list[SpeechAnalysis]:
        if index == 0:
            return []
        got = self.analysis.get(where={"index": {"$lt": index}})
        items = [SpeechAnalysis(dimension=self.dimension, index=m["index"], speaker=m["speaker"], analysis=d)
                 for d, m in zip(got["documents"], got["metadatas"])]
        return sorted(items, key=lambda a: a.index)
