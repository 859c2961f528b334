"""The judge's types, registered with LangGraph's checkpoint serializer.

LangGraph's default serializer rebuilds any class a checkpoint names, with a "Deserializing unregistered type"
warning for each class it was not told about (strict mode, ``LANGGRAPH_STRICT_MSGPACK=true``, refuses them). The
judge's state holds its own models (the debate, analyses, verdicts, the result), so an agent that embeds the judge
under a checkpointer would see a warning per model. :func:`checkpoint_serializer` is a serializer that allows exactly
these (and whatever the agent adds); a graph built with a checkpointer gets it without asking.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
from collections.abc import Iterable
from typing import Any, get_args, get_type_hints

from langgraph.checkpoint.serde.base import maybe_add_typed_methods
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel
from typing_extensions import is_typeddict

from .state import ColumnState, JudgeInput, JudgeOutput, JudgeState, ScoreTask


@functools.cache
def checkpoint_types() -> frozenset[tuple[str, str]]:
    """``(module, class)`` of every model, enum and dataclass the judge graphs keep in their state."""
    found: set[tuple[str, str]] = set()
    seen: set[Any] = set()
    for root in (JudgeState, ColumnState, ScoreTask, JudgeInput, JudgeOutput):
        _collect(root, found, seen)
    return frozenset(found)


def _collect(tp: Any, found: set[tuple[str, str]], seen: set[Any]) -> None:
    for arg in get_args(tp):  # list[X], X | None, Annotated[X, reducer], tuple[X, ...]
        _collect(arg, found, seen)
    if not isinstance(tp, type) or tp in seen:
        return
    seen.add(tp)
    if is_typeddict(tp):
        hints = get_type_hints(tp)
    elif issubclass(tp, BaseModel):
        hints = {name: f.annotation for name, f in tp.model_fields.items()}
    elif dataclasses.is_dataclass(tp):
        hints = get_type_hints(tp)
    elif issubclass(tp, enum.Enum):
        hints = {}
    else:
        return
    if not is_typeddict(tp) and not tp.__module__.startswith(("builtins", "langchain_core.")):
        found.add((tp.__module__, tp.__qualname__))
    for hint in hints.values():
        _collect(hint, found, seen)


def checkpoint_serializer(extra: Iterable[tuple[str, str] | type] = ()) -> JsonPlusSerializer:
    """LangGraph's serializer with the judge's types registered, plus ``extra`` (an agent's own types, as classes or
    ``(module, class)``); every other class is refused, as in LangGraph's strict mode. Use it for the checkpointer
    of an agent whose state holds a :class:`~debatrix.core.models.Debate` or a :class:`~debatrix.core.models.JudgeResult`:
    ``InMemorySaver(serde=checkpoint_serializer())``."""
    named = [(x.__module__, x.__qualname__) if isinstance(x, type) else tuple(x) for x in extra]
    return JsonPlusSerializer(allowed_msgpack_modules=[*checkpoint_types(), *named])


def with_judge_types(checkpointer: Any) -> Any:
    """``checkpointer`` (as given) with the judge's types registered where its serializer is LangGraph's own in
    the permissive default; a shallow copy sharing its storage, so the caller's object is not changed."""
    serde = getattr(checkpointer, "serde", None)
    if type(serde) is not JsonPlusSerializer or getattr(serde, "_allowed_msgpack_modules", None) is not True:
        return checkpointer  # strict, explicitly configured, encrypted or custom: the caller chose
    clone = copy.copy(checkpointer)
    clone.serde = maybe_add_typed_methods(checkpoint_serializer())
    return clone
