"""tokens/s and start-up of the CPU profile's LLM on transformers (`cpu`) and on vLLM's CPU build (`cpu-vllm`),
measured side by side in one run (docs/results.md "cpu and cpu-vllm").

    python scripts/bench_backends.py                          # batch 1, 4 and 16; 32 new tokens; best of 3
    python scripts/bench_backends.py --profiles cpu-vllm --batches 1 4

Needs `make setup VLLM=1` for cpu-vllm. Wall-clock figures: run it on an otherwise idle machine. The library is
`evaluation/bench/backends.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.bench.backends import bench_backends


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profiles", nargs="+", default=["cpu", "cpu-vllm"])
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 4, 16])
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    bench_backends(args.profiles, args.batches, args.new_tokens, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
