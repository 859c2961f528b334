"""What the judge writes, measured on its own text: a fixed, documented set of debates judged in the iterative
modes, and per mode and dimension the share of analyses that repeat an earlier one of their column, how grounded
they are in the speech they analyse against other speeches, how many of their quotations are in the speech, in a
flow how many cite another speaker's passage as the speaker's own or an id that does not exist, whether comments argue for the verdict they carry, what was cut at its length
cap and how long analyses are (the checks of :mod:`debatrix.graphs.finish`, which every result also carries).

The set (``debatrix bench feedback``; ``--limit``/``--seed`` do not apply, the set is the benchmark):
- the two 1v1 examples of the project (``examples/four_day_week.yaml``, ``examples/school_uniforms.yaml``);
- 6 PanelBench DebateArt debates: one from each of 6 equal-sized length strata of the 51 debates with at most
  17,500 characters of speech, drawn with seed 0 (the sample ``debatrix bench debateart --limit 6 --max-length
  17500`` judges; the longer half would double the time);
- 1 BP-Competition debate: the shortest of the 22 (characters of speech), so the set runs in about an hour in
  ``debatrix`` mode on the default local model on two CPU cores.
No gold: the quantities are properties of the text, the same on any debate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from debatrix.core.loader import load_debate
from debatrix.core.models import Debate
from debatrix.core.results import JudgeResult
from debatrix.graphs.finish import check_result

from .base import Benchmark, BenchmarkDataError, Item, MetricRow, benchmark
from .panelbench import BPCompetition, DebateArt

EXAMPLES = ("four_day_week", "school_uniforms")
DEBATEART_SAMPLE, SEED, MAX_LENGTH = 6, 0, 17_500

#: the per-dimension figures: (record key, metric name, the key counting what it is a share of), each summed over
#: the analyses and divided by their number (a share for the counts, a mean for grounding and words); the id
#: lookups count only analyses that cite ids (a flow's), the n-gram measurements only those that do not
_PER_ANALYSIS = (("copied", "copy_rate", "prose"), ("grounded", "grounded", "prose"), ("foreign", "foreign", "prose"),
                 ("misattributed", "misattributed", "by_id"), ("unknown", "unknown_ids", "by_id"),
                 ("cut", "cut_at_cap", "n"), ("words", "words_per_analysis", "n"))


def examples_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "examples"


@benchmark("What the judge writes (copies, grounding, misattribution, quotations) on a fixed set, iterative modes")
class Feedback(Benchmark):
    name = "feedback"
    description = ("the judge's own text on 2 examples, 6 DebateArt and 1 BP debate: copy rate, grounding, "
                   "misattribution, quotations found, comment/verdict agreement, answers cut, words")
    headline = ("copy_rate_all", "grounded_all", "foreign_all", "misattributed_all", "quotes_found_all",
                "consistent_all")

    def __init__(self, data: str | Path | None = None):
        self.data = data

    def load(self) -> list[Item]:
        items = []
        for name in EXAMPLES:
            path = examples_dir() / f"{name}.yaml"
            if not path.exists():
                raise BenchmarkDataError(f"feedback: the example {path} is missing (run from a project checkout)")
            items.append(Item(id=name, path=path))
        art = DebateArt(self.data)
        pool = [it for it in art.load() if art.size(it) <= MAX_LENGTH]
        items += [Item(id=it.id, path=it.path) for it in art.subset(pool, DEBATEART_SAMPLE, SEED)]
        bp = BPCompetition(self.data)
        shortest = min(bp.load(), key=lambda it: (bp.size(it), it.id))
        items.append(Item(id=shortest.id, path=shortest.path))
        return items

    def subset(self, items: list[Item], limit: int | None, seed: int = 0) -> list[Item]:
        return items[:limit] if limit else items  # the set is fixed: --limit only shortens it, in its order

    def debate(self, item: Item) -> Debate:
        return load_debate(item.path)

    def gold_record(self, item: Item) -> dict[str, Any]:
        return {}

    def predictions(self, item: Item, debate: Debate, result: JudgeResult) -> dict[str, Any]:
        return text_figures(result, debate)

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        done = [r for r in records if r["status"] == "complete" and r.get("pred")]
        rows: list[MetricRow] = []
        dims = sorted({d for r in done for d in r["pred"]["dimensions"]})
        for dim in [*dims, "all"]:
            cols = [c for r in done for d, c in r["pred"]["dimensions"].items() if dim in ("all", d)]
            if not sum(c["n"] for c in cols):
                continue
            for key, metric, of in _PER_ANALYSIS:
                # .get: a folder resumed from an older run has records without the newer figures
                n = sum(c.get(of, c["n"] if of == "prose" else 0) for c in cols)
                if n:
                    rows.append(MetricRow(f"{metric}_{dim}", "all", sum(c.get(key, 0) for c in cols) / n, n))
            quotes = sum(c["quotes"] for c in cols)
            if quotes:
                rows.append(MetricRow(f"quotes_found_{dim}", "all", sum(c["quotes_found"] for c in cols) / quotes,
                                      quotes))
            above = [c["grounded"] > c["foreign"] for c in cols if c.get("prose", c["n"])]
            if above:
                rows.append(MetricRow(f"grounded_above_foreign_{dim}", "all", sum(above) / len(above), len(above)))
        verdicts = [v for r in done for v in r["pred"]["consistent"].values()]
        if verdicts:
            rows.append(MetricRow("consistent_all", "all", sum(verdicts) / len(verdicts), len(verdicts)))
        comments = [c for r in done for c in r["pred"]["comments"] if c is not None]
        if comments:  # by id: a flow's comments
            rows.append(MetricRow("comment_misattributed_all", "all", sum(comments) / len(comments), len(comments)))
        uncited = [u for r in done for u in r["pred"].get("uncited_comments", [])]
        if uncited:
            rows.append(MetricRow("comment_uncited_all", "all", sum(uncited) / len(uncited), len(uncited)))
        empty = [e for r in done for e in r["pred"]["empty_comments"]]
        if empty:
            rows.append(MetricRow("comment_empty_all", "all", sum(empty) / len(empty), len(empty)))
        panels = [r["pred"]["panel_grounded"] for r in done if r["pred"]["panel_grounded"] is not None]
        if panels:
            rows.append(MetricRow("panel_cites_debate", "all", sum(panels) / len(panels), len(panels)))
        return rows


def text_figures(result: JudgeResult, debate: Debate) -> dict[str, Any]:
    """One result's text checks, summed per dimension (what :meth:`Feedback.metrics` adds up over items)."""
    checks = result.checks or check_result(result, debate)
    cut = result.usage.by_node.get("analyze_speech")
    cut_share = (cut.truncated_calls / cut.calls) if cut and cut.calls else 0.0
    dims: dict[str, dict[str, float]] = {}
    for a in checks.analyses:
        c = dims.setdefault(a.dimension, {"n": 0, "prose": 0, "by_id": 0, "copied": 0, "misattributed": 0,
                                          "unknown": 0, "cut": 0.0, "grounded": 0.0, "foreign": 0.0, "words": 0,
                                          "quotes": 0, "quotes_found": 0})
        c["n"] += 1
        c["cut"] += cut_share  # the calls' share, spread over the analyses (records do not say which was cut)
        c["words"] += a.words
        if a.by_id:
            c["by_id"] += 1
            c["misattributed"] += bool(a.foreign_ids)
            c["unknown"] += bool(a.unknown_ids)
            continue
        c["prose"] += 1
        c["copied"] += a.copied
        c["grounded"] += a.grounded
        c["foreign"] += a.foreign
        c["quotes"] += a.quotes
        c["quotes_found"] += a.quotes_found
    consistent = {d.name: d.verdict.consistent for d in [*result.dimensions, *([result.general] if result.general
                                                                              else [])] if d.verdict is not None}
    judgments = [j for d in result.dimensions for j in d.debater_judgments]
    return {"dimensions": dims, "consistent": consistent,
            "comments": [c.misattributed for c in checks.comments],
            "empty_comments": [not j.comment for j in judgments],
            "uncited_comments": [c.own_cited == 0 for c in checks.comments if c.own_cited is not None],
            "panel_grounded": checks.panel_grounded, "flags": list(checks.flags)}
