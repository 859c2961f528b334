"""The start and the end of every judge graph: preparation (dimensions, budget check), the panel that merges
dimensions by weight, and the assembly of the :class:`JudgeResult`."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.types import Send

from debatrix import __version__
from debatrix import prompting as P
from debatrix.context import JudgeContext
from debatrix.dimension import Dimension
from debatrix.errors import ConfigurationError, ContextWindowExceeded, InvalidDebateError
from debatrix.llm import winner_answer
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

from .state import JudgeState, WinnerDecision

Preflight = Callable[[Debate, JudgeContext], list[str]]
PREFLIGHT_OVERHEAD = 700  # system prompt, task text and format instructions


def _fits(ctx: JudgeContext, text: str, what: str) -> list[str]:
    tokens = ctx.gateway.prompt_tokens([HumanMessage(content=text)]) + PREFLIGHT_OVERHEAD
    try:
        ctx.gateway.check_fits(tokens, what)
    except ContextWindowExceeded as e:
        return [f"preflight: ContextWindowExceeded: {e}"]
    return []


def preflight_speeches(debate: Debate, ctx: JudgeContext) -> list[str]:
    """Modes that read one speech at a time: every speech, with the debate header, must fit."""
    fence = P.fence_for(debate)
    head = P.debate_header(debate, fence)
    out: list[str] = []
    for i in range(len(debate.speeches)):
        out += _fits(ctx, head + P.speech_block(debate, i, fence), f"speech {i + 1}")
    return out


def preflight_transcript(debate: Debate, ctx: JudgeContext) -> list[str]:
    """Modes that read the whole debate in one input: the full transcript must fit."""
    fence = P.fence_for(debate)
    return _fits(ctx, P.debate_header(debate, fence) + P.transcript(debate, fence), "the full debate transcript")


def make_prepare(preflight: Preflight, fixed: tuple[str, ...] | None,
                 calls_needed: Callable[[Debate, int, JudgeContext], int] | None = None) -> Callable:
    async def prepare(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
        debate = state.get("debate")
        if isinstance(debate, dict):
            debate = Debate.model_validate(debate)
        if not isinstance(debate, Debate):
            raise InvalidDebateError("<graph input>", [("debate", "expected a Debate")])
        wanted = ctx.settings.dimensions
        if fixed is not None:
            if wanted and len(wanted) > 1:
                raise ConfigurationError(f"this mode judges one dimension; got {', '.join(wanted)}")
            wanted = wanted or fixed
        dims = list(ctx.registry.resolve(wanted, debate.format))
        failures = preflight(debate, ctx)
        if calls_needed is not None:
            needed, budget = calls_needed(debate, len(dims), ctx), ctx.settings.max_llm_calls
            if needed > budget:
                failures.append(f"CallBudgetExceeded: judging this debate takes {needed} LLM calls, more than "
                                f"max_llm_calls = {budget}; nothing was sent (raise the limit to judge it)")
        return {
            "debate": debate,
            "dimensions": dims,
            "run_id": state.get("run_id") or uuid.uuid4().hex[:16],
            "resumed": bool(state.get("run_id")),
            "started_at": datetime.now(UTC).isoformat(),
            "failures": failures,
        }

    return prepare


def to_columns(state: JudgeState) -> list[Any]:
    if state.get("failures"):
        return ["finish"]
    return [Send("column", {"debate": state["debate"], "run_id": state["run_id"], "resumed": state["resumed"],
                            "dimension": d})
            for d in state["dimensions"]]


def after_columns(state: JudgeState) -> str:
    return "finish" if state.get("failures") else "panel_comment"


# --------------------------------------------------------------------------------------------- panel


def _panel_messages(state: JudgeState, ctx: JudgeContext) -> list[Any]:
    debate = state["debate"]
    fence = P.fence_for(debate)
    reports = []
    for dim in state["dimensions"]:
        analysis = next((a.text for a in state.get("debate_analyses", []) if a.dimension == dim.name),
                        "(this dimension was judged from the full debate without a separate analysis)")
        decision = next(w for w in state.get("winner_decisions", []) if w.dimension == dim.name)
        scores = ", ".join(f"{j.debater}: {j.score:g}" for j in _debater_judgments(state, dim.name, debate))
        reports.append({"name": dim.name, "weight": f"{dim.weight:g}", "analysis": analysis,
                        "verdict": f"winner {decision.winner or 'tie'}. {decision.comment}", "scores": scores})
    choices = [d.name for d in debate.debaters]
    system = P.render("system.j2", P.SystemVars(fence=fence))
    text = P.render("panel.j2", P.PanelVars(header=P.debate_header(debate, fence), reports=reports, choices=choices,
                                            words=_panel_words(ctx)))
    return [SystemMessage(content=system), HumanMessage(content=text)]


def _panel_words(ctx: JudgeContext) -> int:
    return round(ctx.settings.comment_words * 1.5)


async def panel_comment(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    comment, record = await ctx.gateway.text(_panel_messages(state, ctx), node="panel_comment", dimension="general",
                                             words=_panel_words(ctx))
    return {"panel_comment": comment, "calls": [record]}


async def panel_decide(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    choices = [d.name for d in state["debate"].debaters]
    ask = P.render("ask_winner.j2", P.AskWinnerVars(dimension="overall", choices=choices))
    messages = [*_panel_messages(state, ctx), AIMessage(content=state["panel_comment"]), HumanMessage(content=ask)]
    answer, records = await ctx.gateway.structured(messages, winner_answer(choices), node="panel_decide",
                                                   dimension="general")
    decision = WinnerDecision(dimension="general", comment=state["panel_comment"], winner=answer.winner)
    return {"winner_decisions": [decision], "calls": records}


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


def _debater_judgments(state: JudgeState, dim: str, debate: Debate) -> list[DebaterJudgment]:
    order = {d.name: i for i, d in enumerate(debate.debaters)}
    return sorted((j for j in state.get("debater_judgments", []) if j.dimension == dim), key=lambda j: order[j.debater])


def _dimension_result(state: JudgeState, dim: Dimension) -> DimensionResult:
    debate = state["debate"]
    judgments = _debater_judgments(state, dim.name, debate)
    decision = next((w for w in state.get("winner_decisions", []) if w.dimension == dim.name), None)
    verdict = None
    if decision is not None:
        sc = score_winner({j.debater: j.score for j in judgments}, debate, dim.allow_tie, dim.tie_margin)
        verdict = Verdict(dimension=dim.name, comment=decision.comment, winner=decision.winner, score_winner=sc)
    return DimensionResult(
        name=dim.name, weight=dim.weight, allow_tie=dim.allow_tie,
        analyses=tuple(sorted((a for a in state.get("analyses", []) if a.dimension == dim.name), key=lambda a: a.index)),
        speech_judgments=tuple(sorted((s for s in state.get("speech_judgments", []) if s.dimension == dim.name),
                                      key=lambda s: s.index)),
        debate_analysis=next((a.text for a in state.get("debate_analyses", []) if a.dimension == dim.name), None),
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
    decision = next((w for w in state.get("winner_decisions", []) if w.dimension == "general"), None)
    verdict = None
    if decision is not None:
        sc = score_winner({j.debater: j.score for j in judgments}, debate, False, 0)
        verdict = Verdict(dimension="general", comment=decision.comment, winner=decision.winner, score_winner=sc)
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
        result = JudgeResult(
            debatrix_version=__version__, debate_id=debate.id, motion=debate.motion, format=debate.format,
            mode=mode, status=Status.INCOMPLETE if failures else Status.COMPLETE,
            incomplete_reason="; ".join(failures) or None, dimensions=tuple(dims), general=general,
            usage=Usage.from_calls(state.get("calls", []), (finished - started).total_seconds()),
            settings={**ctx.settings.public_dict(), "model": ctx.gateway.description, "run_id": state["run_id"]},
            started_at=started, finished_at=finished,
        )
        if per_speech:  # only the per-speech modes open memories
            await asyncio.to_thread(ctx.memory.finish, state["run_id"])
        return {"result": result}

    return finish
