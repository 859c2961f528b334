"""Benchmark adapters and scripts (``debatrix.benchmarks``): scoring the judge against gold labels.

``make_benchmark(name, data=None, variant=None)`` builds one of :data:`BENCHMARKS`; ``runner.run_benchmark`` judges
it (resumable) and writes the tables and plots."""

from __future__ import annotations

from pathlib import Path

from .base import Benchmark, BenchmarkDataError

BENCHMARKS = {
    "debateart": "PanelBench DebateArt (1v1 debates, per-dimension winners; RMSE×100)",
    "bp": "PanelBench BP-Competition (British Parliamentary; accuracy against the advancing teams)",
    "speech-quality": "single opening speeches rated 1-5 (variants: plain, cot, multi, aspects; tau-c, kappa)",
    "claims": "claim matching: Explicit / Implicit / Negative (matchers: llm, embedding; ROC AUC, F1)",
    "critiques": "critique rubric ratings from a JSONL file (--data required; ranking error, weighted loss)",
}


def make_benchmark(name: str, data: str | Path | None = None, variant: str | None = None) -> Benchmark:
    if name == "debateart":
        from .panelbench import DebateArt
        return DebateArt(data)
    if name == "bp":
        from .panelbench import BPCompetition
        return BPCompetition(data)
    if name == "speech-quality":
        from .speech_quality import SpeechQuality
        return SpeechQuality(data, variant or "plain")
    if name == "claims":
        from .claims import ClaimMatching
        return ClaimMatching(data, variant or "llm")
    if name == "critiques":
        if data is None:
            raise BenchmarkDataError("critiques: give the JSONL file with --data (schema: README, "
                                     "'Reproducing the papers')")
        from .critiques import CritiqueRatings
        return CritiqueRatings(data)
    raise BenchmarkDataError(f"unknown benchmark {name!r}: use one of {', '.join(BENCHMARKS)}")


__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkDataError", "make_benchmark"]
