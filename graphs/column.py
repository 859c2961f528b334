"""Dimension columns: the judge of one dimension, as a subgraph.

* iterative column: speech by speech (``analyze_speech`` loops), each speech judged as soon as it is analysed but
  never delaying the next analysis; then the debate analysis, the debater judges and the winner judge.
* raw column: no per-speech analysis; debater and winner judges read the whole debate.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from debatrix import prompting as P
from debatrix.context import JudgeContext

from .nodes import (
    JUDGES,
    PreviousContext,
    analyze_debate,
    guarded,
    make_analyze_speech,
    make_comment_node,
    make_decision_node,
    make_merged_node,
)
from .state import Accumulated, ColumnState, JudgmentTask
from .wiring import bind


def _judgment_nodes(graph: StateGraph, kinds: list[str], ctx: JudgeContext | None, merged: bool) -> None:
    for kind in kinds:
        judge = JUDGES[kind]
        if merged:
            graph.add_node(judge.comment_node, bind(guarded(judge.comment_node, make_merged_node(judge)), ctx))
        else:
            graph.add_node(judge.comment_node, bind(guarded(judge.comment_node, make_comment_node(judge)), ctx),
                           destinations=(judge.decision_node,))
            graph.add_node(judge.decision_node, bind(guarded(judge.decision_node, make_decision_node(judge)), ctx))


def _task(state: ColumnState, **extra: Any) -> JudgmentTask:
    return JudgmentTask(debate=state["debate"], run_id=state["run_id"], dimension=state["dimension"], **extra)


def fan_out_final_judges(state: ColumnState, material: str, focus: str) -> list[Send]:
    """One debater judge per debater and one winner judge, all reading the same material."""
    sends = [Send("judge_debater", _task(state, material=material, focus=focus, target=d.name))
             for d in state["debate"].debaters]
    sends.append(Send("judge_winner", _task(state, material=material, focus=focus, target="")))
    return sends


def after_analyze(state: ColumnState) -> list[Any]:
    """Judge the speech just analysed in parallel with analysing the next one (or the whole debate)."""
    if state.get("failures"):
        return [END]
    last = state["analyses"][-1]
    routes: list[Any] = [Send("judge_speech", _task(state, material=last.analysis, target=last.speaker,
                                                    index=last.index, focus=""))]
    routes.append("analyze_speech" if state["index"] < len(state["debate"].speeches) else "analyze_debate")
    return routes


def after_debate_analysis(state: ColumnState) -> list[Any]:
    if state.get("failures"):
        return [END]
    dim = state["dimension"]
    text = next(a.text for a in state["debate_analyses"] if a.dimension == dim.name)
    return fan_out_final_judges(state, text, dim.prompts.judge)


def build_iterative_column(ctx: JudgeContext | None, previous: PreviousContext, merged: bool,
                           debate_stage: bool = True) -> Any:
    g = StateGraph(ColumnState, input_schema=ColumnState, output_schema=Accumulated)
    g.add_node("analyze_speech", bind(guarded("analyze_speech", make_analyze_speech(previous)), ctx))
    _judgment_nodes(g, ["speech"], ctx, merged)
    g.add_edge(START, "analyze_speech")
    if debate_stage:
        g.add_node("analyze_debate", bind(guarded("analyze_debate", analyze_debate), ctx))
        _judgment_nodes(g, ["debater", "winner"], ctx, merged)
        g.add_conditional_edges("analyze_speech", after_analyze,
                                ["analyze_speech", "judge_speech", "analyze_debate", END])
        g.add_conditional_edges("analyze_debate", after_debate_analysis, ["judge_debater", "judge_winner", END])
    else:
        g.add_conditional_edges("analyze_speech", _after_analyze_only, ["analyze_speech", "judge_speech", END])
    return g.compile()


def _after_analyze_only(state: ColumnState) -> list[Any]:
    routes = [r for r in after_analyze(state) if r != "analyze_debate"]
    return routes or [END]


def read_whole_debate(state: ColumnState) -> list[Any]:
    """The raw column's entry: judges read the full transcript (no per-speech analysis)."""
    debate, dim = state["debate"], state["dimension"]
    return fan_out_final_judges(state, P.transcript(debate, P.fence_for(debate)), dim.prompts.judge_debate)


def build_raw_column(ctx: JudgeContext | None, merged: bool) -> Any:
    g = StateGraph(ColumnState, input_schema=ColumnState, output_schema=Accumulated)
    _judgment_nodes(g, ["debater", "winner"], ctx, merged)
    g.add_conditional_edges(START, read_whole_debate, ["judge_debater", "judge_winner"])
    return g.compile()
