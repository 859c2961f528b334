"""Dimension columns: the judge of one dimension, as a subgraph.

The iterative column is the paper's Algorithm 1 for one dimension *d*; each step, and the node that runs it:

    for each speech s_i, in the order spoken:               analyze_speech (loops on itself; i is state["index"])
        context_i <- ca_mem[d]: the analyses of s_1..s_i-1     earlier_analyses (the column state's "analyses")
                     (non-iterative ablation: s_1..s_i-1)      earlier_speeches
        rel_i     <- query(sc_mem, s_i) over s_1..s_i-1        _relevant (only with retrieval: the context memory)
        a_i       <- analyse(s_i, context_i, rel_i)            one LLM call
        ca_mem[d] <- ca_mem[d] + a_i                           the node returns {"analyses": [a_i]}
        score of s_i, read from a_i                            score_speech (sent beside the next analysis,
                                                               so it never delays it): a short prompt with
                                                               a_i alone, or, where the server caches prompts,
                                                               the analysis conversation continued (it then
                                                               holds the speech, fenced as everywhere)
    J_d <- judge the debate from ca_mem[d], in each order     judge_debate
    debater scores and the winner of d, read from J_d         decide_debate

The panel then merges the dimensions (:mod:`.panel`). The raw column (the dimensional and direct modes) has no
per-speech analysis: ``judge_debate`` reads the whole debate.

With ``score_in_analysis`` (the default for debates) each analysis carries its speech's score in its structured
answer, so there is no ``score_speech`` step; ``merge_score_call`` does the same for the judgments too (no
``decide_debate`` step).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph

from debatrix.context import JudgeContext
from debatrix.core.modes import Mode

from .nodes import column_sends, decide_debate, earlier_analyses, earlier_speeches, judge_dimension, \
    make_analyze_speech, score_speech
from ..state import Accumulated, ColumnState
from ..wiring import add_step

#: what each analysis of a per-speech mode sees of the earlier speeches (Algorithm 1's context), by ``Mode.context``
PREVIOUS = {"analyses": earlier_analyses, "speeches": earlier_speeches}


def make_after_analyze(scored_in_analysis: bool, debate_stage: bool) -> Callable[[ColumnState], list[Any]]:
    def after_analyze(state: ColumnState) -> list[Any]:
        """Score the speech just analysed in parallel with analysing the next one (or judging the debate)."""
        if state.get("failures"):
            return [END]
        latest = state["analyses"][-1]
        routes: list[Any] = [] if scored_in_analysis or latest.missing else [  # a missing analysis: no score
            column_sends(state, "score_speech", analysis=latest, asked=state.get("asked", []))]
        if state["index"] < len(state["debate"].speeches):
            routes.append("analyze_speech")
        elif debate_stage:
            routes.append("judge_debate")
        return routes or [END]

    return after_analyze


def after_judgment(state: ColumnState) -> Any:
    return END if state.get("failures") else "decide_debate"


def _judgment_nodes(g: StateGraph, ctx: JudgeContext | None, mode: Mode, merge_score_call: bool) -> None:
    add_step(g, "judge_debate", judge_dimension, ctx, mode.name)
    if merge_score_call:
        g.add_edge("judge_debate", END)
        return
    add_step(g, "decide_debate", decide_debate, ctx, mode.name)
    g.add_conditional_edges("judge_debate", after_judgment, ["decide_debate", END])
    g.add_edge("decide_debate", END)


def build_iterative_column(ctx: JudgeContext | None, mode: Mode, merge_score_call: bool,
                           score_in_analysis: bool = False) -> Any:
    """The column of a per-speech ``mode``: its analyses see what ``mode.context`` names of the earlier speeches;
    the debate is judged after them unless the mode has no debate stage (single speeches)."""
    scored_in_analysis = merge_score_call or score_in_analysis
    g = StateGraph(ColumnState, input_schema=ColumnState, output_schema=Accumulated)
    add_step(g, "analyze_speech", make_analyze_speech(PREVIOUS[str(mode.context)], scored_in_analysis), ctx, mode.name)
    targets: list[Any] = ["analyze_speech", END]
    if not scored_in_analysis:
        add_step(g, "score_speech", score_speech, ctx, mode.name)
        targets.append("score_speech")
    g.add_edge(START, "analyze_speech")
    if mode.debate_stage:
        _judgment_nodes(g, ctx, mode, merge_score_call)
        targets.append("judge_debate")
    g.add_conditional_edges("analyze_speech", make_after_analyze(scored_in_analysis, mode.debate_stage), targets)
    return g.compile()


def build_raw_column(ctx: JudgeContext | None, mode: Mode, merge_score_call: bool) -> Any:
    """The column of a whole-debate ``mode``: the debate judged in one step, no analysis per speech."""
    g = StateGraph(ColumnState, input_schema=ColumnState, output_schema=Accumulated)
    _judgment_nodes(g, ctx, mode, merge_score_call)
    g.add_edge(START, "judge_debate")
    return g.compile()
