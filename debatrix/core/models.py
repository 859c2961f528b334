"""Frozen domain types: the debate that goes in (debaters, speeches, its passage table), what the calls cost, and
the prose modes' analyses, judgments and verdicts. What a judging returns is :mod:`debatrix.core.results`; the
flow's record, :mod:`debatrix.core.flow`."""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from functools import cached_property
from enum import StrEnum
from collections.abc import Callable, Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from debatrix.core.passages import passage_id, size, split_speech

RESULT_SCHEMA_VERSION = "1.16"  # 1.2: the speeches judged; 1.3: escalation, verdicts' orders_agreeing; 1.4: stale notes;
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
# where it holds with those decisions either way; 1.15: the call log is kept by default, its prompts up to a cap (a
# call past it says ``prompt_left_out``); 1.16: a person can correct the flow: a result keeps the corrections beside the
# model's decisions (``corrections``), the debaters and the judge profile it read (``debaters``, ``judge_profile``),
# so it can be recomputed; a cell says how far its answer moved from the model's usual one (``factor``) and who set
# it (``set_by``), and a verdict too close to call names its lean (``lean``, ``unproven``)
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
    prompt_left_out: bool = False  # the result's call log had reached its cap (call_log_chars): no messages kept

    def after(self, probe: CallRecord) -> CallRecord:
        """This record of a decision asked a second time (the first ``probe`` asked for log probabilities the
        server did not give), with both requests' tokens, time and attempts, so the run's usage counts both."""
        def total(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return self.model_copy(update={
            "prompt_tokens": probe.prompt_tokens + self.prompt_tokens,
            "completion_tokens": probe.completion_tokens + self.completion_tokens,
            "seconds": round(probe.seconds + self.seconds, 4), "attempts": probe.attempts + self.attempts,
            "cached": probe.cached and self.cached,
            "prompt_tokens_processed": total(probe.prompt_tokens_processed, self.prompt_tokens_processed),
            "cached_prompt_tokens": total(probe.cached_prompt_tokens, self.cached_prompt_tokens)})


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


#: how a verdict the judge cannot call is said on every surface ("too close to call, leaning Ana (0.53)"): its
#: calibrated probability too near even, or its reading not shown right above a coin on gold for this model
TOO_CLOSE = "too close to call"


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
    # the debater its figures favour, named where the winner is not (a flow verdict too close to call: ``unproven``
    # says why); None where it has no figures or a prose verdict named its winner itself (1.16)
    lean: str | None = None
    # why the winner it leans to is not named although judged: its reading was measured on gold for this model and
    # not shown right above a coin (or shown leaning to a speaking place): too close to call, leaning ``lean``
    unproven: str = ""
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
    def called(self) -> str:
        """The verdict in a coach's words, the same on every surface: "Ana (72%)", "too close to call, leaning Ana
        (0.53)" (its lean and its figure, where the judge cannot call it), "tie", or "not judged" (nothing was read,
        or too little: the reason says which)."""
        agree = self.agreement
        if self.not_judged:
            return "not judged"
        if self.unproven or self.confidence == TOO_CLOSE:
            who = self.lean or self.winner
            p = self.calibrated_probability if self.confidence == TOO_CLOSE and not self.unproven else None
            p = p if p is not None else (self.probabilities or {}).get(who or "")
            figure = f" ({p:.2f}" + (f"; {agree}" if agree else "") + ")" if p is not None else (
                f" ({agree})" if agree else "")
            return f"{TOO_CLOSE}, leaning {who}{figure}" if who else f"{TOO_CLOSE}, even"
        if self.winner is None:
            return "tie" + (f" ({agree})" if agree else "")
        said = "; ".join(x for x in (self.confidence, agree) if x)
        return f"{self.winner} ({said})" if said else self.winner

    @property
    def agreement(self) -> str:
        """"2 of 2 orders agree", or "" where the verdict was judged in one order."""
        if self.orders_agreeing is None:
            return ""
        n = len(self.orders)
        return f"{self.orders_agreeing} of {n} orders agree" if self.orders_agreeing != 1 or n == 1 else \
            f"1 of {n} orders agrees"
