"""A person in the loop: the flow's decisions are what a person corrects, one cell or mark at a time, and the
sheet, the scores, every verdict and every sentence follow from the model's decisions and the person's, recomputed
here without a model call (:func:`recompute`); which decisions a person should look at first is computed too
(:func:`review_first`: how far the verdict would move were each answered the other way, weighed by how likely that
is, as the model's profile reads its P).

A correction names one decision and the person's value (:class:`debatrix.core.flow.Correction`); a file of them
(YAML or JSON, :func:`read_corrections`) is checked against the result it corrects as a debate file is checked,
each problem in one line naming the entry::

    by: Coach Lee                  # who made them (an entry may name its own)
    corrections:
      - passage: S2.1              # the passage the decision is about
        kind: answers              # argues | evidence | clear | answers
        row: S1.1                  # for an answer: the earlier point it answers
        value: partly              # yes | no | partly (0.35) | a probability from 0 to 1
        note: attacks the trials' sample, not the staffing point

A result keeps its corrections beside the model's decisions (``JudgeResult.corrections``; ``JudgeResult.flow`` is
never changed), so a corrected result can be corrected again, or measured against (``debatrix profile
--corrections``)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from debatrix.core.errors import ConfigurationError, InvalidDebateError
from debatrix.core.flow import (KINDS, MARK_FIELDS, Correction, Reckoning, SpeechFlow, corrected, decision_words,
                                figures_of, places, reading, reckon, said_p, unsure)
from debatrix.core.loader import strict_yaml
from debatrix.core.models import Debate, DebateFormat
from debatrix.core.modes import MODES
from debatrix.core.probabilities import calibration_for
from debatrix.core.profile import JudgeProfile, odds_factor
from debatrix.core.results import (JudgeResult, Status, dimension_result, flow_checks, general_result,
                                   missing_parts)

#: a correction file's size at most (thousands of corrections: far more than any debate has decisions)
MAX_CORRECTIONS_BYTES = 1 << 20
#: what "partly" sets: an answer a coach flows as contested, between the sheet's "partly answered" bounds
PARTLY = 0.35
VALUES = {"yes": 1.0, "no": 0.0, "partly": PARTLY, "true": 1.0, "false": 0.0}


class CorrectionError(ConfigurationError):
    """A correction that cannot apply to the result it names (an unknown passage or kind, an answer to a point
    spoken later or by the same side), or a result that cannot be corrected: one line naming what."""


class DimensionSpec(NamedTuple):
    """What a recompute needs of a dimension: its name, weight, tie rules and flow measure (from the result)."""

    name: str
    weight: float
    allow_tie: bool
    tie_margin: float
    measure: str | None


# ------------------------------------------------------------------------------------- the result's debate

def debate_of(result: JudgeResult) -> Debate:
    """The debate a result judged, rebuilt from what it keeps (its speeches, debaters and rounds): the passage
    table its corrections are checked against and its verdicts recomputed on. A result before 1.16 kept no
    debaters: refused, saying so."""
    if not result.debaters:
        raise CorrectionError(f"{result.debate_id}: this result (schema {result.schema_version}) does not keep its "
                              "debaters, so it cannot be recomputed: judge the debate again")
    return Debate(id=result.debate_id, motion=result.motion, format=result.format, debaters=result.debaters,
                  speeches=result.speeches, simultaneous=result.simultaneous)


def correctable(result: JudgeResult) -> None:
    """Refuse, in one line, a result whose verdicts cannot be recomputed from its decisions."""
    mode = MODES.get(result.mode)
    if mode is None or not mode.reads_flow:
        raise CorrectionError(f"{result.debate_id}: judged in the {result.mode} mode, whose verdicts are the model's "
                              "prose, not decisions a person can correct: judge it with --mode flow")
    if not result.flow:
        raise CorrectionError(f"{result.debate_id}: the flow holds no decision (the run stopped before its first "
                              "answer): nothing to correct")
    debate_of(result)


def dimensions_of(result: JudgeResult) -> list[DimensionSpec]:
    return [DimensionSpec(d.name, d.weight, d.allow_tie, d.tie_margin, d.ledger.measure if d.ledger else None)
            for d in result.dimensions]


# ------------------------------------------------------------------------------------------ corrections

class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    passage: str
    kind: str
    row: str | None = None
    value: float | bool | str
    by: str | None = Field(default=None, max_length=80)
    at: datetime | None = None
    note: str = Field(default="", max_length=2000)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")
    by: str | None = Field(default=None, max_length=80)
    corrections: list[_Entry]


def value_words(value: float) -> str:
    """A person's value as they would have written it: "yes", "no", "partly", else the probability."""
    return next((word for word, v in VALUES.items() if v == value and word in ("yes", "no", "partly")), f"{value:g}")


def _value_of(raw: float | bool | str, where: str) -> float:
    if isinstance(raw, bool):
        return float(raw)
    if isinstance(raw, str):
        said = raw.strip().lower()
        if said in ("?", ""):  # a template's entry nobody filled in: never applied as a guess
            raise CorrectionError(f"{where}: value not set: fill it in (yes, no, partly or a probability from 0 "
                                  "to 1), or delete the entry to leave the decision to the model")
        if said in VALUES:
            return VALUES[said]
        try:
            raw = float(said)
        except ValueError:
            raise CorrectionError(f"{where}: value {raw!r}: give yes, no, partly or a probability from 0 to 1"
                                  ) from None
    if not (isinstance(raw, (int, float)) and math.isfinite(raw) and 0 <= raw <= 1):
        raise CorrectionError(f"{where}: value {raw!r}: a probability is from 0 to 1")
    return float(raw)


def check_decision(decision: tuple[str, ...], debate: Debate, read: Iterable[int], where: str) -> None:
    """Refuse a decision no flow of ``debate`` could make (``read``: the speeches the flow read, 0-based)."""
    kind, pid = decision[0], decision[1]
    if kind not in KINDS:
        raise CorrectionError(f"{where}: kind {kind!r}: the flow decides {', '.join(KINDS)}")
    index = debate.passage_index
    if pid not in index:
        raise CorrectionError(f"{where}: passage {pid!r} is not in the debate (its passages are "
                              f"{_span(debate)})")
    p = index[pid]
    if p.speech not in set(read):
        raise CorrectionError(f"{where}: speech {p.speech + 1} ({p.speaker}), where {pid} is, was never read: the "
                              "run stopped before it")
    if kind != "answers":
        if len(decision) > 2:
            raise CorrectionError(f"{where}: a decision of kind {kind} is about {pid} alone: give no row")
        return
    if len(decision) < 3 or not decision[2]:
        raise CorrectionError(f"{where}: an answer names the row it answers (row: S1.1)")
    row = decision[2]
    if row not in index:
        raise CorrectionError(f"{where}: row {row!r} is not in the debate (its passages are {_span(debate)})")
    r = index[row]
    if r.side is p.side:
        raise CorrectionError(f"{where}: {pid} ({p.speaker}) cannot answer {row} ({r.speaker}): the same side")
    if not debate.could_answer(p.speech, r.speech):
        raise CorrectionError(f"{where}: {pid} cannot answer {row}: speech {p.speech + 1} was not spoken after "
                              f"speech {r.speech + 1} (or was written without seeing it)")


def _span(debate: Debate) -> str:
    ids = [p.id for p in debate.passages]
    return f"{ids[0]} to {ids[-1]}" if len(ids) > 1 else ids[0]


def check_corrections(result: JudgeResult, corrections: Sequence[Correction], source: str = "corrections") -> None:
    """Refuse, in one line naming the entry, a correction that cannot apply to ``result``."""
    correctable(result)
    _check_all(corrections, debate_of(result), {f.index for f in result.flow}, source)


def read_corrections(path: Path, result: JudgeResult, by: str | None = None,
                     now: datetime | None = None) -> list[Correction]:
    """The corrections in the file at ``path`` (:mod:`this module's <debatrix.core.review>` format), checked
    against ``result``; ``by``: who made those that name nobody; ``now``: when, for those that give no time."""
    source = str(path)
    try:
        if not path.is_file():
            raise CorrectionError(f"{source}: " + ("no such file" if not path.exists() else "not a regular file"))
        if path.stat().st_size > MAX_CORRECTIONS_BYTES:
            raise CorrectionError(f"{source}: larger than {MAX_CORRECTIONS_BYTES >> 20} MB: not a file of corrections")
        data = strict_yaml(path.read_bytes(), source)
    except InvalidDebateError as e:
        raise CorrectionError(str(e).replace("\n", "; ")) from None
    except OSError as e:
        raise CorrectionError(f"{source}: cannot read it ({e.strerror or e})") from None
    correctable(result)
    return parse_corrections(data, debate_of(result), {f.index for f in result.flow}, source, by, now)


def parse_corrections(data: Any, debate: Debate, read: Iterable[int], source: str = "corrections",
                      by: str | None = None, now: datetime | None = None) -> list[Correction]:
    """Corrections from ``data`` as a file or a resumed graph gives them: ``{"by": ..., "corrections": [...]}``, or
    the list alone, each entry in the file's format (or a :class:`Correction`, or its dict), checked against
    ``debate`` (``read``: the speeches its flow read). None or an empty list: none."""
    if data is None:
        return []
    if isinstance(data, (list, tuple)):
        data = {"corrections": list(data)}
    if not isinstance(data, dict):
        raise CorrectionError(f"{source}: give a list of corrections, or a mapping with 'corrections' (and 'by')")
    entries = data.get("corrections")
    if isinstance(entries, (list, tuple)) and any(isinstance(e, Correction) or isinstance(e, dict) and "decision" in e
                                                  for e in entries):
        out = []
        for k, e in enumerate(entries):
            try:
                out.append(e if isinstance(e, Correction) else Correction.model_validate(e))
            except ValidationError as err:
                first = err.errors()[0]
                raise CorrectionError(f"{source}: corrections[{k}]: "
                                      f"{'.'.join(map(str, first['loc'])) or 'entry'}: {first['msg']}") from None
        _check_all(out, debate, read, source)
        return out
    try:
        parsed = _File.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "the file"
        raise CorrectionError(f"{source}: {where}: {first['msg']}") from None
    now = now or datetime.now(UTC)
    read = set(read)
    out = []
    for k, entry in enumerate(parsed.corrections):
        where = f"{source}: corrections[{k}]"
        who = entry.by or parsed.by or by
        if not who:
            raise CorrectionError(f"{where}: say who made it (by: NAME, in the entry or at the top of the file, or "
                                  "--by NAME)")
        decision = (entry.kind, entry.passage, *((entry.row,) if entry.row is not None else ()))
        check_decision(decision, debate, read, where)
        out.append(Correction(decision=decision, value=_value_of(entry.value, where), by=who, at=entry.at or now,
                              note=entry.note))
    return out


def _check_all(corrections: Sequence[Correction], debate: Debate, read: Iterable[int], source: str) -> None:
    read = set(read)
    for k, c in enumerate(corrections):
        check_decision(c.decision, debate, read, f"{source}: corrections[{k}]")


def corrections_file(corrections: Sequence[Correction]) -> dict[str, Any]:
    """Corrections in the file format :func:`read_corrections` reads (what the page and ``review`` write out)."""
    return {"corrections": [{"passage": c.decision[1], "kind": c.decision[0],
                             **({"row": c.decision[2]} if len(c.decision) > 2 else {}), "value": c.value, "by": c.by,
                             **({"at": c.at.isoformat()} if c.at else {}), **({"note": c.note} if c.note else {})}
                            for c in corrections]}


# ------------------------------------------------------------------------------------------ the recompute

class Judged(NamedTuple):
    """What the verdicts of a flow are computed from: the debate, the model's decisions (``flows``), the dimensions,
    the model's profile and the run's ``--decision-samples``."""

    debate: Debate
    flows: tuple[SpeechFlow, ...]
    dims: tuple[Any, ...]
    profile: JudgeProfile | None
    samples: int = 1

    def reckoning(self, corrections: Sequence[Correction] = (), words: bool = True) -> Reckoning:
        """Every verdict computed from the model's decisions and ``corrections`` (no call); ``words``: False, the
        verdicts alone (:func:`debatrix.core.flow.reckon`)."""
        flows, people = corrected(self.flows, corrections)
        return reckon(self.debate, flows, self.dims, self.profile, self.samples, people, words=words)

    @property
    def figures(self) -> str:
        """How the model's figures read ("P", "answers", "samples": :func:`debatrix.core.flow.figures_of`)."""
        return figures_of(self.flows)


def judged_of(result: JudgeResult) -> Judged:
    """What ``result``'s verdicts are computed from (refused in one line where they cannot be: a prose mode, a
    result that keeps no debaters)."""
    correctable(result)
    samples = int((result.settings.get("llm") or {}).get("decision_samples") or 1)
    return Judged(debate_of(result), tuple(result.flow), tuple(dimensions_of(result)), result.judge_profile, samples)


def recompute(result: JudgeResult, corrections: Sequence[Correction] | None = None) -> JudgeResult:
    """``result`` with its verdicts computed again from the model's decisions and ``corrections`` (its own where
    None; ``()`` takes every correction back): the ledger, every score, verdict and sentence, the panel, the
    checks and the status, as the judge computes them (:func:`debatrix.core.flow.reckon`), with no model call. The
    model's decisions (``flow``), its usage and its settings are kept as they were."""
    corrections = tuple(result.corrections if corrections is None else corrections)
    check_corrections(result, corrections)
    judged = judged_of(result)
    debate = judged.debate
    r = judged.reckoning(corrections)
    state: dict[str, Any] = {"debate": debate, "ledgers": r.ledgers, "panel": r.panel}
    for key, items in (("analyses", r.analyses), ("speech_judgments", r.speech_judgments),
                       ("debater_judgments", r.debater_judgments), ("winner_decisions", r.verdicts)):
        filed: dict[str, list[Any]] = {}
        for item in items:
            filed.setdefault(item.dimension, []).append(item)
        state[key] = filed
    mode = MODES[result.mode]
    llm = result.settings.get("llm") or {}
    cmap = calibration_for(llm.get("model"), mode.name, str(result.settings.get("order_layout_used") or "grouped"),
                           result.judge_profile)
    dims = [dimension_result(state, d, None if mode.panel else cmap) for d in dimensions_of(result)]
    general = None
    if debate.format is not DebateFormat.SINGLE:
        general = general_result(state, dims, cmap) if mode.panel else dims[0].model_copy(update={"name": "general"})
    failures = list(result.failures)
    if not failures:
        for d in dims:
            failures += missing_parts(d, debate, mode.per_speech)
        if mode.panel and general is not None:
            failures += missing_parts(general, debate, False)
    out = result.model_copy(update={
        "dimensions": tuple(dims), "general": general, "corrections": corrections,
        "status": Status.INCOMPLETE if failures else Status.COMPLETE,
        "incomplete_reason": "; ".join(dict.fromkeys(failures)) or None})
    return out.model_copy(update={"checks": flow_checks(out, debate)})


# ------------------------------------------------------------------------------------------ review first

class ReviewItem(BaseModel):
    """One decision a person could look at: what it asks, what the model said, and what the verdict would be were
    it answered yes and were it answered no (``value``: how far the verdict is expected to move, weighing each way
    by how likely it is, as the model's profile reads its P)."""

    model_config = ConfigDict(frozen=True)

    decision: tuple[str, ...]
    asks: str  # "whether S2.1 answers Ana's S1.1"
    said: str  # what the model said, in a coach's words
    model: float | None  # the model's P (None: its answer was none of the options)
    likely: float  # how likely yes is, as the profile reads the P (0.5 where the model gave none)
    now: dict[str, float]  # the verdict's probabilities now
    yes: dict[str, float]
    no: dict[str, float]
    value: float

    def lean(self, probs: dict[str, float]) -> str | None:
        if not probs:
            return None
        best = max(probs.values())
        top = [n for n, p in probs.items() if p == best]
        return top[0] if len(top) == 1 else None

    @property
    def flips(self) -> bool:
        """Whether answering it one of the two ways changes who the verdict leans to."""
        now = self.lean(self.now)
        return self.lean(self.yes) != now or self.lean(self.no) != now

    @property
    def sentence(self) -> str:
        """In a coach's words: "whether S2.1 answers Ana's S1.1 (the model could not tell, P 0.69): yes -> Ben 0.58,
        no -> Ana 0.53"."""
        def side(probs: dict[str, float]) -> str:
            who = self.lean(probs)
            return f"{who} {probs[who]:.2f}" if who else "even"
        return (f"{self.asks} ({self.said}): yes → {side(self.yes)}, no → {side(self.no)}"
                + (" (the lean turns)" if self.flips else ""))


def _verdict_probs(r: Reckoning) -> dict[str, float]:
    """The figures a review weighs: the panel's where it has some, else the first judged dimension's."""
    if r.panel is not None and r.panel.probabilities:
        return dict(r.panel.probabilities)
    return next((dict(v.probabilities) for v in r.verdicts if v.probabilities), {})


def decisions_of(flows: Sequence[SpeechFlow]) -> list[tuple[tuple[str, ...], float | None]]:
    """Every decision the flow holds (the model's answer; None where it is missing), in the order read."""
    out: list[tuple[tuple[str, ...], float | None]] = []
    for f in sorted(flows, key=lambda f: f.index):
        for m in f.marks:
            out += [((kind, m.id), getattr(m, field)) for kind, field in MARK_FIELDS.items()
                    if getattr(m, field) is not None]
        out += [(("answers", x.by or "", x.target), x.answers) for x in f.lines if x.by]
        out += [(d, None) for d in f.unknown]
    return out


def review_first(result: JudgeResult, most: int | None = 5, kinds: Sequence[str] | None = None) -> list[ReviewItem]:
    """The decisions of ``result`` a person should look at first (:func:`to_review`), its own corrections kept."""
    return to_review(judged_of(result), result.corrections, most, kinds)


def to_review(judged: Judged, corrections: Sequence[Correction] = (), most: int | None = 5,
              kinds: Sequence[str] | None = None) -> list[ReviewItem]:
    """The decisions a person should look at first, the likeliest to move the verdict first: for each decision the
    model made (and each it left missing) that no person set, the verdict recomputed with it answered yes and with
    it answered no, weighed by how likely each is (the model's P through its profile, :meth:`adjusted`; even odds
    for a missing one): the expected move of the verdict's figures. A decision that moves nothing is left out.
    ``most``: how many (None: all); ``kinds``: only these kinds of decision."""
    base = list(corrections)
    now = _verdict_probs(judged.reckoning(base, words=False))
    if not now:
        return []
    debate, profile = judged.debate, judged.profile
    set_already = {c.decision for c in base}
    place = places(debate)
    index = debate.passage_index
    items = []
    for decision, p in decisions_of(judged.flows):
        if decision in set_already or (kinds is not None and decision[0] not in kinds):
            continue
        speaker = index[decision[1]].speaker
        likely = 0.5 if p is None else p if profile is None else profile.adjusted(decision[0], p, place.get(speaker))
        moved = {}
        for value in (1.0, 0.0):
            fix = Correction(decision=decision, value=value, by="review")
            moved[value] = _verdict_probs(judged.reckoning([*base, fix], words=False))
        shift = {v: max((abs(moved[v].get(n, 0.0) - now.get(n, 0.0)) for n in now), default=0.0) for v in moved}
        value = likely * shift[1.0] + (1 - likely) * shift[0.0]
        if value <= 1e-4:
            continue
        items.append(ReviewItem(decision=decision, asks=_asks(decision, debate),
                                said=_model_said(decision, p, profile, place, debate, judged.figures),
                                model=p, likely=round(likely, 4), now=now, yes=moved[1.0], no=moved[0.0],
                                value=round(value, 4)))
    items.sort(key=lambda x: (-x.value, x.decision))
    return items if most is None else items[:most]


def _asks(decision: tuple[str, ...], debate: Debate) -> str:
    """A decision as a coach reads it, another speaker's passage named as theirs."""
    if decision[0] == "answers":
        row = debate.passage_index.get(decision[2])
        return f"whether {decision[1]} answers " + (f"{row.speaker}'s {decision[2]}" if row else decision[2])
    return decision_words(decision)


def _model_said(decision: tuple[str, ...], p: float | None, profile: Any, place: dict[str, int], debate: Debate,
          figures: str) -> str:
    """What the model said, in a coach's words: its answer's figure, and for an answer whether it told anything."""
    if p is None:
        return "its answer was none of the options"
    shown = said_p(p, figures)
    if decision[0] != "answers":
        return f"the model said {shown}"
    speaker = debate.passage_index[decision[1]].speaker
    factor = odds_factor(p) if profile is None else profile.factor("answers", p, place.get(speaker))
    if unsure(factor):
        return f"the model could not tell, {shown}"
    return f"the model said {'yes' if factor > 1 else 'no'}, {shown}"


def random_order(result: JudgeResult, seed: int) -> list[tuple[str, ...]]:
    """The decisions a person could review (those :func:`review_first` weighs), in a random order: what a coach
    without the judge's order would pick (the simulated coach's baseline)."""
    set_already = {c.decision for c in result.corrections}
    out = [d for d, _ in decisions_of(result.flow) if d not in set_already]
    random.Random(seed).shuffle(out)
    return out


def review_payload(judged: Judged, corrections: Sequence[Correction] = (), most: int = 5,
                   problem: str = "") -> dict[str, Any]:
    """What a judge paused for review shows a person (LangGraph's ``interrupt`` value; plain JSON): the verdict it
    leans to as the decisions stand, the sheet's rows in words, the decisions to review first, how to resume, and
    ``problem``: why the corrections last given were refused (each said in one line)."""
    r = judged.reckoning(corrections)
    led = r.ledgers.get("argument") or next(iter(r.ledgers.values()), None)
    rows = []
    for t in led.threads if led is not None else ():
        status, words = reading(t)
        rows.append({"row": t.id, "speaker": t.speaker, "status": status, "gist": t.gist,
                     "cells": [{"speech": c.speech + 1, "by": c.by, "word": w, "model": c.answered,
                                "counts": c.counted} for c, w in zip(t.cells, words)]})
    items = to_review(judged, corrections, most)
    return {
        "debatrix": "review", "debate": judged.debate.id,
        "verdict": r.panel.called if r.panel is not None else "not judged",
        "sheet": rows,
        "review_first": [{"decision": list(i.decision), "asks": i.asks, "said": i.said, "model": i.model,
                          "if_yes": i.yes, "if_no": i.no, "sentence": i.sentence} for i in items],
        "resume": ("Command(resume={'by': NAME, 'corrections': [{'passage': 'S2.1', 'kind': 'answers', 'row': "
                   "'S1.1', 'value': 'yes'}]}): each a passage, its kind (argues, evidence, clear, answers), for an "
                   "answer the row it answers, and yes, no, partly or a probability; an empty list keeps the model's "
                   "decisions"),
        "problem": problem,
    }
