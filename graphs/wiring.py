"""Binding node functions ``(state, ctx)`` to LangGraph's ``(state, runtime)`` signature."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from debatrix.context import JudgeContext
from debatrix.errors import ConfigurationError


def bind(fn: Any, default: JudgeContext | None) -> Any:
    """The node reads its context from ``runtime.context``; when the caller's graph runs with a context of its own
    type (a parent agent), the context the judge graph was built with is used instead."""

    async def node(state: Any, runtime: Runtime) -> Any:
        ctx = runtime.context if isinstance(runtime.context, JudgeContext) else default
        if ctx is None:
            raise ConfigurationError("no JudgeContext: invoke with context=JudgeContext.create(...) "
                                     "or build the graph with build_judge_graph(settings, chat_model=...)")
        return await fn(state, ctx)

    node.__name__ = getattr(fn, "__name__", "node")
    node.__doc__ = fn.__doc__
    return node
