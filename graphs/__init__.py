"""LangGraph builders: the dimension columns, the panel, the five modes and the single-speech graph."""

from debatrix.core.modes import MODES

from .modes import build_graph, build_speech_graph

__all__ = ["MODES", "build_graph", "build_speech_graph"]
