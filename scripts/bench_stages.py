"""Standalone cost (and format-following) of ElectricSheep's LLM stages on real CRAG questions.

    python scripts/bench_stages.py [--data "$CRAG_DATA/dev_data.jsonl.bz2"] [--profile cpu] [--limit 10]

The references of each question are the profile's web pathway output (db3 retrieval; its time is not
counted). Each stage then runs alone, on the whole batch, with the profile's LLM: the attribute predictor
(classifier and LLM x5 self-consistency), the calculator (x`calculator.samples`), the knowledge extractor,
the reasoning module and the backup summarizer on every reasoning output (to time it even when the
reasoning parses). Printed per stage: wall seconds per question, and what it produced: how many questions
got a calculation, a knowledge note, a parsable reasoning output; and the answers beside the gold ones.
Wall time on a shared machine is noisy (CPU time, printed beside it, much less): compare within one run.
The library is `evaluation/bench/stages.py`.
"""
from __future__ import annotations

import argparse

from evaluation.bench.stages import bench_stages
from models import crag_data


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=crag_data.DEV_DATA)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    bench_stages(args.data, args.profile, args.limit, args.threads)


if __name__ == "__main__":
    main()
