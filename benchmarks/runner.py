"""The ablation runner: every (mode, repeat, item) of a benchmark judged once, results appended to a JSONL file as
they finish (a crashed run started again skips every finished item), then a summary table with means and 95%
confidence intervals over repeats, constant/random baselines beside it, and plots.

Output folder::

    run.json        what was run (benchmark, settings without secrets); a resume must match it
    items.jsonl     one record per judged (mode, repeat, item)
    summary.csv     mode, metric, subset, mean, ci95, repeats, n
    summary.md      the same as Markdown tables, baselines below
    summary.png     the headline metrics per mode with their confidence intervals
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from debatrix.context import JudgeContext
from debatrix.errors import ConfigurationError, DebatrixError
from debatrix.files import write_atomic
from debatrix.runtime import settle_heap
from debatrix.settings import JudgeSettings

from .base import Benchmark, Item, MetricRow
from .metrics import mean_ci


@dataclass(frozen=True)
class SummaryRow:
    mode: str
    metric: str
    subset: str
    mean: float
    ci95: float
    repeats: int
    n: int


@dataclass
class RunReport:
    out_dir: Path
    judged: int  # items judged in this invocation
    skipped: int  # items found finished in items.jsonl
    seconds: float
    summary: list[SummaryRow]
    baselines: list[MetricRow]


def read_records(path: Path) -> list[dict[str, Any]]:
    """Records of ``items.jsonl``; a last line cut short by a crash is dropped (and cut from the file)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        with path.open("r+b") as fh:
            fh.truncate(len(data))
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def record_key(r: dict[str, Any]) -> tuple[str, int, str]:
    return r["mode"], int(r["repeat"]), r["item"]


class _Appender:
    def __init__(self, path: Path):
        self.path = path
        self.lock = asyncio.Lock()

    async def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        async with self.lock:
            await asyncio.to_thread(self._write, line)

    def _write(self, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


def _run_manifest(bench: Benchmark, settings: JudgeSettings) -> dict[str, Any]:
    s = settings.public_dict()
    s.pop("mode", None)
    s.get("llm", {}).pop("max_concurrency", None)  # may change between resumes without changing results
    return {"benchmark": bench.name, "settings": s}


def _check_manifest(out_dir: Path, manifest: dict[str, Any]) -> None:
    path = out_dir / "run.json"
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old != manifest:
            raise ConfigurationError(
                f"{out_dir} holds a run of {old.get('benchmark')} with other settings; resume it with the same "
                "settings or choose another --out folder")
    else:
        write_atomic(path, json.dumps(manifest, indent=2))


async def run_benchmark(bench: Benchmark, settings: JudgeSettings, out_dir: Path, *,
                        modes: list[str], repeats: int = 1, limit: int | None = None, concurrency: int = 1,
                        retry_incomplete: bool = False, chat_model: Any = None,
                        on_record: Callable[[dict[str, Any], int, int], None] | None = None,
                        settle: bool = False) -> RunReport:
    """Judge every item in every mode ``repeats`` times, ``concurrency`` items at once, resuming from what
    ``out_dir`` already holds. ``settle``: call :func:`debatrix.runtime.settle_heap` once the context is built (for
    a process that does nothing else, like ``debatrix bench``)."""
    if repeats < 1 or concurrency < 1:
        raise ConfigurationError("--repeats and --concurrency must be at least 1")
    out_dir.mkdir(parents=True, exist_ok=True)
    items = bench.subset(bench.load(), limit)
    if not bench.modes_matter:
        modes = modes[:1]
    _check_manifest(out_dir, _run_manifest(bench, settings))
    jsonl = out_dir / "items.jsonl"
    previous = read_records(jsonl)
    finished = {record_key(r) for r in previous if r["status"] == "complete" or not retry_incomplete}
    todo = [(m, k, it) for m in modes for k in range(repeats) for it in items if (m, k, it.id) not in finished]
    appender = _Appender(jsonl)
    started = time.perf_counter()
    if todo:
        context = await asyncio.to_thread(JudgeContext.create, settings, chat_model)
        if settle:
            settle_heap()
        try:
            gate = asyncio.Semaphore(concurrency)
            done = 0

            async def one(mode: str, repeat: int, item: Item) -> None:
                nonlocal done
                async with gate:
                    record = await _judge_item(bench, item, settings.model_copy(update={"mode": mode}), context)
                record = {"benchmark": bench.name, "mode": mode, "repeat": repeat, "item": item.id, **record,
                          **bench.gold_record(item)}
                await appender.append(record)
                done += 1
                if on_record:
                    on_record(record, done, len(todo))

            async with asyncio.TaskGroup() as tasks:  # one unexpected failure cancels the rest
                for m, k, it in todo:
                    tasks.create_task(one(m, k, it))
        finally:
            context.close()
    records = [r for r in read_records(jsonl) if r["mode"] in modes and r["item"] in {it.id for it in items}]
    latest: dict[tuple[str, int, str], dict[str, Any]] = {}
    for r in records:  # a retried item's newest record wins
        latest[record_key(r)] = r
    summary = summarize(bench, list(latest.values()))
    baselines = bench.baselines(items)
    write_summary(out_dir, bench, summary, baselines)
    return RunReport(out_dir, len(todo), len(items) * len(modes) * repeats - len(todo),
                     round(time.perf_counter() - started, 2), summary, baselines)


async def _judge_item(bench: Benchmark, item: Item, settings: JudgeSettings, context: JudgeContext) -> dict:
    """One item; an error that is the item's fault (bad file, ...) is recorded, not raised: the run goes on."""
    try:
        return await bench.run_item(item, settings, context)
    except DebatrixError as e:
        return {"status": "incomplete", "reason": f"{type(e).__name__}: {e}", "pred": {}, "usage": {}}


def summarize(bench: Benchmark, records: list[dict[str, Any]]) -> list[SummaryRow]:
    by_run: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_run[(r["mode"], int(r["repeat"]))].append(r)
    values: dict[tuple[str, str, str], list[tuple[float, int]]] = defaultdict(list)
    for (mode, _), recs in sorted(by_run.items()):
        for row in bench.metrics(recs):
            values[(mode, row.metric, row.subset)].append((row.value, row.n))
        seconds = [r["usage"].get("seconds", 0.0) for r in recs if r.get("usage")]
        calls = [r["usage"].get("llm_calls", 0) for r in recs if r.get("usage")]
        if seconds:
            values[(mode, "seconds_per_item", "all")].append((sum(seconds) / len(seconds), len(seconds)))
            values[(mode, "llm_calls_per_item", "all")].append((sum(calls) / len(calls), len(calls)))
    rows = []
    for (mode, metric, subset), vals in values.items():
        mean, ci = mean_ci([v for v, _ in vals])
        rows.append(SummaryRow(mode, metric, subset, round(mean, 4), round(ci, 4), len(vals),
                               round(sum(n for _, n in vals) / len(vals))))
    return rows


def write_summary(out_dir: Path, bench: Benchmark, rows: list[SummaryRow], baselines: list[MetricRow]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(SummaryRow.__dataclass_fields__))
    w.writeheader()
    for r in rows:
        w.writerow(asdict(r))
    write_atomic(out_dir / "summary.csv", buf.getvalue())
    write_atomic(out_dir / "summary.md", markdown(bench, rows, baselines))
    if rows:
        plot_summary(out_dir / "summary.png", bench, rows)


def markdown(bench: Benchmark, rows: list[SummaryRow], baselines: list[MetricRow]) -> str:
    modes = list(dict.fromkeys(r.mode for r in rows))
    keys = list(dict.fromkeys((r.metric, r.subset) for r in rows))
    cell = {(r.mode, r.metric, r.subset): r for r in rows}
    lines = [f"# {bench.name}", "", bench.description, "",
             "Mean ± 95% confidence half-width over repeats; n = items per repeat.", "",
             "| metric | subset | " + (" | ".join(modes) if bench.modes_matter else "value (the mode does not apply)")
             + " |", "|---|---|" + "---|" * len(modes)]
    for metric, subset in keys:
        cells = []
        for m in modes:
            r = cell.get((m, metric, subset))
            cells.append("" if r is None else f"{r.mean:.3f} ± {r.ci95:.3f} (n={r.n})")
        lines.append(f"| {metric} | {subset} | " + " | ".join(cells) + " |")
    if baselines:
        lines += ["", "## Baselines", "", "| baseline | metric | subset | value | n |", "|---|---|---|---|---|"]
        lines += [f"| {b.baseline} | {b.metric} | {b.subset} | {b.value:.3f} | {b.n} |" for b in baselines]
    return "\n".join(lines) + "\n"


def plot_summary(path: Path, bench: Benchmark, rows: list[SummaryRow]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    headline = [r for r in rows if r.subset == "all" and r.metric in bench_headline(bench, rows)]
    metrics = list(dict.fromkeys(r.metric for r in headline))
    modes = list(dict.fromkeys(r.mode for r in headline))
    if not metrics:
        return
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(metrics) * max(1, len(modes))), 4))
    width = 0.8 / max(1, len(modes))
    for k, mode in enumerate(modes):
        vals = [next((r for r in headline if r.mode == mode and r.metric == m), None) for m in metrics]
        xs = [i + k * width for i in range(len(metrics))]
        ax.bar(xs, [v.mean if v else 0 for v in vals], width, yerr=[v.ci95 if v else 0 for v in vals],
               label=mode, capsize=3)
    ax.set_xticks([i + width * (len(modes) - 1) / 2 for i in range(len(metrics))], metrics, rotation=20,
                  ha="right", fontsize=8)
    ax.set_title(f"{bench.name}: headline metrics (95% CI over repeats)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    tmp = path.with_name(f".{path.stem}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


def bench_headline(bench: Benchmark, rows: list[SummaryRow]) -> list[str]:
    return list(getattr(bench, "headline", ())) or list(dict.fromkeys(r.metric for r in rows))[:6]
