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
from typing import Any

from langgraph.graph import END, START, StateGraph

from debatrix.context import JudgeContext
from debatrix.errors import UnknownModeError

from .column import build_iterative_column, build_raw_column
from .nodes import guarded, previous_analyses, previous_speeches
from .panel import (
    Preflight,
    after_columns,
    make_finish,
    make_prepare,
    panel_comment,
    panel_decide,
    preflight_speeches,
    preflight_transcript,
    to_columns,
)
from .state import JudgeInput, JudgeOutput, JudgeState
from .wiring import bind


def _judge_graph(ctx: JudgeContext | None, mode: str, column: Any, preflight: Preflight, *, panel: bool,
                 per_speech: bool, fixed: tuple[str, ...] | None) -> StateGraph:
    g = StateGraph(JudgeState, context_schema=JudgeContext, input_schema=JudgeInput, output_schema=JudgeOutput)
    g.add_node("prepare", bind(make_prepare(preflight, fixed), ctx))
    g.add_node("column", column)
    g.add_node("finish", bind(make_finish(mode, per_speech, panel), ctx))
    g.add_edge(START, "prepare")
    g.add_conditional_edges("prepare", to_columns, ["column", "finish"])
    if panel:
        g.add_node("panel_comment", bind(guarded("panel_comment", panel_comment), ctx))
        g.add_node("panel_decide", bind(guarded("panel_decide", panel_decide), ctx))
        g.add_conditional_edges("column", after_columns, ["panel_comment", "finish"])
        g.add_edge("panel_comment", "panel_decide")
        g.add_edge("panel_decide", "finish")
    else:
        g.add_edge("column", "finish")
    g.add_edge("finish", END)
    return g


def build_debatrix(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    column = build_iterative_column(ctx, previous_analyses, merged)
    return _judge_graph(ctx, "debatrix", column, preflight_speeches, panel=True, per_speech=True, fixed=None)


def build_chronological(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    column = build_iterative_column(ctx, previous_analyses, merged)
    return _judge_graph(ctx, "chronological", column, preflight_speeches, panel=False, per_speech=True,
                        fixed=("general",))


def build_dimensional(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    return _judge_graph(ctx, "dimensional", build_raw_column(ctx, merged), preflight_transcript, panel=True,
                        per_speech=False, fixed=None)


def build_noniterative(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    column = build_iterative_column(ctx, previous_speeches, merged)
    return _judge_graph(ctx, "noniterative", column, preflight_transcript, panel=True, per_speech=True, fixed=None)


def build_direct(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    return _judge_graph(ctx, "direct", build_raw_column(ctx, merged), preflight_transcript, panel=False,
                        per_speech=False, fixed=("general",))


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
    return builder(ctx, merged).compile(checkpointer=checkpointer, name=f"debatrix-{mode}")


def build_speech_graph(ctx: JudgeContext | None = None, *, merged: bool = False, checkpointer: Any = None) -> Any:
    """Judge speeches on their own: per dimension, analyse and judge each speech (no debate-level stage)."""
    column = build_iterative_column(ctx, previous_analyses, merged, debate_stage=False)
    g = _judge_graph(ctx, "speech", column, preflight_speeches, panel=False, per_speech=True, fixed=None)
    return g.compile(checkpointer=checkpointer, name="debatrix-speech")
