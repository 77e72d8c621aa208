"""CPU figures of the transformers backend (docs/results.md "The LLM on CPU"): tokens/s and the grammar-mask cost per step.

    python scripts/bench_llm.py                   # SmolLM2-135M (the CPU profile's model), one thread

Measured side by side in one run, in CPU time of this process (one thread), so a machine shared with other
jobs changes the figures little:
- tokens/s of `model.generate` at batch 1 and batch 4, in float32 and bfloat16, with exactly
  `--new-tokens` new tokens per row (min = max, greedy) after one warm-up call;
- the grammar-mask cost per decoding step: the KG pathway's real request for a sample question, decoded
  under its movie-domain Lark grammar by `HFGenerator` (llguidance masks), with the logits processor's
  own time per step beside the whole step's time.
Prints a Markdown table and one JSON line. The library is `evaluation/bench/llm.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.bench.llm import bench_llm


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    return bench_llm(args.new_tokens, args.repeats, args.threads)


if __name__ == "__main__":
    sys.exit(main())
