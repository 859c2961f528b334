"""Graph states, one TypedDict per graph (reducers only on keys that accumulate), and their types registered with
LangGraph's checkpoint serializer (below)."""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import operator
from collections.abc import Iterable
from typing import Annotated, Any, get_args, get_type_hints

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.serde.base import maybe_add_typed_methods
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

# on Python 3.11 pydantic reads a TypedDict's schema (what a served graph shows) only from typing_extensions'
from typing_extensions import TypedDict, is_typeddict

from debatrix.core.dimension import Dimension
from debatrix.core.models import (
    CallRecord, Debate, DebaterJudgment, Judgment, SpeechAnalysis, SpeechJudgment, Verdict
)
from debatrix.core.results import DimensionResult, JudgeResult
from debatrix.core.flow import Correction, Ledger, SpeechFlow


class Accumulated(TypedDict, total=False):
    """What a dimension column accumulates (its output schema): one dimension's items, in the order written."""

    analyses: Annotated[list[SpeechAnalysis], operator.add]
    speech_judgments: Annotated[list[SpeechJudgment], operator.add]
    debate_analyses: Annotated[list[Judgment], operator.add]
    debater_judgments: Annotated[list[DebaterJudgment], operator.add]
    winner_decisions: Annotated[list[Verdict], operator.add]
    calls: Annotated[list[CallRecord], operator.add]
    failures: Annotated[list[str], operator.add]


class JudgeInput(TypedDict, total=False):
    debate: Debate
    run_id: str


class JudgeOutput(TypedDict):
    result: JudgeResult


class JudgeRun(JudgeInput, total=False):
    """The state of the graph that runs the judge of a run's chosen mode
    (:func:`debatrix.graphs.build.build_run_graph`)."""

    result: JudgeResult


def by_dimension(left: dict[str, list[Any]] | None, right: list[Any] | dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Reducer of the judge's per-dimension keys (as ``add_messages`` is of messages): the columns write lists of
    items, and each item is filed under its ``dimension``, after what that dimension already has."""
    items = [x for xs in right.values() for x in xs] if isinstance(right, dict) else right
    merged = dict(left or {})
    for item in items:
        merged[item.dimension] = [*merged.get(item.dimension, ()), item]
    return merged


PANEL = "panel"  # the panel's key in the state and its items' dimension (the result calls its verdict ``general``)


class JudgeState(TypedDict, total=False):
    # per dimension (a column's output is filed under its dimension; the panel's verdict has a key of its own)
    analyses: Annotated[dict[str, list[SpeechAnalysis]], by_dimension]
    speech_judgments: Annotated[dict[str, list[SpeechJudgment]], by_dimension]
    debate_analyses: Annotated[dict[str, list[Judgment]], by_dimension]
    debater_judgments: Annotated[dict[str, list[DebaterJudgment]], by_dimension]
    winner_decisions: Annotated[dict[str, list[Verdict]], by_dimension]
    # the whole run's
    calls: Annotated[list[CallRecord], operator.add]
    failures: Annotated[list[str], operator.add]
    debate: Debate
    run_id: str
    started_at: str
    dimensions: list[Dimension]
    panel: Verdict  # the panel's verdict (its subgraph's one key here; shown as the general verdict)
    # the flow mode's: its speeches' decisions (the analysis memory), the next speech, each dimension's ledger
    flows: Annotated[list[SpeechFlow], operator.add]
    index: int
    corrections: list[Correction]  # what a person set when the judge paused for review (JudgeSettings.review)
    ledgers: dict[str, Ledger]
    general: DimensionResult
    result: JudgeResult


class PanelOutput(TypedDict, total=False):
    """What the panel's subgraph answers the judge graph with."""

    panel: Verdict
    calls: Annotated[list[CallRecord], operator.add]
    failures: Annotated[list[str], operator.add]


class PanelState(PanelOutput, total=False):
    """The panel's subgraph: the columns' items it reads (by dimension), and the chair's comments, its own."""

    debate: Debate
    run_id: str
    dimensions: list[Dimension]
    winner_decisions: dict[str, list[Verdict]]
    debater_judgments: dict[str, list[DebaterJudgment]]
    panel_comments: list[Judgment]  # the chair's comment in each order


class ColumnState(Accumulated, total=False):
    debate: Debate
    run_id: str
    dimension: Dimension
    index: int
    # the request that produced the latest analysis / the judgment: where the server caches prompts, the score is
    # asked by continuing that conversation (only the answer and the question are new to the model)
    asked: list[BaseMessage]
    judgment_asked: list[list[BaseMessage]]  # one conversation per order


class ScoreTask(TypedDict, total=False):
    """Payload of one fanned-out speech score: the analysis it is read from (and the request that produced it)."""

    debate: Debate
    run_id: str
    dimension: Dimension
    analysis: SpeechAnalysis
    asked: list[BaseMessage]


# ---------------------------------------------------------------- the state's types, for LangGraph's checkpoints
# The judge's types, registered with LangGraph's checkpoint serializer.
# 
# LangGraph's default serializer rebuilds any class a checkpoint names, with a "Deserializing unregistered type"
# warning for each class it was not told about (strict mode, ``LANGGRAPH_STRICT_MSGPACK=true``, refuses them). The
# judge's state holds its own models (the debate, analyses, verdicts, the result), so an agent that embeds the judge
# under a checkpointer would see a warning per model. :func:`checkpoint_serializer` is a serializer that allows exactly
# these (and whatever the agent adds); a graph built with a checkpointer gets it without asking.

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
    of an agent whose state holds a :class:`~debatrix.core.models.Debate` or a :class:`~debatrix.core.results.JudgeResult`:
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
