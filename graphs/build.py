"""The judge graph of any registered mode (:mod:`debatrix.core.modes`): preparation, one column per dimension (iterative
or raw, as the mode says), the panel where the mode merges dimensions, and the result.

The mode registry and its arithmetic (calls, rounds, progress rows) live in :mod:`debatrix.core.modes`, which loads no
LangGraph; they are re-exported here for the graph's readers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from debatrix.context import JudgeContext, RunOptions
from debatrix.core.errors import ConfigurationError
from debatrix.core.modes import SPEECH, Mode, debate_mode, get_mode

from .budget import prepare
from .column import build_iterative_column, build_raw_column
from .finish import finish
from .flow import add_flow, to_flow
from .panel import add_panel
from .serde import with_judge_types
from .state import Accumulated, JudgeInput, JudgeOutput, JudgeRun, JudgeState
from .wiring import bind, subgraph_node


def _judge_graph(ctx: JudgeContext | None, shape: Mode, column: Any) -> StateGraph:
    mode = shape.name
    g = StateGraph(JudgeState, context_schema=JudgeContext, input_schema=JudgeInput, output_schema=JudgeOutput)
    g.add_node("prepare", bind(prepare, ctx, "prepare", mode))
    g.add_node("finish", bind(finish, ctx, "finish", mode))
    g.add_edge(START, "prepare")
    if shape.context == "flow":  # one reading shared by the dimensions, the verdicts computed from it
        add_flow(g, ctx, mode)
        g.add_conditional_edges("prepare", to_flow, ["flow_speech", "finish"])
        g.add_edge("finish", END)
        return g
    g.add_node("column", subgraph_node(column, Accumulated))
    g.add_conditional_edges("prepare", to_columns, ["column", "finish"])
    if shape.panel:
        add_panel(g, ctx, mode, after="column")
    else:
        g.add_edge("column", "finish")
    g.add_edge("finish", END)
    return g


def to_columns(state: JudgeState) -> list[Any]:
    if state.get("failures"):
        return ["finish"]
    return [Send("column", {"debate": state["debate"], "run_id": state["run_id"], "dimension": d})
            for d in state["dimensions"]]


def _column(ctx: JudgeContext | None, mode: Mode, merge_score_call: bool, score_in_analysis: bool = False) -> Any:
    if mode.context == "flow":
        return None
    if mode.per_speech:
        return build_iterative_column(ctx, mode, merge_score_call, score_in_analysis=score_in_analysis)
    return build_raw_column(ctx, mode, merge_score_call)


def _shape_flags(ctx: JudgeContext | None, merge_score_call: bool | None,
                 score_in_analysis: bool | None) -> tuple[bool, bool]:
    """(merge_score_call, score_in_analysis) of a graph: its context's settings, which its nodes read too; given
    without a context (a graph built only to be drawn or served), as given. A flag that contradicts the context
    would build a graph whose steps its nodes do not take: refused."""
    if ctx is None:
        return bool(merge_score_call), True if score_in_analysis is None else score_in_analysis
    s = ctx.settings
    for name, given, held in (("merge_score_call", merge_score_call, s.merge_score_call),
                              ("score_in_analysis", score_in_analysis, s.score_in_analysis)):
        if given is not None and given != held:
            raise ConfigurationError(f"{name}={given} contradicts the context's settings ({name}={held}): set it "
                                     "in the settings the context is built from")
    return s.merge_score_call, s.score_in_analysis


def build_graph(mode: str, ctx: JudgeContext | None = None, *, merge_score_call: bool | None = None,
                score_in_analysis: bool | None = None, checkpointer: Any = None) -> Any:
    """The compiled judge graph of the registered ``mode``; with a context, shaped by its settings
    (``JudgeSettings.merge_score_call``, ``score_in_analysis``: a speech's score comes in its analysis's answer)."""
    shape = get_mode(mode)
    if shape is SPEECH:
        raise ConfigurationError("'speech' judges single speeches: use build_speech_graph")
    merge, scored = _shape_flags(ctx, merge_score_call, score_in_analysis)
    return (_judge_graph(ctx, shape, _column(ctx, shape, merge, scored))
            .compile(checkpointer=with_judge_types(checkpointer), name=f"debatrix-{mode}"))


def compiled(ctx: Any, mode: str) -> Any:
    """The compiled judge graph of ``mode`` bound to the context ``ctx``, its shape read from the context's settings
    as its nodes read them (one source of settings inside a run); compiled once per context and mode (a compiled
    graph holds no run state, so concurrent runs share it, and compiling is not free). ``mode="speech"``: the
    single-speech graph."""
    graph = ctx._graphs.get(mode)
    if graph is None:
        graph = build_speech_graph(ctx) if mode == "speech" else build_graph(mode, ctx)
        ctx._graphs[mode] = graph
    return graph


def build_run_graph(ctx: JudgeContext, mode: str, *, checkpointer: Any = None) -> Any:
    """The judge as one node that honours each run's options, as the deployment does: ``config["configurable"]``
    or a ``context`` dict may choose any of :data:`debatrix.context.PER_RUN` (``{"mode": "dimensional"}``), and
    the run is the judge graph of that mode with those settings (:meth:`JudgeContext.with_options`: the same model
    connection and memory); none chosen, ``mode`` with ``ctx``'s settings. The mode's graph runs as a subgraph: its
    steps stream under ``subgraphs=True``, its events nest under this node."""

    async def judge(state: dict[str, Any], config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        given = runtime.context if isinstance(runtime.context, Mapping) else {}
        base = runtime.context if isinstance(runtime.context, JudgeContext) else ctx
        run = base.with_options({**(config.get("configurable") or {}), **given})
        chosen = run.settings.mode if run is not base else mode
        return await compiled(run, debate_mode(chosen).name).ainvoke(state, config)

    g = StateGraph(JudgeRun, context_schema=RunOptions, input_schema=JudgeInput, output_schema=JudgeOutput)
    g.add_node("judge", judge)
    g.add_edge(START, "judge")
    g.add_edge("judge", END)
    return g.compile(checkpointer=with_judge_types(checkpointer), name=f"debatrix-{mode}")


def build_speech_graph(ctx: JudgeContext | None = None, *, merge_score_call: bool | None = None,
                       checkpointer: Any = None) -> Any:
    """Judge speeches on their own: per dimension, analyse and judge each speech (no debate-level stage)."""
    merge, _ = _shape_flags(ctx, merge_score_call, None)
    return (_judge_graph(ctx, SPEECH, _column(ctx, SPEECH, merge))
            .compile(checkpointer=with_judge_types(checkpointer), name="debatrix-speech"))
