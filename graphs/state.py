"""Graph states. One TypedDict per graph; reducers only on keys that accumulate."""

from __future__ import annotations

import operator
from typing import Annotated, Literal

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ConfigDict

# on Python 3.11 pydantic reads a TypedDict's schema (what a served graph shows) only from typing_extensions'
from typing_extensions import TypedDict

from debatrix.dimension import Dimension
from debatrix.models import (
    CallRecord,
    Debate,
    DebaterJudgment,
    DimensionResult,
    JudgeResult,
    OrderAnswer,
    SpeechAnalysis,
    SpeechJudgment,
)


class DebateAnalysis(BaseModel):
    """A judgment of the debate written with the debaters listed in ``order``; the winner its "Winner:" line names
    and the probabilities at that name (None: no such line, or no probabilities)."""

    model_config = ConfigDict(frozen=True)
    dimension: str
    text: str
    order: tuple[str, ...] = ()
    named: str | None = None
    probabilities: dict[str, float] | None = None


class WinnerDecision(BaseModel):
    """A decision as the verdict reports it (see :class:`debatrix.models.Verdict`)."""

    model_config = ConfigDict(frozen=True)
    dimension: str
    comment: str
    winner: str | None  # None = tie
    probabilities: dict[str, float] | None = None
    method: Literal["logprobs", "argmax"] = "argmax"
    orders: tuple[OrderAnswer, ...] = ()
    position_bias: float | None = None
    consistent: bool = True
    warnings: tuple[str, ...] = ()


class Accumulated(TypedDict, total=False):
    """Keys every judge graph accumulates; also the output schema of a dimension column."""

    analyses: Annotated[list[SpeechAnalysis], operator.add]
    speech_judgments: Annotated[list[SpeechJudgment], operator.add]
    debate_analyses: Annotated[list[DebateAnalysis], operator.add]
    debater_judgments: Annotated[list[DebaterJudgment], operator.add]
    winner_decisions: Annotated[list[WinnerDecision], operator.add]
    calls: Annotated[list[CallRecord], operator.add]
    failures: Annotated[list[str], operator.add]


class JudgeInput(TypedDict, total=False):
    debate: Debate
    run_id: str


class JudgeOutput(TypedDict):
    result: JudgeResult


class JudgeState(Accumulated, total=False):
    debate: Debate
    run_id: str
    started_at: str
    dimensions: list[Dimension]
    panel_comments: list[DebateAnalysis]  # the chair's comment in each order
    general: DimensionResult
    result: JudgeResult


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
