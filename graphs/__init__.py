"""LangGraph builders: the dimension columns, the panel, the five modes and the single-speech graph."""

from .modes import MODES, build_graph, build_speech_graph

__all__ = ["MODES", "build_graph", "build_speech_graph"]
