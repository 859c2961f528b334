"""What the judge knows about the model it runs on: that model's **profile**, data measured on gold by ``debatrix
profile`` and kept in one versioned file, never code. The flow's mechanisms are the same for every model; which of
its decisions a model can make, how far its probabilities are from the gold's rates, and how far they lean to a
speaking place are figures of that model, read from here.

A profile holds, for each kind of decision the flow can ask (argues, evidence, clear, answers, and any added to
:data:`debatrix.core.flow.KINDS` later), how well the model's P separates labelled passages (ROC AUC with a 95%
interval resampled over debates), the same passages' P spoken first and second (its place lean), how much it prefers
longer passages, and a map from its P to the gold's rate fitted on part of the gold and checked on the rest. Each
decision reads one of three states (:attr:`DecisionProfile.state`): it **carries** (the interval lies above 0.5), it
is **blind** (enough items, and the interval reaches 0.5) or there is **not enough data** to say.

The shipped profiles of the embedded models live in ``debatrix/llm/profiles/`` (written by ``debatrix profile``);
a user's own is a file named by ``--profile``. A profile measured with other prompts, or for another model file, is
not used silently: :func:`resolve` says it is stale."""

from __future__ import annotations

import hashlib
import json
import math
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from debatrix.core.errors import ConfigurationError
from debatrix.core.models import Frozen
from debatrix.core.probabilities import CalibrationMap, PlacePrior

PROFILE_SCHEMA = "1"
#: fewer labelled items (or debates) than this and a decision's interval is not worth having: at 60% right, 150
#: items tell it from a coin with 80% power, and the interval is resampled over debates, so a handful will not do
MIN_ITEMS, MIN_DEBATES = 150, 20
#: the prompts a profile is measured with: a change to any of them makes the profile stale
PROMPT_FILES = ("system.j2", "debate_header.j2", "flow_passage.j2", "flow_argues.j2", "flow_evidence.j2",
                "flow_clear.j2", "flow_answer.j2", "flow_questions.j2")
State = Literal["carries", "blind", "not enough data"]


def _logit(p: float) -> float:
    q = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(q / (1 - q))


def odds_factor(q: float, usual: float = 0.5) -> float:
    """The odds of ``q`` over the odds of ``usual`` (both kept off 0 and 1): how far an answer moved from a usual
    one, as a Bayes factor."""
    return math.exp(_logit(q) - _logit(usual))


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


class Interval(Frozen):
    value: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.value:.2f} [{self.low:.2f}, {self.high:.2f}]"


class SourceShift(Frozen):
    """The place lean's shift on one gold source's passages alone (how far the sources agree)."""

    pairs: int
    shift: Interval


class PlaceLean(Frozen):
    """The same passages asked where their speaker speaks first and where second (the debate's speaking order
    swapped): the mean P each way, the share of passages whose answer (P above or below 0.5) flips, and the mean
    difference of the log-odds, first minus second, with its interval: the lean taken out of every P
    (:meth:`JudgeProfile.adjusted`)."""

    pairs: int
    first: float
    second: float
    flips: float
    shift: Interval  # over every pair, whatever its source: the one taken out
    by_source: dict[str, SourceShift] = Field(default_factory=dict)  # where pairs came from more than one source


class PMap(Frozen):
    """A map from the model's P (its place lean taken out) to the gold's rate: ``sigmoid(a · logit(p) + b)``,
    fitted on half the gold's debates and checked on the other half (Brier score of the raw P and of the mapped P
    there, ``checked`` items), then fitted on all of them."""

    a: float
    b: float
    fitted: int
    checked: int
    brier_raw: float
    brier_mapped: float

    def __call__(self, p: float) -> float:
        return _sigmoid(self.a * _logit(p) + self.b)


class DecisionProfile(Frozen):
    """One kind of decision as measured on one model: what was asked and against which gold."""

    kind: str
    question: str  # what the flow asks, in words ("does this passage back its point with evidence?")
    gold: str  # what the labels are and where they come from
    items: int  # labelled passages (or passage-point pairs) answered
    debates: int
    no_option: int = 0  # answers that were none of the options (missing)
    auc: Interval | None = None
    place: PlaceLean | None = None
    longer: float | None = None  # Spearman's rho of P and the passage's words within each gold class, averaged
    map: PMap | None = None
    # the share of the gold's items that are yes: what the mapped P of an answer that tells nothing about its item
    # comes to (a map fitted with an intercept averages to it); None: a profile written before it was recorded
    base_rate: float | None = None
    # when and at which commit this decision was measured ("": the profile's own date and commit): a decision kept
    # when others are measured again (``--kinds``) keeps its own, so no reason dates it by another's run
    measured: str = ""
    commit: str = ""

    @property
    def state(self) -> State:
        if self.auc is None or self.items < MIN_ITEMS or self.debates < MIN_DEBATES:
            return "not enough data"
        return "carries" if self.auc.low > 0.5 else "blind"

    def figures(self) -> str:
        """The figures behind the state, as the run says them: "ROC AUC 0.55 [0.48, 0.61] over 180 passages of
        24 debates"."""
        auc = f"ROC AUC {self.auc}" if self.auc else "no ROC AUC"
        return f"{auc} over {self.items} items of {self.debates} debates"


#: fewer decided debates than this and a reading's share right is not worth deciding on (a Wilson interval about
#: ±0.14 wide at 50 items)
MIN_READING_ITEMS = 50


class PlaceFit(Frozen):
    """A reading's place lean taken out: ``shift`` is added to the log-odds of its P(the first speaker wins),
    fitted on the debates of fold 0 (the smallest shift under which it names the first speaker as often as the gold
    does there: :func:`debatrix.benchmarks.readings.place_fit`) and checked on those of fold 1, which it never saw:
    there, the share right and the share naming the first speaker before and after it, beside the gold's share of
    first-speaker winners."""

    shift: float
    fitted: int  # fold-0 debates it was fitted on
    checked: int  # fold-1 debates it was checked on
    right_before: Interval
    right: Interval
    first_before: Interval
    first_named: Interval
    gold_first: float

    def __str__(self) -> str:
        return (f"{self.shift:+.2f} to the first speaker's log-odds (fitted on {self.fitted} debates; on "
                f"{self.checked} others it names the first speaker {self.first_before} -> {self.first_named}, the "
                f"gold's {self.gold_first:.2f}; right {self.right_before} -> {self.right})")


def pooled_fit(fits: list[PlaceFit]) -> PlaceFit | None:
    """The place fits of one reading on several gold sources as one: the shifts averaged by the debates each was
    fitted on, the checks summed."""
    if not fits:
        return None
    if len(fits) == 1:
        return fits[0]
    n, m = sum(f.fitted for f in fits), sum(f.checked for f in fits)

    def summed(field: str) -> Interval:
        return wilson(sum(getattr(f, field).value * f.checked for f in fits), m)

    return PlaceFit(shift=round(sum(f.shift * f.fitted for f in fits) / max(n, 1), 4), fitted=n, checked=m,
                    right_before=summed("right_before"), right=summed("right"),
                    first_before=summed("first_before"), first_named=summed("first_named"),
                    gold_first=round(sum(f.gold_first * f.checked for f in fits) / max(m, 1), 4))


def shifted(p_first: float, shift: float) -> float:
    """P(the first speaker wins) with a place fit's ``shift`` added to its log-odds."""
    return _sigmoid(_logit(p_first) + shift)


class ReadingProfile(Frozen):
    """One reading of a debate (a mode's verdict, or one dimension of it: ``flow``, ``flow/argument``, ``direct``)
    on one source of human gold, for this model: how often it named the debater the gold names (a tie or no winner
    counting half), with a Wilson 95% interval, and how often it named the first speaker beside how often the gold's
    winner was the first speaker (its place lean on that gold). These are the reading as the model made it; where
    a place fit takes its lean out (``place``), the verdict uses the reading so corrected, and its figures there are
    the fit's, on debates it never saw."""

    reading: str
    gold: str  # the gold source (a benchmark's name, e.g. nyu_debate)
    items: int  # debates with a gold winner the reading was asked about
    right: Interval
    first_named: Interval  # share naming the first speaker (no winner: half)
    gold_first: float
    run: str = ""  # the benchmark run it was read from (its folder and commit)
    place: PlaceFit | None = None  # its place lean taken out, where its debates held enough of both folds

    @property
    def state(self) -> State:
        if self.items < MIN_READING_ITEMS:
            return "not enough data"
        return "carries" if self.right.low > 0.5 else "blind"

    @property
    def lean(self) -> Literal["first", "second", ""]:
        """The speaker it names more often than the gold's winner is that speaker, beyond its interval ("": within
        it): as the verdict uses it, so with its place fit taken out and judged on the debates the fit never saw
        where it has one."""
        if self.place is not None:
            return _lean(self.place.first_named, self.place.gold_first)
        return self.raw_lean

    @property
    def raw_lean(self) -> Literal["first", "second", ""]:
        """Its lean as it named the debaters, before any place fit."""
        return _lean(self.first_named, self.gold_first)


def _lean(named: Interval, gold: float) -> Literal["first", "second", ""]:
    if named.low > gold:
        return "first"
    return "second" if named.high < gold else ""


def wilson(k: float, n: int, z: float = 1.96) -> Interval:
    """The share ``k / n`` with its Wilson score interval (``k`` may count halves)."""
    if n == 0:
        return Interval(value=0.5, low=0.0, high=1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Interval(value=round(p, 4), low=round(max(0.0, centre - half), 4), high=round(min(1.0, centre + half), 4))


class ModelIdentity(Frozen):
    name: str  # the model name a run is configured with (a local catalogue name, or the endpoint's model id)
    endpoint: Literal["local", "openai-compatible", "langchain", "test"] = "openai-compatible"
    gguf_sha256: str | None = None  # a local model's file
    logprobs: bool = True  # whether it gives log probabilities (else the figures are shares of answers)


class JudgeProfile(Frozen):
    """One model's profile (see the module's docstring)."""

    schema_version: str = PROFILE_SCHEMA
    model: ModelIdentity
    prompts_sha256: str
    commit: str = ""
    measured: str  # the date measured, ISO
    gold: tuple[str, ...] = ()
    command: str = ""  # the command that measured it
    decisions: dict[str, DecisionProfile] = Field(default_factory=dict)
    # how often each reading of a debate is right on human gold, per gold source (``debatrix profile --readings``)
    readings: tuple[ReadingProfile, ...] = ()
    verdict_maps: tuple[CalibrationMap, ...] = ()  # winner-probability maps per mode (debatrix.core.probabilities)
    place_priors: tuple[PlacePrior, ...] = ()

    def decision(self, kind: str) -> DecisionProfile | None:
        return self.decisions.get(kind)

    def state(self, kind: str) -> State:
        d = self.decisions.get(kind)
        return "not enough data" if d is None else d.state

    def blind(self, kind: str) -> bool:
        return self.state(kind) == "blind"

    def adjusted(self, kind: str, p: float, place: int | None = None) -> float:
        """``p`` as the gold's rate for decision ``kind``: its place lean taken out (half the measured shift off
        the first speaker's, half added to the second's; a third place and later: unchanged) and through its map.
        A decision not measured, or not carrying, is left as the model gave it."""
        d = self.decisions.get(kind)
        if d is None or d.state != "carries":
            return p
        z = _logit(p)
        if d.place is not None and place in (0, 1):
            z += (-0.5 if place == 0 else 0.5) * d.place.shift.value
        q = _sigmoid(z)
        return d.map(q) if d.map is not None else q

    def telling(self, kind: str, p: float, place: int | None = None) -> float:
        """How much an answer of decision ``kind`` tells beyond the model's usual answer: its P as the gold's rate
        (:meth:`adjusted`), less the gold's base rate, as a share of what is left above it (0 at or below it, 1 at
        certainty). An answer the map puts at the base rate says no more of its item than of any other, so where
        such answers are combined (a row asked of every later speech of the other side) it fells nothing, however
        often it was asked; an answer the map puts above it counts by how far. A decision with no base rate
        recorded, or not carrying, is :meth:`adjusted` as it is."""
        q = self.adjusted(kind, p, place)
        d = self.decisions.get(kind)
        if d is None or d.state != "carries" or d.map is None or d.base_rate is None or d.base_rate >= 1.0:
            return q
        return max(0.0, (q - d.base_rate) / (1.0 - d.base_rate))

    def usual(self, kind: str) -> float:
        """The gold's rate an answer of decision ``kind`` that tells nothing about its item comes to: the gold's
        base rate where the decision carries and was mapped to it (:meth:`telling`), else even odds."""
        d = self.decisions.get(kind)
        if d is None or d.state != "carries" or d.map is None or d.base_rate is None or not 0 < d.base_rate < 1:
            return 0.5
        return d.base_rate

    def factor(self, kind: str, p: float, place: int | None = None) -> float:
        """How many times an answer ``p`` of decision ``kind`` moves the odds of "yes" from the model's usual
        answer (:meth:`usual`): the odds of its P as the gold's rate (:meth:`adjusted`) over the usual rate's."""
        return odds_factor(self.adjusted(kind, p, place), self.usual(kind))

    def dated(self, d: DecisionProfile) -> tuple[str, str]:
        """When and at which commit decision ``d`` was measured: its own, else the profile's (a file written
        before decisions kept their own)."""
        return d.measured or self.measured, d.commit or self.commit

    def blind_reason(self, kind: str) -> str:
        """Why decision ``kind`` decides nothing on this model, with the profile's figure and date."""
        d = self.decisions[kind]
        return (f"the answers of {self.model.name} to \"{d.question}\" were not above chance on its profile "
                f"({d.figures()}; {d.gold}; measured {self.dated(d)[0]})")

    def table(self) -> list[dict[str, Any]]:
        """One row per decision: what this model sees (the rows ``debatrix profile`` prints)."""
        rows = []
        for kind, d in self.decisions.items():
            rows.append({"decision": kind, "state": d.state, "roc_auc": str(d.auc) if d.auc else "-",
                         "items": d.items, "debates": d.debates, "no_option": d.no_option,
                         "first": "-" if d.place is None else f"{d.place.first:.2f}",
                         "second": "-" if d.place is None else f"{d.place.second:.2f}",
                         "flips": "-" if d.place is None else f"{d.place.flips:.0%}",
                         "shift": "-" if d.place is None else str(d.place.shift) + "".join(
                             f"; {k} {v.shift} (n {v.pairs})" for k, v in d.place.by_source.items()),
                         "longer": "-" if d.longer is None else f"{d.longer:+.2f}",
                         "map": "-" if d.map is None else
                         f"Brier {d.map.brier_raw:.3f} -> {d.map.brier_mapped:.3f} (n {d.map.checked})" + (
                             "" if d.base_rate is None else f"; gold yes {d.base_rate:.2f}"),
                         **dict(zip(("measured", "commit"), self.dated(d)))})
        return rows

    def reading(self, name: str) -> ReadingProfile | None:
        """Reading ``name`` (``flow/argument``) pooled over the gold sources it was measured on (None: never)."""
        rows = [r for r in self.readings if r.reading == name]
        if not rows:
            return None
        if len(rows) == 1:
            return rows[0]
        n = sum(r.items for r in rows)
        gold_first = sum(r.gold_first * r.items for r in rows) / n
        return ReadingProfile(reading=name, gold=" + ".join(r.gold for r in rows), items=n,
                              right=wilson(sum(r.right.value * r.items for r in rows), n),
                              first_named=wilson(sum(r.first_named.value * r.items for r in rows), n),
                              gold_first=round(gold_first, 4), run="; ".join(r.run for r in rows if r.run),
                              place=pooled_fit([r.place for r in rows if r.place is not None]))

    def reading_table(self) -> list[dict[str, Any]]:
        """One row per reading and gold source: how often it was right, and how often it named the first speaker."""
        return [{"reading": r.reading, "gold": r.gold, "state": r.state, "right": str(r.right), "items": r.items,
                 "first_named": str(r.first_named), "gold_first": f"{r.gold_first:.2f}",
                 "lean": (f"{r.lean} after its fit" if r.place is not None and r.lean else r.lean
                          or (f"{r.raw_lean}, taken out" if r.raw_lean else "-")), "run": r.run,
                 "place": "-" if r.place is None else str(r.place)} for r in self.readings]

    def sees(self) -> str:
        """In one line, what this model can and cannot see: "qwen2.5-coder-1.5b (profile of 2026-12-02): sees
        argues (ROC AUC 0.63 [0.58, 0.68]); blind to clear (0.51 [0.45, 0.57]), ..."."""
        groups: dict[str, list[str]] = {"carries": [], "blind": [], "not enough data": []}
        for kind, d in self.decisions.items():
            groups[d.state].append(f"{kind} ({d.auc})" if d.auc else kind)
        parts = [f"sees {', '.join(groups['carries'])}" if groups["carries"] else "sees none of its decisions"]
        if groups["blind"]:
            parts.append(f"blind to {', '.join(groups['blind'])}")
        if groups["not enough data"]:
            parts.append(f"not enough data on {', '.join(groups['not enough data'])}")
        return (f"{self.model.name} (profile of {self.measured}, ROC AUC on gold): " + "; ".join(parts))


def prompts_sha256() -> str:
    """The hash of the prompts a profile is measured with (:data:`PROMPT_FILES`, in that order)."""
    h = hashlib.sha256()
    folder = resources.files("debatrix.prompts")
    for name in PROMPT_FILES:
        h.update(name.encode() + b"\0" + folder.joinpath(name).read_bytes() + b"\0")
    return h.hexdigest()


def load(path: str | Path) -> JudgeProfile:
    """A profile from its file, or a :class:`ConfigurationError` saying what is wrong with it in one line."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigurationError(f"--profile {p}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ConfigurationError(f"--profile {p}: not a profile ({type(e).__name__}: {str(e)[:120]})") from None
    if not isinstance(data, dict) or "model" not in data:
        raise ConfigurationError(f"--profile {p}: not a profile (no 'model'); `debatrix profile` writes one")
    if str(data.get("schema_version")) != PROFILE_SCHEMA:
        raise ConfigurationError(f"--profile {p}: schema {data.get('schema_version')!r}, this version reads "
                                 f"{PROFILE_SCHEMA!r}: measure it again with `debatrix profile`")
    try:
        return JudgeProfile.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ConfigurationError(f"--profile {p}: {where}: {first['msg']}") from None


def shipped_folder() -> Any:
    return resources.files("debatrix.llm").joinpath("profiles")


@lru_cache(maxsize=1)
def shipped() -> dict[str, JudgeProfile]:
    """The profiles that ship with the package, by model name."""
    out = {}
    folder = shipped_folder()
    if not folder.is_dir():
        return out
    for f in sorted(folder.iterdir(), key=lambda x: x.name):
        if f.name.endswith(".json"):
            prof = JudgeProfile.model_validate(json.loads(f.read_text(encoding="utf-8")))
            out[prof.model.name] = prof
    return out


class ProfileUse(Frozen):
    """The profile a run reads, or none, and what every surface says about it once."""

    profile: JudgeProfile | None = None
    note: str  # "unprofiled: ..." / what the model sees / why a profile found was not used

    @property
    def profiled(self) -> bool:
        return self.profile is not None


def profile_command(model: str, endpoint: str) -> str:
    """The one command that profiles ``model``."""
    if endpoint == "local":
        return f"debatrix profile --backend local --local-model {model}"
    return f"debatrix profile --base-url URL --model {model}"


def resolve(setting: str | None, model: str, endpoint: str, gguf_sha256: str | None = None) -> ProfileUse:
    """The profile a run on ``model`` reads: ``setting`` a path, ``"none"`` (judge unprofiled), or None/"auto" (the
    shipped profile of that model name, if any). A profile for another model file or measured with other prompts
    is stale: not used, and said."""
    how = profile_command(model, endpoint)
    if setting == "none":
        return ProfileUse(note=f"unprofiled (--profile none): every dimension is judged on {model}'s own "
                               f"probabilities; `{how}` measures what it can see")
    prof = load(setting) if setting not in (None, "", "auto") else shipped().get(model)
    if prof is None:
        return ProfileUse(note=f"unprofiled: nothing is known of what {model} can see, so every dimension is judged "
                               f"on its own probabilities; `{how}` measures it")
    stale = []
    if prof.prompts_sha256 != prompts_sha256():
        stale.append("measured with other prompts")
    if gguf_sha256 and prof.model.gguf_sha256 and prof.model.gguf_sha256 != gguf_sha256:
        stale.append("measured on another model file")
    if prof.model.name != model:
        stale.append(f"measured for {prof.model.name}")
    if stale:
        return ProfileUse(note=f"unprofiled: the profile of {prof.model.name} ({prof.measured}) is stale "
                               f"({'; '.join(stale)}) and not used, so every dimension is judged on {model}'s own "
                               f"probabilities; `{how}` measures it again")
    return ProfileUse(profile=prof, note=prof.sees())


def model_of(settings: Any) -> tuple[str, str]:
    """(the model's name, the endpoint kind) of a run's settings: a local catalogue name (or .gguf path) on the
    embedded model, the endpoint's model id elsewhere."""
    llm = settings.llm
    if llm.served_locally or llm.uses_local:
        return llm.local_model, "local"
    return llm.model, "openai-compatible"


@lru_cache(maxsize=32)
def resolve_cached(setting: str, model: str, endpoint: str) -> ProfileUse:
    """:func:`resolve`, once per setting, model and endpoint kind in a process."""
    return resolve(setting, model, endpoint)


def for_settings(settings: Any) -> ProfileUse:
    """The profile a run with ``settings`` reads (its ``profile`` setting on its model: :func:`resolve`); a file
    that cannot be read is refused here, before any call."""
    model, endpoint = model_of(settings)
    return resolve_cached(settings.profile, model, endpoint)
