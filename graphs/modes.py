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
from typing import Any

from langgraph.graph import END, START, StateGraph

from debatrix.context import JudgeContext
from debatrix.errors import UnknownModeError
from debatrix.models import Debate

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


@dataclass(frozen=True)
class ModeShape:
    """What a mode's graph does, for its builder and for estimates (calls, progress)."""

    per_speech: bool  # analyses and judges every speech
    panel: bool  # splits dimensions and merges them with a panel
    fixed: tuple[str, ...] | None  # the dimension(s) it always uses


SHAPES = {
    "debatrix": ModeShape(per_speech=True, panel=True, fixed=None),
    "chronological": ModeShape(per_speech=True, panel=False, fixed=("general",)),
    "dimensional": ModeShape(per_speech=False, panel=True, fixed=None),
    "noniterative": ModeShape(per_speech=True, panel=True, fixed=None),
    "direct": ModeShape(per_speech=False, panel=False, fixed=("general",)),
    "speech": ModeShape(per_speech=True, panel=False, fixed=None),  # single speeches (not a debate mode)
}


def expected_calls(mode: str, n_speeches: int, n_debaters: int, n_dimensions: int, merged: bool) -> int:
    """LLM requests a complete run makes (without retries or repairs)."""
    shape = SHAPES[mode]
    per_judgment = 1 if merged else 2
    per_dim = (n_debaters + 1) * per_judgment
    if shape.per_speech:
        per_dim += n_speeches * (1 + per_judgment) + 1
    return per_dim * n_dimensions + (2 if shape.panel else 0)


def critical_rounds(mode: str, n_speeches: int, merged: bool) -> int:
    """LLM rounds on the longest dependency chain of a run, when every call takes the same time: the speeches are
    analysed one after another (each judged in parallel with the next analysis), then the debate analysis, the
    final judges (debaters and winner in parallel) and the panel. Dimensions run side by side."""
    shape = SHAPES[mode]
    per_judgment = 1 if merged else 2
    column = (n_speeches + 1 + per_judgment) if shape.per_speech else per_judgment
    return column + (2 if shape.panel else 0)


def _judge_graph(ctx: JudgeContext | None, mode: str, column: Any, preflight: Preflight) -> StateGraph:
    shape = SHAPES[mode]
    panel, per_speech, fixed = shape.panel, shape.per_speech, shape.fixed
    g = StateGraph(JudgeState, context_schema=JudgeContext, input_schema=JudgeInput, output_schema=JudgeOutput)
    def calls_needed(debate: Debate, n_dims: int, run_ctx: JudgeContext) -> int:
        return expected_calls(mode, len(debate.speeches), len(debate.debaters), n_dims,
                              run_ctx.settings.llm.merge_score_call)

    g.add_node("prepare", bind(make_prepare(preflight, fixed, calls_needed), ctx))
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
    return _judge_graph(ctx, "debatrix", column, preflight_speeches)


def build_chronological(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    column = build_iterative_column(ctx, previous_analyses, merged)
    return _judge_graph(ctx, "chronological", column, preflight_speeches)


def build_dimensional(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    return _judge_graph(ctx, "dimensional", build_raw_column(ctx, merged), preflight_transcript)


def build_noniterative(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    column = build_iterative_column(ctx, previous_speeches, merged)
    return _judge_graph(ctx, "noniterative", column, preflight_transcript)


def build_direct(ctx: JudgeContext | None, merged: bool) -> StateGraph:
    return _judge_graph(ctx, "direct", build_raw_column(ctx, merged), preflight_transcript)


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
    g = _judge_graph(ctx, "speech", column, preflight_speeches)
    return g.compile(checkpointer=checkpointer, name="debatrix-speech")
