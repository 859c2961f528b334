"""Benchmark adapters and scripts (``debatrix.benchmarks``): scoring the judge against gold labels.

An adapter is a :class:`Benchmark` subclass decorated with :func:`benchmark` in a module named by a
``debatrix.benchmarks`` entry point (pyproject.toml; another installed package may add its own): that is all it takes
for ``debatrix bench NAME`` and :func:`make_benchmark` to find it. ``runner.run_benchmark`` judges it
(resumable) and writes the tables and plots."""

from __future__ import annotations

from pathlib import Path

from .base import BENCHMARKS, Benchmark, BenchmarkDataError, benchmark


def make_benchmark(name: str, data: str | Path | None = None, variant: str | None = None) -> Benchmark:
    entry = BENCHMARKS.get_or_raise(name)
    if not entry.variants:
        if variant is not None:
            raise BenchmarkDataError(f"{name} has no variants (--variant {variant})")
        return entry.cls(data)
    if variant is not None and variant not in entry.variants:
        raise BenchmarkDataError(f"unknown variant {variant!r} of {name}: use one of {', '.join(entry.variants)}")
    return entry.cls(data, variant or entry.variants[0])


__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkDataError", "benchmark", "make_benchmark"]
