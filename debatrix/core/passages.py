"""How a speech is read as text, in any script, before any model sees it: compacted (:func:`compact`: the same
words in fewer tokens), sized in words (:func:`size`: in scripts without spaces, by characters) and cut into the
numbered passages the flow cites (:func:`split_speech`, :func:`passage_id`; :attr:`debatrix.core.models.Debate.passages`
numbers them). Plain text in, plain text out: nothing here knows a debate, a model or a prompt, so every room may
use it and it imports nothing of the project."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

# ------------------------------------------------------------------ the speech as the model reads it

# a web address keeps its site: that a source is cited, and where from, is what a judge weighs; the path (tracking
# codes, article numbers) is what a reader cannot check while listening either. Parentheses inside the path are
# kept in balance so a Markdown link's closing bracket is not taken for part of the address.
_URL = re.compile(r"\bhttps?://(?:www\.)?([^\s/()<>\[\]\"'|]+)(?:[^\s()<>\[\]\"'|]|\([^\s()]*\))*", re.I)
_WWW = re.compile(r"(?<![\w/.@])www\.([^\s/()<>\[\]\"'|]+\.[a-z]{2,})(?:/(?:[^\s()<>\[\]\"'|]|\([^\s()]*\))*)?", re.I)
# a line that starts a block of its own (list item, heading, quotation or interjection, table row) is never run
# into the line before it
_BLOCK_START = re.compile(r"\s*(?:[-*+•>#|]|\d{1,3}[.):]\s|[IVXLC]{1,5}\.\s|\(?[A-Za-z0-9]\)\s)")
_WRAPPED = 50  # a line this long that stops mid-sentence was wrapped, not ended (headings and labels are shorter)
_SENTENCE_END = re.compile(r"""[.!?:;…]["'”’)\]*_]*$""")


def _site(m: re.Match[str]) -> str:
    """The site, and the sentence's punctuation the address ran into ("see cato.org/a/b." ends a sentence)."""
    return m.group(1).rstrip(".,;:!?") + re.search(r"[.,;:!?]*$", m.group(0)).group(0)


def compact(text: str) -> str:
    """A speech as the model reads it: the same words in fewer tokens. Web addresses keep only their site, lines
    broken inside a sentence (text pasted hard-wrapped) are joined, and blank lines go (every line the model reads
    carries the data mark, so a blank line still costs tokens and says only "new paragraph", which the line break
    already says). A line runs on into the next only where it stops mid-sentence and either the next goes on in
    lower case or it is a full line of wrapped text (a short one before a capitalised line is a heading, a list
    item before one is the list's last); a line that starts a block keeps its own line."""
    text = _WWW.sub(_site, _URL.sub(_site, text))
    out: list[str] = []
    prev = ""  # the last line as written, "" after a line that ends its paragraph
    for raw in text.split("\n"):
        line = raw.strip()
        hard_break = line.endswith("\\")  # Markdown's explicit line break
        line = line.rstrip("\\").rstrip()
        if not line:
            prev = ""
            continue
        if prev and not _BLOCK_START.match(line) and (
                line[0].islower() or (len(prev) >= _WRAPPED and not _BLOCK_START.match(prev))):
            out[-1] = f"{out[-1]} {line}"
        else:
            out.append(line)
        ends = hard_break or _SENTENCE_END.search(line) or line.startswith(("#", "|", ">"))
        prev = "" if ends else line
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------- the passage table

MIN_WORDS = 40  # a passage shorter than this joins its neighbour
TARGET_WORDS = 80  # a passage this long ends at the next segment
MAX_WORDS = 150  # a paragraph longer than this is cut at sentence ends, and a sentence longer than this anywhere
# no passage is longer: a segment (at most MAX_WORDS) joins a passage still below MIN_WORDS, and a short tail
# (below MIN_WORDS // 2) joins the passage before it
LIMIT_WORDS = MAX_WORDS + MIN_WORDS + MIN_WORDS // 2
# a sentence ends at . ! ? … followed by a space, or at the full stops of scripts written without spaces
_SENTENCE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=\S)|(?<=[。！？；])\s*(?=\S)")
# a line that starts a unit of its own: a heading, a quotation of the opponent, a list item, a numbered point
_STARTS = re.compile(r"\s*(?:#|\*\*|>|[\"“]|[-*•]\s|\(?\d{1,2}[.):]\s|[A-Z]\d?[.):]\s|C\d|R\d)")
# scripts written without spaces between words (Chinese, Japanese, Korean syllables run together in some text, Thai,
# Lao, Khmer, Myanmar): a run of them is one ``\w+`` match, so its overlapping character pairs stand in for words
UNSPACED = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
                       r"\uac00-\ud7af\uf900-\ufaff]+")
CHARS_A_WORD = 2  # characters of a script without spaces that count as one word in a passage's size


def size(text: str) -> int:
    """A text's length in words, in any script: space-separated words, and in scripts without spaces every
    :data:`CHARS_A_WORD` characters (Chinese, Japanese, Thai ...), so a passage of any script is of a like size."""
    total = 0
    for token in text.split():
        run = sum(len(m) for m in UNSPACED.findall(token))
        total += -(-run // CHARS_A_WORD) + (1 if len(token) > run else 0) if run else 1
    return total


def _cut(sentence: str, limit: int) -> list[str]:
    """A sentence longer than ``limit`` words cut into runs of at most ``limit`` (a run of unspaced script by its
    characters): text with no full stop is still split, and no word is lost or split in two but such a run."""
    pieces: list[str] = []
    run: list[str] = []
    for token in sentence.split(" "):
        n = size(token)
        if n > limit:  # one "word" of unspaced script longer than a passage: cut by characters
            if run:
                pieces.append(" ".join(run))
                run = []
            step = limit * CHARS_A_WORD
            pieces += [token[k:k + step] for k in range(0, len(token), step)]
            continue
        if run and size(" ".join(run)) + n > limit:
            pieces.append(" ".join(run))
            run = []
        run.append(token)
    if run:
        pieces.append(" ".join(run))
    return [p for p in pieces if p.strip()]


def passage_id(speech: int, number: int) -> str:
    """The id of passage ``number`` (1-based) of speech ``speech`` (0-based)."""
    return f"S{speech + 1}.{number}"


def _segments(lines: Sequence[str]) -> Iterator[str]:
    """The lines, those longer than :data:`MAX_WORDS` cut into runs of sentences of about :data:`TARGET_WORDS` (a
    sentence longer than :data:`MAX_WORDS` cut at that size)."""
    for line in lines:
        if size(line) <= MAX_WORDS:
            yield line
            continue
        run: list[str] = []
        for sentence in (piece for s in _SENTENCE.split(line) if s for piece in _cut(s, MAX_WORDS)):
            if run and size(" ".join(run)) + size(sentence) > TARGET_WORDS * 1.25:
                yield " ".join(run)
                run = []
            run.append(sentence)
        if run:
            yield " ".join(run)


def split_speech(text: str) -> list[str]:
    """A speech's passages, as their texts: what :func:`passages` numbers. Deterministic; every word of the
    compacted speech is in exactly one passage, in order, and no passage is longer than :data:`LIMIT_WORDS` (sized
    by :func:`size`, in any script)."""
    lines = [ln for ln in compact(text).split("\n") if ln.strip()]
    out: list[list[str]] = []
    total = 0
    for seg in _segments(lines):
        n = size(seg)
        fresh = not out or (total >= MIN_WORDS and (total >= TARGET_WORDS or _STARTS.match(seg) is not None
                                                    or total + n > MAX_WORDS))
        if fresh:
            out.append([seg])
            total = n
        else:
            out[-1].append(seg)
            total += n
    if len(out) > 1 and size(" ".join(out[-1])) < MIN_WORDS // 2:  # a short tail joins the passage before
        tail = out.pop()
        out[-1] += tail
    return ["\n".join(p) for p in out]
