"""The judge graph of any registered mode (:mod:`debatrix.core.modes`): preparation, one column per dimension (iterative
or raw, as the mode says), the panel where the mode merges dimensions, and the result.

The mode registry and its arithmetic (calls, rounds, progress rows) live in :mod:`debatrix.core.modes`, which loads no
LangGraph; they are re-exported here for the graph's readers.

What a run will do is known before any call (its :class:`RunPlan`, last below): its dimensions, its calls and the
largest request a mode makes on a debate. The prompts are the real ones, rendered with the debate's own speeches;
answers not written yet (earlier analyses, judgments) stand in at their token caps, so the estimate is an upper
bound of what the run will send. A run's plan is made once: by its caller before the local backend sizes (or
refuses) the model server, else by the graph's first step, :func:`prepare` (the debate checked, the plan taken from
the context or made, the run's size checked against the context window and the call budget before any call);
``debatrix validate --mode`` makes one per file."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import singledispatch
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from debatrix.context import JudgeContext, RunOptions
from debatrix.core import prompting as P
from debatrix.core.dimension import Dimension, DimensionRegistry
from debatrix.core.errors import ConfigurationError, ContextWindowExceeded, InvalidDebateError
from debatrix.core.flow import ASK_PER_PASSAGE, GIST_ASKED, answer_question, gist, passage_messages, questions_of
from debatrix.core.loader import validated
from debatrix.core.models import Debate, SpeechAnalysis
from debatrix.core.modes import SPEECH, FlowMode, Mode, Request, RunPlan, calls_of, debate_mode, get_mode, resolve_dimensions
from debatrix.core.settings import JudgeSettings
from debatrix.core.prompting import count_message_tokens, count_tokens
from debatrix.core.prompting import token_cap

from .prose import messages as M
from .prose.answers import analysis_answer_tokens
from .prose.column import build_iterative_column, build_raw_column
from .finish import finish
from .flow_nodes import add_flow, to_flow
from .prose.panel import add_panel
from .state import Accumulated, JudgeInput, JudgeOutput, JudgeRun, JudgeState, with_judge_types
from .wiring import bind, run_relaying, subgraph_node


def _judge_graph(ctx: JudgeContext | None, shape: Mode, merge_score_call: bool,
                 score_in_analysis: bool = False) -> StateGraph:
    mode = shape.name
    g = StateGraph(JudgeState, context_schema=JudgeContext, input_schema=JudgeInput, output_schema=JudgeOutput)
    g.add_node("prepare", bind(prepare, ctx, "prepare", mode))
    g.add_node("finish", bind(finish, ctx, "finish", mode))
    g.add_edge(START, "prepare")
    add_judging(shape, g, ctx, merge_score_call, score_in_analysis)
    g.add_edge("finish", END)
    return g


@singledispatch
def add_judging(shape: Mode, g: StateGraph, ctx: JudgeContext | None, merge_score_call: bool,
                score_in_analysis: bool = False) -> None:
    """The steps a prose mode adds between ``prepare`` and ``finish``: one column a dimension (a subgraph, iterative
    or raw as the mode says), then the panel where the mode merges dimensions."""
    if shape.per_speech:
        column = build_iterative_column(ctx, shape, merge_score_call, score_in_analysis=score_in_analysis)
    else:
        column = build_raw_column(ctx, shape, merge_score_call)
    g.add_node("column", subgraph_node(column, Accumulated))
    g.add_conditional_edges("prepare", to_columns, ["column", "finish"])
    if shape.panel:
        add_panel(g, ctx, shape.name, after="column")
    else:
        g.add_edge("column", "finish")


@add_judging.register
def _(shape: FlowMode, g: StateGraph, ctx: JudgeContext | None, merge_score_call: bool,
      score_in_analysis: bool = False) -> None:
    """The flow's steps: one reading shared by the dimensions, a speech at a time; the verdicts are computed from
    it in ``finish``."""
    add_flow(g, ctx, shape.name)
    g.add_conditional_edges("prepare", to_flow, ["flow_speech", "finish"])


def to_columns(state: JudgeState) -> list[Any]:
    if state.get("failures"):
        return ["finish"]
    return [Send("column", {"debate": state["debate"], "run_id": state["run_id"], "dimension": d})
            for d in state["dimensions"]]


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
    return (_judge_graph(ctx, shape, merge, scored)
            .compile(checkpointer=with_judge_types(checkpointer), name=f"debatrix-{mode}"))


def compiled(ctx: Any, mode: str) -> Any:
    """The compiled judge graph of ``mode`` bound to the context ``ctx``, its shape read from the context's settings
    as its nodes read them (one source of settings inside a run); compiled once per context and mode (a compiled
    graph holds no run state, so concurrent runs share it, and compiling is not free). ``mode="speech"``: the
    single-speech graph."""
    return ctx.graph(mode, lambda: build_speech_graph(ctx) if mode == "speech" else build_graph(mode, ctx))


def build_run_graph(ctx: JudgeContext, mode: str, *, checkpointer: Any = None) -> Any:
    """The judge as one node that honours each run's options, as the deployment does: ``config["configurable"]``
    or a ``context`` dict may choose any of :data:`debatrix.context.PER_RUN` (``{"mode": "dimensional"}``), and
    the run is the judge graph of that mode with those settings (:meth:`JudgeContext.with_options`: the same model
    connection and memory); none chosen, ``mode`` with ``ctx``'s settings. The mode's graph runs as a subgraph: its
    steps stream under ``subgraphs=True``, its events nest under this node (and without it, this node relays its
    events: :func:`.wiring.run_relaying`)."""

    async def judge(state: dict[str, Any], config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        given = runtime.context if isinstance(runtime.context, Mapping) else {}
        base = runtime.context if isinstance(runtime.context, JudgeContext) else ctx
        run = base.with_options({**(config.get("configurable") or {}), **given})
        chosen = run.settings.mode if run is not base else mode
        return await run_relaying(compiled(run, debate_mode(chosen).name), state, config)

    g = StateGraph(JudgeRun, context_schema=RunOptions, input_schema=JudgeInput, output_schema=JudgeOutput)
    g.add_node("judge", judge)
    g.add_edge(START, "judge")
    g.add_edge("judge", END)
    return g.compile(checkpointer=with_judge_types(checkpointer), name=f"debatrix-{mode}")


def build_speech_graph(ctx: JudgeContext | None = None, *, merge_score_call: bool | None = None,
                       checkpointer: Any = None) -> Any:
    """Judge speeches on their own: per dimension, analyse and judge each speech (no debate-level stage)."""
    merge, _ = _shape_flags(ctx, merge_score_call, None)
    return (_judge_graph(ctx, SPEECH, merge)
            .compile(checkpointer=with_judge_types(checkpointer), name="debatrix-speech"))


# ----------------------------------------------- the run planned and sized before any call (its first step, prepare)

# Local GGUF models count tokens with their own tokenizers, a little above o200k_base on real debates
# (docs/measured.md, "Local models on this machine"), so estimates for a local model carry a margin above that (the
# server still refuses a prompt that does not fit, which the gateway reports as ContextWindowExceeded).
LOCAL_TOKEN_MARGIN = 1.10


RETRY_TOKENS = 96  # what an answer asked again is told (prompts/judgment_missing.j2 and the like), generously


def _placeholder(tokens: int) -> str:
    return " ".join(["word"] * tokens)  # one token a word in the tokenizers used here


def _count(messages: list[BaseMessage], settings: JudgeSettings) -> int:
    n = count_message_tokens([(m.type, str(m.content)) for m in messages], settings.llm.tokenizer)
    if settings.llm.uses_local or settings.llm.served_locally:
        n = int(n * LOCAL_TOKEN_MARGIN) + 1
    return n


def largest_request(debate: Debate, mode: str, settings: JudgeSettings, dims: list[Dimension]) -> Request:
    """The largest request (prompt + answer room) a ``mode`` run on ``debate`` makes, rendered by the same
    functions the nodes use."""
    return _largest(get_mode(mode), debate, settings, dims)


@singledispatch
def _largest(shape: Mode, debate: Debate, settings: JudgeSettings, dims: list[Dimension]) -> Request:
    """A prose mode's largest request: an analysis with every earlier one (or speech) before it at its cap, or a
    judgment or the panel's decision with every analysis."""
    mode = shape.name
    fence = P.fence_for(debate)
    cap_out = settings.llm.max_output_tokens
    analysis_cap = min(analysis_answer_tokens(settings.analysis_words), cap_out)
    extra = 96 if settings.speech_score_merged(mode) else 0  # merged answers carry their scores in the JSON
    best = Request(0, "")

    def consider(messages: list[BaseMessage], answer: int, what: str) -> None:
        nonlocal best
        tokens = _count(messages, settings) + min(answer + extra, cap_out)
        if tokens > best.tokens:
            best = Request(tokens, what)

    n = len(debate.speeches)
    candidates = _largest_candidates(debate, settings) if shape.per_speech else []
    for dim in dims:
        fake = [SpeechAnalysis(dimension=dim.name, index=j, speaker=debate.speeches[j].speaker,
                               analysis=_placeholder(analysis_cap)) for j in range(n)]
        if shape.per_speech:
            for i in candidates:
                before = P.previous_speeches(debate, i, fence) if shape.context == "speeches" else ""
                after = P.analyses_block(fake[:i]) if shape.context == "analyses" else ""
                consider(M.analysis_messages(debate, dim, i, before, after, settings.analysis_words), analysis_cap,
                         f"the analysis of speech {i + 1} ({dim.name})")
        if shape.debate_stage:
            words = M.judgment_words(settings, debate)
            what = (f"the judgment of the debate from its analyses ({dim.name})" if shape.per_speech else
                    f"the judgment of the full debate transcript ({dim.name})")
            answer = min(token_cap(words), cap_out)
            # a judgment missing a debater's paragraph is asked for it in the same conversation (nodes.judge_dimension)
            consider(M.judgment_messages(debate, dim, fake if shape.per_speech else [], words),
                     2 * answer + RETRY_TOKENS, what)
    if shape.panel:
        judgment = _placeholder(min(token_cap(M.judgment_words(settings, debate)), cap_out))
        reports = [{"name": d.name, "weight": f"{d.weight:g}", "scores": "-", "winner": "-", "judgment": judgment}
                   for d in dims]
        words = M.panel_words(settings)
        answer = min(token_cap(words), cap_out)
        # a reason that cites nothing said is asked what decided it, in the same conversation (panel.panel_comment)
        consider(M.panel_messages(debate, reports, M.names_of(debate), words),
                 answer + RETRY_TOKENS + min(token_cap(words // 2), cap_out), "the panel")
    return best


@_largest.register
def _largest_decision(shape: FlowMode, debate: Debate, settings: JudgeSettings, dims: list[Dimension]) -> Request:
    """The flow's largest request: its longest passage asked about the longest point it may answer (a decision's
    answer is a few tokens)."""
    if not debate.passages:
        return Request(0, "")
    p = max(debate.passages, key=lambda p: len(p.text))
    rows = sorted(debate.passages, key=lambda p: -len(gist(p.text, GIST_ASKED)))
    one = _count(passage_messages(debate, p, answer_question(debate, p, rows[0])), settings) + 8
    # asked together (an endpoint without a prompt cache): every question of the passage in one JSON answer
    together = _count(passage_messages(debate, p, questions_of(debate, p, [r.id for r in rows[:ASK_PER_PASSAGE]])),
                      settings) + 12 + 8 * (3 + ASK_PER_PASSAGE)
    return Request(max(one, together) if settings.flow_questions != "apart" else one,
                   f"a decision on passage {p.id}")


def _largest_candidates(debate: Debate, settings: JudgeSettings) -> list[int]:
    """The speeches whose analysis request can be the largest. A speech's request holds its block and everything
    before it (earlier analyses or speeches), and the task text differs only by speaker, so of one speaker's
    speeches, speech i's request is no larger than a later speech j's when its block is no longer: only the
    speeches whose block is longer than every later block of their speaker are rendered (a few, where a debate of
    thousands of speeches would render thousands of ever longer prompts)."""
    fence = P.fence_for(debate)
    out, longest = [], {}
    for i in range(len(debate.speeches) - 1, -1, -1):
        speaker = debate.speeches[i].speaker
        size = count_tokens(P.speech_block(debate, i, fence), settings.llm.tokenizer)
        if size > longest.get(speaker, -1):
            out.append(i)
            longest[speaker] = size
    return sorted(out)


def plan_run(debate: Debate, settings: JudgeSettings, registry: DimensionRegistry | None = None,
             mode: str | None = None) -> RunPlan:
    """The plan of judging ``debate`` in ``mode`` (the settings' by default) with ``settings`` as the run will see
    them (:func:`debatrix.context.run_settings`: on the embedded model, its shorter answers). The call count comes
    first: a debate of thousands of speeches over the call budget is not rendered to size its context."""
    mode = mode or settings.mode
    dims = resolve_dimensions(mode, settings.dimensions, debate.format,
                              registry or DimensionRegistry(settings.dimension_dirs))
    get_mode(mode).check_plan(dims, settings)
    calls = calls_of(mode, settings, debate, len(dims), measures=[d.measure for d in dims])
    over = over_budget(mode, calls, settings)
    return RunPlan(debate, mode, tuple(dims), calls, None if over else largest_request(debate, mode, settings, dims))


def over_budget(mode: str, calls: int, settings: JudgeSettings) -> bool:
    """Whether a run of ``calls`` calls is refused by ``max_llm_calls`` (the single-speech judge is never: its
    calls are one speech's)."""
    return get_mode(mode).debate_stage and calls > settings.max_llm_calls


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
