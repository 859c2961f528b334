"""The start and the end of every judge graph: preparation (dimensions, budget check), the panel that merges
dimensions by weight, and the assembly of the :class:`JudgeResult`."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.types import Send

from debatrix import __version__
from debatrix import prompting as P
from debatrix.context import JudgeContext
from debatrix.dimension import Dimension
from debatrix.errors import InvalidDebateError
from debatrix.local import served_by
from debatrix.models import (
    Debate,
    DebateFormat,
    DebaterJudgment,
    DimensionResult,
    JudgeResult,
    Status,
    Usage,
    Verdict,
)
from debatrix.modes import expected_calls, resolve_dimensions

from .answers import winner_answer
from .state import DebateAnalysis, JudgeState


def make_prepare(mode: str) -> Callable:
    async def prepare(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
        from .budget import fit_problem

        debate = state.get("debate")
        if isinstance(debate, dict):
            debate = Debate.model_validate(debate)
        if not isinstance(debate, Debate):
            raise InvalidDebateError("<graph input>", [("debate", "expected a Debate")])
        dims = resolve_dimensions(mode, ctx.settings.dimensions, debate.format, ctx.registry)
        failures = []
        problem = fit_problem(debate, mode, ctx.settings, dims, ctx.settings.llm.context_window)
        if problem is not None:
            failures.append(f"preflight: ContextWindowExceeded: {problem}")
        if mode != "speech":
            needed = expected_calls(mode, len(debate.speeches), len(debate.debaters), len(dims),
                                    ctx.settings.llm.merge_score_call, ctx.settings.orders)
            budget = ctx.settings.max_llm_calls
            if needed > budget:
                failures.append(f"CallBudgetExceeded: judging this debate takes {needed} LLM calls, more than "
                                f"max_llm_calls = {budget}; nothing was sent (raise the limit to judge it)")
        return {
            "debate": debate,
            "dimensions": dims,
            "run_id": state.get("run_id") or uuid.uuid4().hex[:16],
            "started_at": datetime.now(UTC).isoformat(),
            "failures": failures,
        }

    return prepare


def to_columns(state: JudgeState) -> list[Any]:
    if state.get("failures"):
        return ["finish"]
    return [Send("column", {"debate": state["debate"], "run_id": state["run_id"],
                            "dimension": d})
            for d in state["dimensions"]]


def after_columns(state: JudgeState) -> str:
    return "finish" if state.get("failures") else "panel_comment"


# --------------------------------------------------------------------------------------------- panel


def _panel_messages(state: JudgeState, ctx: JudgeContext, order: tuple[str, ...]) -> list[Any]:
    from .nodes import header, panel_words, system_message

    debate = state["debate"]
    reports = []
    for dim in state["dimensions"]:
        decision = state["winner_decisions"][dim.name][0]
        judged = {j.debater: j.score for j in _debater_judgments(state, dim.name, debate)}
        scores = ", ".join(f"{name} {judged[name]:.3g}" for name in order if name in judged)
        reports.append({"name": dim.name, "weight": f"{dim.weight:g}", "scores": scores,
                        "winner": decision.winner or "tie", "judgment": decision.comment})
    text = P.render("panel.j2", P.PanelVars(header=header(debate), reports=reports,
                                            choices=list(order), words=panel_words(ctx.settings)))
    return [system_message(debate), HumanMessage(content=text)]


async def panel_comment(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    """The chair's decision over the dimensions' reports, once per order of the debaters."""
    from . import verdicts as V
    from .nodes import ask_merged, gathered, orders_of, panel_words

    debate = state["debate"]
    orders = orders_of(debate, ctx.settings)
    words = panel_words(ctx.settings)
    if ctx.settings.llm.merge_score_call:
        async def comment_with_winner(order: tuple[str, ...]) -> tuple[Any, list[Any]]:
            answer, lp, records = await ctx.gateway.structured_probed(
                ask_merged(_panel_messages(state, ctx, order), '"winner"'), winner_answer(order, with_comment=True),
                node="panel_comment", dimension="general", words=words, meta={"debatrix_choices": list(order)})
            return V.order_answer(order, order, answer.comment, decision=answer, decision_logprobs=lp), records

        done = await gathered(comment_with_winner(o) for o in orders)
        decision = V.combine("general", debate, [a for a, _ in done], allow_tie=False)
        return {"panel_comments": [DebateAnalysis(dimension="general", text=a.comment, order=a.order)
                                   for a, _ in done],
                "winner_decisions": [decision], "calls": [r for _, records in done for r in records]}

    async def written(order: tuple[str, ...]) -> tuple[DebateAnalysis, Any]:
        text, lp, record = await ctx.gateway.text_probed(_panel_messages(state, ctx, order), node="panel_comment",
                                                         dimension="general", words=words)
        named, probs = V.judgment_reading(text, lp, order)
        return DebateAnalysis(dimension="general", text=text, order=order, named=named, probabilities=probs), record

    done = await gathered(written(o) for o in orders)
    return {"panel_comments": [a for a, _ in done], "calls": [r for _, r in done]}


async def panel_decide(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    """The overall winner, read from each order's chair comment alone, the orders combined."""
    from . import verdicts as V
    from .nodes import extract_system, gathered

    debate = state["debate"]

    async def decide(comment: DebateAnalysis) -> tuple[Any, list[Any]]:
        order = comment.order
        text = P.render("panel_decide.j2", P.PanelDecideVars(
            motion=P.sanitize(debate.motion, P.fence_for(debate)), judgment=comment.text, choices=list(order)))
        answer, lp, records = await ctx.gateway.structured_probed(
            [extract_system(), HumanMessage(content=text)], winner_answer(order), node="panel_decide",
            dimension="general", meta={"debatrix_choices": list(order)})
        return V.order_answer(order, order, comment.text, named=comment.named, named_probs=comment.probabilities,
                              decision=answer, decision_logprobs=lp), records

    done = await gathered(decide(c) for c in state["panel_comments"])
    decision = V.combine("general", debate, [a for a, _ in done], allow_tie=False)
    return {"winner_decisions": [decision], "calls": [r for _, records in done for r in records]}


# --------------------------------------------------------------------------------------------- result


def score_winner(scores: dict[str, float], debate: Debate, allow_tie: bool, margin: float) -> str | None:
    """SC: compare debater scores; ``None`` is a tie (within ``margin`` where ties are allowed, or equal top)."""
    if len(scores) != len(debate.debaters) or not scores:
        return None
    if debate.format is DebateFormat.ONE_V_ONE:
        pro, con = (next(d.name for d in debate.debaters if d.side.value == s) for s in ("pro", "con"))
        diff = scores[pro] - scores[con]
        if diff == 0 or (allow_tie and abs(diff) <= margin):
            return None
        return pro if diff > 0 else con
    best = max(scores.values())
    top = [n for n, s in scores.items() if s == best]
    return top[0] if len(top) == 1 else None


def _first(state: JudgeState, key: str, dimension: str) -> Any:
    """The first item a dimension wrote under ``key`` (None: it wrote none)."""
    items = state.get(key, {}).get(dimension)  # type: ignore[attr-defined]
    return items[0] if items else None


def _debater_judgments(state: JudgeState, dim: str, debate: Debate) -> list[DebaterJudgment]:
    order = {d.name: i for i, d in enumerate(debate.debaters)}
    return sorted(state.get("debater_judgments", {}).get(dim, []), key=lambda j: order[j.debater])


def _dimension_result(state: JudgeState, dim: Dimension) -> DimensionResult:
    debate = state["debate"]
    judgments = _debater_judgments(state, dim.name, debate)
    decision = _first(state, "winner_decisions", dim.name)
    verdict = None
    if decision is not None:
        sc = score_winner({j.debater: j.score for j in judgments}, debate, dim.allow_tie, dim.tie_margin)
        verdict = Verdict(**decision.model_dump(), score_winner=sc)
    return DimensionResult(
        name=dim.name, weight=dim.weight, allow_tie=dim.allow_tie, tie_margin=dim.tie_margin,
        analyses=tuple(sorted(state.get("analyses", {}).get(dim.name, []), key=lambda a: a.index)),
        speech_judgments=tuple(sorted(state.get("speech_judgments", {}).get(dim.name, []), key=lambda s: s.index)),
        debate_analysis=decision.comment if decision is not None else getattr(
            _first(state, "debate_analyses", dim.name), "text", None),
        debater_judgments=tuple(judgments),
        verdict=verdict,
    )


def _merged_general(state: JudgeState, dims: list[DimensionResult]) -> DimensionResult:
    """The panel's general result: debater scores are the weighted mean of the dimensions' scores (SC);
    the winner is the panel chair's decision (DP)."""
    debate = state["debate"]
    total = sum(d.weight for d in dims)
    judgments = []
    for debater in debate.debaters:
        parts = [(d.weight, j.score) for d in dims for j in d.debater_judgments if j.debater == debater.name]
        if len(parts) == len(dims) and total:
            score = round(sum(w * s for w, s in parts) / total, 3)
            detail = ", ".join(f"{d.name} {j.score:g}×{d.weight:g}" for d in dims for j in d.debater_judgments
                               if j.debater == debater.name)
            judgments.append(DebaterJudgment(dimension="general", debater=debater.name, score=score,
                                             comment=f"weighted mean of the dimension scores: {detail}"))
    decision = _first(state, "winner_decisions", "general")
    verdict = None
    if decision is not None:
        sc = score_winner({j.debater: j.score for j in judgments}, debate, False, 0)
        verdict = Verdict(**decision.model_dump(), score_winner=sc)
    return DimensionResult(name="general", weight=total, allow_tie=False, debater_judgments=tuple(judgments),
                           verdict=verdict)


def _missing(d: DimensionResult, debate: Debate, per_speech: bool) -> list[str]:
    out = []
    if per_speech and len(d.speech_judgments) != len(debate.speeches):
        out.append(f"{d.name}: {len(d.speech_judgments)} of {len(debate.speeches)} speech judgments")
    if debate.format is not DebateFormat.SINGLE:
        if len(d.debater_judgments) != len(debate.debaters):
            out.append(f"{d.name}: {len(d.debater_judgments)} of {len(debate.debaters)} debater judgments")
        if d.verdict is None:
            out.append(f"{d.name}: no winner verdict")
    return out


def make_finish(mode: str, per_speech: bool, panel: bool) -> Callable:
    async def finish(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
        debate = state["debate"]
        dims = [_dimension_result(state, d) for d in state.get("dimensions", [])]
        if debate.format is DebateFormat.SINGLE:
            general = None
        elif panel:
            general = _merged_general(state, dims)
        else:
            general = dims[0].model_copy(update={"name": "general"}) if dims else None
        failures = list(state.get("failures", []))
        if not failures:
            for d in dims:
                failures += _missing(d, debate, per_speech)
            if panel and general is not None:
                failures += _missing(general, debate, False)
        started = datetime.fromisoformat(state["started_at"])
        finished = datetime.now(UTC)
        biases = [d.verdict.position_bias for d in [*dims, *([general] if panel and general else [])]
                  if d.verdict is not None and d.verdict.position_bias is not None]
        result = JudgeResult(
            debatrix_version=__version__, debate_id=debate.id, motion=debate.motion, format=debate.format,
            mode=mode, status=Status.INCOMPLETE if failures else Status.COMPLETE,
            incomplete_reason="; ".join(failures) or None, dimensions=tuple(dims), general=general,
            position_bias=round(sum(biases) / len(biases), 4) if biases else None,
            usage=Usage.from_calls(state.get("calls", []), (finished - started).total_seconds()),
            settings={**ctx.settings.public_dict(), "model": ctx.gateway.description, "run_id": state["run_id"],
                      **({"served": served_by(ctx.local_server)} if ctx.local_server is not None else {})},
            started_at=started, finished_at=finished,
        )
        if per_speech and ctx.settings.memory.retrieval:  # only retrieval opens a context memory
            await asyncio.to_thread(ctx.memory.finish, state["run_id"])
        return {"result": result}

    return finish
