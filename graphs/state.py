"""Graph states. One TypedDict per graph; reducers only on keys that accumulate."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langchain_core.messages import BaseMessage

# on Python 3.11 pydantic reads a TypedDict's schema (what a served graph shows) only from typing_extensions'
from typing_extensions import TypedDict

from debatrix.core.dimension import Dimension
from debatrix.core.models import (
    CallRecord,
    Debate,
    DebaterJudgment,
    DimensionResult,
    JudgeResult,
    Judgment,
    Ledger,
    SpeechAnalysis,
    SpeechFlow,
    SpeechJudgment,
    Verdict,
)


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
