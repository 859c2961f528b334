"""LangGraph builders: the dimension columns, the panel, the five modes and the single-speech graph."""

from __future__ import annotations

from typing import Any

from debatrix.core.modes import MODES

from .modes import build_graph, build_speech_graph


def compiled(ctx: Any, mode: str, merge_score_call: bool, score_in_analysis: bool = True) -> Any:
    """The compiled judge graph of ``mode`` bound to the context ``ctx``, compiled once per context (a compiled
    graph holds no run state, so concurrent runs share it, and compiling is not free). ``mode="speech"``: the
    single-speech graph."""
    key = (mode, merge_score_call, score_in_analysis)
    graph = ctx._graphs.get(key)
    if graph is None:
        graph = (build_speech_graph(ctx, merge_score_call=merge_score_call) if mode == "speech" else
                 build_graph(mode, ctx, merge_score_call=merge_score_call, score_in_analysis=score_in_analysis))
        ctx._graphs[key] = graph
    return graph


__all__ = ["MODES", "build_graph", "build_speech_graph", "compiled"]
