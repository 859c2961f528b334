"""The judge's modes: the paper's full judge and its ablations, one registration each.

A mode is what its graph does, as data: :func:`debatrix.graphs.build_graph` builds any registered mode from it, the
preflight sizes its largest request from it, and the CLI, the progress display and the estimates read it. Adding a
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
from typing import TYPE_CHECKING, Literal

from debatrix.core.dimension import Dimension, DimensionRegistry
from debatrix.core.errors import ConfigurationError, UnknownModeError
from debatrix.core.flow import KINDS, MEASURES, asked_kinds, asks_together, flow_calls
from debatrix.core.profile import for_settings
from debatrix.core.models import DebateFormat
from debatrix.core.registry import Registry

if TYPE_CHECKING:
    from debatrix.core.models import Debate
    from debatrix.core.settings import JudgeSettings


@dataclass(frozen=True)
class Mode:
    """What a mode's graph does, for its builder and for estimates (calls, progress, context needed)."""

    name: str
    description: str
    per_speech: bool  # analyses and scores every speech, one after another (Algorithm 1's loop)
    panel: bool  # splits dimensions and merges them with a panel
    fixed: tuple[str, ...] | None = None  # the dimension(s) it always uses
    # what a speech's analysis sees of the earlier ones ("flow": the flow so far, one reading shared by the
    # dimensions, its decisions small and cited by passage id)
    context: Literal["analyses", "speeches", "flow"] | None = None
    debate_stage: bool = True  # judges the debate (the single-speech graph does not)


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
register_mode(Mode("flow", "each speech read in order into the flow: small decisions with probabilities on its "
                   "numbered passages and on the earlier arguments it answers; every dimension's verdict computed "
                   "from the flow, merged by weight", per_speech=True, panel=True, context="flow"))

#: single speeches judged on their own (not a debate mode: no debate-level stage)
SPEECH = Mode("speech", "each speech analysed and scored on its own", per_speech=True, panel=False,
              context="analyses", debate_stage=False)


def get_mode(name: str) -> Mode:
    """The registered mode ``name`` (``"speech"``: the single-speech graph's shape)."""
    return SPEECH if name == SPEECH.name else debate_mode(name)


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
    unread = [d.name for d in dims if d.measure is None]
    if get_mode(mode).context == "flow" and unread:  # nothing guessed: the flow reads a dimension by its measure
        raise ConfigurationError(f"dimension {', '.join(unread)} names no flow measure: add `measure: NAME` to its "
                                 f"YAML (one of: {', '.join(MEASURES)}), or judge it in a prose mode (--mode debatrix)")
    if get_mode(mode).context == "flow" and len(dims) > 1:
        for d in dims:
            parts = MEASURES.get_or_raise(d.measure).parts
            twice = [x.name for x in dims if x is not d and (x.measure in parts or MEASURES.get_or_raise(x.measure).parts)]
            if parts and twice:  # the panel would weigh what it averages again, beside it
                raise ConfigurationError(
                    f"dimension {d.name} is read by the {d.measure} of the flow's measures ({', '.join(parts)}): "
                    f"beside {', '.join(twice)} the panel would count {'it' if len(twice) == 1 else 'them'} twice; "
                    f"judge {d.name} alone, or the other dimensions without it")
    return dims


def order_count(n_debaters: int, orders: int) -> int:
    """How many orders the comparing judgments are asked in (see :func:`debatrix.graphs.verdicts.orders_for`)."""
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
    settings' by default): what a display promises before the run (:func:`expected_calls`). A flow run asks per
    passage and per answer the kinds of decision its dimensions' ``measures`` rest on (None: every kind, the most
    it can ask)."""
    if get_mode(mode).context == "flow":
        kinds = KINDS if measures is None else asked_kinds(measures, settings.flow_ask == "all",
                                                           for_settings(settings).profile)
        # before the run the model is known only by its settings: an endpoint is any model not served locally
        return flow_calls(debate, asks_together(settings.flow_questions, settings.llm.prompt_cache,
                                                not settings.llm.uses_local), kinds)
    return expected_calls(mode, len(debate.speeches), len(debate.debaters), n_dimensions,
                          settings.merge_score_call, settings.orders if orders is None else orders,
                          settings.speech_score_merged(mode))


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
    """The progress events a complete run gives each dimension (per speech an analysis, and its score unless
    it comes in the analysis; the judgment, and its decision unless the score call is merged) and the panel (its
    comment and decision)."""
    shape = get_mode(mode)
    if shape.context == "flow":  # one step per speech read into the flow, shared by the dimensions
        return {"flow": n_speeches}
    step = 1 if merge_score_call else 2
    per_speech = _speech_steps(merge_score_call, score_in_analysis)
    per_dim = (n_speeches * per_speech if shape.per_speech else 0) + (step if shape.debate_stage else 0)
    return {**{d: per_dim for d in dimensions}, **({"panel": 2} if shape.panel else {})}


def critical_rounds(mode: str, n_speeches: int, merge_score_call: bool, calls: int | None = None,
                    cached: bool = True) -> int:
    """LLM rounds on the longest dependency chain of a run, when every call takes the same time: the speeches are
    analysed one after another (each scored in parallel with the next analysis), then the judgment and its
    decision, then the panel's. Dimensions and orders run side by side. A flow run on a server that caches prompts
    (``cached``) asks its ``calls`` decisions one after another; elsewhere a speech's go out together, a round a
    speech (within the cap on requests in flight)."""
    shape = get_mode(mode)
    if shape.context == "flow":
        if not cached:
            return n_speeches
        if calls is None:
            raise ConfigurationError("a flow run's rounds are its calls: give calls (debatrix.core.flow.flow_calls)")
        return calls
    steps = 1 if merge_score_call else 2
    column = (n_speeches if shape.per_speech else 0) + (steps if shape.debate_stage else 1)
    return column + (steps if shape.panel else 0)


def max_in_flight(mode: str, n_dimensions: int, merge_score_call: bool, orders: int = 1,
                  score_in_analysis: bool = False) -> int:
    """The most requests a run ever has ready at once: per column an analysis and the previous speech's score, or
    the judgment in every order beside the last speech's score; the panel runs alone; a flow run asks one
    decision at a time on a server that caches prompts (to an endpoint, a speech's requests go out together, as
    many as its passages or questions: within the cap, whatever it is)."""
    if get_mode(mode).context == "flow":
        return 1
    if _speech_steps(merge_score_call, score_in_analysis) == 1 or not get_mode(mode).per_speech:
        return n_dimensions * max(1, orders)
    return n_dimensions * (orders + 1)
