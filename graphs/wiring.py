"""Adding the judge's steps to a graph: each bound to its context and guarded, under one name, and the progress event
each emits when it finishes.

Progress: each finished step of the judge, as its node emits it into LangGraph's ``custom`` stream
(``graph.astream(..., stream_mode="custom")``: a dict with ``"debatrix": "progress"`` and the fields of
:class:`ProgressEvent`; with ``subgraphs=True`` each under the namespace of the step's subgraph, without it relayed
by the node that runs the mode's graph: :func:`run_relaying`). The CLI's progress bar, the web page and
``ajudge_debate(on_event=...)`` read the same events an agent builder's own stream shows."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph import StateGraph
from langgraph.runtime import Runtime

from debatrix.context import JudgeContext
from debatrix.core.dimension import Dimension
from debatrix.core.errors import ConfigurationError, IncompleteJudgment
from debatrix.core.flow import flow_line
from debatrix.core.modes import FLOW_COLUMN


Node = Callable[[Any, JudgeContext], Awaitable[Any]]


def bind(fn: Any, default: JudgeContext | None, name: str, mode: str) -> Any:
    """The node reads its context from ``runtime.context``; when the caller's graph runs with a context of its own
    type (a parent agent), the context the judge graph was built with is used instead. Either way the node sees it
    judging in ``mode``, its graph's (:meth:`JudgeContext.for_mode`): a node reads the mode from its context, never
    from the state. What it wrote goes out as a progress event on the run's ``custom`` stream, under ``name`` (the
    node's name in its graph)."""
    async def node(state: Any, runtime: Runtime) -> Any:
        ctx = runtime.context if isinstance(runtime.context, JudgeContext) else default
        if ctx is None:
            raise ConfigurationError("no JudgeContext: invoke with context=JudgeContext.create(...) "
                                     "or build the graph with build_judge_graph(settings, chat_model=...)")
        update = await fn(state, ctx.for_mode(mode))
        emit(name, update)
        return update

    node.__name__ = getattr(fn, "__name__", "node")
    node.__doc__ = fn.__doc__
    return node


def add_step(g: StateGraph, name: str, fn: Node, ctx: JudgeContext | None, mode: str) -> None:
    """Add the judging step ``fn`` of a ``mode`` graph as node ``name``: bound to the context, its failures recorded
    under that name."""
    g.add_node(name, bind(guarded(name, fn), ctx, name, mode))


def guarded(name: str, fn: Node) -> Node:
    """Turn an error that should end the run as *incomplete* into a recorded failure instead of a crash."""

    @functools.wraps(fn)
    async def node(state: Any, ctx: JudgeContext) -> Any:
        try:
            return await fn(state, ctx)
        except IncompleteJudgment as e:
            dim = state.get("dimension")
            where = f"{dim.name}/{name}" if isinstance(dim, Dimension) else name
            # the requests it made still count (retries, repairs, tokens), though they gave no usable answer
            return {"failures": [f"{where}: {type(e).__name__}: {e}"], "calls": list(getattr(e, "calls", []))}

    return node


def subgraph_node(graph: Any, output: Any, reads: Any = None) -> Any:
    """A compiled subgraph (a dimension column, the panel) as one node of the judge graph: given the keys of
    ``reads`` from the parent's state (its whole input where None: a ``Send``'s payload), answering with the keys of
    ``output`` alone. Added as a node directly, a subgraph hands its parent its whole final state under
    ``astream_events`` (langgraph#6446), so two columns finishing in one step both wrote ``debate``
    (InvalidUpdateError); called from a node it is still a subgraph to LangGraph (its steps stream and draw as its
    own). The keys it answers with are not handed in: they accumulate in the parent, and would come back doubled."""
    keys = tuple(output.__annotations__)
    wanted = None if reads is None else tuple(k for k in reads.__annotations__ if k not in keys)

    # the state is unannotated: an annotation would make it the node's input schema in the judge graph, whose keys
    # of the same names may hold other types (a column's Send payload is a ColumnState)
    async def node(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        given = state if wanted is None else {k: state[k] for k in wanted if k in state}
        out = await graph.ainvoke(given, config)
        return {k: out[k] for k in keys if k in out}

    return node


# ------------------------------------------------------------------------------------------- progress

@dataclass(frozen=True)
class ProgressEvent:
    """One finished step of the judge, as its node emits it (a ``custom`` stream event)."""

    node: str
    dimension: str | None
    index: int | None  # speech index (0-based) where the step concerns one speech
    detail: str
    # what the step wrote, for displays that show the judgment as it grows (the web page's matrix)
    kind: str = ""  # analysis (with its score when scored in it), speech_score, debater_score, winner, judgment,
    # failure, calls
    text: str | None = None  # the analysis, comment or judgment
    score: float | None = None  # the speech's or the debater's score (expected where available)
    debater: str | None = None
    winner: str | None = None  # a winner decision's winner (None with kind "winner": a tie, or not judged)
    not_judged: str = ""  # why a winner decision names no winner although it was made ("": judged)
    # a winner decision in the words every surface uses ("Ana", "too close to call, leaning Ana (0.53)", "tie")
    called: str = ""
    calls: int = 0  # the LLM requests the step made, and the tokens they read and wrote
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def of(cls, payload: dict[str, Any]) -> ProgressEvent:
        """The event a ``custom`` stream chunk carries (:func:`emit`'s payload)."""
        return cls(**{f.name: payload[f.name] for f in dataclasses.fields(cls) if f.name in payload})


_REPORTED = {"analyze_speech", "score_speech", "judge_debate", "decide_debate", "panel_comment", "panel_decide",
             "prepare", "flow_speech", "flow_verdicts"}


def progress_event(node: str, update: Any) -> ProgressEvent | None:
    """What a finished step wrote, for a display (None: a step no display shows, or one that wrote nothing)."""
    if not isinstance(update, dict) or node not in _REPORTED:  # e.g. a column's whole output
        return None
    records = update.get("calls") or []
    usage = {"calls": len(records), "prompt_tokens": sum(c.prompt_tokens for c in records),
             "completion_tokens": sum(c.completion_tokens for c in records)}
    if update.get("flows"):  # a speech read into the flow: its entry, as the analysis of that step
        f = update["flows"][-1]
        argued = sum(1 for m in f.marks if (m.argument or 0) >= 0.5)
        return ProgressEvent(node=node, dimension=FLOW_COLUMN, index=f.index, kind="analysis", text=flow_line(f),
                             detail=f"read speech {f.index + 1} ({f.speaker}): {argued} of {len(f.marks)} passages "
                                    f"argue, {len(f.lines)} earlier points asked about"
                                    + (f"; missing {f.missing}" if f.missing else ""), **usage)
    for key in ("panel", "winner_decisions", "analyses", "speech_judgments", "debater_judgments", "debate_analyses",
                "panel_comments"):
        items = [update["panel"]] if key == "panel" and update.get("panel") is not None else update.get(key)
        if items and key == "panel":  # the panel's verdict, shown as a winner decision of the general row
            key = "winner_decisions"
        if items:
            item = items[-1]
            index = getattr(item, "index", None)
            detail = {
                "analyses": lambda x: f"analysed speech {x.index + 1} ({x.speaker})" + (
                    f", scored {update['speech_judgments'][-1].score}" if update.get("speech_judgments") else ""),
                "speech_judgments": lambda x: f"speech {x.index + 1} ({x.speaker}) scored {x.score}",
                "debater_judgments": lambda x: f"{x.debater} scored {x.score:g}",
                "winner_decisions": lambda x: "not judged" if x.not_judged else f"winner: {x.called}",
                "debate_analyses": lambda x: "debate judged",
                "panel_comments": lambda x: "the panel commented",
            }[key](item)
            # the panel's items are filed under its own key; shown, its verdict is the general one
            dimension = "general" if node.startswith("panel") else item.dimension
            return ProgressEvent(node=node, dimension=dimension, index=index, detail=detail,
                                 **_written(key, item, update), **usage)
    if update.get("failures"):
        return ProgressEvent(node=node, dimension=None, index=None, detail=f"failed: {update['failures'][0]}",
                             kind="failure", text=update["failures"][0], **usage)
    if records:  # a step that wrote nothing shown above still made calls: they are counted
        return ProgressEvent(node=node, dimension=None, index=None, detail=f"{node} done", kind="calls", **usage)
    return None


def _written(key: str, item: Any, update: dict[str, Any]) -> dict[str, Any]:
    if key == "analyses":  # with the speech's score when it came in the analysis's answer
        scored = update.get("speech_judgments")
        return {"kind": "analysis", "text": item.analysis,
                "score": (scored[-1].expected_score or scored[-1].score) if scored else None}
    if key == "speech_judgments":  # with merge_score_call the comment is the analysis
        return {"kind": "speech_score", "text": item.comment, "score": item.expected_score or item.score}
    if key == "debater_judgments":
        return {"kind": "debater_score", "text": item.comment, "score": item.score, "debater": item.debater}
    if key == "winner_decisions":
        return {"kind": "winner", "text": item.comment, "winner": item.winner, "not_judged": item.not_judged,
                "called": item.called}
    return {"kind": "judgment", "text": item.comment}


# LangGraph hands a graph run inside a node its caller's stream only under ``subgraphs=True``, and says so in this
# config key (no public name for it): without it, that graph's custom events would reach no one
try:
    from langgraph._internal._constants import CONFIG_KEY_STREAM
except ImportError:  # pragma: no cover - another layout of langgraph's internals: the key as 1.x names it
    CONFIG_KEY_STREAM = "__pregel_stream"


async def run_relaying(graph: Any, state: Any, config: RunnableConfig) -> Any:
    """``graph.ainvoke(state, config)`` from inside a node, its progress reaching the caller's ``custom`` stream
    either way: with ``subgraphs=True`` as a subgraph's events (under its namespace), without it passed on by this
    node's own writer, once (a parent streaming ``stream_mode="custom"`` alone would otherwise see nothing)."""
    if CONFIG_KEY_STREAM in (config.get("configurable") or {}):
        return await graph.ainvoke(state, config)
    writer, out, top = get_stream_writer(), None, None
    # every level of it (a column's steps run in subgraphs of the mode's graph); its own values are those of the
    # shortest namespace (the node's, where it runs inside one), the last of them its output
    async for namespace, kind, chunk in graph.astream(state, config, stream_mode=["custom", "values"], subgraphs=True):
        if kind == "custom":
            writer(chunk)
        elif top is None or len(namespace) <= len(top):
            top, out = namespace, chunk
    return out


def emit(node: str, update: Any) -> None:
    """Write the step's progress event to the run's ``custom`` stream (nothing where the step shows nothing)."""
    event = progress_event(node, update)
    if event is not None:
        get_stream_writer()({"debatrix": "progress", **event.as_dict()})
