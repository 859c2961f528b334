"""What one judging returns: each dimension's result (its analyses, judgments, verdict, and in the default mode
its ledger), the checks of what the judge wrote, an escalation to a second judge, and the whole result with the
usage and the settings it ran under."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import ConfigDict, Field, model_validator

from debatrix.core.flow import Ledger, SpeechFlow
from debatrix.core.models import (RESULT_SCHEMA_VERSION, CallRecord, DebateFormat, DebaterJudgment, Frozen, Speech,
                                  SpeechAnalysis, SpeechJudgment, Usage, Verdict)


class DimensionResult(Frozen):
    name: str
    weight: float
    allow_tie: bool
    tie_margin: float = 0.0  # SC calls a tie when the debaters' scores are this close (where ties are allowed)
    analyses: tuple[SpeechAnalysis, ...] = ()
    speech_judgments: tuple[SpeechJudgment, ...] = ()
    debate_analysis: str | None = None
    debater_judgments: tuple[DebaterJudgment, ...] = ()
    verdict: Verdict | None = None
    # the flow mode's: the dimension's rows and tallies, from which its verdict was computed
    ledger: Ledger | None = None


# ---------------------------------------------------------------- checks of the text (debatrix.graphs.finish)


class AnalysisCheck(Frozen):
    """What the checks (:mod:`debatrix.graphs.finish`) found in one speech analysis: a flow's by id lookups
    (``by_id``), a prose analysis's by word n-gram measurements."""

    # a result written before the English-word checks retired still loads (their fields are dropped, not refused)
    model_config = ConfigDict(frozen=True, extra="ignore")

    dimension: str
    index: int
    speaker: str
    words: int
    by_id: bool = False
    copy_of: int | None = None  # the earlier speech (0-based) whose analysis this one repeats
    copy_share: float = 0.0  # largest share of word 5-grams shared with an earlier analysis of the column
    grounded: float = 0.0  # share of content-word 3-grams found in the analysed speech
    foreign: float = 0.0  # share found only in other speeches
    quotes: int = 0
    quotes_found: int = 0
    # passage ids it cites that the passage table does not have, and ids of another speaker's passages it does not
    # give to that speaker
    unknown_ids: tuple[str, ...] = ()
    foreign_ids: tuple[str, ...] = ()

    @property
    def copied(self) -> bool:
        return self.copy_of is not None

    @property
    def misattributed(self) -> bool | None:
        """Another speaker's passage given as the speaker's own (None: a prose analysis, which cites no ids)."""
        return bool(self.foreign_ids) if self.by_id else None


class CommentCheck(Frozen):
    """What the checks found in one debater's comment (a dimension's judgment, per debater)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    dimension: str
    debater: str
    empty: bool = False
    # as AnalysisCheck's; and how many of its debater's own passages it cites (None: not checked by id)
    unknown_ids: tuple[str, ...] = ()
    foreign_ids: tuple[str, ...] = ()
    own_cited: int | None = None

    @property
    def misattributed(self) -> bool | None:
        return bool(self.foreign_ids) if self.own_cited is not None else None


class TextChecks(Frozen):
    """The checks of one result's text; ``flags`` says in words what a reader should distrust."""

    analyses: tuple[AnalysisCheck, ...] = ()
    comments: tuple[CommentCheck, ...] = ()
    panel_grounded: bool | None = None  # the panel's reason cites something said in the debate (None: no panel)
    flags: tuple[str, ...] = ()


class Status(StrEnum):
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"


class Escalation(Frozen):
    """Who decided a debate judged with a second judge in reserve (``JudgeSettings.escalate``), and why."""

    decided_by: str  # the model whose verdict the result carries
    escalated: bool
    reason: str  # why the debate went up, or why the first judge's verdict was kept
    # the first judge's general verdict and what it cost, where the debate went up (the result's own usage is the
    # second's)
    first: Verdict | None = None
    first_status: str | None = None
    first_usage: Usage | None = None

    @model_validator(mode="before")
    @classmethod
    def _before_1_6(cls, data: Any) -> Any:
        """Results before 1.6 kept the first verdict's winner, confidence and agreement as strings: read as a
        verdict (the agreement's count is not recoverable from its text and is dropped)."""
        if not isinstance(data, dict) or not {"first_winner", "first_confidence", "first_agreement"} & set(data):
            return data
        data = dict(data)
        winner, confidence = data.pop("first_winner", None), data.pop("first_confidence", "")
        data.pop("first_agreement", None)
        if data.get("escalated"):
            data["first"] = {"dimension": "general", "comment": "", "winner": winner, "confidence": confidence}
        return data

    @property
    def sentence(self) -> str:
        """Who decided and why, as the summary and the report say it."""
        line = f"Decided by {self.decided_by}: {self.reason}"
        if not self.escalated:
            return line
        v = self.first
        said = "; ".join(x for x in (v.confidence, v.agreement) if x) if v is not None else ""
        first = (v.winner or "tie") if v is not None and self.first_status == "complete" else "no verdict"
        line += f"; the first judge said {first}" + (f" ({said})" if said else "")
        cost = self.first_usage
        if cost is not None:
            line += f", for {cost.llm_calls} calls" + (f" and {cost.prompt_tokens_processed:,} prompt tokens read"
                                                     if cost.prompt_tokens_processed is not None else "")
        return line


class JudgeResult(Frozen):
    schema_version: str = RESULT_SCHEMA_VERSION
    debatrix_version: str
    debate_id: str
    motion: str
    format: DebateFormat
    mode: str
    # the speeches judged, in order, so a report shows each beside its analyses (empty in results before 1.2)
    speeches: tuple[Speech, ...] = ()
    # the debate's rounds written without seeing each other (1-based speech numbers, as the debate file has them)
    simultaneous: tuple[tuple[int, ...], ...] = ()
    status: Status
    incomplete_reason: str | None = None
    dimensions: tuple[DimensionResult, ...] = ()
    general: DimensionResult | None = None
    # the run's preference for whoever a prompt listed first: the mean of its verdicts' position_bias (None where
    # no verdict was judged in several orders with probabilities)
    position_bias: float | None = None
    usage: Usage = Field(default_factory=Usage)
    # what the text checks found (copied or misattributed analyses, comments about the wrong debater, a panel reason
    # citing nothing said); None in results written before the checks existed
    checks: TextChecks | None = None
    # the flow mode's reading of the debate: every speech's decisions, by passage id (a verdict can be recomputed
    # from it: debatrix.core.flow)
    flow: tuple[SpeechFlow, ...] = ()
    # every LLM call with its prompt and answer, in the order answered (only with ``log_calls``)
    call_log: tuple[CallRecord, ...] = ()
    # with a second judge in reserve: who decided and why (None: no second judge was configured)
    escalation: Escalation | None = None
    # the judge profile the run read, in one line: what the model sees, or "unprofiled: ..." with the command that
    # profiles it ("": a result before 1.10, or a mode that reads no profile)
    profile: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)
    started_at: datetime
    finished_at: datetime

    @property
    def winner(self) -> str | None:
        return self.general.verdict.winner if self.general and self.general.verdict else None

    @property
    def flow_ledger(self) -> Ledger | None:
        """The ledger a flow sheet and the summary show: the argument dimension's (where rows stand or fall), else
        the first a dimension kept (None: not judged as a flow)."""
        ledgers = {d.name: d.ledger for d in self.dimensions if d.ledger is not None}
        return ledgers.get("argument") or next(iter(ledgers.values()), None)

    @property
    def judged(self) -> list[DimensionResult]:
        """Every dimension's result, and the general one once (a mode that judges general as its dimension lists it
        among the dimensions already)."""
        names = {d.name for d in self.dimensions}
        return [*self.dimensions, *([self.general] if self.general is not None and self.general.name not in names
                                    else [])]

    @property
    def weighing(self) -> str:
        """How the dimensions' verdicts add up by their weights, beside a panel's overall verdict (a tie splits its
        dimension's weight), and a word where the panel named another winner: the chair weighs the dimensions'
        comments itself, so a coach sees why it can go against the weightiest ones. "" where there is nothing to
        weigh (one dimension) or the overall verdict is itself this sum (the flow says its weights in its reason)."""
        judged = [d for d in self.dimensions if d.verdict is not None and d is not self.general]
        if len(judged) < 2 or self.general is None or self.general.verdict is None or self.flow:
            return ""
        names = [j.debater for j in self.general.debater_judgments] or list(
            dict.fromkeys(j.debater for d in judged for j in d.debater_judgments))
        if not names:
            return ""
        votes = dict.fromkeys(names, 0.0)
        for d in judged:
            winners = [d.verdict.winner] if d.verdict.winner in votes else names
            for n in winners:
                votes[n] += d.weight / len(winners)
        total = sum(d.weight for d in judged)
        each = ", ".join(f"{d.name} ×{d.weight:g} {d.verdict.winner or 'tie'}" for d in judged)
        sums = ", ".join(f"{n} {v:g}" for n, v in sorted(votes.items(), key=lambda x: -x[1]))
        line = f"The dimensions by weight ({each}): {sums} of {total:g}"
        top = max(votes.values())
        leaders = [n for n, v in votes.items() if v == top]
        named = self.general.verdict.winner
        if len(leaders) == 1 and named != leaders[0]:
            line += (f". The panel named {named or 'a tie'}, not {leaders[0]}: it weighs the dimensions' reasons "
                     "itself, not these sums")
        return line + "."

    def dimension(self, name: str) -> DimensionResult:
        for d in self.dimensions:
            if d.name == name:
                return d
        raise KeyError(name)
