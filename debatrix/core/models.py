"""Frozen domain types: the debate that goes in and the result that comes out."""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from functools import cached_property
from datetime import datetime
from enum import StrEnum
from collections.abc import Callable, Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from debatrix.core.passages import passage_id, size, split_speech

RESULT_SCHEMA_VERSION = "1.14"  # 1.2: the speeches judged; 1.3: escalation, verdicts' orders_agreeing; 1.4: stale notes;
# 1.5: misread "answers" sentences; 1.6: an escalation keeps the first judge's verdict (first), an order's judgment
# its dimension and where its winner came from (winner_from); 1.7: an order's judgment carries one winner field, and
# says in ``warning`` where its decision named another (was decision_winner); 1.8: the flow's answers are answers
# (a Line's ``answers`` and ``by``, a Thread's ``answered`` and ``stands``: an answer that is itself answered no longer
# fells the row), and a verdict may be ``not_judged`` (no winner, no weight in the panel, the reason why); 1.9: a
# ledger names the flow measure its dimension is read by (``measure``), a verdict may be ``sampled``, a call record
# says how many answers it ``sampled``; 1.10: the flow reads the model's profile (debatrix.core.profile): a row weighs
# and an answer counts by the model's P through that profile (``weight``, ``counts``: no longer a rank or a share
# above the debate's mean answer), a passage may be asked whether it reads clearly (a Mark's ``clear``), a ledger
# says why its measure is not judged on this model (``blind``), and a result names the profile it read (``profile``);
# 1.11: a result keeps the debate's simultaneous rounds (``simultaneous``), so its sheet shows each as one; 1.12: a
# flow verdict says the place shift its profile's reading took out of it (``place_shift``); 1.13: a row the other
# side had no later speech to answer counts toward what stands as its debater's answerable rows fared (a Tally's
# ``untested`` and ``tested``), not whole, and engagement is how strongly a debater's replies answered (``engaged``);
# 1.14: a speech's flow entry names each decision that is missing (``unknown``), and a verdict names a winner only
# where it holds with those decisions either way
BP_POSITIONS = ("OG", "OO", "CG", "CO")


def upgrade(key: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """A model's before-validator reading an object written before a schema change: where the data is a mapping
    that still has ``key``, a copy of it goes through ``change``; anything else is validated as it is."""
    def before(cls: type, data: Any) -> Any:
        return change(dict(data)) if isinstance(data, dict) and key in data else data

    return model_validator(mode="before")(classmethod(before))


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy whose values computed once from the fields (``cached_property``: a debate's passages and
        fingerprint) are computed again: pydantic copies them as they were, so a debate copied with other speeches
        kept the old passages (the flow then read speeches that were no longer there)."""
        copy = super().model_copy(update=update, deep=deep)
        for name in _cached_names(type(self)):
            copy.__dict__.pop(name, None)
        return copy


@functools.cache
def _cached_names(cls: type) -> tuple[str, ...]:
    """The ``cached_property`` attributes of a model class (found once per class: copies are frequent)."""
    return tuple(name for klass in cls.__mro__ for name, value in vars(klass).items()
                 if isinstance(value, cached_property))


class Side(StrEnum):
    PRO = "pro"
    CON = "con"


class DebateFormat(StrEnum):
    ONE_V_ONE = "1v1"
    BP = "bp"
    SINGLE = "single"  # one speech (or one speaker's speeches) judged on its own


class Debater(Frozen):
    """A debater, or in British Parliamentary a team (``position`` OG/OO/CG/CO)."""

    name: str = Field(min_length=1, max_length=200)
    side: Side
    position: Literal["OG", "OO", "CG", "CO"] | None = None

    @field_validator("name")
    @classmethod
    def _clean_name(cls, v: str) -> str:
        v = clean_name(v)
        if v.lower() == "tie":
            raise ValueError("'tie' is reserved and cannot be a debater name")
        return v


def clean_name(v: str) -> str:
    """A name as the judge uses it: NFKC-normalised (full-width and compatibility forms fold to one spelling), with
    no invisible or direction-changing characters (two names that print alike are one name)."""
    v = unicodedata.normalize("NFKC", v)
    if v != v.strip():
        raise ValueError("name has leading or trailing whitespace")
    _refuse_invisible(v, "name contains invisible, control or bidirectional characters")
    return v


def _refuse_invisible(v: str, problem: str) -> None:
    """Raise ``problem`` naming the code points where ``v`` holds control, format (zero-width, bidi) or line
    separator characters."""
    bad = [c for c in v if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]
    if bad:
        raise ValueError(f"{problem} ({', '.join(f'U+{ord(c):04X}' for c in dict.fromkeys(bad))})")


class Speech(Frozen):
    """One speech. Points of information stay inside ``content`` as quoted ("> ") blocks."""

    speaker: str = Field(min_length=1)
    content: str

    @field_validator("speaker")
    @classmethod
    def _clean_speaker(cls, v: str) -> str:
        return clean_name(v)

    @field_validator("content")
    @classmethod
    def _not_empty(cls, v: str) -> str:
        # zero-width and other format characters print nothing: a speech of only those is empty too
        if not any(not c.isspace() and unicodedata.category(c) not in ("Cf", "Cc") for c in v):
            raise ValueError("speech is empty (no visible text)")
        return v


PASSAGE_LIKE = re.compile(r"[Ss]\d{1,4}(?:\.\d{1,3})?")


def roster_problems(fmt: Any, debaters: list[tuple[Any, Any, Any]], speakers: list[Any]) -> list[str]:
    """Every problem of who debates and who speaks (names, sides, positions; the format's shape; each speech's
    speaker): all of them, so a file is mended in one go. Read from a :class:`Debate`'s own fields, or from a file's
    raw values where some field of it is already invalid (the loader reports both kinds together)."""
    out = []
    names = [n for n, _, _ in debaters]
    dupes = sorted({str(n) for n in names if names.count(n) > 1})
    if dupes:
        out.append(f"duplicate debater names: {', '.join(dupes)}")
    for n in dict.fromkeys(names):  # the sheet cites passages as S3.2: a debater named so would read as one
        if isinstance(n, str) and PASSAGE_LIKE.fullmatch(n.strip()):
            out.append(f"debater name {n!r} reads as a passage id (the flow cites passages as S2.1, speech 2's "
                       "first): give the debater another name")
    known = set(names)
    for i, speaker in enumerate(speakers):
        if speaker not in known:
            out.append(f"speech {i + 1}: unknown speaker {speaker!r} (debaters: {', '.join(map(str, names))})")
    sides = [side for _, side, _ in debaters]
    if fmt == DebateFormat.SINGLE:
        if len(debaters) != 1:
            out.append("a single-speech item has exactly one speaker")
    elif fmt == DebateFormat.ONE_V_ONE:
        if sides.count(Side.PRO) != 1 or sides.count(Side.CON) != 1:
            out.append("a 1v1 debate needs exactly one pro and one con debater")
    elif fmt == DebateFormat.BP:
        if sorted(str(p or "") for _, _, p in debaters) != sorted(BP_POSITIONS):
            out.append("a British Parliamentary debate needs four teams with positions OG, OO, CG, CO")
        for name, side, position in debaters:
            expected = Side.PRO if position in ("OG", "CG") else Side.CON
            if position in BP_POSITIONS and side != expected:
                out.append(f"team {name!r} at {position} must be on the {expected} side")
    for name in dict.fromkeys(names):
        if name not in speakers:
            out.append(f"debater {name!r} gives no speech")
    return out


class Passage(Frozen):
    """One numbered passage of a speech."""

    id: str  # "S3.2": the third speech's second passage
    speech: int  # 0-based index of the speech
    number: int  # 1-based within the speech
    speaker: str
    side: Side
    text: str  # the compacted speech text of the passage (its lines joined by "\n")

    @property
    def words(self) -> int:
        return size(self.text)


class Debate(Frozen):
    id: str = Field(min_length=1, max_length=200)
    motion: str = Field(min_length=1)

    @field_validator("id")
    @classmethod
    def _printable_id(cls, v: str) -> str:
        """The id names files and is printed: a line break in it would forge an output line."""
        _refuse_invisible(v, "id contains control, invisible or line-breaking characters")
        return v
    info_slide: str = ""
    format: DebateFormat = DebateFormat.ONE_V_ONE
    debaters: tuple[Debater, ...]
    speeches: tuple[Speech, ...] = Field(min_length=1)
    # the rounds whose speeches were written without seeing each other (NYU's first round; openings delivered
    # blind in some formats): each a group of speech numbers, 1-based as a file writes them ("simultaneous:
    # [[1, 2]]"). No speech of a group is asked whether it answers another of its group
    simultaneous: tuple[tuple[int, ...], ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> Debate:
        problems = roster_problems(self.format, [(d.name, d.side, d.position) for d in self.debaters],
                                   [s.speaker for s in self.speeches])
        seen: set[int] = set()
        for group in self.simultaneous:
            bad = [n for n in group if not 1 <= n <= len(self.speeches)]
            if bad:
                problems.append(f"simultaneous: speech {bad[0]} does not exist (the debate has "
                                f"{len(self.speeches)} speeches, numbered from 1)")
            if seen & set(group):
                problems.append(f"simultaneous: speech {sorted(seen & set(group))[0]} is in two rounds")
            seen |= set(group)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def together(self, speech: int) -> frozenset[int]:
        """The 0-based speeches written without seeing speech ``speech`` (0-based) in its simultaneous round, itself
        included (just itself where it is in none)."""
        for group in self.simultaneous:
            if speech + 1 in group:
                return frozenset(n - 1 for n in group)
        return frozenset((speech,))

    def could_answer(self, later: int, earlier: int) -> bool:
        """Whether speech ``later`` was written after seeing speech ``earlier`` (both 0-based)."""
        return later > earlier and earlier not in self.together(later)

    def debater(self, name: str) -> Debater:
        for d in self.debaters:
            if d.name == name:
                return d
        raise KeyError(name)

    @cached_property
    def passages(self) -> tuple[Passage, ...]:
        """Every speech split once into numbered passages (:func:`debatrix.core.passages.split_speech`): what the
        flow cites."""
        return tuple(Passage(id=passage_id(i, k), speech=i, number=k, speaker=s.speaker,
                             side=self.debater(s.speaker).side, text=text)
                     for i, s in enumerate(self.speeches) for k, text in enumerate(split_speech(s.content), 1))

    @cached_property
    def passage_index(self) -> dict[str, Passage]:
        """The passages by id ("S3.2")."""
        return {p.id: p for p in self.passages}

    @cached_property
    def fingerprint(self) -> str:
        """Stable short hash of the debate content (used for fences and cache keys); computed once. The fields added
        since 1.10 count only where set, so a debate without them keeps its prompts (its cached answers, and the
        judge profiles measured on it)."""
        later = {"simultaneous"} if not self.simultaneous else set()
        return hashlib.sha256(self.model_dump_json(exclude=later).encode()).hexdigest()[:12]


# ---------------------------------------------------------------- results


def where_called(node: str, dimension: str | None) -> str:
    """How a failure names the call it happened in (a :class:`CallRecord`'s node, and its dimension where it has
    one)."""
    return f"{node} ({dimension})" if dimension else node


class CallRecord(Frozen):
    """One LLM request as the gateway saw it."""

    node: str
    dimension: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    attempts: int = 1
    repaired: bool = False
    truncated: bool = False  # the answer hit its token cap and was cut back to the last full sentence
    cached: bool = False  # answered from the response cache: no request was sent
    failed: bool = False  # no usable answer came back (after ``attempts`` tries): the run ended incomplete
    from_answer: bool = False  # a decision read from the answer alone (the server gave no probabilities)
    sampled: int = 0  # a decision whose probabilities are the options' shares among this many sampled answers
    # what the server says it really processed (llama.cpp's ``timings``; OpenAI's ``cached_tokens``): prompt tokens
    # it computed and prompt tokens it reused from its KV/prompt cache. None: the server did not say.
    prompt_tokens_processed: int | None = None
    cached_prompt_tokens: int | None = None
    # with ``log_calls``: the speech the call was about (0-based), the messages as sent ((role, text) pairs) and
    # the answer's text, for the report's call log
    index: int | None = None
    messages: tuple[tuple[str, str], ...] = ()
    answer: str = ""


class NodeUsage(Frozen):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    repairs: int = 0
    truncated_calls: int = 0
    cached_calls: int = 0
    prompt_tokens_processed: int | None = None
    cached_prompt_tokens: int | None = None
    seconds: float = 0.0  # summed over the node's calls (they overlap in time)


class Usage(Frozen):
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    repairs: int = 0
    truncated_calls: int = 0  # free-text answers cut back at their token cap
    cached_calls: int = 0  # answered from the response cache (included in llm_calls, cost nothing)
    # prompt tokens the model computed / took from its cache (None: the server reports neither)
    prompt_tokens_processed: int | None = None
    cached_prompt_tokens: int | None = None
    llm_seconds: float = 0.0
    wall_seconds: float = 0.0
    by_node: dict[str, NodeUsage] = Field(default_factory=dict)

    @classmethod
    def from_calls(cls, calls: list[CallRecord], wall_seconds: float) -> Usage:
        by: dict[str, list[CallRecord]] = {}
        for c in calls:
            by.setdefault(c.node, []).append(c)
        return cls(
            **cls._totals(calls), llm_calls=len(calls), llm_seconds=round(sum(c.seconds for c in calls), 3),
            by_node={node: NodeUsage(**cls._totals(cs), calls=len(cs), seconds=round(sum(c.seconds for c in cs), 3))
                     for node, cs in sorted(by.items())},
            wall_seconds=round(wall_seconds, 3),
        )

    def plus(self, other: Usage) -> Usage:
        """The two runs' usage together (an escalated debate: the first judge's and the second's); per node it is
        this run's, where the node table would mix two models."""
        def added(a: Any, b: Any) -> Any:
            return None if a is None and b is None else (a or 0) + (b or 0)

        fields = ("llm_calls", "prompt_tokens", "completion_tokens", "retries", "repairs", "truncated_calls",
                  "cached_calls", "prompt_tokens_processed", "cached_prompt_tokens")
        update = {f: added(getattr(self, f), getattr(other, f)) for f in fields}
        update.update(llm_seconds=round(self.llm_seconds + other.llm_seconds, 3),
                      wall_seconds=round(self.wall_seconds + other.wall_seconds, 3))
        return self.model_copy(update=update)

    @staticmethod
    def _totals(calls: list[CallRecord]) -> dict[str, int | None]:
        def reported(field: str) -> int | None:
            values = [getattr(c, field) for c in calls if getattr(c, field) is not None]
            return sum(values) if values else None

        return {"prompt_tokens_processed": reported("prompt_tokens_processed"),
                "cached_prompt_tokens": reported("cached_prompt_tokens"),
                "prompt_tokens": sum(c.prompt_tokens for c in calls),
                "completion_tokens": sum(c.completion_tokens for c in calls),
                "retries": sum(c.attempts - 1 for c in calls), "repairs": sum(c.repaired for c in calls),
                "truncated_calls": sum(c.truncated for c in calls), "cached_calls": sum(c.cached for c in calls)}


class SpeechAnalysis(Frozen):
    dimension: str
    index: int
    speaker: str
    analysis: str
    # the analysis without its quotations of the speech: what the column's later analyses read (the quotations
    # are evidence for the judgment; re-read by every later speech they cost tokens and invite copying);
    # empty where the analysis has none
    memo: str = ""
    # why this speech has no analysis: its answer was still not the schema after its repair (the debate was judged
    # without it; the dimension's verdict says so)
    missing: str = ""

    @property
    def remembered(self) -> str:
        return self.memo or self.analysis


class SpeechJudgment(Frozen):
    dimension: str
    index: int
    speaker: str
    comment: str
    score: int = Field(ge=1, le=10)  # the answer (argmax)
    expected_score: float | None = Field(default=None, ge=1, le=10)  # over the score tokens' probabilities

    @property
    def value(self) -> float:
        """The probability-weighted score where the server gave probabilities, else the answer."""
        return self.score if self.expected_score is None else self.expected_score


class DebaterJudgment(Frozen):
    dimension: str
    debater: str
    comment: str
    score: float = Field(ge=1, le=10)  # probability-weighted where available, averaged over the orders judged
    argmax_score: float | None = Field(default=None, ge=1, le=10)  # the answers' scores, averaged over orders


def _judgment_1_7(old: dict[str, Any]) -> dict[str, Any]:
    """Results before 1.7 kept the decision's own winner in a second field: read as the warning it gave."""
    decided = old.pop("decision_winner")
    if old.get("consistent") is False and not old.get("warning"):
        old["warning"] = f"the decision named {decided or 'tie'} but the judgment argues otherwise"
    return old


class Judgment(Frozen):
    """One order's answer to a judgment that compares debaters: each order lists the debaters differently (both
    orders in 1v1, rotations in BP), so a preference for whoever is listed first cancels out. The orders'
    judgments combined are a :class:`Verdict`."""

    order: tuple[str, ...]  # the debaters as the prompt listed them
    winner: str | None  # the winner this order's answer named (argmax); None = tie, or none named yet
    # where ``winner`` comes from: the comment's "Winner:" line, the structured decision, or neither (a written
    # judgment whose comment names no winner, before its decision is read): a tie and no winner at all differ here
    winner_from: Literal["comment", "decision"] | None = None
    dimension: str = ""  # the dimension judged ("" in results written before it was kept)
    probabilities: dict[str, float] | None = None  # choice ("tie" included) -> probability; None: not available
    scores: dict[str, float] = Field(default_factory=dict)  # debater -> score (expected where available)
    argmax_scores: dict[str, int] = Field(default_factory=dict)
    comment: str = ""
    consistent: bool = True  # False: the decision named another winner than the comment argues for
    # where it is not consistent, what the decision named and which winner was kept, in words ("" otherwise): the
    # order's one winner is ``winner``
    warning: str = ""

    _before_1_7 = upgrade("decision_winner", _judgment_1_7)


class Verdict(Frozen):
    """A winner decision. ``winner`` is a debater name, or ``None`` for a tie.

    ``winner`` is the winner judge's direct prediction (DP); ``score_winner`` compares debater scores (SC)."""

    dimension: str
    comment: str
    winner: str | None
    # None until the debaters' scores are in (the graph's decision node writes the verdict; the run's end adds SC)
    score_winner: str | None = None
    # DP from the winner probabilities averaged over the orders ("logprobs"), or from the answers where the server
    # gives no probabilities ("argmax": each order's answer counts as certainty); "none": nothing was decided, so
    # no figure came from either (1.14)
    probabilities: dict[str, float] | None = None
    method: Literal["logprobs", "argmax", "sampled", "none"] = "argmax"
    # why this verdict names no winner although the run is complete: the dimension's decisions carry no signal
    # measured on gold, or too many of them are missing ("" : judged). Such a verdict weighs nothing in the panel
    not_judged: str = ""
    # not judged because the model cannot make the decisions it rests on (its profile: not the run's failure)
    blind: bool = False
    orders: tuple[Judgment, ...] = ()
    # mean probability the orders gave whoever they listed first, minus 1/n (0: no preference for the first place)
    position_bias: float | None = None
    # where the orders read the debate once, in speaking order: the share of the winner probability the model
    # gives each speaking place on average (debatrix.core.probabilities.PlacePrior), which ``probabilities`` were
    # divided by (the orders' own answers are kept as the model gave them)
    place_prior: tuple[float, ...] | None = None
    # a flow dimension's: the log-odds added to the first speaker's probability to take out the model's lean to a
    # speaking place in this reading (its profile's place fit, debatrix.core.profile.PlaceFit; None: none taken out)
    place_shift: float | None = None
    consistent: bool = True  # the comment argues for the winner named
    warnings: tuple[str, ...] = ()
    # what the winner's probability means (debatrix.core.probabilities): calibrated against human verdicts where a map
    # exists for the model and mode; ``confidence`` is the text shown beside the winner ("72%", "too close to
    # call", "uncalibrated", or "" without probabilities)
    calibrated_probability: float | None = None
    confidence: str = ""
    # how many of the orders named the winner this verdict gives (None: judged in one order): a verdict the orders
    # split on is the order's doing as much as the debate's, whatever its probability says
    orders_agreeing: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _agreement(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("orders_agreeing") is not None:
            return data
        orders = data.get("orders") or ()
        if len(orders) < 2:
            return data
        named = [o.winner if isinstance(o, Judgment) else o.get("winner") for o in orders]
        return {**data, "orders_agreeing": sum(w == data.get("winner") for w in named)}

    @property
    def agreement(self) -> str:
        """"2 of 2 orders agree", or "" where the verdict was judged in one order."""
        if self.orders_agreeing is None:
            return ""
        n = len(self.orders)
        return f"{self.orders_agreeing} of {n} orders agree" if self.orders_agreeing != 1 or n == 1 else \
            f"1 of {n} orders agrees"


# ------------------------------------------------------------------ the flow (debatrix.core.flow computes it)

ARGUMENT_AT = 0.5  # a passage is a row of the flow where it is more likely an argument than not


class Mark(Frozen):
    """One passage's decisions: the probability that it argues the motion for its speaker's side, that it backs its
    point with evidence, and that it reads clearly (None: not asked), as the model gave them."""

    id: str
    argument: float | None = Field(default=None, ge=0, le=1)
    evidence: float | None = Field(default=None, ge=0, le=1)
    clear: float | None = Field(default=None, ge=0, le=1)


class Line(Frozen):
    """An answer drawn on the flow: passage ``by`` of speech ``speech`` (0-based) against the earlier passage
    ``target`` of another side, with the probability that it answers it (makes that point or argues about it).
    An answer is not yet a refutation: whether the row falls depends on whether the answer is itself answered
    (:attr:`Thread.stands`)."""

    speech: int
    target: str
    answers: float = Field(ge=0, le=1)
    by: str | None = None  # the answering passage's id (None: a result before 1.8, which did not keep it)

    # results before 1.8 kept "refutes" (and a "concedes" no run asked): both were P(answers)
    _before_1_8 = upgrade("refutes", lambda old: {
        **{k: v for k, v in old.items() if k not in ("refutes", "concedes")},
        "answers": min(1.0, old["refutes"] + old.get("concedes", 0.0))})


class Rating(Frozen):
    """A speech's rating on the dimension's own question, 1 to 5, probability-weighted where the server gave
    probabilities (``probabilities``: value -> probability)."""

    expected: float = Field(ge=1, le=5)
    probabilities: dict[str, float] | None = None


class SpeechFlow(Frozen):
    """One speech's analysis in one dimension: its passages' marks, its answers to earlier passages, its rating.
    ``missing`` says why a decision of it could not be had (its calls still count); what it has is kept."""

    dimension: str
    index: int
    speaker: str
    marks: tuple[Mark, ...] = ()
    lines: tuple[Line, ...] = ()
    rating: Rating | None = None
    missing: str = ""
    # how many decisions of each kind ("argues", "evidence", "answers") were answered and how many were missing (an
    # answer none of the options): what a dimension's verdict rests on, and whether it may name a winner
    decided: dict[str, int] = Field(default_factory=dict)
    missed: dict[str, int] = Field(default_factory=dict)
    # each missing decision by what it asked: ("argues" | "evidence" | "clear", passage) or ("answers", passage, row),
    # so a verdict can be checked with it either way (a result before 1.14 kept only the count)
    unknown: tuple[tuple[str, ...], ...] = ()
    # decisions taken from the answer alone, as certain, where the server gave no probabilities
    counted: int = 0
    sampled: int = 0  # decisions whose probabilities are shares of sampled answers (--decision-samples)
    proposed_by: str = ""  # how the points it was asked about were proposed ("words and meaning", "words")


class Cell(Frozen):
    """What one later speech did to a row: the probability that it answered it, and by which passage."""

    model_config = ConfigDict(frozen=True, extra="ignore")  # a result before 1.8 also kept a "move"

    speech: int
    answered: float  # P(it answers the row), as the model gave it
    by: str | None = None
    # how much the answer counts toward felling the row: ``answered`` through the model's profile (its place lean
    # out, mapped to the gold's rate; as given on an unprofiled model)
    counts: float | None = None

    @property
    def counted(self) -> float:
        """How much the answer counts toward felling its row (a result before 1.8 kept no ``counts``: as given)."""
        return self.answered if self.counts is None else self.counts


#: a row's status as every surface words it (the summary, the report and the page print these, from
#: :attr:`Thread.status`): what became of an argument by the end of the debate
STATUS_MEANING = {
    "standing": "no speech of the other side came after it (untested: it counts as that debater's tested "
                "arguments stood)",
    "dropped": "the other side spoke after it and did not answer it, or only partly (its answers together short of "
               "even odds): it stands",
    "answered": "the other side answered it and that answer was not itself answered: it falls",
    "extended": "the other side answered it, but its own side answered that answer: it stands again",
}


class Thread(Frozen):
    """A row of the flow sheet: an argument (a passage more likely an argument than not) and what became of it."""

    id: str
    speaker: str
    side: Side
    gist: str
    argument: float  # P(it is an argument), as the model gave it
    evidence: float | None
    # what the row weighs in its debater's tallies: P(argument) through the model's profile (its place lean out,
    # mapped to the gold's rate; as given on an unprofiled model); results of 1.8 and 1.9 kept a rank here; None:
    # a result before 1.8, which weighed P(argument) itself
    weight: float | None = None
    # how surely the other side answered it at least once: its cells' counts combined, 1 − Π(1 − count) (a count
    # is the answer's mapped P beyond the model's usual answer, JudgeProfile.telling), not a P the model gave
    answered: float
    stands: float  # P(it stands at the end): every answer to it failed, or was itself answered and fell
    answerable: bool = False  # the other side spoke after it: leaving it alone is dropping it
    cells: tuple[Cell, ...] = ()

    # results before 1.8 kept "refuted" and "conceded" (never asked, so 0): P(answered), and a row stood unless answered
    _before_1_8 = upgrade("refuted", lambda old: {
        **{k: v for k, v in old.items() if k not in ("refuted", "conceded")},
        "answered": 1.0 - (1.0 - old["refuted"]) * (1.0 - old.get("conceded", 0.0)),
        "stands": 1.0 - old["refuted"] * (1.0 - old.get("conceded", 0.0))})

    @property
    def weighs(self) -> float:
        return self.argument if self.weight is None else self.weight

    @property
    def status(self) -> Literal["standing", "dropped", "answered", "extended"]:
        """The one place a row's status is decided (:data:`STATUS_MEANING` says each in words)."""
        if not self.answerable:
            return "standing"
        if self.answered < 0.5:
            return "dropped"
        return "extended" if self.stands >= 0.5 else "answered"


class Tally(Frozen):
    """One debater's figures in one dimension's ledger (sums weighted by each row's probability of being an
    argument; a rating where the dimension asks one)."""

    debater: str
    arguments: float = 0.0  # Σ weight over their rows (weight: P(argument) through the profile, Thread.weight)
    # Σ weight · P(stands), a row the other side could not answer counted at ``tested``
    standing: float = 0.0
    untested: float = 0.0  # Σ weight over their rows no later speech of the other side could answer
    # the share standing of their rows the other side could answer (weighed), at which an untested row counts
    # (1.0: none could be answered); results before 1.13 counted each untested row whole
    tested: float = 1.0
    evidence: float = 0.0  # Σ weight · P(evidence)
    # Σ over the other side's rows they could answer: weight · how strongly their replies answered it (the mean
    # count of the times they were asked; 0 where never asked): before 1.13, all replies combined
    engaged: float = 0.0
    engageable: float = 0.0  # Σ weight over the other side's rows spoken before one of their speeches
    clear: float = 0.0  # Σ P(clear) over their passages asked
    passages: int = 0  # their passages asked whether they read clearly
    rating: float | None = None  # results before 1.8 kept the mean clarity rating (1-5); no longer computed
    # their passages whose "argues" decision is missing: no row, weighing nothing, and said beside their count
    # (1.14), so a count that left them out never reads as measured
    unknown: tuple[str, ...] = ()

    @property
    def engagement(self) -> float | None:
        return self.engaged / self.engageable if self.engageable > 0 else None


class Ledger(Frozen):
    dimension: str
    measure: str | None = None  # the flow measure the dimension is read by (None: a result before 1.9)
    threads: tuple[Thread, ...] = ()
    tallies: tuple[Tally, ...] = ()
    # results of 1.8 and 1.9: the mean P(answers) of the debate's answer questions, which an answer had to stand
    # above to count (no longer computed: the model's profile maps its answers; None since 1.10)
    baseline: float | None = None
    blind: str = ""  # why this dimension's measure decides nothing on the model that ran (from its profile)
    # what its figures are: "P", the model's probabilities; "answers", its answers taken as certain (the server
    # gave no probabilities: each figure a 0 or 1, or a share of them); "samples", shares of sampled answers (1.14)
    figures: Literal["P", "answers", "samples"] = "P"

    def tally(self, debater: str) -> Tally:
        return next(t for t in self.tallies if t.debater == debater)


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
