"""Dimension columns: the judge of one dimension, as a subgraph.

* iterative column: speech by speech (``analyze_speech`` loops), each speech scored from its analysis as soon as it
  is analysed, never delaying the next analysis (``score_speech``); then one judgment of the debate from the
  analyses (``judge_debate``) and the debaters' scores and the winner read from it (``decide_debate``).
* raw column: no per-speech analysis; the judgment reads the whole debate.

With ``merge_score_call`` each analysis and each judgment carries its scores in one structured answer,
so there are no ``score_speech`` / ``decide_debate`` steps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph

from debatrix.context import JudgeContext

from .nodes import PreviousContext, column_sends, decide_debate, judge_debate, make_analyze_speech, score_speech
from .state import Accumulated, ColumnState
from .wiring import add_step


def make_after_analyze(merge_score_call: bool, debate_stage: bool) -> Callable[[ColumnState], list[Any]]:
    def after_analyze(state: ColumnState) -> list[Any]:
        """Score the speech just analysed in parallel with analysing the next one (or judging the debate)."""
        if state.get("failures"):
            return [END]
        routes: list[Any] = [] if merge_score_call else [
            column_sends(state, "score_speech", analysis=state["analyses"][-1], asked=state.get("asked", []))]
        if state["index"] < len(state["debate"].speeches):
            routes.append("analyze_speech")
        elif debate_stage:
            routes.append("judge_debate")
        return routes or [END]

    return after_analyze


def after_judgment(state: ColumnState) -> Any:
    return END if state.get("failures") else "decide_debate"


def _judgment_nodes(g: StateGraph, ctx: JudgeContext | None, merge_score_call: bool) -> None:
    add_step(g, "judge_debate", judge_debate, ctx)
    if merge_score_call:
        g.add_edge("judge_debate", END)
        return
    add_step(g, "decide_debate", decide_debate, ctx)
    g.add_conditional_edges("judge_debate", after_judgment, ["decide_debate", END])
    g.add_edge("decide_debate", END)


def build_iterative_column(ctx: JudgeContext | None, previous: PreviousContext, merge_score_call: bool,
                           debate_stage: bool = True) -> Any:
    g = StateGraph(ColumnState, input_schema=ColumnState, output_schema=Accumulated)
    add_step(g, "analyze_speech", make_analyze_speech(previous), ctx)
    targets: list[Any] = ["analyze_speech", END]
    if not merge_score_call:
        add_step(g, "score_speech", score_speech, ctx)
        targets.append("score_speech")
    g.add_edge(START, "analyze_speech")
    if debate_stage:
        _judgment_nodes(g, ctx, merge_score_call)
        targets.append("judge_debate")
    g.add_conditional_edges("analyze_speech", make_after_analyze(merge_score_call, debate_stage), targets)
    return g.compile()


def build_raw_column(ctx: JudgeContext | None, merge_score_call: bool) -> Any:
    g = StateGraph(ColumnState, input_schema=ColumnState, output_schema=Accumulated)
    _judgment_nodes(g, ctx, merge_score_call)
    g.add_edge(START, "judge_debate")
    return g.compile()
