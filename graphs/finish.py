"""The end of every judge graph: the :class:`JudgeResult` assembled from the state (per dimension and the panel's
general verdict), marked incomplete with the reasons when anything is missing, then checked
(:func:`.checks.check_result`: what the judge wrote, by lookup)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from debatrix import __version__
from debatrix.context import JudgeContext
from debatrix.core.probabilities import CalibrationMap, calibration_for, resolved_layout, shown
from debatrix.core.dimension import Dimension
from debatrix.core.models import (
    Debate,
    DebateFormat,
    DebaterJudgment,
    DimensionResult,
    JudgeResult,
    Status,
    Usage,
    Verdict,
)
from debatrix.llm.local import served_by

from .checks import check_result
from .state import JudgeState


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


def judged_debaters(state: JudgeState, dim: str, debate: Debate) -> list[DebaterJudgment]:
    order = {d.name: i for i, d in enumerate(debate.debaters)}
    return sorted(state.get("debater_judgments", {}).get(dim, []), key=lambda j: order[j.debater])


def _dimension_result(state: JudgeState, dim: Dimension, cmap: CalibrationMap | None) -> DimensionResult:
    debate = state["debate"]
    judgments = judged_debaters(state, dim.name, debate)
    decision = _first(state, "winner_decisions", dim.name)
    verdict = None
    analyses = tuple(sorted(state.get("analyses", {}).get(dim.name, []), key=lambda a: a.index))
    if decision is not None:
        sc = score_winner({j.debater: j.score for j in judgments}, debate, dim.allow_tie, dim.tie_margin)
        gaps = tuple(f"judged without the analysis of speech {a.index + 1} ({a.missing})" for a in analyses
                     if a.missing)
        verdict = _calibrated(decision.model_copy(update={"score_winner": sc,
                                                     "warnings": (*decision.warnings, *gaps)}), cmap)
    return DimensionResult(
        name=dim.name, weight=dim.weight, allow_tie=dim.allow_tie, tie_margin=dim.tie_margin,
        analyses=analyses,
        speech_judgments=tuple(sorted(state.get("speech_judgments", {}).get(dim.name, []), key=lambda s: s.index)),
        debate_analysis=decision.comment if decision is not None else getattr(
            _first(state, "debate_analyses", dim.name), "comment", None),
        debater_judgments=tuple(judgments),
        verdict=verdict,
        ledger=state.get("ledgers", {}).get(dim.name),
    )


def _merged_general(state: JudgeState, dims: list[DimensionResult], cmap: CalibrationMap | None
                    ) -> DimensionResult:
    """The panel's general result: debater scores are the weighted mean of the dimensions' scores (SC);
    the winner is the panel chair's decision (DP)."""
    debate = state["debate"]
    dims = [d for d in dims if d.verdict is None or not d.verdict.not_judged]  # weighs nothing: not judged
    total = sum(d.weight for d in dims)
    decision = state.get("panel")
    judgments = []
    # a panel that names no winner shows no scores, which would name one unsaid
    for debater in () if decision is not None and decision.not_judged else debate.debaters:
        parts = [(d.weight, j.score) for d in dims for j in d.debater_judgments if j.debater == debater.name]
        if len(parts) == len(dims) and total:
            score = round(sum(w * s for w, s in parts) / total, 3)
            detail = ", ".join(f"{d.name} {j.score:g}×{d.weight:g}" for d in dims for j in d.debater_judgments
                               if j.debater == debater.name)
            judgments.append(DebaterJudgment(dimension="general", debater=debater.name, score=score,
                                             comment=f"weighted mean of the dimension scores: {detail}"))
    verdict = None
    if decision is not None:
        sc = score_winner({j.debater: j.score for j in judgments}, debate, False, 0)
        verdict = _calibrated(decision.model_copy(update={"dimension": "general", "score_winner": sc}), cmap)
    return DimensionResult(name="general", weight=total, allow_tie=False, debater_judgments=tuple(judgments),
                           verdict=verdict)


def said_once(failures: list[str]) -> str:
    """The failures ("where: what") with each "what" said once after all its places: a dead endpoint fails every
    dimension's column with the same error, which is one thing to read, not three."""
    places: dict[str, list[str]] = {}
    for f in failures:
        where, sep, what = f.partition(": ")
        places.setdefault(what if sep else f, []).extend([where] if sep else [])
    return "; ".join(f"{', '.join(dict.fromkeys(w))}: {what}" if w else what for what, w in places.items())


def _calibrated(v: Verdict, cmap: CalibrationMap | None) -> Verdict:
    """The verdict with its confidence as shown: calibrated for the run's model and mode where a map exists."""
    if v.not_judged:
        return v
    q, text = shown((v.probabilities or {}).get(v.winner or "tie"), v.method, cmap)
    return v.model_copy(update={"calibrated_probability": q, "confidence": text})


def _missing(d: DimensionResult, debate: Debate, per_speech: bool) -> list[str]:
    if d.verdict is not None and d.verdict.not_judged:
        # a dimension the model cannot judge (measured blind) is complete in saying so; one whose decisions are
        # missing is not
        blind = d.verdict.blind or (d.ledger is not None and bool(d.ledger.blind))
        return [] if blind else [f"{d.name}: {d.verdict.not_judged}"]
    out = []
    # the flow's completeness is the share of its decisions made (a dimension missing too many is not judged, above):
    # a speech whose few decisions for a dimension are all missing has no score there, and the warnings name them
    per_speech = per_speech and d.ledger is None
    # a speech whose analysis is missing (recorded so, and warned of) has no judgment to count
    expected = len(debate.speeches) - sum(1 for a in d.analyses if a.missing)
    if per_speech and len({s.index for s in d.speech_judgments}) < expected:
        out.append(f"{d.name}: {len(d.speech_judgments)} of {len(debate.speeches)} speech judgments")
    if debate.format is not DebateFormat.SINGLE:
        if len(d.debater_judgments) != len(debate.debaters):
            out.append(f"{d.name}: {len(d.debater_judgments)} of {len(debate.debaters)} debater judgments")
        if d.verdict is None:
            out.append(f"{d.name}: no winner verdict")
    return out


async def finish(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    mode = ctx.mode
    debate = state["debate"]
    # a mode's map is fitted on its overall verdict against the audience's: in a panel mode that is the panel's
    # verdict, so the dimensions' own verdicts stay uncalibrated (nothing was fitted on them)
    layout = resolved_layout(ctx.settings.order_layout, ctx.settings.llm.model, mode.name,
                             len(debate.debaters))
    cmap = calibration_for(ctx.settings.llm.model, mode.name, layout)
    dims = [_dimension_result(state, d, None if mode.panel else cmap) for d in state.get("dimensions", [])]
    if debate.format is DebateFormat.SINGLE:
        general = None
    elif mode.panel:
        general = _merged_general(state, dims, cmap)
    else:
        general = dims[0].model_copy(update={"name": "general"}) if dims else None
    failures = list(state.get("failures", []))
    if ctx.gateway.unsaved is not None:  # said where a resume looks for them (the reason may name another failure)
        failures.append(f"answers paid for after the answer cache stopped are kept in {ctx.gateway.unsaved} and "
                        "stored in the cache when it is next opened (a resume pays for none of them again)")
    if not failures:
        for d in dims:
            failures += _missing(d, debate, mode.per_speech)
        if mode.panel and general is not None:
            failures += _missing(general, debate, False)
    started = datetime.fromisoformat(state["started_at"])
    finished = datetime.now(UTC)
    biases = [d.verdict.position_bias for d in [*dims, *([general] if mode.panel and general else [])]
              if d.verdict is not None and d.verdict.position_bias is not None]
    result = JudgeResult(
        debatrix_version=__version__, debate_id=debate.id, motion=debate.motion, format=debate.format,
        mode=mode.name, speeches=debate.speeches, simultaneous=debate.simultaneous, status=Status.INCOMPLETE if failures else Status.COMPLETE,
        incomplete_reason=said_once(failures) or None, dimensions=tuple(dims), general=general,
        position_bias=round(sum(biases) / len(biases), 4) if biases else None,
        flow=tuple(sorted(state.get("flows", []), key=lambda f: f.index)),
        profile=ctx.profile.note if mode.reads_flow else "",
        usage=Usage.from_calls(state.get("calls", []), (finished - started).total_seconds()),
        call_log=tuple(state.get("calls", [])) if ctx.settings.llm.log_calls else (),
        settings={**ctx.settings.public_dict(), "order_layout_used": layout, "model": ctx.gateway.description,
                  "run_id": state["run_id"],
                  **({"served": served_by(ctx.local_server)} if ctx.local_server is not None else {})},
        started_at=started, finished_at=finished,
    )
    # a flow result cites passages by id: its checks are lookups in the passage table (its mode says which)
    checks = check_result(result, debate)
    result = result.model_copy(update={"checks": checks})
    if mode.per_speech and ctx.settings.memory.retrieval:  # only retrieval opens a context memory
        await asyncio.to_thread(ctx.memory.finish, state["run_id"])
    return {"result": result}
