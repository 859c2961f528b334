"""A test model that reads its prompt: the flow's small decisions answered as a careful reader with only the
request's text would answer them (the passage shares the motion's words, shows figures or named sources, reads as
the vocabulary's words, or shares the restated point's words). The fake server (:mod:`debatrix.testing`, its
``reading`` judge) answers with it, so a test can see what the judge does with a model that sees."""

from __future__ import annotations

import re


_BLOCK = re.compile(r"<<<(\S+) (S\d+\.\d+|C\d+)(: |, made earlier by )[^\n]*\n(.*?)\n\1>>>", re.S)
_MOTION = re.compile(r"^Motion: (.*)$", re.M)
_FIGURES = re.compile(r"https?://|www\.|\[\d+\]|\d[\d,.]*\s*(%|percent)|[$£€]\s?\d|\b\d{2,}\b|according to|"
                      r"\b(stud(y|ies)|report|survey|research|data|statistic|source|journal|professor|university|"
                      r"institute|poll)", re.I)


def _content_words(text: str) -> set[str]:
    return {w.lower()[:5] for w in re.findall(r"[A-Za-z]{4,}", text)}


def _garbled(text: str) -> float:
    """The share of a text's long words that a tokenizer cuts into many pieces (a letter swap breaks a word the
    vocabulary knows into fragments): 0 for clean prose, more the more words are garbled."""
    from debatrix.core.prompting import count_tokens

    words = [w for w in re.findall(r"[A-Za-z]{6,}", text)]
    if not words:
        return 0.0
    return sum(count_tokens(" " + w) >= 3 for w in words) / len(words)


def reading_yes(asked: str, question: str) -> float:
    """P(yes) of a test model that reads what the flow's question shows it, as a careful reader would with only
    that text: whether the passage shares words with the motion (argues), shows figures, links or named sources
    (evidence), reads as the vocabulary's words (clear), or shares the restated point's words (answers).
    ``asked``: the request's text; ``question``: the question (a line of it)."""
    found = _BLOCK.findall(asked)
    blocks = {kind: text for _, pid, kind, text in found}
    passage = blocks.get(": ", "")
    point_id = re.search(r"make (?:this )?point (S\d+\.\d+|C\d+)", question)
    if point_id:  # several points in one request: the one this question names
        blocks[", made earlier by "] = next((text for _, pid, kind, text in found if pid == point_id.group(1)), "")
    motion = " ".join(_MOTION.findall(asked))
    q = question.lower()
    if "argument about the motion" in q:
        share = len(_content_words(passage) & _content_words(motion)) / max(1, len(_content_words(motion)))
        return min(0.95, 0.2 + 1.5 * share)
    if "cite evidence" in q:
        return 0.9 if _FIGURES.search(passage) else 0.1
    if "clearly written" in q:
        return max(0.05, 0.95 - 2.5 * _garbled(passage))
    if "make this point" in q or "make point" in q:
        # the point's own words, not the motion's: every passage on the topic shares those, and talking about the
        # topic is not answering a point
        point = _content_words(blocks.get(", made earlier by ", "")) - _content_words(motion)
        share = len(point & _content_words(passage)) / max(1, len(point))
        return min(0.95, 0.1 + 1.2 * share)
    return 0.5
