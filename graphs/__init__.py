"""LangGraph builders: the dimension columns, the panel, every registered mode (the flow and the paper's five) and the
single-speech graph."""

from __future__ import annotations

from debatrix.core.modes import MODES

from .build import build_graph, build_run_graph, build_speech_graph, compiled


__all__ = ["MODES", "build_graph", "build_run_graph", "build_speech_graph", "compiled"]
