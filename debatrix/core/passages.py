"""The passage table: every speech split once into numbered passages (``S3.2``: speech 3, passage 2), the unit the
flow cites. Who said a passage, on which side and in which speech comes from the :class:`Debate`, never from
reading prose, so everything downstream that cites an id knows its speaker by a lookup.

A passage is a few sentences that belong together: a paragraph of the speech as the model reads it
(:func:`debatrix.core.prompting.compact`), long paragraphs cut at sentence ends, short ones (a heading, a quoted
line of the opponent, a list of sources) joined to their neighbours. The sizes keep a speech of 700 words at about
8 passages: small enough that one passage makes one point, few enough that asking about each stays cheap."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from debatrix.core.models import Debate, Frozen, Side

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

