"""The five modes of the Debatrix paper, each its own builder, registered by name.

| mode            | per-speech analysis | context for the analysis | dimensions              |
|-----------------|---------------------|--------------------------|-------------------------|
| debatrix        | yes                 | previous analyses        | split, merged by panel  |
| chronological   | yes                 | previous analyses        | one general dimension   |
| dimensional     | no (whole debate)   | -                        | split, merged by panel  |
| noniterative    | yes                 | previous raw speeches    | split, merged by panel  |
| direct          | no (whole debate)   | -                        | one general dimension   |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph

from debatrix.context import JudgeContext
from debatrix.dimension import Dimension, DimensionRegistry
from debatrix.errors import ConfigurationError, UnknownModeError
from debatrix.models import DebateFormat
from .column import build_iterative_column, build_raw_column
from .nodes import guarded, previous_analyses, previous_speeches
from .panel import after_columns, make_finish, make_prepare, panel_comment, panel_decide, to_columns
from .serde import registered
from .state import JudgeInput, JudgeOutput, JudgeState
from .wiring import bind


@dataclass(frozen=True)
class ModeShape:
    """What a mode's graph does, for its builder and for estimates (calls, progress, context needed)."""

    per_speech: bool  # analyses and scores every speech
    panel: bool  # splits dimensions and merges them with a panel
    fixed: tuple[str, ...] | None  # the dimension(s) it always uses
    context: Literal["analyses", "speeches"] | None = None  # what a speech's analysis sees of the earlier ones
    debate_stage: bool = True  # judges the debate (the single-speech graph does not)


SHAPES = {
    "debatrix": ModeShape(per_speech=True, panel=True, fixed=None, context="analyses"),
    "chronological": ModeShape(per_speech=True, panel=False, fixed=("general",), context="analyses"),
    "dimensional": ModeShape(per_speech=False, panel=True, fixed=None),
    "noniterative": ModeShape(per_speech=True, panel=True, fixed=None, context="speeches"),
    "direct": ModeShape(per_speech=False, panel=False, fixed=("general",)),
    # single speeches (not a debate mode)
    "speech": ModeShape(per_speech=True, panel=False, fixed=None, context="analyses", debate_stage=False),
}


def resolve_dimensions(mode: str, wanted: tuple[str, ...] | None, fmt: DebateFormat,
                       registry: DimensionRegistry) -> list[Dimension]:
    """The dimensions a ``mode`` run judges: those asked for (names or a set), else the mode's fixed one or the
    format's default set. A single-dimension mode refuses several."""
    fixed = SHAPES[mode].fixed
    if fixed is not None:
        if wanted and len(wanted) > 1:
            raise ConfigurationError(f"this mode judges one dimension; got {', '.join(wanted)}")
        wanted = wanted or fixed
    return list(registry.resolve(wanted, fmt))


def order_count(n_debaters: int, orders: int) -> int:
    """How many orders the comparing judgments are asked in (see :func:`.verdicts.orders_for`)."""
    return 1 if n_debaters < 2 else max(1, min(orders, n_debaters))


def expected_calls(mode: str, n_speeches: int, n_debaters: int, n_dimensions: int, merged: bool,
                   orders: int = 1) -> int:
    """LLM requests a complete run makes (without retries or repairs): per dimension, an analysis and a score per
    speech, and per order one judgment and one decision (a structured answer each when ``merged``); the panel's
    comment and decision per order."""
    shape = SHAPES[mode]
    steps = 1 if merged else 2
    k = order_count(n_debaters, orders)
    per_dim = (steps * k if shape.debate_stage else 0) + (n_speeches * steps if shape.per_speech else 0)
    return per_dim * n_dimensions + (steps * k if shape.panel else 0)


def steps_per_row(mode: str, dimensions: list[str], n_speeches: int, merged: bool) -> dict[str, int]:
    """The progress events a complete run gives each dimension (per speech an analysis, and its score unless
    merged; the judgment, and its decision unless merged) and the panel (its comment and decision)."""
    shape = SHAPES[mode]
    step = 1 if merged else 2
    per_dim = (n_speeches * step if shape.per_speech else 0) + (step if shape.debate_stage else 0)
    return {**{d: per_dim for d in dimensions}, **({"panel": 2} if shape.panel else {})}


def critical_rounds(mode: str, n_speeches: int, merged: bool) -> int:
    """LLM rounds on the longest dependency chain of a run, when every call takes the same time: the speeches are
    analysed one after another (each scored in parallel with the next analysis), then the judgment and its
    decision, then the panel's. Dimensions and orders run side by side."""
    shape = SHAPES[mode]
    steps = 1 if merged else 2
    column = (n_speeches if shape.per_speech else 0) + (steps if shape.debate_stage else 1)
    return column + (steps if shape.panel else 0)


def max_in_flight(mode: str, n_dimensions: int, merged: bool, orders: int = 1) -> int:
    """The most requests a run ever has ready at once: per column an analysis and the previous speech's score, or
    the judgment in every order beside the last speech's score; the panel runs alone."""
    if merged or not SHAPES[mode].per_speech:
        return n_dimensions * max(1, orders)
    return n_dimensions * (orders + 1)


def _judge_graph(ctx: JudgeContext | None, mode: str, column: Any) -> StateGraph:
    shape = SHAPES[mode]
    g = StateGraph(JudgeState, context_schema=JudgeContext, input_schema=JudgeInput, output_schema=JudgeOutput)
    g.add_node("prepare", bind(make_prepare(mode), ctx))
    g.add_node("column", column)
    g.add_node("finish", bind(make_finish(mode, shape.per_speech, shape.panel), ctx))
    g.add_edge(START, "prepare")
    g.add_conditional_edges("prepare", to_columns, ["column", "finish"])
    if shape.panel:
        g.add_node("panel_comment", bind(guarded("panel_comment", panel_comment), ctx))
        g.add_node("panel_decide", bind(guarded("panel_decide", panel_decide), ctx))
        # a conditional edge straight from the columns would be decided per column, each seeing only its own
        # failures, so one failed dimension would not stop the panel: the columns join first
        g.add_node("columns_done", columns_done)
        g.add_edge("column", "columns_done")
        g.add_conditional_edges("columns_done", after_columns, ["panel_comment", "finish"])
        g.add_conditional_edges("panel_comment", after_panel_comment, ["panel_decide", "finish"])
        g.add_edge("panel_decide", "finish")
    else:
        g.add_edge("column", "finish")
    g.add_edge("finish", END)
    return g


async def columns_done(state: JudgeState) -> dict:
    """Where the dimension columns join (no work of its own)."""
    return {}


def after_panel_comment(state: JudgeState) -> str:
    """The merged panel decided in its comment call; otherwise the decision is read from the comment."""
    done = state.get("failures") or any(w.dimension == "general" for w in state.get("winner_decisions", []))
    return "finish" if done else "panel_decide"


def build_debatrix(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    return _judge_graph(ctx, "debatrix", build_iterative_column(ctx, previous_analyses, merged))


def build_chronological(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    return _judge_graph(ctx, "chronological", build_iterative_column(ctx, previous_analyses, merged))


def build_dimensional(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    return _judge_graph(ctx, "dimensional", build_raw_column(ctx, merged))


def build_noniterative(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    return _judge_graph(ctx, "noniterative", build_iterative_column(ctx, previous_speeches, merged))


def build_direct(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    return _judge_graph(ctx, "direct", build_raw_column(ctx, merged))


MODES: dict[str, Callable[[JudgeContext | None, bool], StateGraph]] = {
    "debatrix": build_debatrix,
    "chronological": build_chronological,
    "dimensional": build_dimensional,
    "noniterative": build_noniterative,
    "direct": build_direct,
}


def build_graph(mode: str, ctx: JudgeContext | None = None, *, merged: bool = False, checkpointer: Any = None) -> Any:
    try:
        builder = MODES[mode]
    except KeyError:
        raise UnknownModeError(f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}") from None
    return builder(ctx, merged).compile(checkpointer=registered(checkpointer), name=f"debatrix-{mode}")


def build_speech_graph(ctx: JudgeContext | None = None, *, merged: bool = False, checkpointer: Any = None) -> Any:
    """Judge speeches on their own: per dimension, analyse and judge each speech (no debate-level stage)."""
    column = build_iterative_column(ctx, previous_analyses, merged, debate_stage=False)
    g = _judge_graph(ctx, "speech", column)
    return g.compile(checkpointer=registered(checkpointer), name="debatrix-speech")
