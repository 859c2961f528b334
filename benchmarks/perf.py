"""Performance benchmark (a script, not a test): how much time the framework adds to the model's own.

Starts an OpenAI-compatible server on 127.0.0.1 that answers every request with schema-valid output after a fixed
latency L, then prints for each mode on a DebateArt and a BP debate: wall time, the critical-path bound
(sequential LLM rounds × L), their ratio, LLM calls and tokens; the throughput of 1, 4 and 16 concurrent debates
against the same debates judged one after another; the peak memory of one BP debate run (a child process); and the
judging process's CPU per LLM call on each transport.

    python -m debatrix.benchmarks.perf [--latency 0.2] [--modes debatrix,direct] [--concurrency 1,4,16]
                                       [--sections modes,throughput,memory,cpu,ray] [--cpu-calls 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from debatrix import JudgeSettings, LLMSettings, MemorySettings, load_debate
from debatrix.app.api import ajudge_debate
from debatrix.context import JudgeContext
from debatrix.core.models import Debate
from debatrix.core.results import Status
from debatrix.core.flow import flow_calls
from debatrix.core.modes import MODES, critical_rounds
from debatrix.app.runtime import settle_heap

from .base import data_root

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def debates() -> dict[str, Debate]:
    pb = data_root() / "panelbench"
    out = {}
    da = pb / "DebateArt" / "motion" / "debateart_0466.yml"
    bp = pb / "BP-Competition" / "motion" / "bp_020.yml"
    out["debateart_0466" if da.exists() else "school_uniforms"] = load_debate(
        da if da.exists() else EXAMPLES / "school_uniforms.yaml")
    out["bp_020" if bp.exists() else "bp_short"] = load_debate(bp if bp.exists() else EXAMPLES / "bp_short.yaml")
    return out


def settings_for(url: str, mode: str, in_flight: int | None) -> JudgeSettings:
    """``in_flight`` None: the default cap on requests in flight (which must not lengthen the critical path)."""
    cap = {} if in_flight is None else {"max_concurrency": in_flight}
    return JudgeSettings(mode=mode, llm=LLMSettings(base_url=url, model="fake-model", timeout=60, **cap),
                         memory=MemorySettings(embedding="hash"))


async def one(debate: Debate, s: JudgeSettings, ctx: JudgeContext | None = None) -> tuple[float, object]:
    started = time.perf_counter()
    result = await ajudge_debate(debate, s, context=ctx)
    if result.status is not Status.COMPLETE:
        raise SystemExit(f"{debate.id}/{s.mode}: {result.incomplete_reason}")
    return time.perf_counter() - started, result


async def modes_table(url: str, latency: float, modes: list[str]) -> None:
    print(f"\n## Modes (L = {latency * 1000:.0f} ms per LLM call)\n")
    print("| debate | mode | wall s | bound s (rounds × L) | ratio | LLM calls | prompt tok | completion tok |")
    print("|---|---|---|---|---|---|---|---|")
    for name, debate in debates().items():
        for mode in modes:
            s = settings_for(url, mode, None)
            await one(debate, s)  # warm-up: imports, first connections
            settle_heap()  # as the CLI does (see debatrix.app.runtime)
            wall, result = await one(debate, s)
            bound = critical_rounds(mode, len(debate.speeches), False, flow_calls(debate), cached=False) * latency
            u = result.usage
            print(f"| {name} | {mode} | {wall:.2f} | {bound:.2f} | {wall / bound:.2f} | {u.llm_calls} | "
                  f"{u.prompt_tokens} | {u.completion_tokens} |", flush=True)


async def throughput(url: str, latency: float, counts: list[int]) -> None:
    debate = next(iter(debates().values()))
    s = settings_for(url, "debatrix", 256)
    print(f"\n## Throughput: {debate.id}, mode debatrix, L = {latency * 1000:.0f} ms\n")
    print("| debates | sequential s | concurrent s | speed-up | debates/min concurrent | judge CPU s (concurrent) "
          "| CPU ms per LLM call |")
    print("|---|---|---|---|---|---|---|")
    ctx = await asyncio.to_thread(JudgeContext.create, s)
    try:
        await one(debate, s, ctx)
        settle_heap()
        for n in counts:
            started = time.perf_counter()
            for _ in range(n):
                await one(debate, s, ctx)
            sequential = time.perf_counter() - started
            started, cpu = time.perf_counter(), time.process_time()
            results = await asyncio.gather(*(one(debate, s, ctx) for _ in range(n)))
            concurrent = time.perf_counter() - started
            cpu = time.process_time() - cpu
            calls = sum(r.usage.llm_calls for _, r in results)
            print(f"| {n} | {sequential:.2f} | {concurrent:.2f} | {sequential / concurrent:.1f}× | "
                  f"{60 * n / concurrent:.0f} | {cpu:.2f} | {1000 * cpu / calls:.2f} |", flush=True)
    finally:
        ctx.close()


def peak_memory(url: str) -> None:
    name, debate = list(debates().items())[1]
    code = ("import asyncio, json, resource, sys\n"
            "from debatrix.benchmarks.perf import one, settings_for, debates\n"
            "d = list(debates().values())[1]\n"
            "asyncio.run(one(d, settings_for(sys.argv[1], 'debatrix', 64)))\n"
            "print(json.dumps({'maxrss_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))\n")
    out = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True, check=True)
    kb = json.loads(out.stdout.strip().splitlines()[-1])["maxrss_kb"]
    print(f"\n## Peak memory\n\none `debatrix`-mode run of {name} in a fresh process: {kb / 1024:.0f} MiB max RSS "
          "(the process that judges; the model server is not counted)")


async def cpu_per_call(url: str, calls: int, in_flight: int = 32) -> None:
    """The judge process's CPU per LLM call, by transport: ``calls`` short text requests through the gateway with
    ``in_flight`` at a time, against the fake server (its CPU is its own process's). The LangChain callback
    machinery runs on both transports; this is what it and the client cost."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from debatrix.llm.gateway import LLMGateway

    print(f"\n## CPU per LLM call\n\n{calls} text calls, {in_flight} in flight, no cache; CPU time of the judging "
          "process (the fake server runs in its own)\n")
    print("| transport | CPU per call (ms) | wall (s) |\n|---|---:|---:|")
    messages = [SystemMessage(content="You are an impartial debate adjudicator."),
                HumanMessage(content="Analyse the speech. " * 40)]
    for transport in ("http", "langchain"):
        gateway = LLMGateway(LLMSettings(base_url=url, model="fake-model", transport=transport, timeout=60,
                                         max_concurrency=in_flight, cache_path=None))
        gate = asyncio.Semaphore(in_flight)

        async def call(i: int) -> None:
            async with gate:
                await gateway.text(messages, node="analyze_speech", meta={"i": i})

        try:
            await asyncio.gather(*(call(i) for i in range(min(calls, 64))))  # warm: pools, imports
            cpu, wall = time.process_time(), time.perf_counter()
            await asyncio.gather(*(call(i) for i in range(calls)))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        finally:
            gateway.close()
        print(f"| {transport} | {cpu / calls * 1000:.2f} | {wall:.1f} |")


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    """The fake model in its own process, so that its work never competes with the judge's for the GIL."""
    from debatrix.llm.local import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "debatrix.testing", "--port", str(port), "--latency",
                             str(latency), "--rough-usage"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.readline()  # "fake OpenAI-compatible server at ..."
    return proc, f"http://127.0.0.1:{port}/v1"


async def ray_overhead(url: str, latency: float, items: int) -> None:
    """A DebateArt sample judged in two processes' worth of parallelism: locally (two items at once) and as tasks
    on a Ray cluster started here with two worker CPUs; the difference is what the engine costs (starting the
    cluster, shipping items and results, one model connection per worker process)."""
    import tempfile

    import ray

    from . import make_benchmark
    from .runner import run_benchmark

    bench = make_benchmark("debateart")
    settings = JudgeSettings(llm=LLMSettings(base_url=url, model="fake", api_key="x", max_concurrency=64),
                             memory=MemorySettings(embedding="hash"))
    print(f"\n## Ray vs local: {items} DebateArt debates, direct mode, two items at once, L = {latency * 1000:.0f} ms")
    print("| run | seconds | items/s | vs local |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        await run_benchmark(bench, settings, Path(tmp) / "local", modes=["direct"], limit=items, concurrency=2)
        local = time.perf_counter() - t
        print(f"| local, 2 at once | {local:.1f} | {items / local:.2f} | 1.00 |")
        t = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
        started = time.perf_counter() - t
        try:
            t = time.perf_counter()
            await run_benchmark(bench, settings, Path(tmp) / "ray", modes=["direct"], limit=items, ray="auto")
            on_ray = time.perf_counter() - t
        finally:
            ray.shutdown()
        print(f"| Ray, 2 workers (cluster up) | {on_ray:.1f} | {items / on_ray:.2f} | {local / on_ray:.2f} |")
        print(f"| Ray, with starting the cluster | {on_ray + started:.1f} | {items / (on_ray + started):.2f} | "
              f"{local / (on_ray + started):.2f} |")


async def main_async(args: argparse.Namespace) -> None:
    proc, url = start_server(args.latency)
    try:
        print(f"# debatrix performance ({os.cpu_count()} CPUs, Python {sys.version.split()[0]})")
        print(f"\nfake model server in its own process, answering after L = {args.latency * 1000:.0f} ms "
              "(token counts there are characters / 4)")
        if "modes" in args.sections:
            await modes_table(url, args.latency, args.modes)
        if "throughput" in args.sections:
            await throughput(url, args.latency, args.concurrency)
        if "memory" in args.sections:
            peak_memory(url)
        if "cpu" in args.sections:
            await cpu_per_call(url, args.cpu_calls)
        if "ray" in args.sections:
            await ray_overhead(url, args.latency, args.ray_items)
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per LLM call (default 0.2)")
    ap.add_argument("--modes", type=lambda v: v.split(","), default=list(MODES))
    ap.add_argument("--concurrency", type=lambda v: [int(x) for x in v.split(",")], default=[1, 4, 16])
    ap.add_argument("--sections", type=lambda v: v.split(","), default=["modes", "throughput", "memory", "cpu"],
                    help="what to measure (default: modes,throughput,memory,cpu)")
    ap.add_argument("--cpu-calls", type=int, default=2000, help="calls per transport in the cpu section")
    ap.add_argument("--ray-items", type=int, default=8, help="debates in the ray section (not in the default "
                    "sections: it needs the cluster extra)")
    args = ap.parse_args(argv)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
