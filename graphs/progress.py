"""Progress: each finished step of the judge, as its node emits it into LangGraph's ``custom`` stream
(``graph.astream(..., stream_mode="custom", subgraphs=True)``: a dict with ``"debatrix": "progress"`` and the
fields of :class:`ProgressEvent`). The CLI's progress bar, the web page and ``ajudge_debate(on_event=...)`` read
the same events an agent builder's own stream shows."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from langgraph.config import get_stream_writer

from debatrix.core.flow import flow_line


@dataclass(frozen=True)
class ProgressEvent:
    """One finished step of the judge, as its node emits it (a ``custom`` stream event)."""

    node: str
    dimension: str | None
    index: int | None  # speech index (0-based) where the step concerns one speech
    detail: str
    # what the step wrote, for displays that show the judgment as it grows (the web page's matrix)
    kind: str = ""  # analysis (with its score when scored in it), speech_score, debater_score, winner, judgment,
    # failure, calls
    text: str | None = None  # the analysis, comment or judgment
    score: float | None = None  # the speech's or the debater's score (expected where available)
    debater: str | None = None
    winner: str | None = None  # a winner decision's winner (None with kind "winner": a tie, or not judged)
    not_judged: str = ""  # why a winner decision names no winner although it was made ("": judged)
    calls: int = 0  # the LLM requests the step made, and the tokens they read and wrote
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def of(cls, payload: dict[str, Any]) -> ProgressEvent:
        """The event a ``custom`` stream chunk carries (:func:`emit`'s payload)."""
        return cls(**{f.name: payload[f.name] for f in dataclasses.fields(cls) if f.name in payload})


_REPORTED = {"analyze_speech", "score_speech", "judge_debate", "decide_debate", "panel_comment", "panel_decide",
             "prepare", "flow_speech", "flow_verdicts"}


def progress_event(node: str, update: Any) -> ProgressEvent | None:
    """What a finished step wrote, for a display (None: a step no display shows, or one that wrote nothing)."""
    if not isinstance(update, dict) or node not in _REPORTED:  # e.g. a column's whole output
        return None
    records = update.get("calls") or []
    usage = {"calls": len(records), "prompt_tokens": sum(c.prompt_tokens for c in records),
             "completion_tokens": sum(c.completion_tokens for c in records)}
    if update.get("flows"):  # a speech read into the flow: its entry, as the analysis of that step
        f = update["flows"][-1]
        argued = sum(1 for m in f.marks if (m.argument or 0) >= 0.5)
        return ProgressEvent(node=node, dimension="flow", index=f.index, kind="analysis", text=flow_line(f),
                             detail=f"read speech {f.index + 1} ({f.speaker}): {argued} of {len(f.marks)} passages "
                                    f"argue, {len(f.lines)} earlier points asked about"
                                    + (f"; missing {f.missing}" if f.missing else ""), **usage)
    for key in ("panel", "winner_decisions", "analyses", "speech_judgments", "debater_judgments", "debate_analyses",
                "panel_comments"):
        items = [update["panel"]] if key == "panel" and update.get("panel") is not None else update.get(key)
        if items and key == "panel":  # the panel's verdict, shown as a winner decision of the general row
            key = "winner_decisions"
        if items:
            item = items[-1]
            index = getattr(item, "index", None)
            detail = {
                "analyses": lambda x: f"analysed speech {x.index + 1} ({x.speaker})" + (
                    f", scored {update['speech_judgments'][-1].score}" if update.get("speech_judgments") else ""),
                "speech_judgments": lambda x: f"speech {x.index + 1} ({x.speaker}) scored {x.score}",
                "debater_judgments": lambda x: f"{x.debater} scored {x.score:g}",
                "winner_decisions": lambda x: "not judged" if x.not_judged else f"winner: {x.winner or 'tie'}",
                "debate_analyses": lambda x: "debate judged",
                "panel_comments": lambda x: "the panel commented",
            }[key](item)
            # the panel's items are filed under its own key; shown, its verdict is the general one
            dimension = "general" if node.startswith("panel") else item.dimension
            return ProgressEvent(node=node, dimension=dimension, index=index, detail=detail,
                                 **_written(key, item, update), **usage)
    if update.get("failures"):
        return ProgressEvent(node=node, dimension=None, index=None, detail=f"failed: {update['failures'][0]}",
                             kind="failure", text=update["failures"][0], **usage)
    if records:  # a step that wrote nothing shown above still made calls: they are counted
        return ProgressEvent(node=node, dimension=None, index=None, detail=f"{node} done", kind="calls", **usage)
    return None


def _written(key: str, item: Any, update: dict[str, Any]) -> dict[str, Any]:
    if key == "analyses":  # with the speech's score when it came in the analysis's answer
        scored = update.get("speech_judgments")
        return {"kind": "analysis", "text": item.analysis,
                "score": (scored[-1].expected_score or scored[-1].score) if scored else None}
    if key == "speech_judgments":  # with merge_score_call the comment is the analysis
        return {"kind": "speech_score", "text": item.comment, "score": item.expected_score or item.score}
    if key == "debater_judgments":
        return {"kind": "debater_score", "text": item.comment, "score": item.score, "debater": item.debater}
    if key == "winner_decisions":
        return {"kind": "winner", "text": item.comment, "winner": item.winner, "not_judged": item.not_judged}
    return {"kind": "judgment", "text": item.comment}


def emit(node: str, update: Any) -> None:
    """Write the step's progress event to the run's ``custom`` stream (nothing where the step shows nothing)."""
    event = progress_event(node, update)
    if event is not None:
        get_stream_writer()({"debatrix": "progress", **event.as_dict()})
