"""Critique ratings: a position, a critique of it, and expert ratings of the critique on a rubric, all in [0, 1].

The public data set is not released yet; any JSONL file in this schema works (one critique per line)::

    {"position_id": "p1", "position": "text of the position",
     "critique_id": "p1-c3", "critique": "text of the critique",
     "ratings": {"centrality": 0.8, "strength": 0.5, "correctness": 1.0, "clarity": 0.9,
                 "dead_weight": 0.0, "single_issue": 1.0, "overall": 0.6}}

The judge is a small LangGraph graph (``build_critique_graph``): an assessment in words, then one JSON answer with
the seven ratings 1-5 (mapped to [0, 1] as (r - 1) / 4). Each rating is kept as the answer (argmax) and as the
probability-weighted value from the log probabilities of its digit. Metrics: the weighted pairwise ranking error of
``overall`` within each position, and the custom weighted loss (``metrics.critique_weighted_loss``).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, ConfigDict, Field

from debatrix.core import prompting as P
from debatrix.context import JudgeContext
from debatrix.core.errors import StructuredOutputError
from debatrix.core.models import CallRecord
from debatrix.core.settings import JudgeSettings

from .base import TEMPLATES, Benchmark, BenchmarkDataError, Item, MetricRow, benchmark, calls_usage
from .metrics import (
    RUBRIC,
    critique_weighted_loss,
    mean_ci,
    weighted_pairwise_ranking_error,
)
from .scoring import distribution_at


class CritiqueCommentVars(P.TemplateVars):
    position: str
    critique: str
    fence: str
    words: int


TEMPLATES.add("critique_comment.j2", CritiqueCommentVars)
TEMPLATES.add("critique_rate.j2", P.NoVars)

SCALE = (1, 2, 3, 4, 5)


class RubricAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    centrality: int = Field(ge=1, le=5)
    strength: int = Field(ge=1, le=5)
    correctness: int = Field(ge=1, le=5)
    clarity: int = Field(ge=1, le=5)
    dead_weight: int = Field(ge=1, le=5)
    single_issue: int = Field(ge=1, le=5)
    overall: int = Field(ge=1, le=5)


@dataclass(frozen=True)
class CritiqueItem(Item):
    position_id: str = ""
    position: str = ""
    critique: str = ""
    ratings: dict[str, float] = field(default_factory=dict)


def load_critiques(path: str | Path) -> list[CritiqueItem]:
    """Read and check a critique JSONL file; every problem names the line."""
    path = Path(path)
    if not path.exists():
        raise BenchmarkDataError(f"{path}: not found")
    items, seen = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise BenchmarkDataError(f"{path}:{n}: not JSON ({e.msg})") from None
        missing = {"position_id", "position", "critique_id", "critique", "ratings"} - set(row)
        if missing:
            raise BenchmarkDataError(f"{path}:{n}: missing {sorted(missing)}")
        ratings = row["ratings"]
        bad = [k for k in RUBRIC if not isinstance(ratings.get(k), (int, float)) or not 0 <= ratings[k] <= 1]
        if bad:
            raise BenchmarkDataError(f"{path}:{n}: ratings {bad} missing or outside [0, 1]")
        if row["critique_id"] in seen:
            raise BenchmarkDataError(f"{path}:{n}: duplicate critique_id {row['critique_id']!r}")
        seen.add(row["critique_id"])
        items.append(CritiqueItem(id=str(row["critique_id"]), position_id=str(row["position_id"]),
                                  position=row["position"], critique=row["critique"],
                                  ratings={k: float(ratings[k]) for k in RUBRIC}))
    if not items:
        raise BenchmarkDataError(f"{path}: no critiques")
    return sorted(items, key=lambda it: (it.position_id, it.id))


# ------------------------------------------------------------------------------------------- the judge graph


class CritiqueState(TypedDict, total=False):
    item: CritiqueItem
    comment: str
    ratings: dict[str, dict[str, float]]  # criterion -> {"argmax": x, "weighted": y} in [0, 1]
    calls: list[CallRecord]


def build_critique_graph(ctx: JudgeContext, comment_words: int = 60) -> Any:
    def messages(item: CritiqueItem) -> list:
        fence = "CRITIQUE-DATA-" + hashlib.sha256((item.position + item.critique).encode()).hexdigest()[:12]
        return [SystemMessage(content=P.render("system.j2", P.SystemVars(fence=fence))),
                HumanMessage(content=P.render("critique_comment.j2", CritiqueCommentVars(
                    position=P.sanitize(item.position, fence), critique=P.sanitize(item.critique, fence),
                    fence=fence, words=comment_words), TEMPLATES))]

    async def assess(state: CritiqueState) -> dict[str, Any]:
        text, record = await ctx.gateway.text(messages(state["item"]), node="assess_critique", words=comment_words)
        return {"comment": text, "calls": [record]}

    async def rate(state: CritiqueState) -> dict[str, Any]:
        msgs = [*messages(state["item"]), AIMessage(content=state["comment"]),
                HumanMessage(content=P.render("critique_rate.j2", P.NoVars(), TEMPLATES))]
        raw, logprobs, record = await ctx.gateway.text_with_logprobs(msgs, node="rate_critique", max_tokens=120,
                                                                     json_schema=RubricAnswer)
        try:
            answer = RubricAnswer.model_validate_json(raw)
        except ValueError as e:
            raise StructuredOutputError("rate_critique", raw, str(e).splitlines()[0]) from None
        ratings = {}
        for key in RUBRIC:
            value = getattr(answer, key)
            m = re.search(rf'"{key}"\s*:\s*(\d)', raw)
            dist = distribution_at(raw, m.start(1), logprobs, SCALE) if m else None
            weighted = sum(k * p for k, p in dist.items()) if dist else float(value)
            ratings[key] = {"argmax": (value - 1) / 4, "weighted": round((weighted - 1) / 4, 4)}
        return {"ratings": ratings, "calls": [*state.get("calls", []), record]}

    g = StateGraph(CritiqueState)
    g.add_node("assess_critique", assess)
    g.add_node("rate_critique", rate)
    g.add_edge(START, "assess_critique")
    g.add_edge("assess_critique", "rate_critique")
    g.add_edge("rate_critique", END)
    return g.compile()


@benchmark("critique rubric ratings from a JSONL file (--data required; ranking error, weighted loss)")
class CritiqueRatings(Benchmark):
    name = "critiques"
    modes_matter = False
    headline = ("ranking_error_argmax", "ranking_error_weighted", "weighted_loss_argmax", "weighted_loss_weighted")

    def __init__(self, path: str | Path | None):
        if path is None:
            raise BenchmarkDataError("critiques: give the JSONL file with --data (schema: docs/researchers.md, "
                                     "'Reproducing the papers')")
        self.path = Path(path)
        self.description = f"Critique ratings from {self.path.name}: rubric ratings in [0, 1] per critique"
        self._items: list[CritiqueItem] | None = None

    def load(self) -> list[CritiqueItem]:  # type: ignore[override]
        if self._items is None:
            self._items = load_critiques(self.path)
        return self._items

    def gold_record(self, item: CritiqueItem) -> dict[str, Any]:  # type: ignore[override]
        return {"gold": item.ratings, "position_id": item.position_id}

    async def run_item(self, item: CritiqueItem, settings: JudgeSettings,  # type: ignore[override]
                       context: JudgeContext) -> dict[str, Any]:
        started = time.perf_counter()
        graph = build_critique_graph(context, settings.comment_words)
        out = await graph.ainvoke({"item": item, "calls": []})
        return {"status": "complete", "reason": None, "pred": out["ratings"],
                "usage": calls_usage(out.get("calls", []), started)}

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        done = [r for r in records if r["status"] == "complete"]
        rows = [MetricRow("completion_rate", "all", len(done) / len(records) if records else float("nan"),
                          len(records))]
        for how in ("argmax", "weighted"):
            groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for r in done:
                groups[r["position_id"]].append(r)
            ranking = [([r["gold"]["overall"] for r in g], [r["pred"]["overall"][how] for r in g])
                       for g in groups.values()]
            if done:
                rows.append(MetricRow(f"ranking_error_{how}", "all", weighted_pairwise_ranking_error(ranking),
                                      len(groups)))
                losses = [critique_weighted_loss(r["gold"], {k: v[how] for k, v in r["pred"].items()})
                          for r in done]
                rows.append(MetricRow(f"weighted_loss_{how}", "all", mean_ci(losses)[0], len(done)))
        return rows

    def baselines(self, items: list[CritiqueItem]) -> list[MetricRow]:  # type: ignore[override]
        middle = {k: 0.5 for k in RUBRIC}
        loss = sum(critique_weighted_loss(it.ratings, middle) for it in items) / len(items)
        groups: dict[str, list[CritiqueItem]] = defaultdict(list)
        for it in items:
            groups[it.position_id].append(it)
        flat = [([it.ratings["overall"] for it in g], [0.5] * len(g)) for g in groups.values()]
        return [MetricRow("weighted_loss", "all", loss, len(items), baseline="constant 0.5"),
                MetricRow("ranking_error", "all", weighted_pairwise_ranking_error(flat), len(groups),
                          baseline="constant (all ties)")]
