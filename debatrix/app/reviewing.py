"""What a person reads before correcting a flow judgment, on the HTML report and on the page: the decisions to
review first, the corrections a result holds beside the model's own figures, and the page's record of a judgment
under review (as the model left it, and as corrected)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from debatrix.core.errors import ConfigurationError
from debatrix.core.flow import decision_words, said_p
from debatrix.core.results import JudgeResult
from debatrix.core.review import correctable, corrections_file, decisions_of, review_first, value_words


def review_lines(result: JudgeResult, most: int = 5) -> tuple[list[Any], list[dict[str, Any]]]:
    """What a person reads before correcting a flow judgment: the decisions to review first
    (:func:`debatrix.core.review.review_first`) and the corrections it holds, each in words beside the model's own
    figure (both empty for a judgment that cannot be corrected: a prose mode's, or one the run stopped early)."""
    try:
        correctable(result)
    except ConfigurationError:
        return [], []
    model = dict(decisions_of(result.flow))
    figures = result.flow_ledger.figures if result.flow_ledger is not None else "P"
    kept = [{"asks": decision_words(c.decision), "value": value_words(c.value), "by": c.by,
             "at": c.at.strftime("%Y-%m-%d %H:%M UTC") if c.at else "", "note": c.note,
             "model": "never asked" if model.get(c.decision) is None else said_p(model[c.decision], figures)}
            for c in result.corrections]
    items = review_first(result, most=most) if result.general is not None else []
    return items, kept


@dataclass
class Reviewed:
    """A flow judgment a person reviews on the page: as the model judged it (``original``, its own corrections
    included: the starting point) and as it now stands (``result``, recomputed with the page's corrections)."""

    id: str
    original: JudgeResult
    result: JudgeResult = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.result is None:
            self.result = self.original


class ReviewRequest(BaseModel):
    """The corrections the page holds, all of them: each request replaces what the result carried."""

    model_config = ConfigDict(extra="forbid")
    by: str = Field(default="", max_length=80)
    corrections: list[dict[str, Any]] = Field(default_factory=list, max_length=5000)


def reviewable(raw: bytes) -> JudgeResult:
    """A result a person uploaded, read and checked as ``debatrix review`` reads one: one line where it is not a
    result, or not one a person can correct."""
    try:
        result = JudgeResult.model_validate_json(raw)
    except ValueError as e:
        raise ConfigurationError(f"not a debatrix result ({str(e).splitlines()[0]})") from None
    correctable(result)
    if result.general is None:
        raise ConfigurationError(f"{result.debate_id}: no verdict to review (a single speech, or a run that stopped)")
    return result


def review_view(reviewed: Reviewed | None, most: int = 5, first: bool = True) -> dict[str, Any]:
    """What the page shows a person reviewing a flow judgment: where to send corrections, the decisions to review
    first (each with what the verdict would become either way) and the corrections kept, each in the file's
    format (what the page sends back) with what the model had said."""
    if reviewed is None:
        return {}
    # ``first``: with the decisions to review first; without them (a recompute answers at once, and the page asks
    # for them apart: on a long debate they take every decision recomputed twice)
    result = reviewed.result
    items = review_first(result, most=most) if first else []
    kept = corrections_file(result.corrections)["corrections"]
    return {"review_id": reviewed.id, **({} if not first else {"review_first": [
        {"decision": list(i.decision), "sentence": i.sentence, "asks": i.asks, "said": i.said} for i in items]}),
        "corrections": kept, "called": result.general.verdict.called if result.general and result.general.verdict
        else "not judged"}
