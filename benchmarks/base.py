"""What every benchmark adapter provides, so that one runner can judge, resume and summarise any of them."""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from debatrix.context import JudgeContext
from debatrix.core.errors import ConfigurationError, DebatrixError, TemplateError, echoed
from debatrix.core.models import Debate, Usage
from debatrix.core.results import JudgeResult
from debatrix.core.registry import Registry
from debatrix.core.settings import JudgeSettings


def fold(item_id: str) -> int:
    """The half of a benchmark's items an item is dealt to, by a hash of its id (the same every run, on every
    machine): what is fitted on gold is fitted on fold 0 and checked on fold 1. Variants of one debate
    (``debate~variant``, as ``contrast`` names them) share the debate's fold, so no check sees a debate its fit saw.
    A profile measures a model's place lean on long debates in NYU's fold 0 (``debatrix profile``), and
    ``benchmarks.placecheck`` checks the correction on fold 1; a reading's place fit (``benchmarks.readings``) does
    the same."""
    return zlib.crc32(item_id.split("~", 1)[0].encode()) % 2


def data_root() -> Path:
    """The shared data folder: ``$DEBATRIX_DATA``, else the first ``shared/data`` found beside the project checkout
    or one of the folders above it (a clone anywhere under the team's folder finds it), then the same from the
    current directory."""
    env = os.environ.get("DEBATRIX_DATA")
    if env:
        return Path(env)
    starts = (Path(__file__).resolve().parents[1], Path.cwd().resolve())
    candidates = [folder / "shared" / "data" for start in starts for folder in start.parents]
    return next((c for c in candidates if c.is_dir()), candidates[0])


class BenchmarkDataError(DebatrixError):
    """A benchmark's files are missing or do not hold what their SOURCE.md says."""


def check_count(name: str, found: int, expected: int) -> None:
    if found != expected:
        raise BenchmarkDataError(f"{name}: found {found} items, the data set has {expected} (see its SOURCE.md)")


@dataclass(frozen=True)
class Item:
    id: str
    path: Path | None = None


@dataclass(frozen=True)
class MetricRow:
    metric: str
    subset: str
    value: float
    n: int  # items the value is computed over
    baseline: str | None = None  # set for baseline rows (constant / random predictions)


@dataclass(frozen=True)
class Registered:
    """A benchmark as ``debatrix bench`` and :func:`debatrix.benchmarks.make_benchmark` know it."""

    cls: type[Benchmark]
    summary: str  # one line for `debatrix bench list`
    variants: tuple[str, ...] = ()  # what the adapter's second argument may be; the first is the default


B = TypeVar("B", bound="Benchmark")

#: the adapters' modules, imported (so registered) on the first lookup or listing: the ``debatrix.benchmarks``
#: entry points of every installed package (this one's are in pyproject.toml; another package may add its own)
ADAPTER_GROUP = "debatrix.benchmarks"


def _import_adapters() -> None:
    from importlib.metadata import entry_points

    for ep in entry_points(group=ADAPTER_GROUP):
        ep.load()


#: every registered benchmark by name (an adapter registers itself with :func:`benchmark` where it is defined)
BENCHMARKS: Registry[Registered] = Registry("benchmark", error=BenchmarkDataError, load=_import_adapters)

#: the benchmarks' prompt templates (files of ``prompts/``) with the class of their variables, registered where each
#: is used and rendered with ``prompting.render(name, variables, TEMPLATES)``: the judge's own registry holds only the
#: judge's
TEMPLATES: Registry[type[Any]] = Registry("benchmark template", error=TemplateError)


def benchmark(summary: str, *, variants: tuple[str, ...] = ()) -> Callable[[type[B]], type[B]]:
    """Register a :class:`Benchmark` subclass under its ``name``: the whole of adding a benchmark, beside the class.

    The adapter is built as ``cls(data)``, or ``cls(data, variant)`` when it has ``variants``."""

    def register(cls: type[B]) -> type[B]:
        if not cls.name:
            raise ConfigurationError(f"benchmark {cls.__name__}: its name is empty")
        BENCHMARKS.add(cls.name, Registered(cls, summary, tuple(variants)))
        return cls

    return register


class Benchmark:
    """Subclasses set ``name``/``description`` and implement ``load``, ``gold_record``, ``metrics`` and
    ``baselines``; debate benchmarks also ``debate`` and ``predictions``; others override ``run_item``."""

    name = ""
    description = ""
    modes_matter = True  # False for benchmarks whose judging does not depend on the debate mode

    def load(self) -> list[Item]:
        raise NotImplementedError

    def debate(self, item: Item) -> Debate:
        raise NotImplementedError

    # a benchmark scored on winners codes each debater as its gold does (DebateArt: pro 0.0, con 1.0; BP: the
    # team's position; the known-answer suite: the intact side 1.0) and a tie as ``tie``; its records keep the
    # judge's verdicts with those codes, and its metrics read the verdicts (:func:`verdict`, :func:`coded`)
    tie: Any = 0.5

    def sides(self, item: Item, debate: Debate) -> dict[str, Any] | None:
        """Each debater's code in this benchmark's gold (None: the benchmark does not score winners)."""
        return None

    def predictions(self, item: Item, debate: Debate, result: JudgeResult) -> dict[str, Any]:
        """What a benchmark that does not score winners reads off a result (its record's ``pred``)."""
        return {}

    def gold_record(self, item: Item) -> dict[str, Any]:
        raise NotImplementedError

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        raise NotImplementedError

    def baselines(self, items: list[Item]) -> list[MetricRow]:
        return []

    def write_figures(self, out_dir: Path, records: list[dict[str, Any]]) -> None:
        """Figures of the summary beyond the headline plot (DebateArt: the reliability of the winner
        probability)."""

    def subset(self, items: list[Item], limit: int | None, seed: int = 0) -> list[Item]:
        """The items a ``--limit`` run judges, kept in file order: never silently the first N (files are often
        sorted by a property) but a seeded random sample, or where items have a length (debates), one item drawn
        from each of ``limit`` equal-sized length strata, so a small sample spans short and long debates."""
        if not limit or limit >= len(items):
            return items
        import random

        rng = random.Random(seed)
        if self.stratified:
            ranked = sorted(range(len(items)), key=lambda i: (self.size(items[i]), items[i].id))
            keep = {ranked[rng.randrange(k * len(items) // limit, (k + 1) * len(items) // limit)]
                    for k in range(limit)}
        else:
            keep = set(rng.sample(range(len(items)), limit))
        return [it for i, it in enumerate(items) if i in keep]

    stratified = False  # True: --limit samples by length strata (see :meth:`size`)

    def size(self, item: Item) -> int:
        """How long an item is, for length-stratified samples: its file's size in bytes."""
        return item.path.stat().st_size if item.path is not None and item.path.exists() else 0

    def result_of(self, record: dict[str, Any]) -> Any:
        return None

    async def run_item(self, item: Item, settings: JudgeSettings, context: JudgeContext) -> dict[str, Any]:
        """Judge one item; returns the record fields ``status``, ``reason``, ``usage``, and for a complete result
        the judge's ``verdicts`` (with ``sides``/``tie``/``tie_margins``: the gold's codes, where the benchmark
        scores winners) and what else the benchmark reads off it (``pred``)."""
        from debatrix.app.api import ajudge_debate

        started = time.perf_counter()
        debate = self.debate(item)
        result = await ajudge_debate(debate, settings, context=context, run_id=None)
        esc = result.escalation
        usage = result.usage.plus(esc.first_usage) if esc is not None and esc.first_usage is not None \
            else result.usage  # an escalated item cost both judges' calls
        record: dict[str, Any] = {"status": result.status.value, "reason": result.incomplete_reason,
                                  "usage": usage_record(usage, time.perf_counter() - started),
                                  # the runner stores it beside items.jsonl: analyses, comments, every order's answer
                                  "result": result}
        if result.status.value == "complete":
            record["verdicts"] = stored_verdicts(result)
            sides = self.sides(item, debate)
            if sides is not None:
                record |= {"sides": sides, "tie": self.tie, "tie_margins": {
                    d.name: d.tie_margin if d.allow_tie else None for d in result.judged}}
            pred = self.predictions(item, debate, result)
            if pred:
                record["pred"] = pred
            if esc is not None:
                record |= {"escalated": esc.escalated, "decided_by": esc.decided_by}
        return record


#: what items.jsonl records hold: 2 = the judge's verdicts (names) with the gold's codes of the debaters; records
#: of another format are judged again on resume (from the folder's answer cache: no call is paid twice)
RECORD_FORMAT = 2


async def judge_item(bench: Benchmark, item: Item, settings: JudgeSettings, context: JudgeContext) -> dict:
    """One item; an error that is the item's fault (bad file, ...) is recorded, not raised: the run goes on (in
    this process or in a cluster's worker)."""
    try:
        return await bench.run_item(item, settings, context)
    except DebatrixError as e:
        return {"status": "incomplete", "reason": f"{type(e).__name__}: {e}", "usage": {}}


def stored_verdicts(result: Any) -> dict[str, dict[str, Any]]:
    """Every verdict of a result as the judge gave it (its :class:`~debatrix.core.models.Verdict`, as JSON),
    keyed by dimension ("general": the overall verdict), without the comments: the result file beside items.jsonl
    keeps those."""
    return {d.name: d.verdict.model_dump(mode="json", exclude={"comment": True, "orders": {"__all__": {"comment"}}})
            for d in result.judged if d.verdict is not None}


def verdict(record: dict[str, Any], dimension: str) -> dict[str, Any] | None:
    """The judge's verdict on ``dimension`` in a record (a :class:`Verdict`'s fields; None: not judged)."""
    return (record.get("verdicts") or {}).get(dimension)


def read_winner(v: dict[str, Any]) -> str | None:
    """The debater a stored verdict reads as the winner: the one it names, or where it names none because its
    reading was not shown to carry on gold (too close to call) the one it leans to, so that a benchmark scores
    every verdict the judge made by its lean, as it did before verdicts said which they could not call."""
    if v.get("not_judged"):
        return None
    return v.get("winner") or (v.get("lean") if v.get("unproven") else None)


def coded(record: dict[str, Any], winner: str | None) -> Any:
    """A winner's name in the gold's code (the record's ``sides``); a tie (None) is the record's ``tie``."""
    return record.get("tie") if winner is None else record["sides"].get(winner)


def named(record: dict[str, Any], dimension: str, field: str = "winner") -> Any:
    """The verdict's ``field`` (``winner``: the judge's, ``score_winner``: by the scores) in the gold's code; None
    where the dimension was not judged or the benchmark does not score winners."""
    v = verdict(record, dimension)
    if v is None or v.get("not_judged") or not record.get("sides"):  # no verdict made: nothing to score
        return None
    return coded(record, read_winner(v) if field == "winner" else v[field])


def readings(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A winner benchmark's record in names, per dimension judged (general first): the judge's winner ("tie"), the
    gold's where the benchmark has one for that dimension, and whether they match (None: no gold). BP's gold is the
    teams that advanced: a verdict is right when it names one of them."""
    if not record.get("sides") or not record.get("verdicts"):
        return []
    names = {code: name for name, code in record["sides"].items()}
    gold = record.get("gold")
    out = []
    for dim in sorted(record["verdicts"], key=lambda d: (d != "general", d)):
        if record["verdicts"][dim].get("not_judged"):  # no verdict made: shown as such, never scored as a tie
            out.append({"dimension": dim, "pred": "not judged", "gold": None, "right": None})
            continue
        winner = read_winner(record["verdicts"][dim])
        code = coded(record, winner)
        if isinstance(gold, dict) and isinstance(gold.get(dim), int | float):
            g = gold[dim]
            out.append({"dimension": dim, "pred": winner or "tie", "right": code == g,
                        "gold": "tie" if g == record.get("tie") else names.get(g, str(g))})
        elif isinstance(gold, list) and dim == "general":
            out.append({"dimension": dim, "pred": f"{winner} ({code})" if winner else "tie", "right": code in gold,
                        "gold": " and ".join(f"{names[c]} ({c})" for c in gold if c in names)})
        else:
            out.append({"dimension": dim, "pred": winner or "tie", "gold": None, "right": None})
    return out


def in_words(record: dict[str, Any]) -> tuple[str, str, list[dict[str, Any]]] | None:
    """A winner benchmark's prediction and gold in one line each ("general Alec ✓, argument tie ✗" and "general
    Alec, argument Ben"), with the :func:`readings` they say; None for a record of another benchmark."""
    read = readings(record)
    if not read:
        return None
    mark = {True: " ✓", False: " ✗", None: ""}
    return (", ".join(f"{r['dimension']} {r['pred']}{mark[r['right']]}" for r in read),
            ", ".join(f"{r['dimension']} {r['gold']}" for r in read if r["gold"] is not None), read)


def p_coded(record: dict[str, Any], dimension: str, code: Any) -> float | None:
    """The probability the verdict gives the debaters coded ``code`` (a tie counting half); None without
    probabilities."""
    v = verdict(record, dimension)
    probs = (v or {}).get("probabilities")
    if not probs:
        return None
    for name, p in probs.items():  # a results file edited or damaged by hand: said in one line, not a TypeError
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= p <= 1.0:
            raise ValueError(f"item {echoed(record.get('item'))}: the stored probability of {echoed(name)} on "
                             f"{echoed(dimension)}, {echoed(p)}, is not a probability")
    return round(sum(p for name, p in probs.items() if name != "tie" and coded(record, name) == code)
                 + 0.5 * probs.get("tie", 0.0), 4)


def calls_usage(calls: list[Any], started: float) -> dict[str, Any]:
    """The usage of an item judged by direct gateway calls (their CallRecords), since ``started``."""
    return usage_record(Usage.from_calls(calls, 0.0), time.perf_counter() - started)


def usage_record(u: Usage, seconds: float) -> dict[str, Any]:
    """One item's usage as stored in items.jsonl (cached calls included in llm_calls, as in results)."""
    return {"llm_calls": u.llm_calls, "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
            "prompt_tokens_processed": u.prompt_tokens_processed,
            "retries": u.retries, "repairs": u.repairs, "cached_calls": u.cached_calls,
            "truncated_calls": u.truncated_calls, "seconds": round(seconds, 3)}
