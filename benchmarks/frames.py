"""Benchmark results as pandas data frames: every run folder under a results root (a folder ``debatrix bench`` or
``judge --out-dir`` wrote: its ``run.json`` and ``items.jsonl``), one row per run and mode, and one row per item,
mode, repeat and dimension, so a researcher compares runs with the tools they already use.

    from debatrix.benchmarks.frames import items_frame, runs_frame
    runs = runs_frame("results")                  # mode, model, date, items, headline figure, cost
    items = items_frame("results")                # verdict, probability, gold, right, cost per dimension
    general = items[items.dimension == "general"]
    print(general.groupby(["run", "mode"]).right.mean())           # share right per run and mode
    print(general.pivot_table(index="item", columns="mode", values="right"))  # paired, item by item

A record of a benchmark that does not score winners (decisions, claims ...) has one row with no dimension, its
status and cost. Nothing is judged or paid for: the frames read what the runs stored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from debatrix.core.files import read_json, read_json_lines
from debatrix.core.settings import redact_url

from .base import coded, p_coded, read_winner, readings
from .metrics import metric_words
from .runner import read_records
from .summary import read_summary

#: the columns of :func:`runs_frame` and :func:`items_frame`, in order (an empty root gives empty frames of these)
RUN_COLUMNS = ("run", "label", "benchmark", "mode", "model", "endpoint", "commit", "date", "items", "complete",
               "headline", "headline_words", "headline_value", "llm_calls", "prompt_tokens", "completion_tokens", "seconds")
ITEM_COLUMNS = ("run", "benchmark", "item", "mode", "repeat", "status", "dimension", "winner", "judged",
                "p_judged", "gold", "right", "llm_calls", "prompt_tokens", "completion_tokens", "seconds")


def run_folders(root: str | Path) -> list[Path]:
    """Every benchmark run folder at or under ``root`` (one holding ``run.json`` and ``items.jsonl``), sorted; a
    run's own ``items/`` (its result files) is not searched."""
    root = Path(root)
    found = [root] if _is_run(root) else []
    for run in sorted(root.rglob("run.json")):
        folder = run.parent
        if folder != root and _is_run(folder) and not any(_is_run(p) for p in folder.parents if root in p.parents):
            found.append(folder)
    return found


def _is_run(folder: Path) -> bool:
    return (folder / "run.json").is_file() and (folder / "items.jsonl").is_file()


def _name(folder: Path, root: Path) -> str:
    return "." if folder == root else folder.relative_to(root).as_posix()


def _local(llm: dict[str, Any]) -> bool:
    """Whether a stored run's model settings are the embedded model's (as :attr:`LLMSettings.uses_local` reads)."""
    return llm.get("backend") == "local" or (llm.get("backend") == "auto" and not llm.get("base_url"))


def _model(settings: dict[str, Any]) -> str:
    llm = settings.get("llm") or {}
    return str(llm.get("local_model") if _local(llm) else llm.get("model") or "")


def _endpoint(settings: dict[str, Any]) -> str:
    """Where a run's model answered: "embedded" (the local model), or the endpoint's address as the run stored it
    (its credentials were never stored: :meth:`JudgeSettings.public_dict`)."""
    llm = settings.get("llm") or {}
    return "embedded" if _local(llm) else str(redact_url(llm.get("base_url")) or "")


def runs_frame(root: str | Path, folders: list[Path] | None = None) -> pd.DataFrame:
    """One row per run folder under ``root`` and mode: its label (:func:`run_label`), the benchmark, the model, the
    commits of the code that ran it, when its items were last written (UTC), how many items it holds and the share
    complete, its headline figure (the benchmark's first headline metric on all items) and its cost (sums over its
    items). ``folders``: the run folders, where the caller has already found them (:func:`run_folders`)."""
    from . import make_benchmark
    from .summary import bench_headline

    root = Path(root)
    rows = []
    for folder in run_folders(root) if folders is None else folders:
        run = read_json(folder / "run.json")
        records = read_records(folder / "items.jsonl")
        summary = read_summary(folder) if (folder / "summary.csv").exists() else []
        try:
            bench = make_benchmark(run.get("benchmark", ""))
            wanted = bench_headline(bench, [])
        except Exception:  # a benchmark this install does not have (a plug-in): the first metric stored
            wanted = []
        invocations = read_json_lines(folder / "runs.jsonl")
        commits, label = _commits(invocations), run_label(folder, invocations)
        date = datetime.fromtimestamp((folder / "items.jsonl").stat().st_mtime, UTC).isoformat(timespec="seconds")
        for mode in dict.fromkeys(str(r.get("mode")) for r in records):
            mine = [r for r in records if str(r.get("mode")) == mode]
            figures = {s["metric"]: s for s in summary if s.get("mode") == mode and s.get("subset") == "all"}
            metric = next((m for m in wanted if m in figures), next(iter(figures), ""))
            usage = [r.get("usage") or {} for r in mine]
            rows.append({
                "run": _name(folder, root), "label": label, "benchmark": run.get("benchmark", ""), "mode": mode,
                "model": _model(run.get("settings") or {}), "endpoint": _endpoint(run.get("settings") or {}),
                "commit": commits, "date": date,
                "items": len({r.get("item") for r in mine}),
                "complete": sum(r.get("status") == "complete" for r in mine) / len(mine),
                "headline": metric, "headline_words": metric_words(metric) if metric else "",
                "headline_value": float(figures[metric]["value"]) if metric else float("nan"),
                **{k: sum(u.get(k) or 0 for u in usage)
                   for k in ("llm_calls", "prompt_tokens", "completion_tokens", "seconds")}})
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


def run_label(folder: Path, invocations: list[dict[str, Any]] | None = None) -> str:
    """The run's label (``debatrix bench NAME --label``): the last one an invocation gave; empty where none did.
    ``invocations``: the folder's ``runs.jsonl``, where the caller has already read it."""
    found = read_json_lines(folder / "runs.jsonl") if invocations is None else invocations
    return next((e["label"] for e in reversed(found) if e.get("label")), "")


def _commits(invocations: list[dict[str, Any]]) -> str:
    """The commits of the code each invocation of the run ran (``runs.jsonl``), oldest first, each once: more than
    one where a run was resumed on other code; empty where none was recorded (a run older than the record, or one
    made from an installed wheel)."""
    return ", ".join(dict.fromkeys(c for c in (e.get("commit") for e in invocations) if c))


def items_frame(root: str | Path) -> pd.DataFrame:
    """One row per item, mode, repeat and dimension of every run under ``root``: the judge's winner (None: not
    judged, or a tie), the winner in the gold's code (``judged``) with the probability the verdict gives it, the
    gold's code, whether they match (None: no gold, or no verdict made), and the item's cost (on each of its
    rows: sum over one dimension to count it once)."""
    root = Path(root)
    rows = []
    for folder in run_folders(root):
        benchmark = read_json(folder / "run.json").get("benchmark", "")
        for rec in read_records(folder / "items.jsonl"):
            usage = rec.get("usage") or {}
            base = {"run": _name(folder, root), "benchmark": benchmark, "item": rec.get("item"),
                    "mode": rec.get("mode"), "repeat": rec.get("repeat", 0), "status": rec.get("status"),
                    **{k: usage.get(k) for k in ("llm_calls", "prompt_tokens", "completion_tokens", "seconds")}}
            read = readings(rec)
            if not read:
                rows.append({**base, "dimension": None})
                continue
            for r in read:
                dim = r["dimension"]
                verdict = rec["verdicts"][dim]
                made = not verdict.get("not_judged")
                code = coded(rec, read_winner(verdict)) if made else None
                gold = rec.get("gold")
                rows.append({**base, "dimension": dim, "winner": read_winner(verdict) if made else None,
                             "judged": code, "p_judged": p_coded(rec, dim, code) if made else None,
                             "gold": gold.get(dim) if isinstance(gold, dict) else gold if dim == "general" else None,
                             "right": r["right"]})
    frame = pd.DataFrame(rows, columns=list(ITEM_COLUMNS))
    # a missing "right" is no gold or no verdict: pandas' nullable boolean, so a mean counts only what was scored
    return frame.astype({"right": "boolean", "repeat": "Int64"})
