"""What every benchmark adapter provides, so that one runner can judge, resume and summarise any of them."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from debatrix.context import JudgeContext
from debatrix.core.errors import ConfigurationError, DebatrixError, TemplateError
from debatrix.core.models import Debate, JudgeResult, Usage
from debatrix.core.registry import Registry
from debatrix.core.settings import JudgeSettings


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

    def predictions(self, item: Item, debate: Debate, result: JudgeResult) -> dict[str, Any]:
        raise NotImplementedError

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
        """Judge one item; returns the record fields ``status``, ``reason``, ``pred`` and ``usage``."""
        from debatrix.app.api import ajudge_debate

        started = time.perf_counter()
        debate = self.debate(item)
        result = await ajudge_debate(debate, settings, context=context, run_id=None)
        esc = result.escalation
        usage = result.usage.plus(esc.first_usage) if esc is not None and esc.first_usage is not None \
            else result.usage  # an escalated item cost both judges' calls
        pred = self.predictions(item, debate, result) if result.status.value == "complete" else {}
        if esc is not None and pred:
            pred = {**pred, "escalated": esc.escalated, "decided_by": esc.decided_by}
        return {
            "status": result.status.value,
            "reason": result.incomplete_reason,
            "pred": pred,
            "verdicts": verdicts_record(result) if pred else {},
            "usage": usage_record(usage, time.perf_counter() - started),
            "result": result,  # the runner stores it beside items.jsonl: analyses, comments, every order's answer
        }


def verdicts_record(result: Any) -> dict[str, dict[str, Any]]:
    """Each verdict's winner ("" for a tie) and how many of its orders named it, keyed by dimension and "panel":
    what the summary's stability rows read (order agreement per repeat, agreement between --epochs samples)."""
    out: dict[str, dict[str, Any]] = {}
    columns = [(d.name, d.verdict) for d in result.dimensions]
    if result.general is not None and "panel_comment" in result.usage.by_node:
        columns.append(("panel", result.general.verdict))
    for name, v in columns:
        if v is not None:
            out[name] = {"winner": v.winner or "", "orders": len(v.orders), "agreeing": v.orders_agreeing}
    return out


def calls_usage(calls: list[Any], started: float) -> dict[str, Any]:
    """The usage of an item judged by direct gateway calls (their CallRecords), since ``started``."""
    return usage_record(Usage.from_calls(calls, 0.0), time.perf_counter() - started)


def usage_record(u: Usage, seconds: float) -> dict[str, Any]:
    """One item's usage as stored in items.jsonl (cached calls included in llm_calls, as in results)."""
    return {"llm_calls": u.llm_calls, "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
            "prompt_tokens_processed": u.prompt_tokens_processed,
            "retries": u.retries, "repairs": u.repairs, "cached_calls": u.cached_calls,
            "truncated_calls": u.truncated_calls, "seconds": round(seconds, 3)}
