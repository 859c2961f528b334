"""Adding the judge's steps to a graph: each bound to its context and guarded, under one name."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

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
