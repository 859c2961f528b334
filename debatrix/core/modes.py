"""The judge's modes: the paper's full judge and its ablations, one registration each.

A mode is an object: what its graph does, as data, and what differs between modes, as its methods (its calls, its
progress rows, its rounds, the checks of its dimensions, its words in the CLI); :class:`FlowMode` is the flow's.
:func:`debatrix.graphs.build_graph` builds any registered mode from it and chooses its steps and its largest request
by the mode's class; the CLI, the page, the progress display and the estimates read it, never its name. Adding a
mode is one :func:`register_mode` call here.

| mode            | per-speech analysis | context for the analysis | dimensions              |
|-----------------|---------------------|--------------------------|-------------------------|
| flow (default)  | small decisions     | the flow so far          | one reading, each weighs its part; computed panel |
| debatrix        | yes                 | previous analyses        | split, merged by panel  |
| chronological   | yes                 | previous analyses        | one general dimension   |
| dimensional     | no (whole debate)   | -                        | split, merged by panel  |
| noniterative    | yes                 | previous raw speeches    | split, merged by panel  |
| direct          | no (whole debate)   | -                        | one general dimension   |

This module is light (no LangGraph), so the CLI can list the modes without loading the graphs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from debatrix.core.dimension import Dimension, DimensionRegistry
from debatrix.core.errors import ConfigurationError, UnknownModeError
from debatrix.core.flow import JUDGED, KINDS, MEASURES, asked_kinds, asks_together, blind_reason, flow_calls
from debatrix.core.profile import for_settings
from debatrix.core.models import DebateFormat
from debatrix.core.registry import Registry

if TYPE_CHECKING:
    from debatrix.core.models import Debate
    from debatrix.core.settings import JudgeSettings


@dataclass(frozen=True)
class Mode:
    """A mode whose analysers write prose (the paper's judge and its ablations): what its graph does, and the
    arithmetic its displays and estimates read (calls, progress rows, rounds, requests in flight). The flow
    overrides what differs in :class:`FlowMode`; the graph's steps and its largest request are chosen by the
    mode's class in :mod:`debatrix.graphs.build`."""

    name: str
    description: str
    per_speech: bool  # analyses and scores every speech, one after another (Algorithm 1's loop)
    panel: bool  # splits dimensions and merges them with a panel
    fixed: tuple[str, ...] | None = None  # the dimension(s) it always uses
    # what a speech's analysis sees of the earlier ones ("flow": the flow so far, one reading shared by the
    # dimensions, its decisions small and cited by passage id)
    context: Literal["analyses", "speeches", "flow"] | None = None
    debate_stage: bool = True  # judges the debate (the single-speech graph does not)

    #: whether the mode reads the debate into a flow of small decisions (its options --flow-ask and
    #: --flow-questions, its judge profile, its passage-id checks) rather than writing prose analyses
    reads_flow: ClassVar[bool] = False

    def check_dimensions(self, dims: Sequence[Dimension]) -> None:
        """Refuse dimensions this mode cannot judge (a prose mode judges any)."""

    def check_plan(self, dims: Sequence[Dimension], settings: JudgeSettings) -> None:
        """Refuse, before any call, a run of these dimensions that could judge nothing (a prose mode always can)."""

    def calls(self, settings: JudgeSettings, debate: Debate, n_dimensions: int, orders: int | None = None,
              measures: Sequence[str | None] | None = None) -> int:
        """The LLM requests judging ``debate`` with ``settings`` makes (:func:`expected_calls`), in ``orders``
        orders (the settings' by default)."""
        return expected_calls(self.name, len(debate.speeches), len(debate.debaters), n_dimensions,
                              settings.merge_score_call, settings.orders if orders is None else orders,
                              settings.speech_score_merged(self.name))

    def steps_per_row(self, dimensions: list[str], n_speeches: int, merge_score_call: bool,
                      score_in_analysis: bool = False) -> dict[str, int]:
        """The progress events a complete run gives each dimension (per speech an analysis, and its score unless
        it comes in the analysis; the judgment, and its decision unless the score call is merged) and the panel
        (its comment and decision)."""
        step = 1 if merge_score_call else 2
        per_speech = _speech_steps(merge_score_call, score_in_analysis)
        per_dim = (n_speeches * per_speech if self.per_speech else 0) + (step if self.debate_stage else 0)
        return {**{d: per_dim for d in dimensions}, **({"panel": 2} if self.panel else {})}

    def progress_columns(self, dimensions: list[str]) -> list[str]:
        """The columns a page shows the run's progress in: one a dimension."""
        return list(dimensions)

    def critical_rounds(self, n_speeches: int, merge_score_call: bool, calls: int | None = None,
                        cached: bool = True) -> int:
        """LLM rounds on the longest dependency chain (see :func:`critical_rounds`): the speeches analysed one
        after another (each scored beside the next analysis), then the judgment and its decision, then the
        panel's; dimensions and orders side by side."""
        steps = 1 if merge_score_call else 2
        column = (n_speeches if self.per_speech else 0) + (steps if self.debate_stage else 1)
        return column + (steps if self.panel else 0)

    def max_in_flight(self, n_dimensions: int, merge_score_call: bool, orders: int = 1,
                      score_in_analysis: bool = False) -> int:
        """The most requests a run ever has ready at once: per column an analysis and the previous speech's
        score, or the judgment in every order beside the last speech's score; the panel runs alone."""
        if _speech_steps(merge_score_call, score_in_analysis) == 1 or not self.per_speech:
            return n_dimensions * max(1, orders)
        return n_dimensions * (orders + 1)

    def promise(self, total: int, orders_note: str) -> str:
        """What a run of ``total`` calls will make, as the CLI announces it (``orders_note``: how many of them
        judge in further orders of the debaters)."""
        return f"{total} LLM calls{orders_note}"

    def calls_line(self, on_local: JudgeSettings, on_endpoint: JudgeSettings, debate: Debate,
                   dims: Sequence[Dimension]) -> str:
        """The calls judging ``debate`` takes, as the docs' table of modes says them."""
        both = self.calls(on_local, debate, len(dims))
        one = self.calls(on_local, debate, len(dims), orders=1)
        return f"{both} ({one} with `--orders 1`)"


@dataclass(frozen=True)
class FlowMode(Mode):
    """The default mode: each speech read once into the flow, a few small decisions with probabilities per
    numbered passage and per earlier argument it may answer, shared by every dimension; each dimension's verdict
    is computed from its part of the flow (:mod:`debatrix.core.flow`). Its calls are its decisions, one token
    each, so what differs from a prose mode is what it counts, shows and checks."""

    reads_flow: ClassVar[bool] = True

    def check_dimensions(self, dims: Sequence[Dimension]) -> None:
        """Nothing guessed: the flow reads a dimension by its measure, and a measure that averages others is
        judged without them (the panel would weigh them twice)."""
        unread = [d.name for d in dims if d.measure is None]
        if unread:
            raise ConfigurationError(f"dimension {', '.join(unread)} names no flow measure: add `measure: NAME` to "
                                     f"its YAML (one of: {', '.join(MEASURES)}), or judge it in a prose mode "
                                     "(--mode debatrix)")
        if len(dims) < 2:
            return
        for d in dims:
            parts = MEASURES.get_or_raise(d.measure).parts
            twice = [x.name for x in dims
                     if x is not d and (x.measure in parts or MEASURES.get_or_raise(x.measure).parts)]
            if parts and twice:
                raise ConfigurationError(
                    f"dimension {d.name} is read by the {d.measure} of the flow's measures ({', '.join(parts)}): "
                    f"beside {', '.join(twice)} the panel would count {'it' if len(twice) == 1 else 'them'} twice; "
                    f"judge {d.name} alone, or the other dimensions without it")

    def check_plan(self, dims: Sequence[Dimension], settings: JudgeSettings) -> None:
        """Refuse a run whose every dimension, as chosen (``--dimensions``), is blind on the model (its profile):
        it would ask nothing and name no winner, and say so only after starting the model. The default
        dimensions all blind on a model is no choice of the user's: that run is complete, each dimension saying
        why it is not judged; asked to measure every decision again (``flow_ask="all"``), the run asks them."""
        if settings.flow_ask == "all" or not settings.dimensions or not dims:
            return
        use = for_settings(settings)
        why = [blind_reason(d.measure or "mean", use.profile) for d in dims]
        if not all(why):
            return
        judged = [m for m in JUDGED if not blind_reason(m, use.profile)]
        said = "; ".join(f"{d.name}: {w}" for d, w in zip(dims, why))
        raise ConfigurationError(
            f"--dimensions {','.join(d.name for d in dims)}: nothing to judge, every dimension is blind on this "
            f"model ({said[:600]}{' …' if len(said) > 600 else ''}); choose one its profile judges"
            + (f" ({', '.join(judged)})" if judged else "") + ", judge unprofiled (--profile none), or measure the "
            "decisions again (--flow-ask all)")

    def calls(self, settings: JudgeSettings, debate: Debate, n_dimensions: int, orders: int | None = None,
              measures: Sequence[str | None] | None = None) -> int:
        """Per passage and per answer, the kinds of decision its dimensions' ``measures`` rest on (None: every
        kind, the most it can ask); orders do not apply (nothing is compared in an order)."""
        kinds = KINDS if measures is None else asked_kinds(measures, settings.flow_ask == "all",
                                                           for_settings(settings).profile)
        # before the run the model is known only by its settings: an endpoint is any model not served locally
        return flow_calls(debate, asks_together(settings.flow_questions, settings.llm.prompt_cache,
                                                not settings.llm.uses_local), kinds)

    def steps_per_row(self, dimensions: list[str], n_speeches: int, merge_score_call: bool,
                      score_in_analysis: bool = False) -> dict[str, int]:
        """One step per speech read into the flow, shared by the dimensions."""
        return {FLOW_COLUMN: n_speeches}

    def progress_columns(self, dimensions: list[str]) -> list[str]:
        """One column: each speech is read once for every dimension."""
        return [FLOW_COLUMN]

    def critical_rounds(self, n_speeches: int, merge_score_call: bool, calls: int | None = None,
                        cached: bool = True) -> int:
        """On a server that caches prompts (``cached``) its ``calls`` decisions go one after another; elsewhere
        a speech's go out together, a round a speech (within the cap on requests in flight)."""
        if not cached:
            return n_speeches
        if calls is None:
            raise ConfigurationError("a flow run's rounds are its calls: give calls (debatrix.core.flow.flow_calls)")
        return calls

    def max_in_flight(self, n_dimensions: int, merge_score_call: bool, orders: int = 1,
                      score_in_analysis: bool = False) -> int:
        """One decision at a time on a server that caches prompts (to an endpoint, a speech's requests go out
        together, as many as its passages or questions: within the cap, whatever it is)."""
        return 1

    def promise(self, total: int, orders_note: str) -> str:
        return f"at most {total} small decisions (the points proposed to each speech, up to 3 a passage)"

    def calls_line(self, on_local: JudgeSettings, on_endpoint: JudgeSettings, debate: Debate,
                   dims: Sequence[Dimension]) -> str:
        measures = [d.measure for d in dims]
        here = self.calls(on_local, debate, len(dims), measures=measures)
        there = self.calls(on_endpoint, debate, len(dims), measures=measures)
        return f"at most {here} one-token decisions on the embedded model; at most {there} on an endpoint"


#: the progress column a flow run fills (one for every dimension: each speech is read once)
FLOW_COLUMN = "flow"


#: the registered debate modes, in registration order (the CLI lists them so)
MODES: Registry[Mode] = Registry("mode", error=UnknownModeError)


def register_mode(mode: Mode) -> Mode:
    if mode.per_speech != (mode.context is not None):
        raise ConfigurationError(f"mode {mode.name!r}: a per-speech mode says what each analysis sees (context), "
                                 "a whole-debate mode does not")
    return MODES.add(mode.name, mode)


register_mode(Mode("debatrix", "per dimension, each speech analysed in order with the earlier analyses; a panel "
                   "merges the dimensions", per_speech=True, panel=True, context="analyses"))
register_mode(Mode("chronological", "the speech-by-speech analysis in one general dimension", per_speech=True,
                   panel=False, fixed=("general",), context="analyses"))
register_mode(Mode("dimensional", "per dimension, the whole debate judged at once; a panel merges the dimensions",
                   per_speech=False, panel=True))
register_mode(Mode("noniterative", "as debatrix, but each analysis sees the earlier raw speeches, not their "
                   "analyses", per_speech=True, panel=True, context="speeches"))
register_mode(Mode("direct", "the whole debate judged at once in one general dimension", per_speech=False,
                   panel=False, fixed=("general",)))
register_mode(FlowMode("flow", "each speech read in order into the flow: small decisions with probabilities on its "
                   "numbered passages and on the earlier arguments it answers; every dimension's verdict computed "
                   "from the flow, merged by weight", per_speech=True, panel=True, context="flow"))

#: single speeches judged on their own (not a debate mode: no debate-level stage)
SPEECH = Mode("speech", "each speech analysed and scored on its own", per_speech=True, panel=False,
              context="analyses", debate_stage=False)


def get_mode(name: str) -> Mode:
    """The registered mode ``name`` (``"speech"``: the single-speech graph's shape)."""
    return SPEECH if name == SPEECH.name else debate_mode(name)


def flow_record(record: dict) -> bool:
    """Whether a benchmark record was judged by a mode that reads the flow (a mode no longer registered: no)."""
    shape = MODES.get(str(record.get("mode")))
    return bool(shape and shape.reads_flow)


def debate_mode(name: str) -> Mode:
    """The registered mode ``name`` that judges a debate (not ``"speech"``, which judges one speech)."""
    return MODES.get_or_raise(name)


def resolve_dimensions(mode: str, wanted: tuple[str, ...] | None, fmt: DebateFormat,
                       registry: DimensionRegistry) -> list[Dimension]:
    """The dimensions a ``mode`` run judges: those asked for (names or a set), else the mode's fixed one or the
    format's default set. A single-dimension mode refuses several."""
    fixed = get_mode(mode).fixed
    if fixed is not None:
        if wanted and len(wanted) > 1:
            raise ConfigurationError(f"this mode judges one dimension; got {', '.join(wanted)}")
        wanted = wanted or fixed
    dims = list(registry.resolve(wanted, fmt))
    get_mode(mode).check_dimensions(dims)
    return dims


def order_count(n_debaters: int, orders: int) -> int:
    """How many orders the comparing judgments are asked in (see :func:`debatrix.graphs.prose.verdicts.orders_for`)."""
    return 1 if n_debaters < 2 else max(1, min(orders, n_debaters))


def _speech_steps(merge_score_call: bool, score_in_analysis: bool) -> int:
    """Calls per speech analysed: the analysis, and its score unless it comes in the analysis's answer."""
    return 1 if merge_score_call or score_in_analysis else 2


def expected_calls(mode: str, n_speeches: int, n_debaters: int, n_dimensions: int, merge_score_call: bool,
                   orders: int = 1, score_in_analysis: bool = False) -> int:
    """LLM requests a complete run makes (without retries or repairs): per dimension, an analysis and a score per
    speech (one answer with ``score_in_analysis``), and per order one judgment and one decision (a structured
    answer each with ``merge_score_call``, which merges the speeches' scores too); the panel's comment and decision
    per order."""
    shape = get_mode(mode)
    steps = 1 if merge_score_call else 2
    k = order_count(n_debaters, orders)
    per_speech = _speech_steps(merge_score_call, score_in_analysis)
    per_dim = (steps * k if shape.debate_stage else 0) + (n_speeches * per_speech if shape.per_speech else 0)
    return per_dim * n_dimensions + (steps * k if shape.panel else 0)


def calls_of(mode: str, settings: JudgeSettings, debate: Debate, n_dimensions: int, orders: int | None = None,
             measures: Sequence[str | None] | None = None) -> int:
    """The LLM requests judging ``debate`` in ``mode`` with ``settings`` makes (in ``orders`` orders, the
    settings' by default): what a display promises before the run (:meth:`Mode.calls`; a flow run's depend on
    its dimensions' ``measures``)."""
    return get_mode(mode).calls(settings, debate, n_dimensions, orders, measures)


@dataclass(frozen=True)
class Request:
    """A request's size, known before it is sent: prompt plus room for the answer, in tokens, and what it is."""

    tokens: int
    what: str


@dataclass(frozen=True)
class RunPlan:
    """What a run will do, worked out once before its first call (:func:`debatrix.graphs.build.plan_run`): the
    dimensions it judges, the calls a complete run makes, and its largest request (None where the calls alone are
    over ``max_llm_calls``: nothing was rendered, the run is refused). The local backend sizes its model server
    from the plan, and the graph's first step checks the same plan rather than working it out again."""

    debate: Debate
    mode: str
    dimensions: tuple[Dimension, ...]
    calls: int
    largest: Request | None


def steps_per_row(mode: str, dimensions: list[str], n_speeches: int, merge_score_call: bool,
                  score_in_analysis: bool = False) -> dict[str, int]:
    """The progress events a complete run of ``mode`` gives each of its rows (:meth:`Mode.steps_per_row`)."""
    return get_mode(mode).steps_per_row(dimensions, n_speeches, merge_score_call, score_in_analysis)


def critical_rounds(mode: str, n_speeches: int, merge_score_call: bool, calls: int | None = None,
                    cached: bool = True) -> int:
    """LLM rounds on the longest dependency chain of a run, when every call takes the same time
    (:meth:`Mode.critical_rounds`; a flow run on a server that caches prompts, ``cached``, asks its ``calls``
    decisions one after another)."""
    return get_mode(mode).critical_rounds(n_speeches, merge_score_call, calls, cached)


def max_in_flight(mode: str, n_dimensions: int, merge_score_call: bool, orders: int = 1,
                  score_in_analysis: bool = False) -> int:
    """The most requests a run ever has ready at once (:meth:`Mode.max_in_flight`)."""
    return get_mode(mode).max_in_flight(n_dimensions, merge_score_call, orders, score_in_analysis)
