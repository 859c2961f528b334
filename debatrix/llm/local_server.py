"""Child process that serves a GGUF model with llama.cpp (xllamacpp) on 127.0.0.1 until SIGTERM/SIGINT.

Started by :class:`debatrix.llm.local.LocalServer`; also dies when its parent dies (Linux ``PR_SET_PDEATHSIG``)."""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import sys


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except OSError:
            pass


def serve_model(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--context", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--cache-ram", type=int, default=2048, help="MiB of host RAM for the prompt cache")
    ap.add_argument("--alias", default="local")
    args = ap.parse_args(argv)
    _die_with_parent()
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.model
    params.model_alias = args.alias
    params.n_ctx = args.context
    params.n_parallel = args.parallel
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.port = args.port
    params.hostnames = ["127.0.0.1"]
    params.cache_prompt = True
    # prompts of finished requests are kept in host RAM and restored when a later prompt shares a longer prefix
    # with one of them than with the slot's current one: a speech read for one dimension is not read again for
    # the next, even when other requests ran in between
    params.cache_ram_mib = args.cache_ram
    params.cache_idle_slots = True
    # "auto" leaves flash attention off on the CPU backend; on reads of several thousand tokens it is faster on
    # (debatrix.benchmarks.offline shows the speeds)
    params.flash_attn_type = xlc.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_ENABLED

    def handle(signum: int, frame: object) -> None:
        # at once: a clean shutdown of the server waits for the request in flight to finish generating (tens of
        # seconds on a CPU), and there is nothing to save (the prompt cache lives in this process's RAM)
        os._exit(0)

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
    server = xlc.Server(params)
    print(f"debatrix local server ready at {server.listening_address}", flush=True)
    while True:
        signal.pause() if hasattr(signal, "pause") else __import__("time").sleep(1)
    del server


if __name__ == "__main__":
    sys.exit(serve_model())
