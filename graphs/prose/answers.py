"""The answers the judge asks the model for, as pydantic schemas (the gateway asks for any schema; these are the
debate's): a speech's score, an analysis with its score, the winner among the choices, every debater's score and the
winner. Winner and decision schemas are built per distinct list of names and cached."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, create_model

from debatrix.core.errors import IncompleteJudgment, StructuredOutputError, VerdictParseError


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # what an answer that cannot be read (even after one repair) raises
    parse_error: ClassVar[type[IncompleteJudgment]] = StructuredOutputError
    # the answer's text as the model wrote it (set by the gateway): what a conversation asking the model to answer
    # again shows it of its first answer, in the form it is asked to answer in
    _raw: str = PrivateAttr(default="")

    @property
    def written(self) -> str:
        return self._raw or json.dumps(self.model_dump(mode="json"), ensure_ascii=False, indent=2)


class ScoreAnswer(_Answer):
    score: int = Field(ge=1, le=10, description="integer score from 1 to 10")


class _Verdict(_Answer):
    """An answer naming a winner: one that names no debater is a :class:`VerdictParseError`."""

    parse_error: ClassVar[type[IncompleteJudgment]] = VerdictParseError


def winner_answer(choices: list[str] | tuple[str, ...], with_comment: bool = False) -> type[_Answer]:
    """A schema whose only valid winners are ``choices`` (debater names, plus ``tie`` where allowed); one class per
    distinct list of choices (building a pydantic model is not free, and the same debate asks many times)."""
    return _winner_answer(tuple(choices), with_comment)


@lru_cache(maxsize=256)
def _winner_answer(choices: tuple[str, ...], with_comment: bool) -> type[_Answer]:
    lit = Literal[choices]  # type: ignore[valid-type]
    fields: dict[str, Any] = {}
    if with_comment:
        fields["comment"] = (str, Field(min_length=1))
    fields["winner"] = (lit, Field(description="one of: " + ", ".join(choices)))
    return create_model("CommentWinnerAnswer" if with_comment else "WinnerAnswer", __base__=_Verdict, **fields)


class _Decision(_Verdict):
    """Every debater's score (one field per debater, named by the debater) and the winner."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    debater_names: ClassVar[tuple[str, ...]] = ()

    def scores(self) -> dict[str, int]:
        return {name: getattr(self, f"s{i}") for i, name in enumerate(self.debater_names)}


def decision_answer(names: list[str] | tuple[str, ...], choices: list[str] | tuple[str, ...],
                    with_comment: bool = False) -> type[_Decision]:
    """A schema with an integer score 1-10 under every debater's name and a winner among ``choices``; cached per
    distinct debate shape (as :func:`winner_answer`)."""
    return _decision_answer(tuple(names), tuple(choices), with_comment)


@lru_cache(maxsize=256)
def _decision_answer(names: tuple[str, ...], choices: tuple[str, ...], with_comment: bool) -> type[_Decision]:
    fields: dict[str, Any] = {}
    if with_comment:
        fields["comment"] = (str, Field(min_length=1))
    for i, name in enumerate(names):
        fields[f"s{i}"] = (int, Field(ge=1, le=10, alias=name, description=f"score of {name}, 1 to 10"))
    fields["winner"] = (Literal[choices], Field(description="one of: " + ", ".join(choices)))  # type: ignore[valid-type]
    model = create_model("CommentDecisionAnswer" if with_comment else "DecisionAnswer", __base__=_Decision, **fields)
    model.debater_names = names
    return model


# ------------------------------------------------------------------------------------------- the speech analysis
# A small model asked for a free-text analysis after its earlier analyses repeats them with the name swapped. The
# analysis is therefore extractive first: it picks the passages of *this* speech that matter (the schema allows
# only the speech's own passages, so every quotation is the speaker's words), says in one sentence what each shows,
# starting with the speaker's name (so the speaker is the subject), and what the speech answers from earlier ones.


def analysis_points(words: int) -> int:
    """Passages an analysis of about ``words`` words quotes and assesses."""
    return 2 if words < 120 else 3


def note_chars(words: int) -> int:
    """Characters of one note (a point's assessment, or what the speech answers) in an analysis of ``words``
    words (the quotations come on top: the notes carry the words asked, at ~6 characters a word, with room
    for a sentence to end before the grammar's hard stop)."""
    return max(100, words * 9 // (analysis_points(words) + 1))


def analysis_answer_tokens(words: int) -> int:
    """Room for an analysis answer: the JSON frame, the quotations (up to 18 words each) and the notes."""
    points = analysis_points(words)
    return 40 + points * 38 + (points + 1) * note_chars(words) // 3


class _AnalysisAnswer(_Answer):
    """Every analysis schema's reading: the analysis as the text the later steps read."""

    speaker: ClassVar[str] = ""
    note_limit: ClassVar[int] = 0
    passages: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def grammar_schema(cls, js: dict[str, Any]) -> dict[str, Any]:
        """The JSON schema as sent to a server that enforces it as a grammar (llama.cpp, ``schema_length_limits``):
        the notes get their length limit, in a pattern the grammar can follow (the speaker's name and a space,
        then no quote marks or backslashes, which JSON would have to escape), and a quotation must be one of the
        speech's passages. Only a grammar gets the passages: a model that reads its schema (tools, or a schema
        written into the prompt) would read speech text outside the data fence; there quotations are checked in
        code (:func:`debatrix.graphs.finish.quote_found`)."""
        body = rf'^{re.escape(cls.speaker)} [^"\\]{{8,{cls.note_limit}}}$'
        point = js.get("$defs", {}).get("AnalysisPoint", {})
        if cls.passages and "quote" in point.get("properties", {}):
            point["properties"]["quote"] = {"type": "string", "enum": list(cls.passages)}
        for holder in (point, js):
            for key in ("note", "answers"):
                if key in holder.get("properties", {}):
                    holder["properties"][key] = {"type": "string", "pattern": body}
        return js

    def text(self) -> tuple[str, str, bool]:
        """(the analysis, its memo: the notes without the quotations, whether a note was cut at its length
        limit)."""
        cut = False
        parts: list[tuple[str, str]] = []
        quoted: set[str] = set()
        for p in self.points:  # type: ignore[attr-defined]
            if p.quote in quoted:  # the same passage picked twice (a grammar cannot forbid it): said once
                continue
            quoted.add(p.quote)
            note, c = _whole(p.note.strip(), self.note_limit) if p.note.strip() else ("", False)
            cut |= c
            parts.append((f'"{p.quote}" ' if note else f'"{p.quote}"', note))
        answers = getattr(self, "answers", None)
        if answers and answers.strip():
            note, c = _whole(answers.strip(), self.note_limit)
            cut |= c
            parts.append(("", note))
        return " ".join(q + n for q, n in parts), " ".join(n for _, n in parts if n), cut


# Words no sentence ends on: a note that stops on one was broken off by the model ("which is a strong and.", the
# demo's language note; "to connect the argument to the.", on the text benchmark)
_DANGLING = frozenset("a an the and or but nor of to with for from by in on at as which that who whose is are was "
                      "were its their his her".split())


def _whole(note: str, limit: int) -> tuple[str, bool]:
    """A note the grammar stopped at its length limit, cut back to its last sentence end (or word, marked "…"); one
    the model broke off on a word no sentence ends on, cut back to its last clause (or marked "…") the same way."""
    if not limit or len(note) < limit - 1:
        body = note.rstrip(" .!?")
        last = body.rsplit(" ", 1)[-1].lower()
        if last not in _DANGLING or " " not in body:
            return (note if note.endswith((".", "!", "?")) else f"{note}."), False
        clause = max(body.rfind(", "), body.rfind("; "))
        if clause >= len(body) // 2:
            return body[:clause] + ".", False
        while body.rsplit(" ", 1)[-1].lower() in _DANGLING and " " in body:
            body = body.rsplit(" ", 1)[0].rstrip(",;:")
        return body + " …", False
    end = max(note.rfind(". "), note.rfind("! "), note.rfind("? "))
    if end >= limit // 2:
        return note[:end + 1], True
    return note.rsplit(" ", 1)[0].rstrip(",;:") + " …", True


def analysis_answer(passages: tuple[str, ...], speaker: str, first: bool, words: int,
                    with_score: bool = False) -> type[_AnalysisAnswer]:
    """The schema of one speech's analysis: ``points`` (a ``quote``, one of ``passages`` where a grammar enforces
    the schema, and a ``note`` that starts with the speaker's name), ``answers`` after the first speech, and the speech's ``score`` where asked."""
    return _analysis_answer(passages, speaker, first, words, with_score)


@lru_cache(maxsize=256)
def _analysis_answer(passages: tuple[str, ...], speaker: str, first: bool, words: int,
                     with_score: bool) -> type[_AnalysisAnswer]:
    limit = note_chars(words)
    lead = rf"^{re.escape(speaker)}\s"
    point = create_model("AnalysisPoint", __config__=ConfigDict(extra="forbid"),
                         quote=(str, Field(min_length=3, description="a passage of the speech, word for word")),
                         note=(str, Field(min_length=len(speaker) + 2, pattern=lead)))
    fields: dict[str, Any] = {"points": (list[point], Field(min_length=1, max_length=analysis_points(words)))}  # type: ignore[valid-type]
    if not first:
        fields["answers"] = (str, Field(min_length=len(speaker) + 2, pattern=lead))
    if with_score:
        fields["score"] = (int, Field(ge=1, le=10, description="integer score from 1 to 10"))
    model = create_model("SpeechAnalysisAnswer", __base__=_AnalysisAnswer, **fields)
    model.speaker, model.note_limit, model.passages = speaker, limit, passages
    return model


