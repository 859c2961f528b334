"""What each dimension weighs and the verdict that follows: a measure (:class:`Measure`, registered once; a
dimension's YAML names it) gives a debater's strength from their tally, how it is said, and what its comments and
speech notes cite; a dimension's verdict is a softmax of those strengths, held only where the missing decisions
could not change it, read through the model's profile, and combined across dimensions. Whether a measure decides
anything on the model that runs is its profile's to say (:func:`blind_reason`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from debatrix.core.models import Debate, DebaterJudgment, Frozen, SpeechAnalysis, SpeechJudgment, Verdict
from debatrix.core.profile import JudgeProfile, shifted
from debatrix.core.registry import Registry

from .ledger import ID, Ledger, People, SpeechFlow, Tally, Thread, either_way, ledger
from .words import (answered_note, argued_note, clash_comment, clear_comment, cleared_note, engaged_note,
                    evidence_comment, evidenced_note, own_range, said_p, standing_comment, standing_words,
                    unknown_words)


# ---------------------------------------------------------------- whether a measure decides anything here

def blind_reason(measure: str, profile: JudgeProfile | None) -> str:
    """Why ``measure`` decides nothing on the model of ``profile`` ("": it is judged): a kind of decision it rests
    on is blind there. An unprofiled model is judged on every measure, on its own probabilities."""
    if profile is None:
        return ""
    m = MEASURES.get_or_raise(measure)
    if m.parts:
        return "" if any(not blind_reason(x, profile) for x in m.parts) else "no measure it averages is judged here"
    blind = [k for k in m.weighs if profile.blind(k)]
    return "; ".join(profile.blind_reason(k) for k in blind)


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
    not_judged: str = ""  # why it names no winner ("": judged)
    blind: bool = False  # not judged because its measure decides nothing (not a run's failure)
    # the log-odds added to the first speaker's probability to take out this reading's place lean (its profile's
    # place fit; None: none taken out), so that the probabilities as computed can be read back
    place_shift: float | None = None
    # why the winner it leans to is not named: its reading was measured on gold and not shown right above a coin
    # (or shown leaning to a speaking place) for this model, so it is too close to call ("": named, or never measured)
    unproven: str = ""

    @property
    def lean(self) -> str | None:
        """The debater its figures favour (None: not judged, or a tie at the top)."""
        if self.not_judged or not self.probabilities:
            return None
        best = max(self.probabilities.values())
        top = [d for d, p in self.probabilities.items() if p == best]
        return top[0] if len(top) == 1 else None

    @property
    def winner(self) -> str | None:
        """The winner it names: its lean, where its reading was not shown to fail on gold."""
        return None if self.unproven else self.lean


def softmax(values: dict[str, float]) -> dict[str, float]:
    top = max(values.values())
    e = {k: math.exp(v - top) for k, v in values.items()}
    total = sum(e.values())
    return {k: round(v / total, 4) for k, v in e.items()}


@dataclass(frozen=True)
class Measure:
    """What the flow weighs for a dimension, declared once: a dimension's YAML names it (``measure: source``) and
    nothing else keys on the dimension's name. ``what`` it weighs, a debater's ``strength`` (log scale) and how it
    is ``said``; ``weighs``: the kinds of decision it rests on (argues, evidence, answers: a dimension missing too
    many of them names no winner); ``value``: a speech's standing, 0 to 1, from its own decisions; ``note``: the
    decisions a speech's entry shows; ``comment``: what the ledger says of a debater with arguments (None: which of
    them stand); ``rows``: whether it reads the ledger's rows (language reads each debater's passages instead).
    ``parts``: a composite, the mean of those measures' verdicts. Whether a measure decides anything is no property
    of the measure but of the model that runs (:func:`blind_reason`, from its profile)."""

    name: str
    what: str
    weighs: tuple[str, ...] = ()
    strength: Callable[[Tally], float] = lambda t: 0.0
    said: Callable[[Ledger, Tally], str] = lambda led, t: ""
    value: Callable[[SpeechFlow], float | None] = lambda f: None
    note: Callable[[SpeechFlow, Debate], list[str]] = lambda f, d: []
    comment: Callable[[Ledger, Debate, str, list[Thread]], str] | None = None
    parts: tuple[str, ...] = ()
    rows: bool = True


#: the flow's measures by name (registered at the end of this module, once every piece they use is defined)
MEASURES: Registry[Measure] = Registry("flow measure")


def measure_of(led: Ledger) -> Measure:
    """The measure a ledger's dimension is read by (a result before 1.9 named none: the measure of its dimension's
    name where there is one, else the mean)."""
    return MEASURES.get_or_raise(led.measure or (led.dimension if led.dimension in MEASURES else "mean"))

MISSING_AT = 0.2  # a dimension with more than this share of the decisions it weighs missing names no winner


def missing_share(flows: Sequence[SpeechFlow], weighs: Sequence[str]) -> tuple[int, int]:
    """(missing, asked) decisions of the kinds ``weighs`` over the flow's speeches."""
    missing = sum(f.missed.get(kind, 0) for f in flows for kind in weighs)
    return missing, missing + sum(f.decided.get(kind, 0) for f in flows for kind in weighs)


def flow_verdict(led: Ledger, measure: str | None = None, flows: Sequence[SpeechFlow] = (), counted: bool = False,
                 sampled: bool = False, profile: JudgeProfile | None = None) -> FlowVerdict:
    """The verdict of ``led``'s dimension from its ledger, by its measure (``measure``, else the one the ledger
    names: :func:`measure_of`); a composite measure is the mean of its parts' probabilities. Not judged (no winner):
    a measure blind on the model (the ledger's ``blind``, or for a composite's parts :func:`blind_reason` with
    ``profile``), or more than :data:`MISSING_AT` of the decisions it weighs missing. ``counted``: some
    decisions are the model's answers taken as certain (the server gave no probabilities), so the figures are shares
    of answers, not probabilities; ``sampled``: some are shares of several sampled answers, estimates of them."""
    m = MEASURES.get_or_raise(measure) if measure else measure_of(led)
    dimension = led.dimension
    own = m.name == (led.measure or measure_of(led).name)
    blind = led.blind if own and led.blind else blind_reason(m.name, profile)
    if m.parts and not blind:
        parts = [flow_verdict(led.model_copy(update={"blind": ""}), part, flows, counted, sampled, profile)
                 for part in m.parts]
        return combined(dimension, [(1.0, v) for v in parts])
    if blind:
        return not_judged(dimension, blind, "this dimension names no winner and weighs nothing in the panel",
                          blind=True)
    missing, asked = missing_share(flows, m.weighs)
    if asked and missing > MISSING_AT * asked:
        return not_judged(dimension, f"{missing} of the {asked} decisions it rests on ({', '.join(m.weighs)}) are "
                                     "missing (the model's answers were none of the options)", "no winner is named")
    if not m.rows and not any(t.passages for t in led.tallies):
        return not_judged(dimension, f"no passage was asked the decisions it rests on ({', '.join(m.weighs)})",
                          "this dimension names no winner and weighs nothing in the panel", blind=True)
    values = {t.debater: round(m.strength(t), 4) for t in led.tallies}
    probs = softmax(values)
    unit = "share of answers" if counted else "P estimated from samples" if sampled else "P"
    reason = f"Weighed: {m.what}. " + "; ".join(f"{t.debater}: {m.said(led, t)} ({unit} {probs[t.debater]:.2f})"
                                                for t in led.tallies) + "."
    return FlowVerdict(dimension=dimension, strengths=values, probabilities=probs, reason=reason)


def held(v: FlowVerdict, others: Sequence[FlowVerdict], missing: str) -> FlowVerdict:
    """``v`` where its winner is the one it names with the missing decisions (``missing``, in words) answered either
    way (``others``: its verdict in each such case, :func:`either_way`), the range of its figure said; else not
    judged, naming the decisions the winner would rest on. A guessed decision never names a winner."""
    if v.not_judged:
        return v
    winners = {v.lean, *(o.lean for o in others)}
    if len(winners) > 1:
        named = sorted(w for w in winners if w is not None)
        could = " or ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)
        could += " or nobody (a tie)" if None in winners else ""
        return not_judged(v.dimension, f"the winner rests on missing decisions ({missing}): answered either way, it "
                                       f"could be {could}", "no winner is named")
    if v.lean is None:
        return v
    shares = [v.probabilities[v.lean], *(o.probabilities[v.lean] for o in others)]
    if max(shares) == min(shares):  # it does not rest on them (language does not read whether a passage argues)
        return v
    return v.model_copy(update={"reason": f"{v.reason} With the missing decisions ({missing}) answered either way "
                                          f"the winner is the same ({min(shares):.2f} to {max(shares):.2f})."})


def not_judged(dimension: str, why: str, so: str, blind: bool = False) -> FlowVerdict:
    """A verdict that names no winner, and why (``why`` starts lower-case: it follows "not judged: ")."""
    return FlowVerdict(dimension=dimension, strengths={}, probabilities={}, reason=f"{why[0].upper()}{why[1:]}; {so}.",
                       not_judged=why, blind=blind)


def combined(dimension: str, parts: Sequence[tuple[float, FlowVerdict]]) -> FlowVerdict:
    """The weighted mean of the judged dimensions' win probabilities (the panel's merge, computed): a dimension
    not judged weighs nothing (the others' weights renormalised); a dimension not judged for missing decisions
    leaves the merge not judged, since its weight would otherwise fall to the others unsaid."""
    lost = [v for _, v in parts if v.not_judged and not v.blind]
    if lost or not [v for _, v in parts if not v.not_judged]:
        # every part blind on this model: nothing failed, there is nothing it can decide (said as such, complete)
        return not_judged(dimension, "; ".join(f"{v.dimension} was not judged" for v in lost) if lost
                          else "no dimension it weighs is judged on this model (each says why)", "no winner is named",
                          blind=not lost)
    judged = [(w, v) for w, v in parts if not v.not_judged and w > 0]
    if not judged:  # judged, but none weighs anything on this model (its profile's readings): nothing to merge
        return not_judged(dimension, "none of this model's readings weighs: none was measured right above a coin on "
                                     "gold without a lean to a speaking place (each one's figure follows; the flow "
                                     "sheet shows who leads each dimension)",
                          "no winner is named", blind=True)
    total = sum(w for w, _ in judged)
    names = list(judged[0][1].probabilities)
    probs = {n: round(sum(w * v.probabilities[n] for w, v in judged) / total, 4) for n in names}
    reason = "Weighted mean of the judged dimensions' probabilities (" + ", ".join(
        f"{v.dimension} ×{w:g}" for w, v in judged) + "): " + "; ".join(f"{n} {p:.2f}" for n, p in probs.items()) + "."
    skipped = [v.dimension for _, v in parts if v.not_judged]
    if skipped:
        reason += f" Not weighed: {', '.join(skipped)} (not judged)."
    unweighed = [v.dimension for w, v in parts if not v.not_judged and w <= 0]
    if unweighed:
        reason += f" Weighing nothing on this model: {', '.join(unweighed)}."
    return FlowVerdict(dimension=dimension, strengths={n: round(math.log(max(p, 1e-9)), 4) for n, p in probs.items()},
                       probabilities=probs, reason=reason)


def weighed_by_readings(parts: Sequence[tuple[float, FlowVerdict]], profile: JudgeProfile | None,
                        mode: str = "flow") -> tuple[list[tuple[float, FlowVerdict]], str]:
    """The panel's parts weighed as the model's profile measured each reading right on gold (``mode/dimension``,
    pooled over its gold sources): a reading that carries (interval above 0.5, no lean to a speaking place beyond
    the gold's) weighs the log-odds of its share right, as an independent judge right that often would; one that
    does not carry, leans, or was never measured weighs nothing. A reading with a place fit comes with its place
    lean taken out (:func:`place_taken_out`), and its lean is judged as taken out, on the debates the fit never
    saw. Where the profile holds no reading with enough debates (or no profile), the parts keep their dimensions'
    weights (the stated default). Returns the parts and what was done, in words ("" where nothing changed)."""
    if profile is None:
        return list(parts), ""
    found = {v.dimension: profile.reading(f"{mode}/{v.dimension}") for _, v in parts if not v.not_judged}
    measured = {d: r for d, r in found.items() if r is not None and r.state != "not enough data"}
    if not measured:
        few = [f"{d} on {r.items} debates" for d, r in found.items() if r is not None]
        return list(parts), (f"its readings were measured on too few debates to weigh by ({', '.join(few)}): the "
                             "dimensions' own weights" if few else
                             "no reading of these dimensions was measured on gold (`debatrix profile --readings RUN` "
                             "records them): the dimensions' own weights")
    out, said = [], []
    for w, v in parts:
        r = measured.get(v.dimension)
        if v.not_judged:
            out.append((w, v))
        elif r is None:
            out.append((0.0, v))
            said.append(f"{v.dimension} not weighed (never measured on gold)")
        elif r.state != "carries" or r.lean:
            out.append((0.0, v))
            why = f"leans to the {r.lean} speaker" if r.state == "carries" else "not above a coin"
            said.append(f"{v.dimension} not weighed (right {r.right} on {r.items} debates of {r.gold}: {why})")
        else:
            weight = round(math.log(r.right.value / (1.0 - r.right.value)), 3)
            out.append((weight, v))
            said.append(f"{v.dimension} ×{weight:g} (right {r.right} on {r.items} debates of {r.gold}"
                        + ("; its place lean taken out" if v.place_shift is not None else "") + ")")
    deciding = [v.dimension for w, v in out if w > 0 and not v.not_judged]
    if len(deciding) == 1:  # the one reading that carries decides, and the reader is told so first
        said.insert(0, f"decided by the {deciding[0]} reading alone, the only one right above a coin on gold")
    return out, "; ".join(said)


def place_taken_out(v: FlowVerdict, profile: JudgeProfile | None, first: str, mode: str = "flow") -> FlowVerdict:
    """``v`` with its reading's place lean taken out, as the model's profile fitted it (``mode/dimension``'s
    place fit: a shift to the log-odds of ``first``, the debater who spoke first), said in its reason; ``v`` itself
    where there is nothing to take out (no profile or fit, not judged, or not two debaters) and where the fit failed
    its check (on the debates it never saw, the shifted reading still leans to a place beyond the gold's: such a
    reading is not weighed, :func:`weighed_by_readings`, and its verdict is shown as the model made it)."""
    r = profile.reading(f"{mode}/{v.dimension}") if profile is not None else None
    if (r is None or r.place is None or r.lean or v.not_judged or len(v.probabilities) != 2
            or first not in v.probabilities):
        return v
    other = next(n for n in v.probabilities if n != first)
    q = round(shifted(v.probabilities[first], r.place.shift), 4)
    probs = {first: q, other: round(1.0 - q, 4)}
    return v.model_copy(update={
        "probabilities": probs, "strengths": {n: round(math.log(max(p, 1e-9)), 4) for n, p in probs.items()},
        "place_shift": r.place.shift,
        "reason": f"{v.reason} The model's lean to a speaking place taken out: {r.place.shift:+.2f} to {first}'s "
                  f"log-odds, who spoke first, {first} {v.probabilities[first]:.2f} -> {q:.2f} (fitted on "
                  f"{r.place.fitted} debates of {r.gold}; on {r.place.checked} others it then named the first "
                  f"speaker in {r.place.first_named.value:.2f} of them, the gold in {r.place.gold_first:.2f})."})


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
    m = measure_of(led)
    if led.blind:
        return f"{led.dimension.capitalize()} is not judged: {led.blind}."
    if not m.rows:
        return m.comment(led, debate, debater, mine) if m.comment else ""
    if not mine:
        best = max(own, key=lambda p: getattr(marks.get(p.id), "argument", None) or 0.0)
        return (f"No passage of {debater} reads as an argument on the motion (the likeliest, {best.id}, at "
                f"{said_p(getattr(marks.get(best.id), 'argument', None) or 0.0, led.figures)}).")
    return (m.comment or standing_comment)(led, debate, debater, mine)


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _argues(flow: SpeechFlow) -> float | None:
    return _mean([m.argument for m in flow.marks if m.argument is not None])


def speech_value(flow: SpeechFlow, measure: str, profile: JudgeProfile | None = None) -> float | None:
    """A speech's standing by ``measure``, 0 to 1, from its own decisions (None: none to read, or the measure is
    blind on the model: :func:`blind_reason`)."""
    m = MEASURES.get_or_raise(measure)
    if blind_reason(measure, profile):
        return None
    if m.parts:
        return _mean([v for v in (speech_value(flow, x, profile) for x in m.parts) if v is not None])
    return m.value(flow)


def speech_note(flow: SpeechFlow, debate: Debate, measure: str, dimension: str | None = None,
                blind: str = "") -> str:
    """The flow's entry for one speech in a dimension read by ``measure``: the decisions it weighs, each passage by
    id (answered passages named with their speaker, from the table); ``blind``: why the measure decides nothing on
    this model."""
    m = MEASURES.get_or_raise(measure)
    if blind:
        return f"{(dimension or measure).capitalize()} is not judged: {blind}."
    parts = m.note(flow, debate)
    if flow.missing:
        parts.append(f"missing: {flow.missing}")
    return ". ".join(parts) + "."


# -------------------------------------------------------------------------------------------- the measures

def _register(m: Measure) -> None:
    MEASURES.add(m.name, m)


_register(Measure("argument", "arguments standing at the end, each by how likely it is one", ("argues", "answers"),
                  lambda t: math.log(EMPTY + t.standing),
                  lambda led, t: f"{standing_words(led, t.debater)}, weighed {t.standing:.1f} of {t.arguments:.1f}",
                  _argues, lambda f, d: argued_note(f, d) + answered_note(f, d)))
_register(Measure("source", "arguments backed by evidence", ("argues", "evidence"),
                  lambda t: math.log(EMPTY + t.evidence),
                  lambda led, t: f"{t.evidence:.1f} of {t.arguments:.1f} arguments backed by evidence",
                  lambda f: _mean([m.evidence for m in f.marks if m.evidence is not None]), evidenced_note,
                  evidence_comment))
_register(Measure("language", "how clearly their passages read", ("clear",),
                  lambda t: math.log(EMPTY / 10 + (t.clear / t.passages if t.passages else 0.0)),
                  lambda led, t: f"{t.clear:.1f} of {t.passages} passages read clearly",
                  lambda f: _mean([m.clear for m in f.marks if m.clear is not None]), cleared_note,
                  clear_comment, rows=False))
_register(Measure("clash", "the other side's arguments answered, and their own left standing", ("argues", "answers"),
                  lambda t: 2.0 * (t.engagement if t.engagement is not None else 0.5) + math.log(EMPTY + t.standing),
                  lambda led, t: (f"answered {t.engaged:.1f} of {t.engageable:.1f} arguments they could answer"
                             if t.engagement is not None else "nothing of the other side to answer")
                  + f", {t.standing:.1f} of their own standing",
                  lambda f: _mean([x.answers for x in f.lines]) if f.lines else _argues(f), engaged_note,
                  clash_comment))
_register(Measure("mean", "the mean of the judged measures", ("argues", "evidence", "clear", "answers"),
                  note=lambda f, d: argued_note(f, d) + answered_note(f, d),
                  parts=("argument", "source", "language", "clash")))

#: the measures that decide something of their own (not composites)
JUDGED = tuple(name for name, m in MEASURES.items() if not m.parts)


# ---------------------------------------------------------------- every verdict of a flow, computed (no call)

def proven(v: FlowVerdict, profile: JudgeProfile | None, mode: str = "flow") -> FlowVerdict:
    """``v`` with its winner left unnamed (:attr:`FlowVerdict.unproven`, said in its reason) where its reading
    (``mode/dimension``) was measured on enough gold debates for this model and not shown right above a coin, or
    shown leaning to a speaking place: its lean is still said, as too close to call. A reading never measured (or
    on too few debates) names its winner, its reason saying where the panel's weights come from."""
    r = profile.reading(f"{mode}/{v.dimension}") if profile is not None else None
    if v.not_judged or r is None or r.state == "not enough data" or (r.state == "carries" and not r.lean):
        return v
    why = f"leans to the {r.lean} speaker" if r.state == "carries" else "not above a coin"
    unproven = f"this reading was right {r.right} on {r.items} debates of {r.gold} for this model: {why}"
    return v.model_copy(update={"unproven": unproven, "reason": f"{v.reason} Too close to call: {unproven}."})


def _score(value: float) -> float:
    return round(1 + 9 * max(0.0, min(1.0, value)), 3)


def as_verdict(v: FlowVerdict, method: str, warnings: Sequence[str]) -> Verdict:
    """A computed verdict as the result keeps it (a dimension not judged: no winner, no probabilities; one too close
    to call: its lean, no winner)."""
    return Verdict(dimension=v.dimension, comment=v.reason, winner=v.winner, lean=v.lean, unproven=v.unproven,
                   probabilities=v.probabilities or None, method=method, not_judged=v.not_judged, blind=v.blind,
                   warnings=tuple(warnings), place_shift=v.place_shift)


@dataclass(frozen=True)
class Reckoning:
    """Every dimension's analyses (the flow's note on each speech), speech scores, debater scores and comments,
    verdict and ledger, and the panel's verdict: what the flow's verdict step writes, computed from the decisions."""

    analyses: list[SpeechAnalysis]
    speech_judgments: list[SpeechJudgment]
    debater_judgments: list[DebaterJudgment]
    verdicts: list[Verdict]
    ledgers: dict[str, Ledger]
    panel: Verdict | None


def reckon(debate: Debate, flows: Sequence[SpeechFlow], dims: Sequence[Any], profile: JudgeProfile | None,
           samples: int = 1, people: People | None = None, panel: str = "panel", words: bool = True) -> Reckoning:
    """Every dimension's analyses, scores and verdict computed from the flow (no call), and the panel's verdict
    (named ``panel``) as the weighted mean of the dimensions judged. Scores are on 1-10: a speech's from its own
    decisions, a debater's from their probability of winning the dimension; a dimension not judged has neither,
    and no winner. ``dims``: the dimensions (``name``, ``weight``, ``measure``); ``samples``: the run's
    ``--decision-samples``; ``people``: the decisions a person set, whose values ``flows`` hold
    (:func:`.ledger.corrected`); ``words``: False computes the verdicts alone, with no analysis, score or comment
    (what a review weighs, once a decision). The same figures give the same result every time: the judge's own
    step and a recompute after corrections both call this."""
    flows = sorted(flows, key=lambda f: f.index)
    analyses: list[SpeechAnalysis] = []
    speech_judgments: list[SpeechJudgment] = []
    debater_judgments: list[DebaterJudgment] = []
    verdicts: list[Verdict] = []
    ledgers, parts = {}, []
    counted = sum(f.counted for f in flows)
    decided = sum(sum(f.decided.values()) for f in flows)
    warnings = [f"speech {f.index + 1}: missing {f.missing}" for f in flows if f.missing]
    figures: list[str] = []  # what the figures are: said of a verdict that has some, not of one blind here
    if counted:  # the server gave no probabilities: each answer was taken as certain
        ignored = (f"; it answered once where --decision-samples asked {samples} answers (it ignores n)"
                   if samples > 1 else "")
        figures.append(f"{counted} of {decided} decisions are the model's answers taken as certain (the server "
                       f"gave no probabilities{ignored}): the figures are shares of answers, not probabilities")
    sampled = sum(f.sampled for f in flows)
    if sampled:
        figures.append(f"{sampled} of {decided} decisions are the options' shares among {samples} answers sampled "
                       "at temperature 1 (--decision-samples): estimates of the model's probabilities")
    if people:
        figures.append(f"{len(people)} decision{'s' if len(people) != 1 else ''} set by "
                       f"{', '.join(sorted({who for who, _ in people.values()}))}, counted as given")
    proposed = {f.proposed_by for f in flows if f.proposed_by.startswith("words (")}  # meaning was wanted
    warnings += [f"answers proposed by {how}" for how in sorted(proposed)]
    method = "none" if not decided else "argmax" if counted else "sampled" if sampled else "logprobs"
    judged = _reckoned(debate, flows, dims, profile, bool(counted), bool(sampled), people)
    worlds = [_reckoned(debate, w, dims, profile, bool(counted), bool(sampled), people)
              for w in either_way(debate, flows)]
    missing = unknown_words(flows)
    if worlds:
        judged = [(dim, measure, blind, led, held(verdict, [w[k][4] for w in worlds], missing))
                  for k, (dim, measure, blind, led, verdict) in enumerate(judged)]
    for dim, measure, blind, led, verdict in judged:
        ledgers[dim.name] = led
        parts.append((dim.weight, verdict))
        for f in flows if words else ():
            analyses.append(SpeechAnalysis(dimension=dim.name, index=f.index, speaker=f.speaker,
                                           analysis=speech_note(f, debate, measure, dim.name, blind)))
            value = None if verdict.not_judged else speech_value(f, measure, profile)
            if value is not None:
                score = _score(value)
                speech_judgments.append(SpeechJudgment(
                    dimension=dim.name, index=f.index, speaker=f.speaker, score=round(score), expected_score=score,
                    comment=f"{dim.name} {value:.2f} from its own decisions (0 to 1), {score:g} of 10"))
        if not verdict.not_judged and words:
            debater_judgments += [DebaterJudgment(dimension=dim.name, debater=d.name,
                                                  score=_score(verdict.probabilities[d.name]),
                                                  comment=debater_comment(led, flows, debate, d.name))
                                  for d in debate.debaters]
        verdicts.append(as_verdict(verdict, "none" if verdict.blind else method,
                                   warnings + ([] if verdict.blind else figures)))
    merged_verdict = None
    if parts:
        merged = _merged(panel, parts, profile)
        if worlds:  # the panel too names a winner only where it holds with the missing decisions either way
            merged = held(merged, [_merged(panel, [(dim.weight, w[k][4]) for k, (dim, *_) in enumerate(judged)],
                                           profile) for w in worlds], missing)
        if people and merged.unproven:  # how far the reading carries was measured on the model's decisions alone
            merged = merged.model_copy(update={"reason": (
                f"{merged.reason} That reading was measured on the model's own decisions; {len(people)} of these "
                "were set by a person, which no measurement covers.")})
        merged_verdict = as_verdict(merged, method, warnings + figures)
    return Reckoning(analyses, speech_judgments, debater_judgments, verdicts, ledgers, merged_verdict)


def _reckoned(debate: Debate, flows: Sequence[SpeechFlow], dims: Sequence[Any], profile: JudgeProfile | None,
              counted: bool, sampled: bool, people: People | None = None
              ) -> list[tuple[Any, str, str, Ledger, FlowVerdict]]:
    """Each dimension's (dimension, measure, blind reason, ledger, verdict) from ``flows``: computed, no call."""
    read = ledger(debate, flows, "flow", profile, people)  # one reading: each dimension weighs its own part of it
    out = []
    for dim in dims:
        measure = dim.measure or "mean"  # resolve_dimensions refuses a flow run's dimension without one
        blind = blind_reason(measure, profile)
        led = read.model_copy(update={"dimension": dim.name, "measure": measure, "blind": blind})
        verdict = proven(place_taken_out(flow_verdict(led, measure, flows, counted, sampled, profile), profile,
                                         debate.speeches[0].speaker), profile)
        out.append((dim, measure, blind, led, verdict))
    return out


def _merged(panel: str, parts: list[tuple[float, FlowVerdict]], profile: JudgeProfile | None) -> FlowVerdict:
    """The panel's verdict: the judged dimensions merged by the weights the profile's readings give them; where
    none of them weighs (none was shown right above a coin on gold), merged by the dimensions' own weights and
    said as a lean, too close to call."""
    weighed, how = weighed_by_readings(parts, profile)
    merged = combined(panel, weighed)
    judged = [(w, v) for w, v in parts if not v.not_judged and w > 0]
    if merged.blind and judged and all(w <= 0 for w, v in weighed if not v.not_judged):
        lean = combined(panel, judged)
        why = f"none of this model's readings was shown right above a coin on gold: {how}"
        return lean.model_copy(update={"unproven": why, "reason": (
            f"{lean.reason} Too close to call: {why}; the lean is the dimensions merged by their own weights.")})
    if how:  # the weights are the profile's readings, said in the reason
        merged = merged.model_copy(update={"reason": f"{merged.reason} Weights from the judge profile: {how}.",
                                           "not_judged": merged.not_judged and f"{merged.not_judged}: {how}"})
    return merged
