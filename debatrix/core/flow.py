"""The flow: the judge's record of a debate as an adjudicator keeps it, one row per argument and every answer drawn
against what it answers, built from small decisions the model makes with probabilities and cited by passage id.
Nothing here calls a model: the decisions come in as :class:`SpeechFlow` (one speech's analysis in one dimension:
the analysis memory's entry), and the ledger, the scores and the verdict's margin are computed from them, the same
way every time, so a verdict can be recomputed from a stored result.

The passage table (first below) is what the flow cites: every speech split once into numbered passages (``S3.2``:
speech 3, passage 2). A passage is a few sentences that belong together: a paragraph of the speech as the model
reads it (:func:`debatrix.core.passages.compact`), long paragraphs cut at sentence ends, short ones (a heading, a
quoted line of the opponent, a list of sources) joined to their neighbours. The sizes keep a speech of 700 words at
a handful of passages: small enough that one passage makes one point, few enough that asking about each stays
cheap (the sizes are :mod:`debatrix.core.passages`'s).

Who argued what is never read from prose: a passage's speaker and side come from the passage table, so a row, a
cell of the sheet and a per-debater comment cite only ids whose speaker is known by a lookup."""

from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass
from collections.abc import Callable, Iterable, Mapping, Sequence

# the flow's types are domain types (a result carries them); they are defined with the others
from debatrix.core.profile import JudgeProfile, shifted
from debatrix.core.registry import Registry
from debatrix.core.passages import UNSPACED
from debatrix.core.models import (
    ARGUMENT_AT,
    Cell,
    Debate,
    Frozen,
    Ledger,
    Line,
    Mark,
    SpeechFlow,
    Tally,
    Thread,
)

ID = re.compile(r"S(\d{1,4})\.(\d{1,3})")


# ------------------------------------------------------------------------------------------------- the flow

GIST_WORDS = 14  # the first words of a passage: how the flow names it (extractive: nothing the model wrote)


def gist(text: str, words: int = GIST_WORDS) -> str:
    """A passage's first words, as the flow names it."""
    ws = text.replace("\n", " ").split()
    return " ".join(ws[:words]) + (" …" if len(ws) > words else "")


def places(debate: Debate) -> dict[str, int]:
    """Each debater's speaking place, 0 for whoever speaks first: what a profile's place lean is measured by."""
    order = list(dict.fromkeys(s.speaker for s in debate.speeches))
    return {name: order.index(name) if name in order else len(order) for name in (d.name for d in debate.debaters)}


def ledger(debate: Debate, flows: Sequence[SpeechFlow], dimension: str,
           profile: JudgeProfile | None = None) -> Ledger:
    """The dimension's ledger from its speeches' analyses: one row per passage more likely an argument than not (or
    every passage, where the dimension does not ask whether a passage argues), what each later speech of another
    side did to it, and each debater's tallies.

    Every P is read through ``profile`` (:meth:`JudgeProfile.adjusted`: the model's place lean taken out, mapped to
    the gold's rate), so a row weighs by how likely it is an argument, as measured on this model; an answer counts
    by how far that rate stands above the gold's base rate (:meth:`JudgeProfile.telling`), what it tells beyond the
    model's usual answer. With no profile (an unprofiled model) each P counts as the model gave it.

    A row stands at the end unless an answer to it stands: P(stands) = Π over its answers (1 − count(answer) ·
    P(that answering passage stands)), computed from the last passage back, so an answer that was itself answered
    (and not answered again) no longer fells the row: the row is extended, as an adjudicator flows it."""
    index = debate.passage_index
    place = places(debate)

    def read(kind: str, p: float, speaker: str) -> float:
        return p if profile is None else round(profile.adjusted(kind, p, place.get(speaker)), 4)

    def telling(p: float, speaker: str) -> float:
        # an answer counts by what it tells beyond the model's usual answer: combined over every later speech,
        # answers at the usual rate would otherwise fell a row by how many speeches came after it, not by what
        # they said, and the first speaker, asked about most often, would lose on the order alone
        return p if profile is None else round(profile.telling("answers", p, place.get(speaker)), 4)

    marks = {m.id: m for f in flows for m in f.marks}
    # whether the flow asked which passages argue: where it asked and the answers are missing, a passage weighs
    # nothing, not 1 as where nobody asked (a standing built on guessed arguments would read as measured)
    argued = any(m.argument is not None for m in marks.values()) or any(f.missed.get("argues") for f in flows)
    lines: dict[str, list[Line]] = {}
    for f in flows:
        for line in f.lines:
            lines.setdefault(line.target, []).append(line.model_copy(
                update={"answers": telling(line.answers, f.speaker)}))
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
        place_weight = (read("argues", weight, p.speaker) if decided and weight >= ARGUMENT_AT else
                        0.0 if argued else 1.0)
        answers = sorted(lines.get(p.id, []), key=lambda x: x.speech)
        answered = 1.0 - math.prod(1.0 - a.answers for a in answers)
        threads.append(Thread(id=p.id, speaker=p.speaker, side=p.side, gist=gist(p.text), argument=round(weight, 4),
                              weight=round(place_weight, 4),
                              evidence=None if mark is None or mark.evidence is None else
                              read("evidence", mark.evidence, p.speaker),
                              answered=round(answered, 4), stands=round(stands[p.id], 4),
                              answerable=any(debate.debater(s.speaker).side is not p.side
                                             for j, s in enumerate(debate.speeches)
                                             if debate.could_answer(j, p.speech)),
                              cells=tuple(Cell(speech=a.speech, answered=raw.get((a.speech, a.by, p.id), a.answers),
                                               counts=round(a.answers, 4), by=a.by) for a in answers)))
    tallies = []
    unknown = {d[1] for f in flows for d in f.unknown if d[0] == "argues"}
    for d in debate.debaters:
        mine = [t for t in threads if t.speaker == d.name]
        theirs = [t for t in threads if t.side is not d.side]
        my_speeches = [i for i, s in enumerate(debate.speeches) if s.speaker == d.name]
        clear = [read("clear", m.clear, d.name) for m in marks.values()
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


def said_p(value: float, figures: str = "P") -> str:
    """One decision's figure as the model gave it: "P 0.70" from its probabilities; "yes" or "no" where its answer
    was taken as certain (a "P 1.00" there would be a probability it never gave); a share of sampled answers."""
    if figures == "answers":
        return "yes" if value == 1.0 else "no" if value == 0.0 else f"a share {value:.2f} of answers yes"
    if figures == "samples":
        return f"{value:.2f} of its sampled answers yes"
    return f"P {value:.2f}"


def said_mean(value: float, figures: str = "P") -> str:
    """A mean of decisions' figures in the same words: "mean P 0.62", "a share 0.50 of answers yes"."""
    return (f"a share {value:.2f} of answers yes" if figures == "answers" else
            f"a share {value:.2f} of sampled answers yes" if figures == "samples" else f"mean P {value:.2f}")


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
                field = {"argues": "argument"}.get(d[0], d[0])  # a Mark's field for the kind asked
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


_ASKED = {"argues": "argues", "evidence": "has evidence", "clear": "reads clearly"}


def decision_words(decision: tuple[str, ...]) -> str:
    """One decision as a coach reads it: ("argues", "S3.1") is "whether S3.1 argues", ("answers", "S4.2", "S3.1")
    "whether S4.2 answers S3.1"."""
    if decision[0] == "answers":
        return f"whether {decision[1]} answers {decision[2]}"
    return f"whether {decision[1]} {_ASKED.get(decision[0], decision[0])}"


def unknown_words(flows: Sequence[SpeechFlow], most: int = 4) -> str:
    """The missing decisions as a coach reads them ("whether S3.1 argues, whether S4.2 answers S3.1")."""
    said = [decision_words(d) for f in flows for d in f.unknown]
    return ", ".join(said[:most]) + (f" and {len(said) - most} more" if len(said) > most else "")


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


# ------------------------------------------------------------------- which rows a speech is asked about (a lookup)


_WORD = re.compile(r"\w+")


STEM_CHARS = 5  # a spaced word is matched by its first letters, so a word's inflected forms meet


def terms(text: str) -> list[str]:
    """A text's words, lower-cased, in any script: ``\\w`` runs cut to their first :data:`STEM_CHARS` letters (a
    language-blind stem: "соперничество" and "соперничества", "evidence" and "evident" meet), and in scripts without
    spaces the runs' character pairs (a lone character as itself)."""
    out: list[str] = []
    for w in _WORD.findall(text.lower()):
        if not UNSPACED.search(w):
            out.append(w[:STEM_CHARS])
            continue
        last = 0
        for m in UNSPACED.finditer(w):
            if m.start() > last:
                out.append(w[last:m.start()])
            run = m.group(0)
            out += [run] if len(run) == 1 else [run[k:k + 2] for k in range(len(run) - 1)]
            last = m.end()
        if last < len(w):
            out.append(w[last:])
    return out


def idf(docs: Sequence[str]) -> dict[str, float]:
    """log(N / df) of every word of ``docs``: how much sharing that word says (a word in every document: nothing)."""
    df: dict[str, int] = {}
    for d in docs:
        for w in set(terms(d)):
            df[w] = df.get(w, 0) + 1
    return {w: math.log(len(docs) / n) for w, n in df.items()}


def covered(words: Sequence[str], within: set[str], weights: dict[str, float]) -> float:
    """The share of ``words``' weight (each distinct word once, unknown words at the largest weight) found in
    ``within``."""
    top = max(weights.values(), default=1.0)
    distinct = set(words)
    total = sum(weights.get(w, top) for w in distinct)
    return sum(weights.get(w, top) for w in distinct if w in within) / total if total else 0.0


def open_rows(debate: Debate, flows: Sequence[SpeechFlow], index: int) -> list[str]:
    """The rows speech ``index`` may answer: earlier passages of another side that the flow so far holds as
    arguments (a passage not yet marked, whose speech's decisions are missing, counts as one)."""
    marks = {m.id: m for f in flows for m in f.marks}
    side = debate.debater(debate.speeches[index].speaker).side
    out = []
    for p in debate.passages:
        if p.speech >= index:
            break
        if not debate.could_answer(index, p.speech):  # written without seeing it (a simultaneous round)
            continue
        mark = marks.get(p.id)
        if p.side is not side and (mark is None or mark.argument is None or mark.argument >= ARGUMENT_AT):
            out.append(p.id)
    return out


GIST_ASKED = 16  # words of a row restated in its question: enough to name the point (every word is read once a question)


ASK_PER_PASSAGE = 3  # earlier points one passage is asked about at most: a rebuttal often answers several


def asked_budget(own: int, rows: int) -> int:
    """The answer questions a speech of ``own`` passages is asked at most, with ``rows`` points open to it: every
    point where there are few, up to :data:`ASK_PER_PASSAGE` a passage where there are many (the budget grows
    with the speech and with the debate before it)."""
    return min(rows, ASK_PER_PASSAGE * own)


#: the kinds of decision the flow can ask: of a passage, whether it argues the motion, whether it cites evidence,
#: whether it reads clearly; of a passage and an earlier point of the other side, whether it answers it. A model's
#: profile measures each (``debatrix profile``); one added here is measured with no change to that command
KINDS = ("argues", "evidence", "clear", "answers")
#: the kinds asked of a passage alone (the rest ask about a passage and an earlier point)
MARKS = ("argues", "evidence", "clear")


def blind_reason(measure: str, profile: JudgeProfile | None) -> str:
    """Why ``measure`` decides nothing on the model of ``profile`` ("": it is judged): a kind of decision it rests
    on is blind there. An unprofiled model is judged on every measure, on its own probabilities."""
    if profile is None:
        return ""
    m = MEASURES.get_or_raise(measure)
    if m.parts:
        return "" if any(not blind_reason(x, profile) for x in m.parts) else "no measure it averages is judged here"
    blind = [k for k in m.weighs if profile.blind(k)]
    return "; ".join(profile.blind_reason(k) for k in blind)


def asked_kinds(measures: Iterable[str | None], every: bool = False,
                profile: JudgeProfile | None = None) -> tuple[str, ...]:
    """The kinds of decision a flow run asks (in :data:`KINDS` order): those some judged one of ``measures`` rests
    on (a composite's judged parts; a dimension naming none is read as the mean, as its verdict is). A measure blind
    on the model (:func:`blind_reason`) decides nothing, so its decisions are not paid for; ``every``
    (``--flow-ask all``): every kind, to measure them against gold (``debatrix bench signals``)."""
    if every:
        return KINDS

    def rests_on(name: str) -> set[str]:
        m = MEASURES.get_or_raise(name)
        if blind_reason(name, profile):
            return set()
        return set().union(*(rests_on(x) for x in m.parts)) if m.parts else set(m.weighs)

    wanted = set().union(*(rests_on(x or "mean") for x in measures))
    return tuple(k for k in KINDS if k in wanted)


def flow_calls(debate: Debate, together: bool = False, kinds: Sequence[str] = KINDS) -> int:
    """The requests a complete flow run sends at most (no retries) asking ``kinds``: per passage, one for each of
    its own questions (argues, evidence, clear); per speech after the first, whether it answers each earlier
    passage of the other side, within :func:`asked_budget`. ``together``: a passage's questions in one request,
    so one a passage at most."""
    budget = 0
    if "answers" in kinds:
        for i, s in enumerate(debate.speeches):
            side = debate.debater(s.speaker).side
            own = sum(1 for p in debate.passages if p.speech == i)
            budget += asked_budget(own, sum(1 for q in debate.passages
                                            if debate.could_answer(i, q.speech) and q.side is not side))
    marks = sum(1 for k in MARKS if k in kinds)
    if together:
        return len(debate.passages) if marks else min(budget, len(debate.passages))
    return marks * len(debate.passages) + budget


def asks_together(questions: str, prompt_cache: bool, openai_compatible: bool) -> bool:
    """Whether a passage's questions go in one request (``--flow-questions``): ``together`` always; ``auto`` to an
    OpenAI-compatible endpoint that does not cache prompts (a hosted one bills every prompt token, and the passage
    would be sent once a question); elsewhere (the embedded model, llama.cpp, a LangChain model of the user's own)
    each question is its own one-token answer, as the decisions were measured."""
    return questions == "together" or (questions == "auto" and not prompt_cache and openai_compatible)


Vector = Sequence[float]


def cosine(a: Vector, b: Vector) -> float:
    """The cosine of two embedding vectors (unit length, as the embedders return them)."""
    return sum(x * y for x, y in zip(a, b))


def propose(asking: Sequence[tuple[str, str]], rows: Sequence[tuple[str, str]], weights: dict[str, float],
            meaning: Mapping[str, Vector] | None = None, per_passage: int = ASK_PER_PASSAGE,
            budget: int | None = None) -> dict[str, list[str]]:
    """Which of ``rows`` (id, text) each of ``asking`` (id, text) is asked whether it answers: every pair scored
    by shared words (the share of the row's words, weighted by rarity, found in the passage) plus, with
    ``meaning`` (id -> unit embedding of every text), how close the two are in meaning (the cosine, where
    positive), so a point answered in other words is proposed too; then the best pairs first, each row asked once
    (of the passage closest to it), each passage asked about at most ``per_passage`` rows, ``budget`` questions
    in all (default: ``per_passage`` a passage). A pair with no shared word and no closeness is never proposed.
    Passage id -> its rows, in the rows' order. The lookup proposes; the model decides."""
    budget = per_passage * len(asking) if budget is None else budget
    said = {pid: set(terms(text)) for pid, text in asking}
    row_terms = {rid: terms(text) for rid, text in rows}
    scored = []
    for pid, _ in asking:
        for k, (rid, _) in enumerate(rows):
            score = covered(row_terms[rid], said[pid], weights)
            if meaning is not None and pid in meaning and rid in meaning:
                score += max(0.0, cosine(meaning[pid], meaning[rid]))
            if score > 0:
                scored.append((-score, k, pid, rid))
    order = {rid: k for k, (rid, _) in enumerate(rows)}
    taken: set[str] = set()
    per: dict[str, list[str]] = {}
    for _, _, pid, rid in sorted(scored):
        if len(taken) >= budget:
            break
        if rid in taken or len(per.get(pid, [])) >= per_passage:
            continue
        taken.add(rid)
        per.setdefault(pid, []).append(rid)
    return {pid: sorted(rs, key=order.__getitem__) for pid, rs in per.items()}


def asked_pairs(debate: Debate, flows: Sequence[SpeechFlow], index: int,
                meaning: Mapping[str, Vector] | None = None) -> dict[str, list[str]]:
    """Which passage of speech ``index`` is asked about which open row (:func:`propose` over the speech's
    passages and the rows open to it, within :func:`asked_budget`). Passage id -> its rows, in the order spoken."""
    rows = open_rows(debate, flows, index)
    if not rows:
        return {}
    by_id = debate.passage_index
    own = [(p.id, p.text) for p in debate.passages if p.speech == index]
    return propose(own, [(r, by_id[r].text) for r in rows], debate_idf(debate), meaning,
                   budget=asked_budget(len(own), len(rows)))


@functools.lru_cache(maxsize=64)
def debate_idf(debate: Debate) -> dict[str, float]:
    return idf([p.text for p in debate.passages])


# ------------------------------------------------------------------------------------------- the verdict

EMPTY = 0.5  # a debater's count with nothing in it: a debater with no argument still has a finite log-strength


class FlowVerdict(Frozen):
    """One dimension's verdict computed from its ledger: each debater's strength (log scale), the win
    probabilities (a softmax of the strengths: symmetric in the debaters, whoever is listed first) and the
    computation in words."""

    dimension: str
    strengths: dict[str, float]
    probabilities: dict[str, float]
    reason: str
    not_judged: str = ""  # why it names no winner ("": judged)
    blind: bool = False  # not judged because its measure decides nothing (not a run's failure)
    # the log-odds added to the first speaker's probability to take out this reading's place lean (its profile's
    # place fit; None: none taken out), so that the probabilities as computed can be read back
    place_shift: float | None = None

    @property
    def winner(self) -> str | None:
        if self.not_judged or not self.probabilities:
            return None
        best = max(self.probabilities.values())
        top = [d for d, p in self.probabilities.items() if p == best]
        return top[0] if len(top) == 1 else None


def softmax(values: dict[str, float]) -> dict[str, float]:
    top = max(values.values())
    e = {k: math.exp(v - top) for k, v in values.items()}
    total = sum(e.values())
    return {k: round(v / total, 4) for k, v in e.items()}


@dataclass(frozen=True)
class Measure:
    """What the flow weighs for a dimension, declared once: a dimension's YAML names it (``measure: source``) and
    nothing else keys on the dimension's name. ``what`` it weighs, a debater's ``strength`` (log scale) and how it
    is ``said``; ``weighs``: the kinds of decision it rests on (argues, evidence, answers: a dimension missing too
    many of them names no winner); ``value``: a speech's standing, 0 to 1, from its own decisions; ``note``: the
    decisions a speech's entry shows; ``comment``: what the ledger says of a debater with arguments (None: which of
    them stand); ``rows``: whether it reads the ledger's rows (language reads each debater's passages instead).
    ``parts``: a composite, the mean of those measures' verdicts. Whether a measure decides anything is no property
    of the measure but of the model that runs (:func:`blind_reason`, from its profile)."""

    name: str
    what: str
    weighs: tuple[str, ...] = ()
    strength: Callable[[Tally], float] = lambda t: 0.0
    said: Callable[[Ledger, Tally], str] = lambda led, t: ""
    value: Callable[[SpeechFlow], float | None] = lambda f: None
    note: Callable[[SpeechFlow, Debate], list[str]] = lambda f, d: []
    comment: Callable[[Ledger, Debate, str, list[Thread]], str] | None = None
    parts: tuple[str, ...] = ()
    rows: bool = True


#: the flow's measures by name (registered at the end of this module, once every piece they use is defined)
MEASURES: Registry[Measure] = Registry("flow measure")


def measure_of(led: Ledger) -> Measure:
    """The measure a ledger's dimension is read by (a result before 1.9 named none: the measure of its dimension's
    name where there is one, else the mean)."""
    return MEASURES.get_or_raise(led.measure or (led.dimension if led.dimension in MEASURES else "mean"))

MISSING_AT = 0.2  # a dimension with more than this share of the decisions it weighs missing names no winner


def missing_share(flows: Sequence[SpeechFlow], weighs: Sequence[str]) -> tuple[int, int]:
    """(missing, asked) decisions of the kinds ``weighs`` over the flow's speeches."""
    missing = sum(f.missed.get(kind, 0) for f in flows for kind in weighs)
    return missing, missing + sum(f.decided.get(kind, 0) for f in flows for kind in weighs)


def flow_verdict(led: Ledger, measure: str | None = None, flows: Sequence[SpeechFlow] = (), counted: bool = False,
                 sampled: bool = False, profile: JudgeProfile | None = None) -> FlowVerdict:
    """The verdict of ``led``'s dimension from its ledger, by its measure (``measure``, else the one the ledger
    names: :func:`measure_of`); a composite measure is the mean of its parts' probabilities. Not judged (no winner):
    a measure blind on the model (the ledger's ``blind``, or for a composite's parts :func:`blind_reason` with
    ``profile``), or more than :data:`MISSING_AT` of the decisions it weighs missing. ``counted``: some
    decisions are the model's answers taken as certain (the server gave no probabilities), so the figures are shares
    of answers, not probabilities; ``sampled``: some are shares of several sampled answers, estimates of them."""
    m = MEASURES.get_or_raise(measure) if measure else measure_of(led)
    dimension = led.dimension
    own = m.name == (led.measure or measure_of(led).name)
    blind = led.blind if own and led.blind else blind_reason(m.name, profile)
    if m.parts and not blind:
        parts = [flow_verdict(led.model_copy(update={"blind": ""}), part, flows, counted, sampled, profile)
                 for part in m.parts]
        return combined(dimension, [(1.0, v) for v in parts])
    if blind:
        return not_judged(dimension, blind, "this dimension names no winner and weighs nothing in the panel",
                          blind=True)
    missing, asked = missing_share(flows, m.weighs)
    if asked and missing > MISSING_AT * asked:
        return not_judged(dimension, f"{missing} of the {asked} decisions it rests on ({', '.join(m.weighs)}) are "
                                     "missing (the model's answers were none of the options)", "no winner is named")
    if not m.rows and not any(t.passages for t in led.tallies):
        return not_judged(dimension, f"no passage was asked the decisions it rests on ({', '.join(m.weighs)})",
                          "this dimension names no winner and weighs nothing in the panel", blind=True)
    values = {t.debater: round(m.strength(t), 4) for t in led.tallies}
    probs = softmax(values)
    unit = "share of answers" if counted else "P estimated from samples" if sampled else "P"
    reason = f"Weighed: {m.what}. " + "; ".join(f"{t.debater}: {m.said(led, t)} ({unit} {probs[t.debater]:.2f})"
                                                for t in led.tallies) + "."
    return FlowVerdict(dimension=dimension, strengths=values, probabilities=probs, reason=reason)


def held(v: FlowVerdict, others: Sequence[FlowVerdict], missing: str) -> FlowVerdict:
    """``v`` where its winner is the one it names with the missing decisions (``missing``, in words) answered either
    way (``others``: its verdict in each such case, :func:`either_way`), the range of its figure said; else not
    judged, naming the decisions the winner would rest on. A guessed decision never names a winner."""
    if v.not_judged:
        return v
    winners = {v.winner, *(o.winner for o in others)}
    if len(winners) > 1:
        named = sorted(w for w in winners if w is not None)
        could = " or ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)
        could += " or nobody (a tie)" if None in winners else ""
        return not_judged(v.dimension, f"the winner rests on missing decisions ({missing}): answered either way, it "
                                       f"could be {could}", "no winner is named")
    if v.winner is None:
        return v
    shares = [v.probabilities[v.winner], *(o.probabilities[v.winner] for o in others)]
    if max(shares) == min(shares):  # it does not rest on them (language does not read whether a passage argues)
        return v
    return v.model_copy(update={"reason": f"{v.reason} With the missing decisions ({missing}) answered either way "
                                          f"the winner is the same ({min(shares):.2f} to {max(shares):.2f})."})


def not_judged(dimension: str, why: str, so: str, blind: bool = False) -> FlowVerdict:
    """A verdict that names no winner, and why (``why`` starts lower-case: it follows "not judged: ")."""
    return FlowVerdict(dimension=dimension, strengths={}, probabilities={}, reason=f"{why[0].upper()}{why[1:]}; {so}.",
                       not_judged=why, blind=blind)


def combined(dimension: str, parts: Sequence[tuple[float, FlowVerdict]]) -> FlowVerdict:
    """The weighted mean of the judged dimensions' win probabilities (the panel's merge, computed): a dimension
    not judged weighs nothing (the others' weights renormalised); a dimension not judged for missing decisions
    leaves the merge not judged, since its weight would otherwise fall to the others unsaid."""
    lost = [v for _, v in parts if v.not_judged and not v.blind]
    if lost or not [v for _, v in parts if not v.not_judged]:
        # every part blind on this model: nothing failed, there is nothing it can decide (said as such, complete)
        return not_judged(dimension, "; ".join(f"{v.dimension} was not judged" for v in lost) if lost
                          else "no dimension it weighs is judged on this model (each says why)", "no winner is named",
                          blind=not lost)
    judged = [(w, v) for w, v in parts if not v.not_judged and w > 0]
    if not judged:  # judged, but none weighs anything on this model (its profile's readings): nothing to merge
        return not_judged(dimension, "none of this model's readings weighs: none was measured right above a coin on "
                                     "gold without a lean to a speaking place (each one's figure follows; the flow "
                                     "sheet shows who leads each dimension)",
                          "no winner is named", blind=True)
    total = sum(w for w, _ in judged)
    names = list(judged[0][1].probabilities)
    probs = {n: round(sum(w * v.probabilities[n] for w, v in judged) / total, 4) for n in names}
    reason = "Weighted mean of the judged dimensions' probabilities (" + ", ".join(
        f"{v.dimension} ×{w:g}" for w, v in judged) + "): " + "; ".join(f"{n} {p:.2f}" for n, p in probs.items()) + "."
    skipped = [v.dimension for _, v in parts if v.not_judged]
    if skipped:
        reason += f" Not weighed: {', '.join(skipped)} (not judged)."
    unweighed = [v.dimension for w, v in parts if not v.not_judged and w <= 0]
    if unweighed:
        reason += f" Weighing nothing on this model: {', '.join(unweighed)}."
    return FlowVerdict(dimension=dimension, strengths={n: round(math.log(max(p, 1e-9)), 4) for n, p in probs.items()},
                       probabilities=probs, reason=reason)


def weighed_by_readings(parts: Sequence[tuple[float, FlowVerdict]], profile: JudgeProfile | None,
                        mode: str = "flow") -> tuple[list[tuple[float, FlowVerdict]], str]:
    """The panel's parts weighed as the model's profile measured each reading right on gold (``mode/dimension``,
    pooled over its gold sources): a reading that carries (interval above 0.5, no lean to a speaking place beyond
    the gold's) weighs the log-odds of its share right, as an independent judge right that often would; one that
    does not carry, leans, or was never measured weighs nothing. A reading with a place fit comes with its place
    lean taken out (:func:`place_taken_out`), and its lean is judged as taken out, on the debates the fit never
    saw. Where the profile holds no reading with enough debates (or no profile), the parts keep their dimensions'
    weights (the stated default). Returns the parts and what was done, in words ("" where nothing changed)."""
    if profile is None:
        return list(parts), ""
    found = {v.dimension: profile.reading(f"{mode}/{v.dimension}") for _, v in parts if not v.not_judged}
    measured = {d: r for d, r in found.items() if r is not None and r.state != "not enough data"}
    if not measured:
        few = [f"{d} on {r.items} debates" for d, r in found.items() if r is not None]
        return list(parts), (f"its readings were measured on too few debates to weigh by ({', '.join(few)}): the "
                             "dimensions' own weights" if few else
                             "no reading of these dimensions was measured on gold (`debatrix profile --readings RUN` "
                             "records them): the dimensions' own weights")
    out, said = [], []
    for w, v in parts:
        r = measured.get(v.dimension)
        if v.not_judged:
            out.append((w, v))
        elif r is None:
            out.append((0.0, v))
            said.append(f"{v.dimension} not weighed (never measured on gold)")
        elif r.state != "carries" or r.lean:
            out.append((0.0, v))
            why = f"leans to the {r.lean} speaker" if r.state == "carries" else "not above a coin"
            said.append(f"{v.dimension} not weighed (right {r.right} on {r.items} debates of {r.gold}: {why})")
        else:
            weight = round(math.log(r.right.value / (1.0 - r.right.value)), 3)
            out.append((weight, v))
            said.append(f"{v.dimension} ×{weight:g} (right {r.right} on {r.items} debates of {r.gold}"
                        + ("; its place lean taken out" if v.place_shift is not None else "") + ")")
    deciding = [v.dimension for w, v in out if w > 0 and not v.not_judged]
    if len(deciding) == 1:  # the one reading that carries decides, and the reader is told so first
        said.insert(0, f"decided by the {deciding[0]} reading alone, the only one right above a coin on gold")
    return out, "; ".join(said)


def place_taken_out(v: FlowVerdict, profile: JudgeProfile | None, first: str, mode: str = "flow") -> FlowVerdict:
    """``v`` with its reading's place lean taken out, as the model's profile fitted it (``mode/dimension``'s
    place fit: a shift to the log-odds of ``first``, the debater who spoke first), said in its reason; ``v`` itself
    where there is nothing to take out (no profile or fit, not judged, or not two debaters) and where the fit failed
    its check (on the debates it never saw, the shifted reading still leans to a place beyond the gold's: such a
    reading is not weighed, :func:`weighed_by_readings`, and its verdict is shown as the model made it)."""
    r = profile.reading(f"{mode}/{v.dimension}") if profile is not None else None
    if (r is None or r.place is None or r.lean or v.not_judged or len(v.probabilities) != 2
            or first not in v.probabilities):
        return v
    other = next(n for n in v.probabilities if n != first)
    q = round(shifted(v.probabilities[first], r.place.shift), 4)
    probs = {first: q, other: round(1.0 - q, 4)}
    return v.model_copy(update={
        "probabilities": probs, "strengths": {n: round(math.log(max(p, 1e-9)), 4) for n, p in probs.items()},
        "place_shift": r.place.shift,
        "reason": f"{v.reason} The model's lean to a speaking place taken out: {r.place.shift:+.2f} to {first}'s "
                  f"log-odds, who spoke first, {first} {v.probabilities[first]:.2f} -> {q:.2f} (fitted on "
                  f"{r.place.fitted} debates of {r.gold}; on {r.place.checked} others it then named the first "
                  f"speaker in {r.place.first_named.value:.2f} of them, the gold in {r.place.gold_first:.2f})."})


# ------------------------------------------------------------------- what a coach reads: cited, never paraphrased

CITED = 4  # rows a comment names at most, the weightiest first


def _cite(t: Thread) -> str:
    return f"{t.id} “{gist(t.gist, 10)}”"


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(ids[:CITED]) + (f" and {len(ids) - CITED} more" if len(ids) > CITED else "")


def debater_comment(led: Ledger, flows: Sequence[SpeechFlow], debate: Debate, debater: str) -> str:
    """What the ledger says of ``debater`` in its dimension, each claim with the ids of the passages it rests on; the
    debater's own passages are named as theirs and another debater's as that debater's, from the passage table.
    A comment that cites none of theirs (a debater who only answered) ends with where their speeches are."""
    text = _comment(led, flows, debate, debater)
    own = {p.id for p in debate.passages if p.speaker == debater}
    if own and not any(m.group(0) in own for m in ID.finditer(text)):
        speeches = sorted({p.speech for p in debate.passages if p.speaker == debater})
        text += " Their speeches: " + ", ".join(own_range(debate, i) for i in speeches) + "."
    return text


def _comment(led: Ledger, flows: Sequence[SpeechFlow], debate: Debate, debater: str) -> str:
    mine = sorted((t for t in led.threads if t.speaker == debater), key=lambda t: -t.argument)
    own = [p for p in debate.passages if p.speaker == debater]
    marks = {m.id: m for f in flows for m in f.marks}
    if not own:
        return f"{debater} gave no speech."
    m = measure_of(led)
    if led.blind:
        return f"{led.dimension.capitalize()} is not judged: {led.blind}."
    if not m.rows:
        return m.comment(led, debate, debater, mine) if m.comment else ""
    if not mine:
        best = max(own, key=lambda p: getattr(marks.get(p.id), "argument", None) or 0.0)
        return (f"No passage of {debater} reads as an argument on the motion (the likeliest, {best.id}, at "
                f"{said_p(getattr(marks.get(best.id), 'argument', None) or 0.0, led.figures)}).")
    return (m.comment or _standing_comment)(led, debate, debater, mine)


def _evidence_comment(led: Ledger, debate: Debate, debater: str, mine: list[Thread]) -> str:
    backed = [t for t in mine if (t.evidence or 0) >= 0.5]
    bare = [t.id for t in mine if (t.evidence or 0) < 0.5]
    text = ("Evidence behind " + "; ".join(f"{_cite(t)} ({said_p(t.evidence or 0.0, led.figures)})"
                                           for t in backed[:CITED])
            if backed else f"No argument of {debater} is more likely backed by evidence than not")
    return text + (f"; none likely behind {_ids(bare)}." if bare else ".")


def _clash_comment(led: Ledger, debate: Debate, debater: str, mine: list[Thread]) -> str:
    index = debate.passage_index
    theirs = [t for t in led.threads if t.side is not debate.debater(debater).side and t.answerable
              and any(s.speaker == debater for s in debate.speeches[index[t.id].speech + 1:])]
    answered = [t for t in theirs if t.answered >= 0.5]
    left = [f"{t.speaker}'s {t.id}" for t in theirs if t.answered < 0.5]
    text = ("Answered " + "; ".join(f"{t.speaker}'s {_cite(t)} ({said_p(t.answered, led.figures)})"
                                    for t in answered[:CITED])
            if answered else f"{debater} answered none of the other side's arguments"
            if theirs else "Nothing of the other side came before their speeches")
    return text + (f"; left unanswered: {_ids(left)}" if left else "") + \
        f". Their own arguments standing: {_ids([t.id for t in mine if t.stands >= 0.5]) or 'none'}."


def _standing_comment(led: Ledger, debate: Debate, debater: str, mine: list[Thread]) -> str:
    standing = [t for t in mine if t.status != "answered"]
    fallen = [t for t in mine if t.status == "answered"]
    index = debate.passage_index

    def weight(c: Cell) -> float:
        return c.counted

    def whose(pid: str) -> str:  # another debater's passage, named as theirs (from the table)
        return f"{index[pid].speaker}'s {pid}" if pid in index else pid

    tested = led.tally(debater).tested

    def why(t: Thread) -> str:  # what kept a row standing, where the other side spoke after it
        if not t.answerable:
            return (" (untested: the other side spoke no later speech that could answer it; it counts "
                    f"{tested:.2f} of its weight, as {debater}'s tested arguments stood)")
        if t.status == "extended":
            by = sorted({c.by for c in t.cells if c.by and weight(c) > 0})
            return (f" (extended: the answer{'s' if len(by) > 1 else ''} {', '.join(whose(b) for b in by)} "
                    "answered in turn)")
        if t.status != "dropped":
            return ""
        # never asked: no later passage of the other side was proposed for it, so nobody judged an answer
        if not t.cells:
            return " (dropped: no later passage of the other side was asked about it)"
        best = max(t.cells, key=weight)
        return (f" (dropped: asked whether {whose(best.by) if best.by else 'speech ' + str(best.speech + 1)} answers "
                f"it, the model said {said_p(best.answered, led.figures)}" + ("" if best.counts is None or
                                                              abs(best.counts - best.answered) < 0.005 else
                                                              f", {weight(best):.2f} on its profile") +
                f"; together its answers count {t.answered:.2f} of 1, short of even odds)")

    text = ("Standing: " + "; ".join(f"{_cite(t)}{why(t)}" for t in standing[:CITED]) if standing
            else "No argument left standing")
    if fallen:  # each with the passages that most likely answered it
        text += "; answered by the other side: " + "; ".join(
            f"{t.id} (by " + ", ".join(f"{whose(c.by) if c.by else 'speech ' + str(c.speech + 1)} at "
                                     f"{said_p(c.answered, led.figures)}"
                                     for c in sorted(t.cells, key=lambda c: -weight(c))[:2] if weight(c) > 0) + ")"
            for t in fallen[:CITED])
    return text + "."


PARTLY_AT = 0.2  # a cell counting less than this toward felling its row reads "not answered"

STATUS_ORDER = ("standing", "extended", "dropped", "answered")


def standing_words(led: Ledger, debater: str) -> str:
    """How many of a debater's arguments stand, counted as a coach counts rows: "2 of 3 arguments standing" (a row
    stands unless the other side answered it and that answer stood: :attr:`Thread.status`)."""
    rows = [x for x in led.threads if x.speaker == debater]
    up = sum(x.status != "answered" for x in rows)
    return f"{up} of {len(rows)} argument{'' if len(rows) == 1 else 's'} standing"


def tally_line(led: Ledger, debater: str) -> str:
    """One debater's rows by status, as the summary, the report and the page all print it: "Ana: 1 of 2
    arguments standing; standing S3.1; answered S1.1" (statuses from :attr:`Thread.status`, in
    :data:`STATUS_ORDER`)."""
    groups = {s: [x.id for x in led.threads if x.speaker == debater and x.status == s] for s in STATUS_ORDER}
    unknown = led.tally(debater).unknown
    return f"{debater}: {standing_words(led, debater)}" + "".join(
        f"; {status} {', '.join(ids)}" for status, ids in groups.items() if ids) + (
        f"; not counted {', '.join(unknown)} (whether {'it argues' if len(unknown) == 1 else 'they argue'} is "
        "missing)" if unknown else "")


def weighed_line(led: Ledger) -> str:
    """What the verdict weighs beside the counts, as every surface prints it: each argument by how likely it is one
    and each answer by how much surer than the model's usual answer it is, the model's P read through its profile
    where it has one (:meth:`JudgeProfile.telling`)."""
    return ("The verdict weighs each argument by how likely it is one, and each answer by how much surer it is than "
            "the model's usual answer, as the model's profile reads its P (unprofiled: as the model gave it): " +
            ", ".join(f"{t.debater} {t.standing:.1f} of {t.arguments:.1f} standing" for t in led.tallies) + "." +
            "".join(
        f" {t.debater}'s untested arguments (weighed {t.untested:.1f}: no later speech of the other side could "
        f"answer them) count {t.tested:.2f} of their weight, as {t.debater}'s tested arguments stood."
        for t in led.tallies if t.untested > 0))


def answer_words(answered: float, counts: float | None, by: str, base: float | None = None,
                 figures: str = "P") -> tuple[str, str]:
    """A sheet cell in words (what a coach reads) and its figures (shown on hover): whether the later speech
    answered the row, by how much its answer counts (the model's P through its profile; a result of 1.8 or 1.9:
    its share above that debate's mean answer ``base``)."""
    weight = answered if counts is None else counts
    # graded, not cut at 0.5: a row's answers combine (1 − Π(1 − counts)), so two cells that each may answer it
    # can together fell it; a cell that reads "not answered" counts (almost) nothing toward that
    words = (("answered" if weight >= 0.5 else "partly answered" if weight >= PARTLY_AT else "asked, not answered")
             + (f" by {by}" if by and weight >= PARTLY_AT else ""))
    shown = ((f"P(it answers) {answered:.2f}" if figures == "P" else f"does it answer? {said_p(answered, figures)}")
             + (f"; that debate's mean answer {base:.2f}" if base is not None else "")
             + f"; counts {weight:.2f} of 1 toward felling the row")
    return words, shown


def own_range(debate: Debate, speech: int) -> str:
    ids = [p.id for p in debate.passages if p.speech == speech]
    return ids[0] if len(ids) == 1 else f"{ids[0]}–{ids[-1]}"


#: what the figures of :func:`flow_line` are, said wherever it is shown
FLOW_LINE_LEGEND = ("P: the model's probability, 0 to 1, that the passage is an argument about the motion, cites "
                    "evidence, reads clearly, or answers that earlier point (a question asked, with the model's "
                    "answer: the flow sheet shows what it came to once read through the model's profile)")


def flow_line(flow: SpeechFlow) -> str:
    """One speech's decisions by id, as the page shows them while the judge reads (:data:`FLOW_LINE_LEGEND`
    says what the figures are): "S2.1 argument P 0.16 · S2.1 answers S1.1? P 0.70" (a question asked, with the
    model's answer: the sheet says what it came to)."""
    figures = figures_of([flow])
    parts = [f"{m.id} " + ", ".join(f"{name} {said_p(value, figures)}" for name, value in
                                    (("argument", m.argument), ("evidence", m.evidence), ("clear", m.clear))
                                    if value is not None)
             for m in flow.marks if m.argument is not None or m.evidence is not None or m.clear is not None]
    parts += [f"{x.by or 'it'} answers {x.target}? {said_p(x.answers, figures)}" for x in flow.lines]
    return " · ".join(parts) + (f" · missing: {flow.missing}" if flow.missing else "")


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _argues(flow: SpeechFlow) -> float | None:
    return _mean([m.argument for m in flow.marks if m.argument is not None])


def speech_value(flow: SpeechFlow, measure: str, profile: JudgeProfile | None = None) -> float | None:
    """A speech's standing by ``measure``, 0 to 1, from its own decisions (None: none to read, or the measure is
    blind on the model: :func:`blind_reason`)."""
    m = MEASURES.get_or_raise(measure)
    if blind_reason(measure, profile):
        return None
    if m.parts:
        return _mean([v for v in (speech_value(flow, x, profile) for x in m.parts) if v is not None])
    return m.value(flow)


def _argued(flow: SpeechFlow, debate: Debate) -> list[str]:
    index = debate.passage_index
    figures = figures_of([flow])
    return [f"{m.id} “{gist(index[m.id].text, 10)}”: argument {_decision_figure(m.argument, figures)}" for m in flow.marks
            if m.argument is not None]


def _decision_figure(value: float, figures: str) -> str:
    """A decision's figure in a speech's note: the probability itself ("0.16"), or the answer where that is what
    the model gave (:func:`said_p`)."""
    return f"{value:.2f}" if figures == "P" else said_p(value, figures)


def _answered(flow: SpeechFlow, debate: Debate) -> list[str]:
    index = debate.passage_index
    figures = figures_of([flow])
    return ["; ".join(f"{x.by or 'it'} answers {index[x.target].speaker}'s {x.target}? {said_p(x.answers, figures)}"
                      for x in flow.lines)] if flow.lines else []


def _evidenced(flow: SpeechFlow, debate: Debate) -> list[str]:
    index = debate.passage_index
    figures = figures_of([flow])
    return [f"{m.id} “{gist(index[m.id].text, 10)}”: evidence {_decision_figure(m.evidence, figures)}" for m in flow.marks
            if m.argument is not None and m.evidence is not None and m.argument >= ARGUMENT_AT] or [
        "no passage of it reads as an argument"]


def _engaged(flow: SpeechFlow, debate: Debate) -> list[str]:
    return _answered(flow, debate) or [
        "asked about no earlier argument of the other side" if flow.index else "the first speech"]


def speech_note(flow: SpeechFlow, debate: Debate, measure: str, dimension: str | None = None,
                blind: str = "") -> str:
    """The flow's entry for one speech in a dimension read by ``measure``: the decisions it weighs, each passage by
    id (answered passages named with their speaker, from the table); ``blind``: why the measure decides nothing on
    this model."""
    m = MEASURES.get_or_raise(measure)
    if blind:
        return f"{(dimension or measure).capitalize()} is not judged: {blind}."
    parts = m.note(flow, debate)
    if flow.missing:
        parts.append(f"missing: {flow.missing}")
    return ". ".join(parts) + "."


def _cleared(flow: SpeechFlow, debate: Debate) -> list[str]:
    index = debate.passage_index
    figures = figures_of([flow])
    return [f"{m.id} “{gist(index[m.id].text, 10)}”: reads clearly {_decision_figure(m.clear, figures)}" for m in flow.marks
            if m.clear is not None] or ["no passage of it was asked whether it reads clearly"]


def _clear_comment(led: Ledger, debate: Debate, debater: str, mine: list[Thread]) -> str:
    t = led.tally(debater)
    if not t.passages:
        return f"No passage of {debater} was asked whether it reads clearly."
    return (f"{t.clear:.1f} of their {t.passages} passages read clearly "
            f"({said_mean(t.clear / t.passages, led.figures)}).")


# -------------------------------------------------------------------------------------------- the measures

def _register(m: Measure) -> None:
    MEASURES.add(m.name, m)


_register(Measure("argument", "arguments standing at the end, each by how likely it is one", ("argues", "answers"),
                  lambda t: math.log(EMPTY + t.standing),
                  lambda led, t: f"{standing_words(led, t.debater)}, weighed {t.standing:.1f} of {t.arguments:.1f}",
                  _argues, lambda f, d: _argued(f, d) + _answered(f, d)))
_register(Measure("source", "arguments backed by evidence", ("argues", "evidence"),
                  lambda t: math.log(EMPTY + t.evidence),
                  lambda led, t: f"{t.evidence:.1f} of {t.arguments:.1f} arguments backed by evidence",
                  lambda f: _mean([m.evidence for m in f.marks if m.evidence is not None]), _evidenced,
                  _evidence_comment))
_register(Measure("language", "how clearly their passages read", ("clear",),
                  lambda t: math.log(EMPTY / 10 + (t.clear / t.passages if t.passages else 0.0)),
                  lambda led, t: f"{t.clear:.1f} of {t.passages} passages read clearly",
                  lambda f: _mean([m.clear for m in f.marks if m.clear is not None]), _cleared,
                  _clear_comment, rows=False))
_register(Measure("clash", "the other side's arguments answered, and their own left standing", ("argues", "answers"),
                  lambda t: 2.0 * (t.engagement if t.engagement is not None else 0.5) + math.log(EMPTY + t.standing),
                  lambda led, t: (f"answered {t.engaged:.1f} of {t.engageable:.1f} arguments they could answer"
                             if t.engagement is not None else "nothing of the other side to answer")
                  + f", {t.standing:.1f} of their own standing",
                  lambda f: _mean([x.answers for x in f.lines]) if f.lines else _argues(f), _engaged,
                  _clash_comment))
_register(Measure("mean", "the mean of the judged measures", ("argues", "evidence", "clear", "answers"),
                  note=lambda f, d: _argued(f, d) + _answered(f, d),
                  parts=("argument", "source", "language", "clash")))

#: the measures that decide something of their own (not composites)
JUDGED = tuple(name for name, m in MEASURES.items() if not m.parts)
