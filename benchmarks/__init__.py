"""Benchmark adapters and scripts (``debatrix.benchmarks``): scoring the judge against gold labels.

An adapter is a :class:`Benchmark` subclass decorated with :func:`benchmark` in any module of this package; that is
all it takes for ``debatrix bench NAME`` and :func:`make_benchmark` to find it. ``runner.run_benchmark`` judges it
(resumable) and writes the tables and plots."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from .base import BENCHMARKS, Benchmark, BenchmarkDataError, Registered, benchmark

# modules that are scripts or helpers, not adapters: importing them would only cost time
_NOT_ADAPTERS = {"base", "metrics", "scoring", "runner", "perf", "offline", "injection", "compare"}


def registered() -> dict[str, Registered]:
    """Every registered benchmark by name (imports the adapters' modules once)."""
    for info in pkgutil.iter_modules(__path__):
        if info.name not in _NOT_ADAPTERS:
            importlib.import_module(f"{__name__}.{info.name}")
    return BENCHMARKS


def make_benchmark(name: str, data: str | Path | None = None, variant: str | None = None) -> Benchmark:
    entry = registered().get(name)
    if entry is None:
        raise BenchmarkDataError(f"unknown benchmark {name!r}: use one of {', '.join(BENCHMARKS)}")
    if not entry.variants:
        if variant is not None:
            raise BenchmarkDataError(f"{name} has no variants (--variant {variant})")
        return entry.cls(data)
    if variant is not None and variant not in entry.variants:
        raise BenchmarkDataError(f"unknown variant {variant!r} of {name}: use one of {', '.join(entry.variants)}")
    return entry.cls(data, variant or entry.variants[0])


__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkDataError", "benchmark", "make_benchmark", "registered"]
