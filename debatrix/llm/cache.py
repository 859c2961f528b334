"""An opt-in SQLite cache of LLM answers, keyed by the model's identity and settings, the request options (schema,
token cap, log probabilities) and the exact messages. A run killed at any point and started again with the same
cache pays for no call that had already been answered. Only complete answers are stored (a timeout or a cut-off
answer is not), one row per answer, committed as soon as it arrives.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, message_to_dict, messages_from_dict

from debatrix.core.errors import ConfigurationError

SCHEMA_VERSION = 1


class ResponseCache:
    def __init__(self, path: str | Path):
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
        self.hits = 0
        self.misses = 0

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

    def get(self, key: str) -> AIMessage | None:
        with self._lock:
            row = self._db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        message = messages_from_dict([json.loads(row[0])])[0]
        return message if isinstance(message, AIMessage) else None

    def put(self, key: str, node: str, answer: AIMessage) -> None:
        data = json.dumps(message_to_dict(answer), default=str, ensure_ascii=False)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)", (key, time.time(), node, data))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
