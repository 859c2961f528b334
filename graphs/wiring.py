"""Adding the judge's steps to a graph: each bound to its context and guarded, under one name."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph
from langgraph.runtime import Runtime

from debatrix.context import JudgeContext
from debatrix.core.dimension import Dimension
from debatrix.core.errors import ConfigurationError, IncompleteJudgment

from .progress import emit

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
