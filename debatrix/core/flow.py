"""The flow: the judge's record of a debate as an adjudicator keeps it, one row per argument and every answer drawn
against what it answers, built from small decisions the model makes with probabilities and cited by passage id.
Nothing here calls a model: the decisions come in as :class:`SpeechFlow` (one speech's analysis in one dimension:
the analysis memory's entry), and the ledger, the scores and the verdict's margin are computed from them, the same
way every time, so a verdict can be recomputed from a stored result.

The passage table (first below) is what the flow cites: every speech split once into numbered passages (``S3.2``:
speech 3, passage 2). A passage is a few sentences that belong together: a paragraph of the speech as the model
reads it (:func:`debatrix.core.prompting.compact`), long paragraphs cut at sentence ends, short ones (a heading, a
quoted line of the opponent, a list of sources) joined to their neighbours. The sizes keep a speech of 700 words at
about 8 passages: small enough that one passage makes one point, few enough that asking about each stays cheap.

Who argued what is never read from prose: a passage's speaker and side come from the passage table, so a row, a
cell of the sheet and a per-debater comment cite only ids whose speaker is known by a lookup."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator, Sequence

# the flow's types are domain types (a result carries them); they are defined with the others
from debatrix.core.models import (
    ARGUMENT_AT,
    Cell,
    Debate,
    Frozen,
    Ledger,
    Line,
    Side,
    SpeechFlow,
    Tally,
    Thread,
)

# ------------------------------------------------------------------------------------------------- the passage table

MIN_WORDS = 40  # a passage shorter than this joins its neighbour
TARGET_WORDS = 80  # a passage this long ends at the next segment
MAX_WORDS = 150  # a paragraph longer than this is cut at sentence ends
_SENTENCE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=\S)")
# a line that starts a unit of its own: a heading, a quotation of the opponent, a list item, a numbered point
_STARTS = re.compile(r"\s*(?:#|\*\*|>|[\"“]|[-*•]\s|\(?\d{1,2}[.):]\s|[A-Z]\d?[.):]\s|C\d|R\d)")
ID = re.compile(r"S(\d{1,4})\.(\d{1,3})")


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
        return len(self.text.split())


def passage_id(speech: int, number: int) -> str:
    """The id of passage ``number`` (1-based) of speech ``speech`` (0-based)."""
    return f"S{speech + 1}.{number}"


def _segments(lines: Sequence[str]) -> Iterator[str]:
    """The lines, those longer than :data:`MAX_WORDS` cut into runs of sentences of about :data:`TARGET_WORDS`."""
    for line in lines:
        if len(line.split()) <= MAX_WORDS:
            yield line
            continue
        run: list[str] = []
        for sentence in _SENTENCE.split(line):
            if run and len(" ".join(run).split()) + len(sentence.split()) > TARGET_WORDS * 1.25:
                yield " ".join(run)
                run = []
            run.append(sentence)
        if run:
            yield " ".join(run)


def split_speech(text: str) -> list[str]:
    """A speech's passages, as their texts: what :func:`passages` numbers. Deterministic; every word of the
    compacted speech is in exactly one passage, in order."""
    from debatrix.core.prompting import compact

    lines = [ln for ln in compact(text).split("\n") if ln.strip()]
    out: list[list[str]] = []
    size = 0
    for seg in _segments(lines):
        n = len(seg.split())
        fresh = not out or (size >= MIN_WORDS and (size >= TARGET_WORDS or _STARTS.match(seg) is not None
                                                   or size + n > MAX_WORDS))
        if fresh:
            out.append([seg])
            size = n
        else:
            out[-1].append(seg)
            size += n
    if len(out) > 1 and len(" ".join(out[-1]).split()) < MIN_WORDS // 2:  # a short tail joins the passage before
        tail = out.pop()
        out[-1] += tail
    return ["\n".join(p) for p in out]


def passages(debate: Debate) -> tuple[Passage, ...]:
    """Every passage of the debate, speech by speech (use ``debate.passages``, which splits once)."""
    out = []
    for i, speech in enumerate(debate.speeches):
        side = debate.debater(speech.speaker).side
        for k, text in enumerate(split_speech(speech.content), 1):
            out.append(Passage(id=passage_id(i, k), speech=i, number=k, speaker=speech.speaker, side=side,
                               text=text))
    return tuple(out)


# ------------------------------------------------------------------------------------------------- the flow

GIST_WORDS = 14  # the first words of a passage: how the flow names it (extractive: nothing the model wrote)


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


# ------------------------------------------------------------------- which rows a speech is asked about (a lookup)


def terms(text: str) -> list[str]:
    """A text's words, lower-cased (any script: ``\\w``)."""
    return re.findall(r"\w+", text.lower())


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
        mark = marks.get(p.id)
        if p.side is not side and (mark is None or mark.argument is None or mark.argument >= ARGUMENT_AT):
            out.append(p.id)
    return out


GIST_ASKED = 16  # words of a row restated in its question: enough to name the point (every word is read once a question)


CLARITY_ASKED = 2  # passages of a speech asked whether they read clearly


def clarity_asked(debate: Debate, index: int) -> list[str]:
    """The passages of speech ``index`` asked whether they read clearly: its longest ones (ties by order). Clarity
    is a property of how a speech is written, so a sample of its passages rates it; asking every passage cost a
    quarter of the flow's calls."""
    own = [p for p in debate.passages if p.speech == index]
    longest = sorted(own, key=lambda p: -len(p.text.split()))[:CLARITY_ASKED]
    return [p.id for p in own if p in longest]


def flow_calls(debate: Debate) -> int:
    """The decisions a complete flow run asks at most (no retries): per passage, whether it argues and with
    evidence; per speech, whether its longest passages read clearly; per speech after the first, one per earlier
    passage of the other side, up to one per passage of the speech."""
    total = 2 * len(debate.passages)
    for i, s in enumerate(debate.speeches):
        side = debate.debater(s.speaker).side
        own = sum(1 for p in debate.passages if p.speech == i)
        total += min(own, CLARITY_ASKED)
        total += min(own, sum(1 for q in debate.passages if q.speech < i and q.side is not side))
    return total


def asked_pairs(debate: Debate, flows: Sequence[SpeechFlow], index: int) -> dict[str, list[str]]:
    """Which passage of speech ``index`` is asked about which open row: each passage proposes the row whose words
    (weighted by how rare they are among the debate's passages) it shares most, and each row proposed is asked once,
    of the passage that shares most with it: the lookup proposes, the model decides. A row no passage shares a word
    with is not asked about. Passage id -> its rows, in the order spoken."""
    rows = open_rows(debate, flows, index)
    if not rows:
        return {}
    weights = debate_idf(debate)
    by_id = debate.passage_index
    best: dict[str, tuple[float, str]] = {}
    for p in (p for p in debate.passages if p.speech == index):
        said = set(terms(p.text))
        score, row = max((covered(terms(by_id[r].text), said, weights), r) for r in rows)
        if score > 0 and score > best.get(row, (0.0, ""))[0]:
            best[row] = (score, p.id)
    out: dict[str, list[str]] = {}
    for row in rows:
        if row in best:
            out.setdefault(best[row][1], []).append(row)
    return out


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

    @property
    def winner(self) -> str | None:
        best = max(self.probabilities.values())
        top = [d for d, p in self.probabilities.items() if p == best]
        return top[0] if len(top) == 1 else None


def softmax(values: dict[str, float]) -> dict[str, float]:
    top = max(values.values())
    e = {k: math.exp(v - top) for k, v in values.items()}
    total = sum(e.values())
    return {k: round(v / total, 4) for k, v in e.items()}


#: what each dimension weighs in the ledger, and how it says so (a dimension not named here: the combination)
MEASURES = {
    "argument": ("arguments standing at the end", lambda t: math.log(EMPTY + t.standing),
                 lambda t: f"{t.standing:.1f} of {t.arguments:.1f} arguments standing"),
    "source": ("arguments backed by evidence", lambda t: math.log(EMPTY + t.evidence),
               lambda t: f"{t.evidence:.1f} of {t.arguments:.1f} arguments backed by evidence"),
    "language": ("how clearly their speeches read (1-5)", lambda t: t.rating if t.rating is not None else 3.0,
                 lambda t: "no speech rated" if t.rating is None else f"rated {t.rating:.2f} of 5"),
    "clash": ("the other side's arguments answered, and their own left standing",
              lambda t: 2.0 * (t.engagement if t.engagement is not None else 0.5) + math.log(EMPTY + t.standing),
              lambda t: (f"answered {t.engaged:.1f} of {t.engageable:.1f} arguments they could answer"
                         if t.engagement is not None else "nothing of the other side to answer")
              + f", {t.standing:.1f} of their own standing"),
}


def flow_verdict(led: Ledger, dimension: str) -> FlowVerdict:
    """A dimension's verdict from its ledger (see :data:`MEASURES`); a dimension the flow has no measure of is the
    mean of the measured ones' probabilities."""
    if dimension not in MEASURES:
        parts = [flow_verdict(led, d) for d in ("argument", "source", "language")]
        return combined(dimension, [(1.0, v) for v in parts])
    what, strength, said = MEASURES[dimension]
    values = {t.debater: round(strength(t), 4) for t in led.tallies}
    probs = softmax(values)
    reason = f"Weighed: {what}. " + "; ".join(f"{t.debater}: {said(t)} (P {probs[t.debater]:.2f})"
                                               for t in led.tallies) + "."
    return FlowVerdict(dimension=dimension, strengths=values, probabilities=probs, reason=reason)


def combined(dimension: str, parts: Sequence[tuple[float, FlowVerdict]]) -> FlowVerdict:
    """The weighted mean of dimensions' win probabilities (the panel's merge, computed)."""
    total = sum(w for w, _ in parts) or 1.0
    names = list(parts[0][1].probabilities) if parts else []
    probs = {n: round(sum(w * v.probabilities[n] for w, v in parts) / total, 4) for n in names}
    reason = "Weighted mean of the dimensions' probabilities (" + ", ".join(
        f"{v.dimension} ×{w:g}" for w, v in parts) + "): " + "; ".join(f"{n} {p:.2f}" for n, p in probs.items()) + "."
    return FlowVerdict(dimension=dimension, strengths={n: round(math.log(max(p, 1e-9)), 4) for n, p in probs.items()},
                       probabilities=probs, reason=reason)


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
    if led.dimension == "language":
        speeches = [f.index for f in flows if f.speaker == debater]
        parts = [f"speech {i + 1} ({own_range(debate, i)}) read as clear with P {f.rating.probabilities['yes']:.2f}"
                 for i in speeches for f in flows if f.index == i and f.rating and f.rating.probabilities]
        return ("; ".join(parts) or f"no speech of {debater} was rated ({own_range(debate, own[0].speech)})") + "."
    if not mine:
        best = max(own, key=lambda p: getattr(marks.get(p.id), "argument", None) or 0.0)
        return (f"No passage of {debater} reads as an argument on the motion (the likeliest, {best.id}, at P "
                f"{getattr(marks.get(best.id), 'argument', None) or 0:.2f}).")
    if led.dimension == "source":
        backed = [t for t in mine if (t.evidence or 0) >= 0.5]
        bare = [t.id for t in mine if (t.evidence or 0) < 0.5]
        text = ("Evidence behind " + "; ".join(f"{_cite(t)} (P {t.evidence:.2f})" for t in backed[:CITED])
                if backed else f"No argument of {debater} is more likely backed by evidence than not")
        return text + (f"; none likely behind {_ids(bare)}." if bare else ".")
    if led.dimension == "clash":
        index = debate.passage_index
        theirs = [t for t in led.threads if t.side is not debate.debater(debater).side and t.answerable
                  and any(s.speaker == debater for s in debate.speeches[index[t.id].speech + 1:])]
        answered = [t for t in theirs if t.answered >= 0.5]
        left = [f"{t.speaker}'s {t.id}" for t in theirs if t.answered < 0.5]
        text = ("Answered " + "; ".join(f"{t.speaker}'s {_cite(t)} (P {t.answered:.2f})" for t in answered[:CITED])
                if answered else f"{debater} answered none of the other side's arguments"
                if theirs else "Nothing of the other side came before their speeches")
        return text + (f"; left unanswered: {_ids(left)}" if left else "") + \
            f". Their own arguments standing: {_ids([t.id for t in mine if t.stands >= 0.5]) or 'none'}."
    standing = [t for t in mine if t.status in ("standing", "dropped", "conceded")]
    refuted = [t for t in mine if t.status == "refuted"]
    def why(t: Thread) -> str:  # a dropped row asked about says how likely it was answered
        if t.status == "conceded":
            return " (conceded)"
        if t.status != "dropped":
            return ""
        # never asked: no later passage of the other side proposed it (the lookup), so nobody judged an answer
        asked = f" (answered with P {t.answered:.2f} only)"
        return asked if t.cells else " (no later passage of the other side was asked about it)"

    text = ("Standing: " + "; ".join(f"{_cite(t)}{why(t)}" for t in standing[:CITED]) if standing
            else "No argument left standing")
    if refuted:  # each with the speeches that most likely answered it (together more likely than not)
        text += "; answered by the other side: " + "; ".join(
            f"{t.id} (by speech " + ", ".join(f"{c.speech + 1} at P {c.answered:.2f}" for c in
                                            sorted(t.cells, key=lambda c: -c.answered)[:2]) + ")"
            for t in refuted[:CITED])
    return text + "."


def own_range(debate: Debate, speech: int) -> str:
    ids = [p.id for p in debate.passages if p.speech == speech]
    return ids[0] if len(ids) == 1 else f"{ids[0]}–{ids[-1]}"


def speech_value(flow: SpeechFlow, dimension: str) -> float | None:
    """A speech's standing on the dimension, 0 to 1, from its own decisions (None: none to read)."""
    def mean(xs: list[float]) -> float | None:
        return sum(xs) / len(xs) if xs else None

    argument = mean([m.argument for m in flow.marks if m.argument is not None])
    if dimension == "argument":
        return argument
    if dimension == "source":
        return mean([m.evidence for m in flow.marks if m.evidence is not None])
    if dimension == "language":
        return None if flow.rating is None else (flow.rating.expected - 1) / 4
    if dimension == "clash":
        return mean([x.answers for x in flow.lines]) if flow.lines else argument
    parts = [v for v in (speech_value(flow, d) for d in ("argument", "source", "language")) if v is not None]
    return mean(parts)


def flow_line(flow: SpeechFlow) -> str:
    """One speech's decisions by id alone (what the page shows while the judge reads)."""
    parts = [f"{m.id} argues {m.argument:.2f}, evidence {m.evidence:.2f}" for m in flow.marks
             if m.argument is not None and m.evidence is not None]
    parts += [f"answers {x.target} {x.answers:.2f}" for x in flow.lines]
    if flow.rating is not None and flow.rating.probabilities:
        parts.append(f"clear {flow.rating.probabilities.get('yes', 0):.2f}")
    return " · ".join(parts) + (f" · missing: {flow.missing}" if flow.missing else "")


def speech_note(flow: SpeechFlow, debate: Debate, dimension: str) -> str:
    """The flow's entry for one speech in one dimension: the decisions that dimension weighs, each passage by id
    (answered passages named with their speaker, from the table)."""
    index = debate.passage_index
    marks = [m for m in flow.marks if m.argument is not None]
    parts: list[str] = []
    if dimension in ("argument", "general") or dimension not in MEASURES:
        parts += [f"{m.id} “{gist(index[m.id].text, 10)}”: argument {m.argument:.2f}" for m in marks]
    if dimension == "source":
        parts += [f"{m.id} “{gist(index[m.id].text, 10)}”: evidence {m.evidence:.2f}" for m in marks
                  if m.evidence is not None and (m.argument or 0) >= ARGUMENT_AT]
        parts = parts or ["no passage of it reads as an argument"]
    if flow.lines and dimension in ("argument", "clash", "general") or dimension not in MEASURES and flow.lines:
        parts.append("answers " + "; ".join(f"{index[x.target].speaker}'s {x.target} (P {x.answers:.2f})"
                                           for x in flow.lines))
    if dimension == "clash" and not flow.lines:
        parts.append("asked about no earlier argument of the other side" if flow.index else "the first speech")
    if dimension in ("language", "general") and flow.rating is not None and flow.rating.probabilities:
        parts.append(f"reads as clear with P {flow.rating.probabilities.get('yes', 0):.2f}")
    if flow.missing:
        parts.append(f"missing: {flow.missing}")
    return ". ".join(parts) + "."
