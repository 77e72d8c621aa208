"""Benchmarks behind the scripts/bench_*.py command lines: each module holds one benchmark's measurements and its
printed tables (`bench_<name>(...)`), importable and tested without the command line. Nothing here is imported at
inference; heavy dependencies (torch, Ray, models) are imported by the benchmark that needs them."""
