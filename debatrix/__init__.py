"""Debatrix: a multi-dimensional, iterative-chronological LLM debate judge.

Public API::

    from debatrix import load_debate, judge_debate, JudgeSettings
    result = judge_debate(load_debate("examples/school_uniforms.yaml"), JudgeSettings())  # the default mode: flow
    fixed = recompute(result, read_corrections(Path("my_corrections.yaml"), result))  # a person's, no model call
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

from debatrix.core.errors import (  # noqa: E402
    ConfigurationError,
    ContextWindowExceeded,
    DebatrixError,
    InvalidDebateError,
    LLMError,
    StructuredOutputError,
    VerdictParseError,
)
from debatrix.core.loader import load_debate  # noqa: E402
from debatrix.core.models import Debate, Debater, Side, Speech  # noqa: E402
from debatrix.core.flow import Correction  # noqa: E402
from debatrix.core.results import JudgeResult, Status  # noqa: E402
from debatrix.core.review import CorrectionError, read_corrections, recompute, review_first  # noqa: E402
from debatrix.core.settings import JudgeSettings, LLMSettings, MemorySettings  # noqa: E402

_LAZY = {"judge_debate", "ajudge_debate", "build_judge_graph", "build_judge_node", "judge_speech", "ajudge_speech",
         "JudgeContext", "MODES", "checkpoint_serializer", "checkpoint_types"}


def __getattr__(name: str) -> Any:  # heavy imports (langgraph, chromadb) only when the judge is used
    if name in _LAZY:
        from debatrix.app import api

        return getattr(api, name)
    raise AttributeError(name)


__all__ = [
    "ConfigurationError", "ContextWindowExceeded", "Correction", "CorrectionError", "Debate", "Debater",
    "DebatrixError", "InvalidDebateError", "JudgeResult", "JudgeSettings", "LLMError", "LLMSettings",
    "MemorySettings", "Side", "Speech", "Status", "StructuredOutputError", "VerdictParseError", "__version__",
    "load_debate", "read_corrections", "recompute", "review_first", *sorted(_LAZY),
]
