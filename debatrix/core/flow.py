"""The flow: the judge's record of a debate as an adjudicator keeps it, one row per argument and every answer drawn
against what it answers, built from small decisions the model makes with probabilities and cited by passage id
(:mod:`debatrix.core.passages`). Nothing here calls a model: the decisions come in as :class:`SpeechFlow` (one
speech's analysis in one dimension: the analysis memory's entry), and the ledger, the scores and the verdict's
margin are computed from them, the same way every time, so a verdict can be recomputed from a stored result.

Who argued what is never read from prose: a passage's speaker and side come from the passage table, so a row, a
cell of the sheet and a per-debater comment cite only ids whose speaker is known by a lookup."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from debatrix.core.models import Debate, Frozen, Side

GIST_WORDS = 14  # the first words of a passage: how the flow names it (extractive: nothing the model wrote)
ARGUMENT_AT = 0.5  # a passage is a row of the flow where it is more likely an argument than not


class Mark(Frozen):
    """One passage's decisions in one dimension: the probability that it argues the motion for its speaker's side,
    and that it backs its point with evidence (None: not asked in this dimension)."""

    id: str
    argument: float | None = Field(default=None, ge=0, le=1)
    evidence: float | None = Field(default=None, ge=0, le=1)


class Line(Frozen):
    """An answer drawn on the flow: speech ``speech`` (0-based) against the earlier passage ``target`` of another
    debater, with the probabilities that it argues against it (refutes) or accepts it (concedes); the rest is the
    probability that it leaves it alone."""

    speech: int
    target: str
    refutes: float = Field(ge=0, le=1)
    concedes: float = Field(default=0.0, ge=0, le=1)

    @property
    def answers(self) -> float:
        return min(1.0, self.refutes + self.concedes)

    @property
    def move(self) -> Literal["refutes", "concedes", "ignores"]:
        ignores = max(0.0, 1.0 - self.refutes - self.concedes)
        best = max(self.refutes, self.concedes, ignores)
        return "refutes" if best == self.refutes else "concedes" if best == self.concedes else "ignores"


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


# ------------------------------------------------------------------------------------------- the ledger


class Cell(Frozen):
    """What one later speech did to a row: its most likely move and the probability that it answered."""

    speech: int
    move: Literal["refutes", "concedes", "ignores"]
    answered: float


class Thread(Frozen):
    """A row of the flow sheet: an argument (a passage more likely an argument than not) and what became of it."""

    id: str
    speaker: str
    side: Side
    gist: str
    argument: float  # P(it is an argument): the row's weight
    evidence: float | None
    refuted: float  # P(the other side argued against it at least once)
    conceded: float  # P(the other side accepted it at least once)
    answerable: bool = False  # the other side spoke after it: leaving it alone is dropping it
    cells: tuple[Cell, ...] = ()

    @property
    def answered(self) -> float:
        return 1.0 - (1.0 - self.refuted) * (1.0 - self.conceded)

    @property
    def stands(self) -> float:
        """P(it stands at the end): not refuted, or conceded (an argument the other side accepted stands)."""
        return 1.0 - self.refuted * (1.0 - self.conceded)

    @property
    def status(self) -> Literal["standing", "refuted", "conceded", "dropped"]:
        """As a coach reads the row: conceded, refuted (more likely than not argued against), dropped (never
        answered though the other side spoke after it) or standing (no speech of the other side came after)."""
        if self.conceded >= 0.5:
            return "conceded"
        if self.refuted >= 0.5:
            return "refuted"
        return "dropped" if self.answerable else "standing"


class Tally(Frozen):
    """One debater's figures in one dimension's ledger (sums weighted by each row's probability of being an
    argument; a rating where the dimension asks one)."""

    debater: str
    arguments: float = 0.0  # Σ P(argument) over their passages
    standing: float = 0.0  # Σ P(argument) · P(stands)
    evidence: float = 0.0  # Σ P(argument) · P(evidence)
    engaged: float = 0.0  # Σ over the other side's rows they could answer: P(argument) · P(they answered)
    engageable: float = 0.0  # Σ P(argument) over the other side's rows spoken before one of their speeches
    rating: float | None = None  # the mean of their speeches' ratings (1-5)

    @property
    def engagement(self) -> float | None:
        return self.engaged / self.engageable if self.engageable > 0 else None


class Ledger(Frozen):
    dimension: str
    threads: tuple[Thread, ...] = ()
    tallies: tuple[Tally, ...] = ()

    def tally(self, debater: str) -> Tally:
        return next(t for t in self.tallies if t.debater == debater)


def gist(text: str, words: int = GIST_WORDS) -> str:
    """A passage's first words, as the flow names it."""
    ws = text.replace("\n", " ").split()
    return " ".join(ws[:words]) + (" …" if len(ws) > words else "")


def ledger(debate: Debate, flows: Sequence[SpeechFlow], dimension: str) -> Ledger:
    """The dimension's ledger from its speeches' analyses: one row per passage more likely an argument than not (or
    every passage, where the dimension does not ask whether a passage argues), what each later speech of another
    side did to it, and each debater's tallies."""
    index = debate.passage_index
    marks = {m.id: m for f in flows for m in f.marks}
    lines: dict[str, list[Line]] = {}
    for f in flows:
        for line in f.lines:
            lines.setdefault(line.target, []).append(line)
    spoken = {f.index for f in flows if not f.missing or f.marks or f.lines}
    threads = []
    for p in debate.passages:
        mark = marks.get(p.id)
        weight = mark.argument if mark is not None and mark.argument is not None else 1.0
        if mark is None and p.speech not in spoken:
            continue
        answers = sorted(lines.get(p.id, []), key=lambda x: x.speech)
        refuted = 1.0 - math.prod(1.0 - a.refutes for a in answers)
        conceded = 1.0 - math.prod(1.0 - a.concedes for a in answers)
        threads.append(Thread(id=p.id, speaker=p.speaker, side=p.side, gist=gist(p.text), argument=round(weight, 4),
                              evidence=None if mark is None or mark.evidence is None else round(mark.evidence, 4),
                              refuted=round(refuted, 4), conceded=round(conceded, 4),
                              answerable=any(debate.debater(s.speaker).side is not p.side
                                             for s in debate.speeches[p.speech + 1:]),
                              cells=tuple(Cell(speech=a.speech, move=a.move, answered=round(a.answers, 4))
                                          for a in answers)))
    tallies = []
    ratings = {f.index: f.rating.expected for f in flows if f.rating is not None}
    for d in debate.debaters:
        mine = [t for t in threads if t.speaker == d.name]
        theirs = [t for t in threads if t.side is not d.side]
        my_speeches = [i for i, s in enumerate(debate.speeches) if s.speaker == d.name]
        engaged = engageable = 0.0
        for t in theirs:
            later = [i for i in my_speeches if i > index[t.id].speech]
            if not later:
                continue
            engageable += t.argument
            engaged += t.argument * t.answered
        mine_rated = [ratings[i] for i in my_speeches if i in ratings]
        tallies.append(Tally(
            debater=d.name, arguments=round(sum(t.argument for t in mine), 4),
            standing=round(sum(t.argument * t.stands for t in mine), 4),
            evidence=round(sum(t.argument * (t.evidence or 0.0) for t in mine), 4),
            engaged=round(engaged, 4), engageable=round(engageable, 4),
            rating=round(sum(mine_rated) / len(mine_rated), 4) if mine_rated else None))
    return Ledger(dimension=dimension, threads=tuple(t for t in threads if t.argument >= ARGUMENT_AT or not marks),
                  tallies=tuple(tallies))
