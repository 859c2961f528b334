"""The ablation runner: every (mode, repeat, item) of a benchmark judged once, results appended to a JSONL file as
they finish (a crashed run started again skips every finished item), then a summary table with paired bootstrap
confidence intervals over items, constant/random baselines beside it, and plots (:mod:`debatrix.benchmarks.summary`).

A repeat is a new sample, never a replay: its index is the request's ``seed`` and part of the answer cache's key
(like inspect_ai's epochs), and repeats at temperature 0 are refused (a greedy model answers the same again).
``--shard i/N`` judges the items whose id hashes to shard i; ``merge_runs`` joins the shards' folders.

Output folder::

    run.json        what was run (benchmark, settings without secrets); a resume or a merge must match it
    items.jsonl     one record per judged (mode, repeat, item), with the path of its full result
    items/          the full result of every judged item (analyses, comments, every order's answer, probabilities)
    items.md        per item and mode: prediction against gold, linked to the result file
    summary.csv     mode, metric, subset, value, ci_low, ci_high, repeats, n (and each mode against the first)
    summary.md      the same as Markdown tables, baselines below
    summary.png     the headline metrics per mode with their confidence intervals
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


from debatrix import __version__
from debatrix.context import JudgeContext
from debatrix.core.errors import ConfigurationError
from debatrix.core.files import inside, read_items, write_atomic
from debatrix.llm.gateway import SAMPLE
from debatrix.llm.local import served_by
from debatrix.app.runtime import settle_heap
from debatrix.core.settings import JudgeSettings, redact_url

from .base import RECORD_FORMAT, Benchmark, Item, MetricRow, judge_item
from .summary import SummaryRow, summarize, write_item_table, write_summary

@dataclass
class RunReport:
    out_dir: Path
    judged: int  # items judged in this invocation
    skipped: int  # items found finished in items.jsonl
    seconds: float
    summary: list[SummaryRow]
    baselines: list[MetricRow]
    incomplete: int = 0  # of this run's (mode, repeat, item)s, those whose latest result is incomplete


def read_records(path: Path) -> list[dict[str, Any]]:
    """Records of ``items.jsonl``; a last line cut short by a crash is dropped (and cut from the file)."""
    return read_items(path, trim=True)


def record_key(r: dict[str, Any]) -> tuple[str, int, str]:
    return r["mode"], int(r["repeat"]), r["item"]


class _Appender:
    """Appends records to items.jsonl one at a time. A write once begun is finished even if its task is cancelled
    (its thread would finish it anyway): :meth:`drain` waits for those, so that when a run returns or fails, the
    file holds every record it will ever write (a test read it while a cancelled task's write was still landing)."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = asyncio.Lock()
        self._pending: set[asyncio.Future] = set()

    async def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        write = asyncio.ensure_future(self._write_in_turn(line))
        self._pending.add(write)
        write.add_done_callback(self._pending.discard)
        await asyncio.shield(write)

    async def _write_in_turn(self, line: str) -> None:
        async with self.lock:
            await asyncio.to_thread(self._write, line)

    async def drain(self) -> None:
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    def _write(self, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


#: the settings a resume may change, since none changes a verdict: how many requests are in flight, and what a
#: result keeps of its calls' text
UNBINDING = ("max_concurrency", "log_calls", "call_log_chars")


def _run_manifest(bench: Benchmark, settings: JudgeSettings, out_dir: Path) -> dict[str, Any]:
    s = settings.public_dict()
    s.pop("mode", None)
    for name in UNBINDING:
        s.get("llm", {}).pop(name, None)
    cache = s.get("llm", {}).get("cache_path")
    if cache and "://" not in str(cache):  # relative to the results folder: a moved folder is the same run
        try:
            s["llm"]["cache_path"] = Path(cache).resolve().relative_to(out_dir.resolve()).as_posix()
        except ValueError:
            pass
    return {"benchmark": bench.name, "settings": s}


def _check_manifest(out_dir: Path, manifest: dict[str, Any]) -> None:
    path = out_dir / "run.json"
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        for name in UNBINDING:  # a run.json written before one was set free still holds it
            old.get("settings", {}).get("llm", {}).pop(name, None)
        if old != manifest:
            raise ConfigurationError(
                f"{out_dir} holds a run of {old.get('benchmark')} with other settings; resume it with the same "
                "settings or choose another --out folder")
    else:
        write_atomic(path, json.dumps(manifest, indent=2))


def shard_of(item_id: str, count: int) -> int:
    """The shard (1..count) an item belongs to: stable across runs, machines and Python versions."""
    return int(hashlib.sha256(item_id.encode()).hexdigest(), 16) % count + 1


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"i/N"`` -> (i, N), 1 <= i <= N."""
    if not text:
        return None
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ConfigurationError(f"--shard {text!r}: expected i/N, e.g. 2/4") from None
    if not 1 <= i <= n:
        raise ConfigurationError(f"--shard {text!r}: i must be between 1 and N")
    return i, n


def check_repeats(settings: JudgeSettings, repeats: int) -> None:
    if repeats < 1:
        raise ConfigurationError("--epochs must be at least 1")
    if repeats > 1 and settings.llm.temperature == 0:
        raise ConfigurationError(
            f"--epochs {repeats} at temperature 0 would judge every item {repeats} times the same way (a greedy "
            "model answers the same again; the interval would be a false ±0): give --temperature > 0, under which "
            "each repeat is a new sample with its own seed")


async def run_benchmark(bench: Benchmark, settings: JudgeSettings, out_dir: Path, *,
                        modes: list[str], repeats: int = 1, limit: int | None = None, concurrency: int = 1,
                        retry_incomplete: bool = False, chat_model: Any = None,
                        on_record: Callable[[dict[str, Any], int, int], None] | None = None,
                        settle: bool = False, shard: tuple[int, int] | None = None, seed: int = 0,
                        max_length: int | None = None, ray: str | None = None,
                        label: str | None = None) -> RunReport:
    """Judge every item in every mode ``repeats`` times, ``concurrency`` items at once, resuming from what
    ``out_dir`` already holds. ``limit``: a seeded sample (``seed``; length-stratified for debates), among the
    items of at most ``max_length`` characters where given; ``shard``:
    (i, N), only the items of shard i. ``settle``: call :func:`debatrix.app.runtime.settle_heap` once the context is
    built (for a process that does nothing else, like ``debatrix bench``). ``ray``: judge the items as tasks on the
    Ray cluster at that address (:mod:`debatrix.benchmarks.cluster`); the folder is written here, as ever.
    ``label``: the run's name for people (recorded with this invocation; a later one without a label keeps it)."""
    check_repeats(settings, repeats)
    if concurrency < 1:
        raise ConfigurationError("--max-samples must be at least 1")
    out_dir.mkdir(parents=True, exist_ok=True)
    items = bench.load()
    if max_length is not None:  # a compute budget: only items up to this length (characters), sampled among them
        items = [it for it in items if bench.size(it) <= max_length]
    items = bench.subset(items, limit, seed)
    if shard is not None:
        items = [it for it in items if shard_of(it.id, shard[1]) == shard[0]]
    if not bench.modes_matter:
        modes = modes[:1]
    _check_manifest(out_dir, _run_manifest(bench, settings, out_dir))
    jsonl = out_dir / "items.jsonl"
    previous = read_records(jsonl)
    # a record of an older format is judged again (its answers come from the folder's answer cache)
    finished = {record_key(r) for r in previous
                if r.get("format") == RECORD_FORMAT and (r["status"] == "complete" or not retry_incomplete)}
    # item by item (every mode of an item, then the next): a run stopped early still holds paired comparisons
    todo = [(m, k, it) for it in items for k in range(repeats) for m in modes if (m, k, it.id) not in finished]
    appender = _Appender(jsonl)
    started = time.perf_counter()
    done = 0

    async def store(mode: str, repeat: int, item: Item, record: dict[str, Any]) -> None:
        nonlocal done
        record = {"benchmark": bench.name, "format": RECORD_FORMAT, "mode": mode, "repeat": repeat, "item": item.id,
                  **record, **bench.gold_record(item)}
        result = record.pop("result", None)
        if result is not None:
            record["result_file"] = await asyncio.to_thread(_write_result, out_dir, mode, repeat, item.id, result)
        await appender.append(record)
        done += 1
        if on_record:
            on_record(record, done, len(todo))

    async def judge_all() -> None:
        if todo and ray is not None:
            if chat_model is not None:
                raise ConfigurationError("--ray sends settings to the cluster's workers, not a chat model object")
            from .cluster import judged_on_ray

            await asyncio.to_thread(_log_invocation, out_dir, None, len(todo), settings, ray, label)
            async for mode, repeat, item, record in judged_on_ray(bench, todo, settings, ray):
                await store(mode, repeat, item, record)
        elif todo:
            context = await asyncio.to_thread(JudgeContext.create, settings, chat_model)
            await asyncio.to_thread(_log_invocation, out_dir, context, len(todo), label=label)
            if settle:
                settle_heap()
            try:
                gate = asyncio.Semaphore(concurrency)

                async def one(mode: str, repeat: int, item: Item) -> None:
                    async with gate:
                        SAMPLE.set(repeat)  # this task's requests: seed and cache key of repeat k
                        record = await judge_item(bench, item, settings.model_copy(update={"mode": mode}), context)
                    await store(mode, repeat, item, record)

                async with asyncio.TaskGroup() as tasks:  # one unexpected failure cancels the rest
                    for m, k, it in todo:
                        tasks.create_task(one(m, k, it))
            finally:
                context.close()
        elif label:  # nothing left to judge: the label is still the run's from now on (no code ran, no commit)
            await asyncio.to_thread(_append_json_line, out_dir / "runs.jsonl", {
                "started": datetime.now(UTC).isoformat(timespec="seconds"), "to_judge": 0, "label": label})

    try:
        await judge_all()
    finally:
        await appender.drain()
    ids = {it.id for it in items}
    report = summarize_folder(bench, out_dir, modes, ids, items)
    incomplete = sum(1 for r in latest_records(jsonl, modes, ids)
                     if r["status"] != "complete" and int(r["repeat"]) < repeats)
    return RunReport(out_dir, len(todo), len(items) * len(modes) * repeats - len(todo),
                     round(time.perf_counter() - started, 2), report[0], report[1], incomplete)


def source_commit(root: Path | None = None) -> str | None:
    """The git commit of the code that runs (``-dirty`` appended when its tracked files differ from it), where the
    package runs from a git checkout (an editable install, a clone); None where it does not (an installed wheel)
    or git is absent. A figure stored with it names the code that made it. ``root``: the checkout (default: the
    one this package is in)."""
    root = root or Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=20)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0 or not head.stdout.strip():
        return None
    return head.stdout.strip() + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def short_commits(commits: str | None) -> str:
    """Commits as a reader compares them (``runs.jsonl``'s, or several joined by ", "): each cut to 7 characters, a
    ``-dirty`` mark kept; empty where none was recorded."""
    return ", ".join(c[:7] + ("-dirty" if c.endswith("-dirty") else "") for c in (commits or "").split(", ") if c)


def _log_invocation(out_dir: Path, context: JudgeContext | None, items: int, settings: JudgeSettings | None = None,
                    ray: str | None = None, label: str | None = None) -> None:
    """One line per invocation in ``runs.jsonl``: what actually ran, and the commit of the code that ran it
    (run.json holds what was asked for; on the
    local backend the model, its file and sha256, the context and the server settings are only known now). On a
    Ray cluster (no context here: each node has its own) the cluster's address and the settings sent."""
    entry: dict[str, Any] = {"started": datetime.now(UTC).isoformat(timespec="seconds"), "debatrix": __version__,
                             "commit": source_commit(), "to_judge": items}
    if label:
        entry["label"] = label
    if context is None:
        entry.update({"ray": redact_url(ray), "settings": settings.public_dict() if settings else {}})
    else:
        llm = context.settings.llm
        entry.update({"model": context.gateway.description,
                      "served": served_by(context.local_server) if context.local_server is not None else
                      {"backend": "openai", "base_url": redact_url(llm.base_url), "model": llm.model,
                       "context_window": llm.context_window},
                      "settings": context.settings.public_dict()})
    _append_json_line(out_dir / "runs.jsonl", entry)


def _append_json_line(path: Path, entry: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, ensure_ascii=False) + "\n")


def _write_result(out_dir: Path, mode: str, repeat: int, item_id: str, result: Any) -> str:
    rel = Path("items") / mode / f"r{repeat}" / f"{_safe(item_id)}.json"
    path = out_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = result.model_dump_json(indent=1) if hasattr(result, "model_dump_json") else json.dumps(result)
    write_atomic(path, text)
    return rel.as_posix()


def _safe(name: str) -> str:
    """A file name for an item id: the id itself where it is one; else its safe characters and a hash of the whole
    id, so ids that differ only in unsafe characters ("x y", "x?y", "x_y") never share a result file."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:120].lstrip(".")
    if safe == name and safe:
        return safe
    return f"{safe or 'item'}-{hashlib.sha256(name.encode()).hexdigest()[:10]}"


def latest_records(jsonl: Path, modes: list[str] | None, ids: set[str] | None) -> list[dict[str, Any]]:
    """The newest record of every (mode, repeat, item) in ``jsonl`` (of ``modes`` and ``ids`` where given)."""
    latest: dict[tuple[str, int, str], dict[str, Any]] = {}
    for r in read_records(jsonl):  # a retried item's newest record wins
        if (modes is None or r["mode"] in modes) and (ids is None or r["item"] in ids):
            latest[record_key(r)] = r
    old = sum(r.get("format") != RECORD_FORMAT for r in latest.values())
    if old:
        raise ConfigurationError(
            f"{jsonl.parent}: {old} of its items were written by an older debatrix (before the records kept the "
            "judge's verdicts); run the same `debatrix bench` command on this folder again to bring them up to "
            "date: their answers come from the folder's answer cache, so no call is paid twice")
    return list(latest.values())


def summarize_folder(bench: Benchmark, out_dir: Path, modes: list[str] | None, ids: set[str] | None,
                     items: list[Item]) -> tuple[list[SummaryRow], list[MetricRow]]:
    records = latest_records(out_dir / "items.jsonl", modes, ids)
    summary = summarize(bench, records)
    baselines = bench.baselines(items)
    write_summary(out_dir, bench, summary, baselines)
    bench.write_figures(out_dir, records)
    write_item_table(out_dir, records)
    return summary, baselines


def merge_runs(bench: Benchmark, folders: list[Path], out_dir: Path) -> tuple[list[SummaryRow], list[MetricRow], int]:
    """Join the folders of a sharded run (same benchmark and settings) into ``out_dir`` and summarise them;
    returns the summary, the baselines and the number of records joined."""
    manifests = []
    for folder in folders:
        path = folder / "run.json"
        if not path.exists():
            raise ConfigurationError(f"{folder}: not a benchmark run folder (no run.json)")
        manifests.append(json.loads(path.read_text(encoding="utf-8")))
    if any(m != manifests[0] for m in manifests[1:]):
        raise ConfigurationError("the folders hold runs with different settings or benchmarks; only shards of one "
                                 "run can be merged")
    out_dir.mkdir(parents=True, exist_ok=True)
    _check_manifest(out_dir, manifests[0])
    merged: dict[tuple[str, int, str], dict[str, Any]] = {}
    for folder in folders:
        for r in latest_records(folder / "items.jsonl", None, None):
            rel = r.get("result_file")
            if isinstance(rel, str) and rel and folder.resolve() != out_dir.resolve():
                src, dest = inside(folder, rel), inside(out_dir, rel)  # never a file outside either folder
                if src is not None and dest is not None and src.is_file():
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    write_atomic(dest, src.read_text(encoding="utf-8"))
            merged[record_key(r)] = r
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in merged.values())
    write_atomic(out_dir / "items.jsonl", lines)
    ids = {r["item"] for r in merged.values()}
    items = [it for it in bench.load() if it.id in ids]
    summary, baselines = summarize_folder(bench, out_dir, None, None, items)
    return summary, baselines, len(merged)
