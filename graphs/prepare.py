"""The start of every judge graph: the debate checked, the run's plan (its dimensions, calls and largest request)
taken from the context or made, the run's size checked against the context window and the call budget before any
call, then one column per dimension."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

from langgraph.types import Send

from debatrix.context import JudgeContext
from debatrix.core.errors import ContextWindowExceeded, InvalidDebateError
from debatrix.core.loader import validated
from debatrix.core.models import Debate

from .budget import over_budget, plan_run
from .state import JudgeState


async def prepare(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    debate = state.get("debate")
    if isinstance(debate, dict):  # a JSON input (a deployment's): refused in the loader's words
        debate = validated(debate, "<graph input>")
    if not isinstance(debate, Debate):
        raise InvalidDebateError("<graph input>", [("debate", "expected a Debate")])
    # the plan the caller made for this run (and sized the local server with), else made here; rendering a
    # long debate's prompts takes a while: not on the event loop
    mode = ctx.mode.name
    plan = ctx.plan_for(debate, mode) or await asyncio.to_thread(plan_run, debate, ctx.settings, ctx.registry, mode)
    failures = []
    window = ctx.settings.llm.context_window
    if over_budget(mode, plan.calls, ctx.settings):
        failures.append(f"CallBudgetExceeded: judging this debate takes {plan.calls} LLM calls, more than "
                        f"max_llm_calls = {ctx.settings.max_llm_calls}; nothing was sent (raise the limit to "
                        "judge it)")
    elif plan.largest is not None and plan.largest.tokens > window:
        problem = ContextWindowExceeded(plan.largest.tokens, window, plan.largest.what)
        failures.append(f"preflight: ContextWindowExceeded: {problem}")
    return {
        "debate": debate,
        "dimensions": list(plan.dimensions),
        "run_id": state.get("run_id") or uuid.uuid4().hex[:16],
        "started_at": datetime.now(UTC).isoformat(),
        "failures": failures,
    }


def to_columns(state: JudgeState) -> list[Any]:
    if state.get("failures"):
        return ["finish"]
    return [Send("column", {"debate": state["debate"], "run_id": state["run_id"], "dimension": d})
            for d in state["dimensions"]]
