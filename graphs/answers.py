"""The answers the judge asks the model for, as pydantic schemas (the gateway asks for any schema; these are the
debate's): a speech's score, an analysis with its score, the winner among the choices, every debater's score and the
winner. Winner and decision schemas are built per distinct list of names and cached."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from debatrix.core.errors import IncompleteJudgment, StructuredOutputError, VerdictParseError


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # what an answer that cannot be read (even after one repair) raises
    parse_error: ClassVar[type[IncompleteJudgment]] = StructuredOutputError


class ScoreAnswer(_Answer):
    score: int = Field(ge=1, le=10, description="integer score from 1 to 10")


class CommentScoreAnswer(_Answer):
    comment: str = Field(min_length=1)
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
