"""Reading a score out of a model's answer two ways: the answer itself (argmax) and the probability-weighted score
over the allowed values, from the log probabilities the server returns for the token that carries the score."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from debatrix.core import probabilities as prob

_LABELLED = re.compile(r"(?:score|rating|answer)\s*(?:is|of)?\s*[:=]?\s*\**\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\d.])(\d+)(?![\d.])")


@dataclass(frozen=True)
class ScaleRating:
    argmax: int | None  # None: no allowed value found in the answer (a parse failure)
    weighted: float | None  # None: no log probabilities for the score token
    distribution: dict[int, float] | None = None

    @property
    def parsed(self) -> bool:
        return self.argmax is not None


def find_score(text: str, allowed: Sequence[int]) -> tuple[int, int] | None:
    """``(value, character offset)`` of the score in ``text``: the last labelled "Score: N", else the answer when it
    is only a number, else the last allowed number. ``None`` when there is none."""
    labelled = [m for m in _LABELLED.finditer(text) if _allowed(m.group(1), allowed)]
    if labelled:
        m = labelled[-1]
        return int(float(m.group(1))), m.start(1)
    numbers = [m for m in _NUMBER.finditer(text) if _allowed(m.group(1), allowed)]
    if numbers:
        return int(numbers[-1].group(1)), numbers[-1].start(1)
    return None


def _allowed(token: str, allowed: Sequence[int]) -> bool:
    try:
        value = float(token)
    except ValueError:
        return False
    return value.is_integer() and int(value) in allowed


def rating_from(text: str, logprobs: list[dict[str, Any]], allowed: Sequence[int]) -> ScaleRating:
    found = find_score(text, allowed)
    if found is None:
        return ScaleRating(None, None)
    value, offset = found
    dist = distribution_at(text, offset, logprobs, allowed)
    if dist is None:
        return ScaleRating(value, None)
    return ScaleRating(value, sum(k * p for k, p in dist.items()), dist)


def distribution_at(text: str, offset: int, logprobs: list[dict[str, Any]], allowed: Sequence[int]
                    ) -> dict[int, float] | None:
    """The allowed values' probabilities at the token that starts at ``offset`` of the (stripped) answer: the
    debate graph's reader (:func:`debatrix.core.probabilities.score_distribution`), offsets shifted for the strip."""
    if not logprobs:
        return None
    spelled, _ = prob.spelled(logprobs)
    return prob.score_distribution(logprobs, offset + len(spelled) - len(spelled.lstrip()), allowed)
