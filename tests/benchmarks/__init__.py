"""Benchmark scripts (``bench_*.py``): run by hand, never collected by pytest."""
