"""What a debate costs on a real model (a script, not a test): tokens the model reads and writes, and time.

    python -m debatrix.benchmarks.offline                 # every mode, debateart_0466 and bp_020, local model
    python -m debatrix.benchmarks.offline --modes direct,debatrix --debates debateart_0466
    python -m debatrix.benchmarks.offline --fake          # prompt tokens sent, on a fake server (seconds)
    python -m debatrix.benchmarks.offline --debates four_day_week   # one of the examples
    python -m debatrix.benchmarks.offline --debates four_day_week --out RESULTS/offline   # and keep the figures

``--out DIR`` keeps the local model's figures as ``DIR/offline.json`` (each row's figures, the model's measured
speeds, the commit of the code that ran), from which ``python -m debatrix.app.doctables --write --runs RESULTS``
writes the measured page's cost table.

On the embedded local model (default ``qwen2.5-coder-1.5b``) it judges each debate in each mode and prints wall
time, LLM calls, prompt tokens sent, prompt tokens the model processed and those it took from its KV cache,
generated tokens, and the ratio of wall time to the model's own throughput-bound time (processed prompt tokens at
its measured prompt speed plus generated tokens at its measured generation speed; both speeds are measured on
the same server before the first debate).

With ``--fake`` every request goes to an OpenAI-compatible fake server on 127.0.0.1 that answers at once, and the
prompt tokens sent are counted with cl100k_base and set against the original Debatrix code's figures for the same
debates and dimensions (measured on the same fake server; see issue 10).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from debatrix import JudgeSettings, LLMSettings, MemorySettings, load_debate
from debatrix.app.api import ajudge_debate
from debatrix.context import JudgeContext, run_settings
from debatrix.core.errors import ContextWindowExceeded, echoed
from debatrix.core.files import check_writable
from debatrix.core.models import Debate
from debatrix.core.results import JudgeResult
from debatrix.core.modes import MODES
from debatrix.core.settings import DEFAULT_LOCAL_MODEL
from debatrix.graphs.build import plan_run
from debatrix.app.runtime import settle_heap

from .base import data_root
from .runner import source_commit

DEBATES = {
    "debateart_0466": ("DebateArt", "debateart_0466.yml"),
    "bp_020": ("BP-Competition", "bp_020.yml"),
}

# Prompt tokens (cl100k_base) the original Debatrix code sends for the same debate, mode and dimensions on the same
# fake server (issue 10): the yardstick of the --fake table.
ORIGINAL_SENT = {
    ("debateart_0466", "debatrix"): 45_118,
    ("bp_020", "debatrix"): 109_424,
    ("debateart_0466", "noniterative"): 127_195,
    ("debateart_0466", "direct"): 9_486,
    ("debateart_0466", "dimensional"): 29_318,
}
TARGET = {"debatrix": 0.8, "chronological": 0.8, "noniterative": 0.8, "direct": 1.05, "dimensional": 1.05}


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(name: str) -> Debate:
    if name not in DEBATES:  # one of the project's examples (docs/measured.md)
        return load_debate(EXAMPLES / f"{name}.yaml")
    folder, file = DEBATES[name]
    path = data_root() / "panelbench" / folder / "motion" / file
    if not path.exists():
        raise SystemExit(f"{path} is missing: the PanelBench data set is needed (set DEBATRIX_DATA)")
    return load_debate(path)


def _row(cells: list[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


# --------------------------------------------------------------------------------------------- fake server


async def fake_table(names: list[str], modes: list[str]) -> None:
    from debatrix.testing import FakeOpenAIServer
    from debatrix.core.prompting import count_tokens

    print("\n## Prompt tokens sent (fake server, cl100k_base)\n")
    print(_row(["debate", "mode", "LLM calls", "prompt tokens sent", "original", "ratio", "target"]))
    print(_row(["---"] * 7))
    for name in names:
        debate = load(name)
        for mode in modes:
            with FakeOpenAIServer() as server:
                s = JudgeSettings(mode=mode, llm=LLMSettings(base_url=server.base_url, model="fake-model"),
                                  memory=MemorySettings(embedding="hash"))
                result = await ajudge_debate(debate, s)
                sent = sum(count_tokens(str(m.get("content") or ""), "cl100k_base") + 4
                           for body in server.requests for m in body.get("messages", []))
            original = ORIGINAL_SENT.get((name, mode))
            ratio = f"{sent / original:.2f}×" if original else "-"
            target = f"≤ {TARGET[mode]:g}×" if original else "-"
            print(_row([name, mode, result.usage.llm_calls, f"{sent:,}", f"{original:,}" if original else "-",
                        ratio, target]), flush=True)


# --------------------------------------------------------------------------------------------- local model


def calibrate(base_url: str) -> tuple[float, float]:
    """The server's prompt and generation speed (tokens/s) on an uncached ~1,000-token prompt."""
    text = " ".join(f"word{i} of the calibration text, number {i * 7919 % 1000}." for i in range(140))
    body = {"model": "m", "messages": [{"role": "user", "content": f"{text}\nSummarise in one long paragraph."}],
            "max_tokens": 64, "temperature": 0, "cache_prompt": False}
    req = urllib.request.Request(f"{base_url}/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        t = json.loads(r.read())["timings"]
    return float(t["prompt_per_second"]), float(t["predicted_per_second"])


def bound_seconds(result: JudgeResult, speeds: tuple[float, float]) -> float | None:
    """The time the server's own speeds allow for what the model read and wrote (None: what it read is unknown)."""
    u = result.usage
    if u.prompt_tokens_processed is None:
        return None
    return u.prompt_tokens_processed / speeds[0] + u.completion_tokens / speeds[1]


def local_row(name: str, mode: str, result: JudgeResult, wall: float, speeds: tuple[float, float]) -> list[Any]:
    u = result.usage
    processed = u.prompt_tokens_processed
    bound = bound_seconds(result, speeds)
    return [name, mode, result.status.value, f"{wall:.0f}", u.llm_calls, f"{u.prompt_tokens:,}",
            f"{processed:,}" if processed is not None else "-",
            f"{u.cached_prompt_tokens:,}" if u.cached_prompt_tokens is not None else "-",
            f"{u.completion_tokens:,}", f"{bound:.0f}" if bound else "-",
            f"{wall / bound:.2f}" if bound else "-"]


def node_lines(name: str, mode: str, result: JudgeResult) -> list[list[Any]]:
    return [[name, mode, node, n.calls, f"{n.prompt_tokens_processed or 0:,}", f"{n.cached_prompt_tokens or 0:,}",
             f"{n.completion_tokens:,}", n.truncated_calls]
            for node, n in result.usage.by_node.items()]


def keep(out: Path, commit: str | None, model: str, speeds: tuple[float, float] | None,
         kept: list[dict[str, Any]]) -> None:
    """The figures as data (``offline.json``), with what made them: the model, its speeds, the code's commit."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "offline.json").write_text(json.dumps({
        "commit": commit, "model": model, "cpus": os.cpu_count(),
        "speeds": {"prompt_tokens_per_s": speeds[0], "generated_tokens_per_s": speeds[1]} if speeds else None,
        "rows": kept}, indent=1) + "\n", encoding="utf-8")


async def local_table(names: list[str], modes: list[str], model: str, out: Path | None = None) -> None:
    print(f"\n## Local model {model} ({os.cpu_count()} CPU cores)\n")
    header = ["debate", "mode", "status", "wall s", "LLM calls", "prompt tok sent", "prompt tok processed",
              "from KV cache", "generated tok", "bound s", "wall / bound"]
    rows: list[list[Any]] = []
    details: list[list[list[Any]]] = []
    speeds: tuple[float, float] | None = None
    kept: list[dict[str, Any]] = []
    commit = source_commit() if out is not None else None  # the code does not change during the run: asked once
    for name in names:
        debate = load(name)
        for mode in modes:
            s = JudgeSettings(mode=mode, llm=LLMSettings(backend="local", local_model=model),
                              memory=MemorySettings(embedding="hash"))
            started = time.perf_counter()
            try:
                ctx = await asyncio.to_thread(JudgeContext.create, s, None, [plan_run(debate, run_settings(s))])
            except ContextWindowExceeded as e:  # refused before the model started: say so and go on
                rows.append([name, mode, f"refused in {time.perf_counter() - started:.1f} s: {e}"] + ["-"] * 8)
                print(_row(rows[-1]), flush=True)
                continue
            try:
                if speeds is None:
                    speeds = calibrate(ctx.settings.llm.base_url or "")
                    print(f"model speed on this machine: {speeds[0]:.1f} prompt tok/s, {speeds[1]:.1f} generated "
                          "tok/s (one uncached request)\n")
                    print(_row(header))
                    print(_row(["---"] * len(header)), flush=True)
                settle_heap()
                started = time.perf_counter()
                result = await ajudge_debate(debate, s, context=ctx)
                wall = time.perf_counter() - started
            finally:
                await asyncio.to_thread(ctx.close)
            rows.append(local_row(name, mode, result, wall, speeds))
            print(_row(rows[-1]), flush=True)
            u, bound = result.usage, bound_seconds(result, speeds)
            kept.append({"debate": name, "speeches": len(debate.speeches), "mode": mode,
                         "status": result.status.value, "wall_seconds": round(wall, 1), "llm_calls": u.llm_calls,
                         "prompt_tokens_read": u.prompt_tokens_processed, "prompt_tokens_reused": u.cached_prompt_tokens,
                         "completion_tokens": u.completion_tokens,
                         "wall_over_bound": round(wall / bound, 2) if bound else None})
            if out is not None:  # after each debate: a run stopped part-way keeps what it measured
                keep(out, commit, model, speeds, kept)
            details.append(node_lines(name, mode, result))
            if result.incomplete_reason:
                print(f"  incomplete: {result.incomplete_reason[:300]}", flush=True)
    if details:  # where the tokens went: per node, what the model read, reused and wrote, and answers cut at a cap
        print("\n### Per node\n")
        print(_row(["debate", "mode", "node", "calls", "prompt tok read", "from KV cache", "generated tok",
                    "cut at cap"]))
        print(_row(["---"] * 8))
        for lines in details:
            for line in lines:
                print(_row(line))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", type=lambda v: v.split(","), default=list(MODES))
    ap.add_argument("--debates", type=lambda v: v.split(","), default=list(DEBATES))
    ap.add_argument("--local-model", default=DEFAULT_LOCAL_MODEL)
    ap.add_argument("--fake", action="store_true", help="count the prompt tokens sent on a fake server instead")
    ap.add_argument("--out", type=Path, help="keep the local model's figures as OUT/offline.json")
    args = ap.parse_args(argv)

    def refuse(why: str) -> None:  # bad input exits 2, as argparse's own refusals and the CLI's do
        print(f"error: {why}", file=sys.stderr)
        raise SystemExit(2)

    if args.out is not None and args.fake:
        refuse("--out keeps the local model's figures; --fake prints the prompt tokens sent only")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        refuse(f"--out: {args.out} is a file; give a folder")
    if args.out is not None:
        try:  # before the first debate, not after an hour of the model's time
            check_writable(args.out / "offline.json")
        except OSError as e:
            refuse(f"--out: {args.out}: cannot write in it ({e.strerror or e})")
    for m in args.modes:
        if m not in MODES:
            refuse(f"unknown mode {echoed(m)}; choose from {', '.join(MODES)}")
    examples = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))
    for d in args.debates:
        if d not in DEBATES and d not in examples:
            refuse(f"unknown debate {echoed(d)}; choose from {', '.join([*DEBATES, *examples])}")
    print(f"# debatrix cost per debate (Python {sys.version.split()[0]}, {os.cpu_count()} CPUs)")
    if args.fake:
        asyncio.run(fake_table(args.debates, args.modes))
    else:
        asyncio.run(local_table(args.debates, args.modes, args.local_model, args.out))


if __name__ == "__main__":
    main()
