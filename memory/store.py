"""The context memory (Algorithm 1's ``sc_mem``): a run's speeches, chunked, in a chromadb collection that the
analyzer searches by similarity (``MemorySettings.retrieval``).

Only retrieval reads it, so it exists only in runs with retrieval on: the speeches go in with one upsert when the
run's first analysis starts (``index`` metadata, so a query for speech *i* filters to ``index < i`` and never sees a
later speech), and the collection is deleted when the run finishes (unless ``keep``). Collections are named by run
id, so concurrent runs never see each other's memories.

The analysis memory (``ca_mem``) is not here: it is the graph state. Each dimension column accumulates its own
analyses in its ``analyses`` key, the next analysis and the column's judgment read them from there, LangGraph
checkpoints them with the rest of the run (so a run under a checkpointer resumes with them), and the result carries
them. A second copy in chromadb was never searched by similarity and existed only to be kept in step."""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import re
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import Any

import chromadb
from chromadb.config import Settings as ChromaSettings

from debatrix.core.errors import ConfigurationError, ServiceUnavailable
from debatrix.core.models import Debate
from debatrix.core.settings import MemorySettings
from debatrix.core.prompting import encoding

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


def opening_lock(path: str) -> Path:
    """The lock file the openings of the persistent memory folder ``path`` take turns under."""
    digest = hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"debatrix-memory-{digest}.lock"


def _persistent(path: str, chroma: ChromaSettings) -> Any:
    """A persistent client on ``path``. Runs started at once on one folder race to create chromadb's tables and
    lock its SQLite file ("table collections already exists", "database is locked"): the clients are opened one at
    a time, under a lock file named after the folder in the temporary folder (the memory folder holds chromadb's
    files only); one that cannot be opened is a one-line error before any call."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
        with open(opening_lock(path), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return chromadb.PersistentClient(path=path, settings=chroma)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    except Exception as e:  # chromadb's InternalError, sqlite3's OperationalError, OSError
        raise ConfigurationError(f"cannot open the memory folder {path}: {str(e).splitlines()[0][:200]}") from None


class MemoryStore:
    """Holds one chromadb client (embedded, persistent or HTTP) for the runs of a judge context."""

    def __init__(self, settings: MemorySettings):
        self.settings = settings
        self._client: Any = None
        self._lock = threading.Lock()
        self._runs: dict[str, ContextMemory] = {}
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
            return _persistent(str(s.path), chroma)
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

    def context(self, run_id: str, debate: Debate) -> ContextMemory:
        """The run's context memory, opened (and given the debate's speeches) once."""
        with self._runs_lock:
            mem = self._runs.get(run_id)
            if mem is None:
                mem = self._runs[run_id] = ContextMemory(self, run_id, debate)
            return mem

    async def acontext(self, run_id: str, debate: Debate) -> ContextMemory:
        """:meth:`context` without a thread hand-off once the run's memory is open."""
        mem = self._runs.get(run_id)
        return mem if mem is not None else await asyncio.to_thread(self.context, run_id, debate)

    def finish(self, run_id: str) -> None:
        """End of a run: delete its context memory unless ``keep``."""
        with self._runs_lock:
            opened = self._runs.pop(run_id, None)
        if opened is None or self.settings.keep:
            return
        try:
            self.client.delete_collection(opened.name)
        except Exception:  # already gone (another process finished the same run id)
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



class ContextMemory:
    """One run's speeches, chunked, searchable by similarity."""

    def __init__(self, store: MemoryStore, run_id: str, debate: Debate):
        self.store = store
        self.name = self.name_for(run_id)
        self.collection = store.client.get_or_create_collection(
            self.name, embedding_function=make_embedding(store.settings.embedding))
        self.add_speeches(debate)

    @staticmethod
    def name_for(run_id: str) -> str:
        return _SAFE.sub("-", f"dbx-{run_id}")[:500] + "-ctx"

    def add_speeches(self, debate: Debate) -> int:
        """Every speech, chunked, in one upsert (a repeated run id rewrites the same ids); returns the chunks."""
        ids: list[str] = []
        docs: list[str] = []
        metas: list[dict[str, Any]] = []
        for index, speech in enumerate(debate.speeches):
            chunks = chunk_text(speech.content, self.store.settings.chunk_tokens)
            ids += [f"s{index:04d}-c{k:04d}" for k in range(len(chunks))]
            docs += chunks
            metas += [{"index": index, "speaker": speech.speaker, "chunk": k} for k in range(len(chunks))]
        if ids:
            self.collection.upsert(ids=ids, documents=docs, metadatas=metas)
        return len(ids)

    def relevant(self, index: int, text: str, top_k: int) -> list[dict[str, Any]]:
        """Chunks of earlier speeches nearest to ``text``, in debate order."""
        if index == 0:
            return []
        got = self.collection.query(query_texts=[text[:4000]], n_results=top_k, where={"index": {"$lt": index}})
        items = [{"index": m["index"], "speaker": m["speaker"], "chunk": m["chunk"], "text": d}
                 for d, m in zip(got["documents"][0], got["metadatas"][0])]
        return sorted(items, key=lambda x: (x["index"], x["chunk"]))
