"""LangGraph builders: the dimension columns, the panel, the five modes and the single-speech graph."""

from __future__ import annotations

from debatrix.core.modes import MODES

from .build import build_graph, build_run_graph, build_speech_graph, compiled


__all__ = ["MODES", "build_graph", "build_run_graph", "build_speech_graph", "compiled"]
