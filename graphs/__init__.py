"""LangGraph builders: the dimension columns, the panel, the five modes and the single-speech graph."""

from __future__ import annotations

from typing import Any

from debatrix.core.modes import MODES

from .modes import build_graph, build_speech_graph


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


__all__ = ["MODES", "build_graph", "build_speech_graph", "compiled"]
