"""Opt-in caches of LLM answers, keyed by the model's identity and settings, the request options (schema, token
cap, log probabilities) and the exact messages. A run killed at any point and started again with the same cache pays
for no call that had already been answered. Only complete answers are stored (a timeout or a cut-off answer is
not), one row per answer, committed as soon as it arrives.

Two stores: a SQLite file (the default, one machine) and a PostgreSQL database (``postgresql://...``), which
processes on several machines share. Either way a call is sent once: while one caller waits for the model's answer,
another asking the same call waits for that answer instead of sending it again (in one process by a lock per key;
across processes, with PostgreSQL, by an advisory lock per key, which the server releases if its holder dies).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import sqlite3
import threading
import time
import weakref
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from langchain_core.messages import AIMessage, BaseMessage, message_to_dict, messages_from_dict

from debatrix.core.errors import ConfigurationError, DebatrixError

SCHEMA_VERSION = 1
POSTGRES_URL = re.compile(r"^postgres(ql)?(\+\w+)?://", re.IGNORECASE)


def is_postgres(location: str | Path | None) -> bool:
    return isinstance(location, str) and bool(POSTGRES_URL.match(location))


class CacheUnavailable(DebatrixError):
    """The cache's store stopped answering (a database lost mid-run)."""


class AnswerCache:
    """What both stores share: the key, the answer's form, and sending a call once within this process."""

    def __init__(self) -> None:
        self._claims: dict[str, tuple[asyncio.Lock, int]] = {}

    @staticmethod
    def key(identity: dict[str, Any], options: dict[str, Any], messages: list[BaseMessage]) -> str:
        payload = {
            "v": SCHEMA_VERSION,
            "model": identity,
            "options": options,
            "messages": [{"type": m.type, "content": m.content,
                          "tool_calls": getattr(m, "tool_calls", None) or None} for m in messages],
        }
        blob = json.dumps(payload, sort_keys=True, default=str, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    @staticmethod
    def _encode(answer: AIMessage) -> str:
        return json.dumps(message_to_dict(answer), default=str, ensure_ascii=False)

    @staticmethod
    def _decode(row: Any) -> AIMessage | None:
        if row is None:
            return None
        message = messages_from_dict([json.loads(row[0])])[0]
        return message if isinstance(message, AIMessage) else None

    @contextlib.asynccontextmanager
    async def claimed(self, key: str) -> AsyncIterator[None]:
        """Held while one caller sends the call ``key`` and stores its answer: another caller of this process asking
        the same call waits here, then finds the answer stored."""
        lock, users = self._claims.get(key) or (asyncio.Lock(), 0)
        self._claims[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._claims[key]
            if users == 1:
                del self._claims[key]
            else:
                self._claims[key] = (lock, users - 1)

    def get(self, key: str) -> AIMessage | None:
        raise NotImplementedError

    def put(self, key: str, node: str, answer: AIMessage) -> None:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def keep(self, key: str, node: str, answer: AIMessage) -> Path | None:
        """An answer paid for that the store could not take: kept where the next opening of this cache stores it
        (None: nowhere to keep it)."""
        return None


class ResponseCache(AnswerCache):
    """The answers in a SQLite file."""

    def __init__(self, path: str | Path):
        super().__init__()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, created REAL NOT NULL, "
                             "node TEXT, answer TEXT NOT NULL)")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except sqlite3.DatabaseError as e:  # not SQLite, or damaged: say which file and what to do
            raise ConfigurationError(f"{self.path}: not a usable answer cache ({e}); delete the file (its answers "
                                     "are lost, the run pays for them again) or give another cache path") from None

    def get(self, key: str) -> AIMessage | None:
        with self._lock:
            row = self._db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        return self._decode(row)

    def put(self, key: str, node: str, answer: AIMessage) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)",
                             (key, time.time(), node, self._encode(answer)))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class PostgresCache(AnswerCache):
    """The answers in a PostgreSQL database that several processes (on several machines) share. ``connections``:
    the calls this process may send at once, each holding its call's advisory lock on a connection of its own
    while the model answers; reads and writes go through a separate pair of connections, so a caller holding a
    lock can always store its answer (sharing one pool, callers waiting for a connection while holding the others
    deadlocked the run)."""

    LOCK_POLL = 0.1  # seconds between tries for a lock another process holds (a try holds no thread while waiting)
    POOL_WAIT = 5.0  # seconds a call waits for a connection before the database counts as lost

    def __init__(self, url: str, connections: int = 8):
        super().__init__()
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise ConfigurationError("a postgresql:// answer cache needs psycopg: pip install "
                                     "'debatrix[postgres]'") from None
        from debatrix.core.settings import redact_url

        self.url = redact_url(url)
        url = POSTGRES_URL.sub("postgresql://", url)
        self._password = _password(url)
        self._size = max(1, connections)
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = \
            weakref.WeakKeyDictionary()
        try:  # once, directly, so a refusal shows the server's own reason (a pool only says it timed out)
            with psycopg.connect(url, autocommit=True, connect_timeout=15) as db:
                # one process creates the tables; another starting at the same moment waits for it
                db.execute("SELECT pg_advisory_lock(%s)", (_lock_id("debatrix schema"),))
                try:
                    db.execute("CREATE TABLE IF NOT EXISTS debatrix_answers (key TEXT PRIMARY KEY, created DOUBLE "
                               "PRECISION NOT NULL, node TEXT, answer TEXT NOT NULL)")
                    db.execute("CREATE TABLE IF NOT EXISTS debatrix_cache_meta (name TEXT PRIMARY KEY, value TEXT)")
                    db.execute("INSERT INTO debatrix_cache_meta VALUES ('schema_version', %s) ON CONFLICT DO NOTHING",
                               (str(SCHEMA_VERSION),))
                finally:
                    db.execute("SELECT pg_advisory_unlock(%s)", (_lock_id("debatrix schema"),))
        except psycopg.Error as e:
            raise ConfigurationError(f"{self.url}: the answer cache's database cannot be reached or used "
                                     f"({self._said(e)})") from None
        self._lost_reason: str | None = None
        self.unsaved = _unsaved_path(self.url)
        self._store_unsaved(url)
        # a connection is waited for at most POOL_WAIT: a database lost mid-run stops the run in seconds (each call
        # of a flow asked one after another would otherwise wait the pool's 30 s default)
        kwargs = {"autocommit": True, "connect_timeout": 5}
        self._pool = ConnectionPool(url, min_size=1, max_size=2, kwargs=kwargs, timeout=self.POOL_WAIT, open=True)
        self._locks = ConnectionPool(url, min_size=0, max_size=self._size, kwargs=kwargs, timeout=self.POOL_WAIT,
                                     open=True)

    def _said(self, e: BaseException) -> str:
        """An error's own words, one line, without the password."""
        text = " ".join(str(e).split()) or type(e).__name__
        return text.replace(self._password, "***") if self._password else text

    def _gate(self) -> asyncio.Semaphore:
        """At most ``connections`` calls of this process hold a lock connection; the others wait here, holding
        nothing (asyncio's primitives belong to one event loop: one gate per loop)."""
        loop = asyncio.get_running_loop()
        gate = self._gates.get(loop)
        if gate is None:
            gate = self._gates[loop] = asyncio.Semaphore(self._size)
        return gate

    def _try_lock(self, conn: Any, lock: int) -> bool:
        return bool(conn.execute("SELECT pg_try_advisory_lock(%s)", (lock,)).fetchone()[0])

    @contextlib.asynccontextmanager
    async def claimed(self, key: str) -> AsyncIterator[None]:
        import psycopg
        from psycopg_pool import PoolTimeout

        async with super().claimed(key), self._gate():  # once per process, so one connection per distinct call
            if self._lost_reason:  # known lost: fail at once (the pool would wait its timeout for every call)
                raise CacheUnavailable(self._lost_reason)
            lock = _lock_id(key)
            try:
                conn = await asyncio.to_thread(self._locks.getconn)
            except (psycopg.Error, PoolTimeout) as e:
                raise CacheUnavailable(self._lost(e)) from None
            try:
                try:
                    while not await asyncio.to_thread(self._try_lock, conn, lock):
                        await asyncio.sleep(self.LOCK_POLL)  # another process sends this call: wait for its answer
                except psycopg.Error as e:
                    raise CacheUnavailable(self._lost(e)) from None
                try:
                    yield
                finally:
                    # a connection lost with the database released its locks with it
                    with contextlib.suppress(psycopg.Error):
                        await asyncio.to_thread(conn.execute, "SELECT pg_advisory_unlock(%s)", (lock,))
            finally:
                with contextlib.suppress(psycopg.Error, PoolTimeout):
                    await asyncio.to_thread(self._locks.putconn, conn)

    def _lost(self, e: BaseException) -> str:
        self._lost_reason = f"the answer cache's database {self.url} stopped answering ({self._said(e)})"
        return self._lost_reason

    def _use(self, work: Any) -> Any:
        import psycopg
        from psycopg_pool import PoolTimeout

        if self._lost_reason:  # once lost, every use fails at once (the pool would wait its timeout for a connection)
            raise CacheUnavailable(self._lost_reason)
        try:
            with self._pool.connection() as db:
                return work(db)
        except (psycopg.Error, PoolTimeout) as e:
            raise CacheUnavailable(self._lost(e)) from None

    def keep(self, key: str, node: str, answer: AIMessage) -> Path:
        """Kept in a SQLite file of this user's cache folder, named for the database (its password left out), so
        a resume once the database is back stores it there first and pays for it no more."""
        # this user's alone, as the tokenizer cache is: the answers may quote the debates judged
        self.unsaved.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.unsaved.parent, 0o700)
        os.close(os.open(self.unsaved, os.O_CREAT | os.O_WRONLY, 0o600))
        os.chmod(self.unsaved, 0o600)  # SQLite gives its -wal and -shm files the database file's mode
        spill = ResponseCache(self.unsaved)
        try:
            spill.put(key, node, answer)
        finally:
            spill.close()
        return self.unsaved

    def _store_unsaved(self, url: str) -> None:
        """Answers a run paid for while this database was down, stored now; the file goes once they are in."""
        import psycopg

        if not self.unsaved.exists():
            return
        spill = sqlite3.connect(self.unsaved)
        try:
            rows = spill.execute("SELECT key, created, node, answer FROM answers").fetchall()
        except sqlite3.DatabaseError:
            rows = []
        finally:
            spill.close()
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=15) as db, db.cursor() as cur:
                cur.executemany("INSERT INTO debatrix_answers VALUES (%s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
                                rows)
        except psycopg.Error as e:
            raise ConfigurationError(f"{self.url}: the answers kept in {self.unsaved} while the database was down "
                                     f"cannot be stored ({self._said(e)})") from None
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.unsaved}{suffix}").unlink(missing_ok=True)

    def get(self, key: str) -> AIMessage | None:
        return self._decode(self._use(lambda db: db.execute("SELECT answer FROM debatrix_answers WHERE key = %s",
                                                            (key,)).fetchone()))

    def put(self, key: str, node: str, answer: AIMessage) -> None:
        self._use(lambda db: db.execute(
            "INSERT INTO debatrix_answers VALUES (%s, %s, %s, %s) ON CONFLICT (key) DO UPDATE SET "
            "created = EXCLUDED.created, node = EXCLUDED.node, answer = EXCLUDED.answer",
            (key, time.time(), node, self._encode(answer))))

    def __len__(self) -> int:
        return self._use(lambda db: db.execute("SELECT COUNT(*) FROM debatrix_answers").fetchone()[0])

    def close(self) -> None:
        self._pool.close()
        self._locks.close()


def _password(url: str) -> str | None:
    try:
        return urlsplit(url).password or None
    except ValueError:
        return None


def _unsaved_path(redacted_url: str) -> Path:
    """Where answers paid for while a database was down wait for it: one file per database, named by a hash of its
    address without the password."""
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "debatrix" / "unsaved"
    return root / f"{hashlib.sha256(redacted_url.encode()).hexdigest()[:20]}.sqlite"


def _lock_id(key: str) -> int:
    """An advisory lock's number for a key: 64 bits of its hash, as PostgreSQL's signed bigint."""
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def open_cache(location: str | Path, connections: int = 8) -> AnswerCache:
    """The cache at ``location``: a ``postgresql://`` URL, or a SQLite file's path."""
    if is_postgres(location):
        return PostgresCache(str(location), connections)
    return ResponseCache(location)
