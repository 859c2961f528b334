"""What one judging returns: each dimension's result (its analyses, judgments, verdict, and in the default mode
its ledger), the checks of what the judge wrote, an escalation to a second judge, and the whole result with the
usage and the settings it ran under."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import ConfigDict, Field, model_validator

from debatrix.core.flow import ID, Correction, Ledger, SpeechFlow
from debatrix.core.models import (RESULT_SCHEMA_VERSION, TOO_CLOSE, CallRecord, Debate, DebateFormat, Debater,
                                  DebaterJudgment, Frozen, Speech, SpeechAnalysis, SpeechJudgment, Usage, Verdict)
from debatrix.core.passages import UNSPACED
from debatrix.core.probabilities import CalibrationMap, shown
from debatrix.core.profile import JudgeProfile


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


# ---------------------------------------------------------------- a dimension's result, assembled

def score_winner(scores: dict[str, float], debate: Debate, allow_tie: bool, margin: float) -> str | None:
    """SC: compare debater scores; ``None`` is a tie (within ``margin`` where ties are allowed, or equal top)."""
    if len(scores) != len(debate.debaters) or not scores:
        return None
    if debate.format is DebateFormat.ONE_V_ONE:
        pro, con = (next(d.name for d in debate.debaters if d.side.value == s) for s in ("pro", "con"))
        diff = scores[pro] - scores[con]
        if diff == 0 or (allow_tie and abs(diff) <= margin):
            return None
        return pro if diff > 0 else con
    best = max(scores.values())
    top = [n for n, s in scores.items() if s == best]
    return top[0] if len(top) == 1 else None


def _first(state: Mapping[str, Any], key: str, dimension: str) -> Any:
    """The first item a dimension wrote under ``key`` (None: it wrote none)."""
    items = state.get(key, {}).get(dimension)  # type: ignore[attr-defined]
    return items[0] if items else None


def judged_debaters(state: Mapping[str, Any], dim: str, debate: Debate) -> list[DebaterJudgment]:
    order = {d.name: i for i, d in enumerate(debate.debaters)}
    return sorted(state.get("debater_judgments", {}).get(dim, []), key=lambda j: order[j.debater])


def dimension_result(state: Mapping[str, Any], dim: Any, cmap: CalibrationMap | None) -> DimensionResult:
    """Dimension ``dim``'s result (``name``, ``weight``, ``allow_tie``, ``tie_margin``) from what the judge's steps
    wrote in ``state`` (a judge graph's state, or a recompute's: keys by dimension), its verdict calibrated by
    ``cmap``."""
    debate = state["debate"]
    judgments = judged_debaters(state, dim.name, debate)
    decision = _first(state, "winner_decisions", dim.name)
    verdict = None
    analyses = tuple(sorted(state.get("analyses", {}).get(dim.name, []), key=lambda a: a.index))
    if decision is not None:
        sc = score_winner({j.debater: j.score for j in judgments}, debate, dim.allow_tie, dim.tie_margin)
        gaps = tuple(f"judged without the analysis of speech {a.index + 1} ({a.missing})" for a in analyses
                     if a.missing)
        verdict = calibrated(decision.model_copy(update={"score_winner": sc,
                                                     "warnings": (*decision.warnings, *gaps)}), cmap)
    return DimensionResult(
        name=dim.name, weight=dim.weight, allow_tie=dim.allow_tie, tie_margin=dim.tie_margin,
        analyses=analyses,
        speech_judgments=tuple(sorted(state.get("speech_judgments", {}).get(dim.name, []), key=lambda s: s.index)),
        debate_analysis=decision.comment if decision is not None else getattr(
            _first(state, "debate_analyses", dim.name), "comment", None),
        debater_judgments=tuple(judgments),
        verdict=verdict,
        ledger=state.get("ledgers", {}).get(dim.name),
    )


def general_result(state: Mapping[str, Any], dims: list[DimensionResult], cmap: CalibrationMap | None
                   ) -> DimensionResult:
    """The panel's general result: debater scores are the weighted mean of the dimensions' scores (SC);
    the winner is the panel chair's decision (DP)."""
    debate = state["debate"]
    dims = [d for d in dims if d.verdict is None or not d.verdict.not_judged]  # weighs nothing: not judged
    total = sum(d.weight for d in dims)
    decision = state.get("panel")
    judgments = []
    # a panel that names no winner shows no scores, which would name one unsaid
    for debater in () if decision is not None and decision.not_judged else debate.debaters:
        parts = [(d.weight, j.score) for d in dims for j in d.debater_judgments if j.debater == debater.name]
        if len(parts) == len(dims) and total:
            score = round(sum(w * s for w, s in parts) / total, 3)
            detail = ", ".join(f"{d.name} {j.score:g}×{d.weight:g}" for d in dims for j in d.debater_judgments
                               if j.debater == debater.name)
            judgments.append(DebaterJudgment(dimension="general", debater=debater.name, score=score,
                                             comment=f"weighted mean of the dimension scores: {detail}"))
    verdict = None
    if decision is not None:
        sc = score_winner({j.debater: j.score for j in judgments}, debate, False, 0)
        verdict = calibrated(decision.model_copy(update={"dimension": "general", "score_winner": sc}), cmap)
    return DimensionResult(name="general", weight=total, allow_tie=False, debater_judgments=tuple(judgments),
                           verdict=verdict)


def calibrated(v: Verdict, cmap: CalibrationMap | None) -> Verdict:
    """The verdict with its confidence as shown: calibrated for the run's model and mode where a map exists; too
    close to call where its reading was not shown to carry (:attr:`Verdict.unproven`)."""
    if v.not_judged:
        return v
    if v.unproven:
        return v.model_copy(update={"calibrated_probability": None, "confidence": TOO_CLOSE})
    q, text = shown((v.probabilities or {}).get(v.winner or "tie"), v.method, cmap)
    return v.model_copy(update={"calibrated_probability": q, "confidence": text})


def missing_parts(d: DimensionResult, debate: Debate, per_speech: bool) -> list[str]:
    """What dimension ``d``'s result lacks (each "dimension: what"), where the run should have given it."""
    if d.verdict is not None and d.verdict.not_judged:
        # a dimension the model cannot judge (measured blind) is complete in saying so; one whose decisions are
        # missing is not
        blind = d.verdict.blind or (d.ledger is not None and bool(d.ledger.blind))
        return [] if blind else [f"{d.name}: {d.verdict.not_judged}"]
    out = []
    # the flow's completeness is the share of its decisions made (a dimension missing too many is not judged, above):
    # a speech whose few decisions for a dimension are all missing has no score there, and the warnings name them
    per_speech = per_speech and d.ledger is None
    # a speech whose analysis is missing (recorded so, and warned of) has no judgment to count
    expected = len(debate.speeches) - sum(1 for a in d.analyses if a.missing)
    if per_speech and len({s.index for s in d.speech_judgments}) < expected:
        out.append(f"{d.name}: {len(d.speech_judgments)} of {len(debate.speeches)} speech judgments")
    if debate.format is not DebateFormat.SINGLE:
        if len(d.debater_judgments) != len(debate.debaters):
            out.append(f"{d.name}: {len(d.debater_judgments)} of {len(debate.debaters)} debater judgments")
        if d.verdict is None:
            out.append(f"{d.name}: no winner verdict")
    return out


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
    # the profile itself (None: unprofiled, a mode that reads none, or a result before 1.16), the debaters and the
    # run's own failures (before any dimension's), so that the verdicts can be recomputed from the decisions alone
    judge_profile: JudgeProfile | None = None
    debaters: tuple[Debater, ...] = ()
    failures: tuple[str, ...] = ()
    # the decisions people set, in the order set (the flow above keeps the model's own; the dimensions, ledgers and
    # verdicts are computed from both: :func:`debatrix.core.review.recompute`)
    corrections: tuple[Correction, ...] = ()
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



# ------------------------------------------------------------------- words, in any script (what the checks compare)

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'", "“": '"', "”": '"', "„": '"', "«": '"', "»": '"'})
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")  # letters and digits of any script; "don't" one word


def normalized(text: str) -> str:
    """Lower case, compatibility forms folded, curly quotes straightened (what a quotation check compares)."""
    return unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).lower()


def words(text: str) -> list[str]:
    """A text's words in any script, lower-cased; in a script written without spaces (Chinese, Thai ...) each
    character, so the quotation, copy and grounding checks compare such text too."""
    out: list[str] = []
    for w in _WORD.findall(normalized(text)):
        if UNSPACED.search(w):
            out += [c for piece in re.split(f"({UNSPACED.pattern})", w) if piece
                    for c in (piece if UNSPACED.fullmatch(piece) else [piece])]
        else:
            out.append(w)
    return out


# ------------------------------------------------------------------- the checks of a flow's text, by id

# what in a flow's text is not the judge's own citing: a passage's quoted first words (the debater's, which may
# name ids of their own), and the note of the decisions that are missing (which names the passages not decided)
_NOT_CITED = re.compile(r"“[^”]*”?|missing: [^\n]*")


def judge_wrote(text: str) -> str:
    """``text`` with the debaters' quoted words and the missing-decisions note blanked (same length, so positions
    still hold): the ids left are the ones the judge cites."""
    return _NOT_CITED.sub(lambda m: " " * len(m.group(0)), text)


def cited(text: str, debate: Debate, speaker: str) -> tuple[list[str], list[str], list[str]]:
    """The passage ids ``text`` (written about ``speaker``) cites: (theirs, ids the table does not have, ids of
    another speaker not given to that speaker as "<name>'s <id>")."""
    index = debate.passage_index
    own, unknown, foreign = [], [], []
    for m in ID.finditer(judge_wrote(text)):
        pid, p = m.group(0), index.get(m.group(0))
        if p is None:
            unknown.append(pid)
        elif p.speaker == speaker:
            own.append(pid)
        elif not text[:m.start()].endswith(f"{p.speaker}'s "):
            foreign.append(pid)
    return own, unknown, foreign


def flow_checks(result: JudgeResult, debate: Debate) -> TextChecks:
    """The checks of a flow result's text, by lookup in the passage table: every id it cites exists, another
    speaker's passage is given to that speaker, and every comment on a debater cites one of their own passages."""
    analyses, comments, flags = [], [], []
    for d in result.dimensions:
        for a in d.analyses:
            _, unknown, foreign = cited(a.analysis, debate, a.speaker)
            analyses.append(AnalysisCheck(dimension=d.name, index=a.index, speaker=a.speaker, by_id=True,
                                          words=len(words(a.analysis)), unknown_ids=tuple(unknown),
                                          foreign_ids=tuple(foreign)))
            wrong = [f"cites {', '.join(unknown)}, which do not exist" if unknown else "",
                     f"gives {a.speaker} {', '.join(foreign)}" if foreign else ""]
            if unknown or foreign:
                flags.append(f"{d.name} analysis of speech {a.index + 1}: " + "; ".join(x for x in wrong if x))
        for j in d.debater_judgments:
            own, unknown, foreign = cited(j.comment, debate, j.debater)
            comments.append(CommentCheck(dimension=d.name, debater=j.debater, unknown_ids=tuple(unknown),
                                         foreign_ids=tuple(foreign), own_cited=len(own)))
            if not own and any(s.speaker == j.debater for s in debate.speeches):
                flags.append(f"{d.name} comment on {j.debater} cites none of their passages")
            if unknown or foreign:
                flags.append(f"{d.name} comment on {j.debater} cites " + ", ".join(unknown + foreign) + " wrongly")
    return TextChecks(analyses=tuple(analyses), comments=tuple(comments), flags=tuple(flags))
