"""Benchmark adapters and scripts (``debatrix.benchmarks``): scoring the judge against gold labels."""
