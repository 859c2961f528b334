"""The start of every judge graph: the debate checked and its dimensions resolved, the whole run's size checked
against the context window and the call budget before any call, then one column per dimension."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from langgraph.types import Send

from debatrix.context import JudgeContext
from debatrix.core.errors import InvalidDebateError
from debatrix.core.loader import validated
from debatrix.core.models import Debate
from debatrix.core.modes import expected_calls, resolve_dimensions

from .state import JudgeState


def make_prepare(mode: str) -> Callable:
    async def prepare(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
        from .budget import fit_problem

        debate = state.get("debate")
        if isinstance(debate, dict):  # a JSON input (a deployment's): refused in the loader's words
            debate = validated(debate, "<graph input>")
        if not isinstance(debate, Debate):
            raise InvalidDebateError("<graph input>", [("debate", "expected a Debate")])
        dims = resolve_dimensions(mode, ctx.settings.dimensions, debate.format, ctx.registry)
        failures = []
        # the cheap check first: a debate of thousands of speeches is refused by its call count before every
        # prompt of it is rendered to size the context
        if mode != "speech":
            needed = expected_calls(mode, len(debate.speeches), len(debate.debaters), len(dims),
                                    ctx.settings.llm.merge_score_call, ctx.settings.orders,
                                    ctx.settings.llm.score_in_analysis)
            budget = ctx.settings.max_llm_calls
            if needed > budget:
                failures.append(f"CallBudgetExceeded: judging this debate takes {needed} LLM calls, more than "
                                f"max_llm_calls = {budget}; nothing was sent (raise the limit to judge it)")
        if not failures:  # rendering a long debate's prompts takes a while: not on the event loop
            problem = await asyncio.to_thread(fit_problem, debate, mode, ctx.settings, dims,
                                              ctx.settings.llm.context_window)
            if problem is not None:
                failures.append(f"preflight: ContextWindowExceeded: {problem}")
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
