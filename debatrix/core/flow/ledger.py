"""The flow's record: its types (a passage's marks, an answer drawn against an earlier point, one speech's flow,
and a dimension's ledger of rows, cells and tallies), the passage table's ids and names, and the ledger computed
from the decisions. Nothing here calls a model or words a verdict (:mod:`.measures`, :mod:`.words`).

The passage table is what the flow cites: every speech split once into numbered passages (``S3.2``: speech 3,
passage 2). A passage is a few sentences that belong together: a paragraph of the speech as the model reads it
(:func:`debatrix.core.passages.compact`), long paragraphs cut at sentence ends, short ones (a heading, a quoted line
of the opponent, a list of sources) joined to their neighbours, so that one passage makes one point and asking
about each stays cheap (the sizes are :mod:`debatrix.core.passages`'s). Who argued what is never read from prose:
a passage's speaker and side come from the table."""

from __future__ import annotations

import functools
import itertools
import math
import re
from datetime import datetime
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from pydantic import ConfigDict, Field

from debatrix.core.models import Debate, Frozen, Side, upgrade
from debatrix.core.profile import JudgeProfile, odds_factor

# ------------------------------------------------------------------------------------------------- the types

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
    # how many times likelier the answer made "it answers the row" than the gold's base rate had it (the odds of
    # its mapped P over the base rate's; an unprofiled model's P over even odds): near 1, the model could not tell
    # (:data:`TELLS_AT`). None: a person set it, or a result before 1.16
    factor: float | None = None
    # who set this answer, where a person did (``answered`` and ``counts`` are then the person's value, and
    # ``model`` the model's P, None where the model was never asked): a correction kept beside the model's
    set_by: str = ""
    model: float | None = None

    @property
    def counted(self) -> float:
        """How much the answer counts toward felling its row (a result before 1.8 kept no ``counts``: as given)."""
        return self.answered if self.counts is None else self.counts


EVEN = 0.5  # a row falls where its answers together reach even odds (and stands again where that answer falls)
PARTLY_AT = 0.2  # answers that together count less than this toward felling a row leave it dropped, not contested
#: an answer that moves the odds of "it answers the row" by less than this factor either way, against the gold's base
#: rate (a model's usual answer), tells nothing a coach can rest a word on: "the model could not tell". Jeffreys'
#: scale calls a Bayes factor under 3 "barely worth mentioning" (Kass & Raftery 1995): a convention, not a fit
TELLS_AT = 3.0

#: what became of an argument by the end of the debate, in a coach's words, in the order the sheet groups them:
#: every surface (the summary, the report, the page, docs/coaches.md) prints these, decided by :func:`reading`
STATUS_MEANING = {
    "untested": "no speech of the other side came after it, so nobody could answer it: it stands, counting as "
                "that debater's tested arguments fared",
    "dropped": "the other side spoke after it and, asked, the model said they left it unanswered (or no later "
               "passage of theirs came near it): it stands",
    "unclear": "the other side spoke after it, and asked whether they answered it the model could not tell (its "
               "answers sat near its usual answer): it stands until a person says otherwise",
    "contested": "the other side answered it only in part (its answers together count at least "
                 f"{PARTLY_AT:.1f} but less than {EVEN:.1f} of 1): it stands",
    "extended": "the other side answered it, and its own side answered that answer: it stands again",
    "refuted": "the other side answered it (one answer, or several in part together, count at least "
               f"{EVEN:.1f} of 1), and that answer was not itself answered: it falls",
}
STATUS_ORDER = tuple(STATUS_MEANING)
Status = Literal["untested", "dropped", "unclear", "contested", "extended", "refuted"]

#: what one later speech did to a row, as a cell of the sheet says it (decided with the row: :func:`reading`)
CELL_MEANING = {
    "answered": f"that answer alone counts at least {EVEN:.1f} of 1 toward felling the row",
    "partly answered": f"it counts {PARTLY_AT:.1f} to {EVEN:.1f}: with the row's other answers it may fell it",
    "answered a little": f"it counts less than {PARTLY_AT:.1f}, but the row's answers together contest it, so "
                         "it adds to them",
    "could not tell": "the model was asked whether it answers the row and its answer sat near its usual one (it "
                      f"moved the odds less than {TELLS_AT:g} times either way): nothing is claimed, a person can say",
    "asked, not answered": "the model was asked whether it answers the row and said it does not (or a person "
                           f"did): it counts less than {PARTLY_AT:.1f}",
}


def unsure(factor: float | None) -> bool:
    """Whether an answer that moved the odds from the model's usual answer by ``factor`` tells nothing a word can
    rest on (within :data:`TELLS_AT` either way; None: not known, so not said to be unsure)."""
    return factor is not None and 1 / TELLS_AT < factor < TELLS_AT


def told(cell: Cell) -> bool:
    """Whether a cell's answer says something: a person set it, or the model's answer moved the odds at least
    :data:`TELLS_AT` times away from its usual answer (a result before 1.16 kept no factor: it did)."""
    return bool(cell.set_by) or not unsure(cell.factor)


def cell_word(cell: Cell, status: str) -> str:
    """A cell's word (:data:`CELL_MEANING`) from what its answer counts, whether it told anything, and its row's
    status (:func:`reading`)."""
    counts = cell.counted
    if counts >= EVEN:
        return "answered"
    if counts >= PARTLY_AT:
        return "partly answered"
    if counts > 0 and status in ("contested", "extended", "refuted"):
        return "answered a little"
    return "asked, not answered" if told(cell) else "could not tell"


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
    # the decisions of the passage itself a person set ("argues", "evidence"): kind -> who; and the model's figure
    # of each (None: never asked). ``argument`` and ``evidence`` above are then the person's
    set_by: dict[str, str] = Field(default_factory=dict)
    model: dict[str, float | None] = Field(default_factory=dict)

    # results before 1.8 kept "refuted" and "conceded" (never asked, so 0): P(answered), and a row stood unless answered
    _before_1_8 = upgrade("refuted", lambda old: {
        **{k: v for k, v in old.items() if k not in ("refuted", "conceded")},
        "answered": 1.0 - (1.0 - old["refuted"]) * (1.0 - old.get("conceded", 0.0)),
        "stands": 1.0 - old["refuted"] * (1.0 - old.get("conceded", 0.0))})

    @property
    def weighs(self) -> float:
        return self.argument if self.weight is None else self.weight

    @property
    def status(self) -> Status:
        """What became of the row (:data:`STATUS_MEANING`), decided with its cells' words by :func:`reading`."""
        return reading(self)[0]

    @property
    def cell_words(self) -> tuple[str, ...]:
        """Each cell's word (:data:`CELL_MEANING`), in the order of :attr:`cells`."""
        return reading(self)[1]


def reading(t: Thread) -> tuple[Status, tuple[str, ...]]:
    """The one rule for a row of the sheet: its status and every cell's word, from the same figures (what each
    answer counts, and :attr:`Thread.answered`, those counts combined), so that they cannot disagree: a dropped
    row's cells all read "asked, not answered" (the model said no, or nothing was asked); an unclear row has a cell
    the model could not tell; a contested row's none reads "answered" and one at least counts; a refuted or
    extended row has an answer that counts."""
    if not t.answerable:
        status: Status = "untested"
    elif t.answered < PARTLY_AT:
        status = "dropped" if all(told(c) for c in t.cells) else "unclear"
    elif t.answered < EVEN:
        status = "contested"
    else:
        status = "extended" if t.stands >= EVEN else "refuted"
    return status, tuple(cell_word(c, status) for c in t.cells)


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


# ------------------------------------------------------------------------------------ the passage table

ID = re.compile(r"S(\d{1,4})\.(\d{1,3})")

GIST_WORDS = 14  # the first words of a passage: how the flow names it (extractive: nothing the model wrote)


@functools.lru_cache(maxsize=8192)  # a recompute names every row again; the review recomputes hundreds of times
def gist(text: str, words: int = GIST_WORDS) -> str:
    """A passage's first words, as the flow names it."""
    ws = text.replace("\n", " ").split()
    return " ".join(ws[:words]) + (" …" if len(ws) > words else "")


def places(debate: Debate) -> dict[str, int]:
    """Each debater's speaking place, 0 for whoever speaks first: what a profile's place lean is measured by."""
    order = list(dict.fromkeys(s.speaker for s in debate.speeches))
    return {name: order.index(name) if name in order else len(order) for name in (d.name for d in debate.debaters)}


# ------------------------------------------------------------------------------------------ the ledger

#: a decision a person set, by what it asks (("argues", "S1.1") or ("answers", "S2.1", "S1.1")): who set it, and the
#: model's own figure (None: the model was never asked it)
People = Mapping[tuple[str, ...], tuple[str, float | None]]


def ledger(debate: Debate, flows: Sequence[SpeechFlow], dimension: str,
           profile: JudgeProfile | None = None, people: People | None = None) -> Ledger:
    """The dimension's ledger from its speeches' analyses: one row per passage more likely an argument than not (or
    every passage, where the dimension does not ask whether a passage argues), what each later speech of another
    side did to it, and each debater's tallies.

    Every P is read through ``profile`` (:meth:`JudgeProfile.adjusted`: the model's place lean taken out, mapped to
    the gold's rate), so a row weighs by how likely it is an argument, as measured on this model; an answer counts
    by how far that rate stands above the gold's base rate (:meth:`JudgeProfile.telling`), what it tells beyond the
    model's usual answer. With no profile (an unprofiled model) each P counts as the model gave it.

    ``people``: the decisions a person set (:data:`People`), whose values ``flows`` already hold: a person's figure
    is the gold's, so it counts as given, never through the model's profile, and every row and cell it touches
    says who set it beside the model's own figure.

    A row stands at the end unless an answer to it stands: P(stands) = Π over its answers (1 − count(answer) ·
    P(that answering passage stands)), computed from the last passage back, so an answer that was itself answered
    (and not answered again) no longer fells the row: the row is extended, as an adjudicator flows it."""
    index = debate.passage_index
    place = places(debate)
    people = people or {}

    def read(kind: str, p: float, speaker: str, pid: str) -> float:
        if (kind, pid) in people or profile is None:
            return p
        return round(profile.adjusted(kind, p, place.get(speaker)), 4)

    def telling(line: Line, speaker: str) -> float:
        # an answer counts by what it tells beyond the model's usual answer: combined over every later speech,
        # answers at the usual rate would otherwise fell a row by how many speeches came after it, not by what
        # they said, and the first speaker, asked about most often, would lose on the order alone
        if ("answers", line.by or "", line.target) in people or profile is None:
            return line.answers
        return round(profile.telling("answers", line.answers, place.get(speaker)), 4)

    # whether the other side spoke a speech after each speech that could answer it: one lookup a speech, not a
    # scan of the speeches a passage (a recompute computes the ledger hundreds of times for a review)
    sides = [debate.debater(s.speaker).side for s in debate.speeches]
    answerable_after = [any(sides[j] is not sides[i] and debate.could_answer(j, i) for j in range(len(sides)))
                        for i in range(len(sides))]

    def factor(line: Line, speaker: str) -> float | None:
        if ("answers", line.by or "", line.target) in people:
            return None
        if profile is None:
            return round(odds_factor(line.answers), 4)
        return round(profile.factor("answers", line.answers, place.get(speaker)), 4)

    marks = {m.id: m for f in flows for m in f.marks}
    # whether the flow asked which passages argue: where it asked and the answers are missing, a passage weighs
    # nothing, not 1 as where nobody asked (a standing built on guessed arguments would read as measured)
    argued = any(m.argument is not None for m in marks.values()) or any(f.missed.get("argues") for f in flows)
    lines: dict[str, list[Line]] = {}
    factors: dict[tuple[int, str | None, str], float | None] = {}
    for f in flows:
        for line in f.lines:
            # constructed, not validated again: a Line's fields are the flow's own, already checked
            lines.setdefault(line.target, []).append(Line.model_construct(
                speech=line.speech, target=line.target, by=line.by, answers=telling(line, f.speaker)))
            factors[(line.speech, line.by, line.target)] = factor(line, f.speaker)
    stands = standing_chances(debate, lines)
    raw = {(x.speech, x.by, x.target): x.answers for f in flows for x in f.lines}
    spoken = {f.index for f in flows if not f.missing or f.marks or f.lines}
    threads = []
    for p in debate.passages:
        mark = marks.get(p.id)
        if mark is None and p.speech not in spoken:
            continue
        decided = mark is not None and mark.argument is not None
        # not decided: no row where the others were asked (a missing answer is no argument), every passage one
        # where none was
        weight = mark.argument if decided else 0.0 if argued else 1.0
        # a passage whose decision is missing weighs nothing (no verdict rests on a guessed decision), nor does one
        # more likely no argument than an argument; where no passage was asked (argues not asked), each weighs 1
        place_weight = (read("argues", weight, p.speaker, p.id) if decided and weight >= ARGUMENT_AT else
                        0.0 if argued else 1.0)
        answers = sorted(lines.get(p.id, []), key=lambda x: x.speech)
        answered = 1.0 - math.prod(1.0 - a.answers for a in answers)
        own = {k: people[(k, p.id)] for k in ("argues", "evidence") if (k, p.id) in people}

        def cell(a: Line) -> Cell:
            person = people.get(("answers", a.by or "", p.id))
            return Cell.model_construct(speech=a.speech, answered=raw.get((a.speech, a.by, p.id), a.answers),
                                        counts=round(a.answers, 4), by=a.by, factor=factors.get((a.speech, a.by, p.id)),
                                        set_by=person[0] if person else "", model=person[1] if person else None)

        # constructed from figures already checked (each a P in [0, 1], or a count of them): not validated again
        threads.append(Thread.model_construct(
            id=p.id, speaker=p.speaker, side=p.side, gist=gist(p.text), argument=round(weight, 4),
            weight=round(place_weight, 4),
            evidence=None if mark is None or mark.evidence is None else read("evidence", mark.evidence, p.speaker,
                                                                             p.id),
            answered=round(answered, 4), stands=round(stands[p.id], 4), answerable=answerable_after[p.speech],
            cells=tuple(cell(a) for a in answers), set_by={k: who for k, (who, _) in own.items()},
            model={k: was for k, (_, was) in own.items()}))
    tallies = []
    unknown = {d[1] for f in flows for d in f.unknown if d[0] == "argues"}
    for d in debate.debaters:
        mine = [t for t in threads if t.speaker == d.name]
        theirs = [t for t in threads if t.side is not d.side]
        my_speeches = [i for i, s in enumerate(debate.speeches) if s.speaker == d.name]
        clear = [read("clear", m.clear, d.name, m.id) for m in marks.values()
                 if m.clear is not None and m.id in index and index[m.id].speaker == d.name]
        engaged = engageable = 0.0
        for t in theirs:
            later = [i for i in my_speeches if debate.could_answer(i, index[t.id].speech)]
            if not later:
                continue
            engageable += t.weighs
            # how strongly their replies to it answered it, on average over the times they were asked: a row
            # answered by noisy-OR over every reply would be covered more, the more speeches came after it, so
            # the last speaker, with the most chances to reply, would engage most on chances alone
            replies = [c.counted for c in t.cells if c.speech in later]
            engaged += t.weighs * (sum(replies) / len(replies) if replies else 0.0)
        tested = untested_rate(mine)
        tallies.append(Tally(
            debater=d.name, arguments=round(sum(t.weighs for t in mine), 4),
            standing=round(sum(t.weighs * (t.stands if t.answerable else tested) for t in mine), 4),
            untested=round(sum(t.weighs for t in mine if not t.answerable), 4), tested=round(tested, 4),
            evidence=round(sum(t.weighs * (t.evidence or 0.0) for t in mine), 4),
            engaged=round(engaged, 4), engageable=round(engageable, 4),
            clear=round(sum(clear), 4), passages=len(clear),
            unknown=tuple(p.id for p in debate.passages if p.speaker == d.name and p.id in unknown)))
    if not marks and not lines:  # nothing was decided (every decision blind, or none answered): no row to show
        threads = []
    return Ledger(dimension=dimension,
                  threads=tuple(t for t in threads if t.argument >= ARGUMENT_AT or not argued),
                  tallies=tuple(tallies), figures=figures_of(flows))


def figures_of(flows: Sequence[SpeechFlow]) -> str:
    """What the flow's figures are (:attr:`Ledger.figures`): "answers" where some decision is the model's answer
    taken as certain (the server gave no probabilities), "samples" where some are shares of sampled answers, else
    "P", the model's probabilities."""
    return "answers" if any(f.counted for f in flows) else "samples" if any(f.sampled for f in flows) else "P"


class Correction(Frozen):
    """A decision a person set: what it asks (``decision``: ("argues" | "evidence" | "clear", passage) or
    ("answers", passage, the row it answers)), the person's value (1 yes, 0 no, or a probability between), who set
    it and when, and why. A result keeps its corrections beside the model's decisions, never over them
    (:attr:`~debatrix.core.results.JudgeResult.corrections`), and everything it shows is computed from both."""

    decision: tuple[str, ...] = Field(min_length=2, max_length=3)
    value: float = Field(ge=0, le=1, allow_inf_nan=False)
    by: str = Field(min_length=1, max_length=80)
    at: datetime | None = None
    note: str = Field(default="", max_length=2000)


def corrected(flows: Sequence[SpeechFlow], corrections: Sequence[Correction]) -> tuple[list[SpeechFlow], People]:
    """The flows with the people's decisions in place of the model's (the last correction of a decision counts),
    and who set which (:data:`People`, with the model's own figure). A decision the model never made (missing, or
    never asked) is added; one that was missing is missing no more. ``corrections`` must name passages of the
    flows' debate (checked where they are read: :mod:`debatrix.core.review`)."""
    latest = {c.decision: c for c in corrections}
    people: dict[tuple[str, ...], tuple[str, float | None]] = {}
    by_speech: dict[int, list[Correction]] = {}
    for c in latest.values():
        m = ID.fullmatch(c.decision[1])
        if m:
            by_speech.setdefault(int(m.group(1)) - 1, []).append(c)
    out = []
    for f in flows:
        mine = by_speech.get(f.index)
        if not mine:
            out.append(f)
            continue
        marks = {m.id: m for m in f.marks}
        lines = list(f.lines)
        decided, missed = dict(f.decided), dict(f.missed)
        unknown = list(f.unknown)
        for c in mine:
            kind, pid = c.decision[0], c.decision[1]
            if c.decision in unknown:  # a missing decision a person answered: missing no more
                unknown.remove(c.decision)
                missed[kind] = missed.get(kind, 0) - 1
                decided[kind] = decided.get(kind, 0) + 1
            if kind == "answers":
                row = c.decision[2]
                at = next((k for k, x in enumerate(lines) if x.target == row and x.by == pid), None)
                people[c.decision] = (c.by, None if at is None else lines[at].answers)
                line = Line(speech=f.index, target=row, by=pid, answers=c.value)
                if at is None:
                    lines.append(line)
                else:
                    lines[at] = line
            else:
                field = MARK_FIELDS[kind]
                mark = marks.get(pid) or Mark(id=pid)
                people[c.decision] = (c.by, getattr(mark, field))
                marks[pid] = mark.model_copy(update={field: c.value})
        out.append(f.model_copy(update={
            "marks": tuple(sorted(marks.values(), key=lambda m: _order(m.id))), "lines": tuple(lines),
            "unknown": tuple(unknown), "decided": {k: v for k, v in decided.items() if v},
            "missed": {k: v for k, v in missed.items() if v}}))
    return out, people


#: the field of a :class:`Mark` each kind of passage decision sets
MARK_FIELDS = {"argues": "argument", "evidence": "evidence", "clear": "clear"}


def _order(pid: str) -> tuple[int, int]:
    m = ID.fullmatch(pid)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


EITHER_WAY_ALL = 6  # up to this many missing decisions, a verdict is tried with every combination of them


def filled(flows: Sequence[SpeechFlow], value: Callable[[tuple[str, ...]], float]) -> list[SpeechFlow]:
    """The flows with each missing decision (:attr:`SpeechFlow.unknown`) answered ``value(decision)``: 1.0 yes,
    0.0 no. What a verdict would have been had the model answered them so."""
    out = []
    for f in flows:
        if not f.unknown:
            out.append(f)
            continue
        marks = {m.id: m for m in f.marks}
        lines = list(f.lines)
        for d in f.unknown:
            if d[0] == "answers":
                lines.append(Line(speech=f.index, target=d[2], by=d[1], answers=value(d)))
            else:
                mark = marks.get(d[1]) or Mark(id=d[1])
                field = MARK_FIELDS.get(d[0], d[0])  # a Mark's field for the kind asked
                marks[d[1]] = mark.model_copy(update={field: value(d)})
        out.append(f.model_copy(update={"marks": tuple(marks.values()), "lines": tuple(lines), "unknown": ()}))
    return out


def either_way(debate: Debate, flows: Sequence[SpeechFlow]) -> list[list[SpeechFlow]]:
    """The flows as they would be with their missing decisions answered either way: every combination of yes and no
    where there are at most :data:`EITHER_WAY_ALL`, else for each debater the one that favours them most (their
    passages argue and answer, the others' do not) and all yes and all no. Empty where nothing is missing. A
    verdict that names the same winner in each of them does not rest on a guess."""
    gaps = [d for f in flows for d in f.unknown]
    if not gaps:
        return []
    if len(gaps) <= EITHER_WAY_ALL:
        combos = [dict(zip(gaps, bits)) for bits in itertools.product((0.0, 1.0), repeat=len(gaps))]
        return [filled(flows, combo.__getitem__) for combo in combos]
    owner = {p.id: p.speaker for p in debate.passages}
    worlds = [filled(flows, lambda d, who=who: 1.0 if owner.get(d[1]) == who else 0.0)
              for who in (x.name for x in debate.debaters)]
    return [*worlds, filled(flows, lambda d: 1.0), filled(flows, lambda d: 0.0)]


def untested_rate(mine: Sequence[Thread]) -> float:
    """How a debater's row that the other side had no later chance to answer counts toward what stands: as that
    debater's rows the other side could answer fared (their weighed share standing), or whole where there are none
    (a debate of openings alone). Counting it whole would give the last speaker every new point nobody may reply to,
    and counting it nothing every such point lost; an adjudicator neither takes new matter in a closing speech on
    trust nor strikes it unheard, so it is given the record of the same debater's points that were tested."""
    tested = [t for t in mine if t.answerable]
    total = sum(t.weighs for t in tested)
    return sum(t.weighs * t.stands for t in tested) / total if total > 0 else 1.0


def standing_chances(debate: Debate, lines: dict[str, list[Line]]) -> dict[str, float]:
    """P(stands at the end) of every passage: 1 for one nobody answered; otherwise the chance that no answer to
    it stands, each answer weighed by the chance that its own passage stands (an answer whose passage is unknown,
    from a result before 1.8, stands). Answers come later than what they answer, so one pass from the end."""
    out: dict[str, float] = {}
    for p in reversed(debate.passages):
        out[p.id] = math.prod(1.0 - a.answers * out.get(a.by or "", 1.0) for a in lines.get(p.id, []))
    return out
