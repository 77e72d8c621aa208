"""Task-3-sized benchmark of the whole CPU pipeline: is the web stage ever starved, is any batch late?

    python scripts/bench_task3.py [--data "$CRAG_DATA/dev_data.jsonl.bz2"] [--profile cpu] [--limit N]
                                  [--no-stage-budgets]
    python scripts/bench_task3.py --write-data /tmp/task3_50.jsonl   # the same input as a file, for the CPU image:
    python3 -m scripts.image run --task 3 --data /tmp/task3_50.jsonl  # (docs/results.md "The CPU submission in its image")

Input, built from the real dev questions: each question gets its own 5 pages plus the 45 pages of the
other 9 questions, so every question has 50 real pages (the 10 dev questions' 50 pages hold 14.9 MB of
HTML, the Task-3 size; nothing is padded or invented). The pages are shuffled with a fixed seed, so a
question's own pages are not simply the first five.

Run as the grader would: the profile's batch size, `pipeline.task` as the profile sets it (the CPU profile's
0 detects Task 3 from the 50 pages), and the bundled mock KG API started in-process as `local_evaluation.py`
does for Tasks 2/3. Printed per batch: seconds against the budget (batch_size x per_question_budget_s) and
each stage's seconds; per question: whether the web retriever ran for it, where its answer came from, and
the answer. Then the medians. `--no-stage-budgets` empties `pipeline.stage_budgets` (every stage may use
all the time left, the behaviour before stage budgets) for a side-by-side comparison. The library is
`evaluation/bench/task3.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.bench.task3 import bench_task3, write_task3_data
from models import crag_data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=crag_data.DEV_DATA)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--limit", type=int, help="only the first N questions (each still gets 50 pages)")
    parser.add_argument("--no-stage-budgets", action="store_true", help="every stage may use all the time left")
    parser.add_argument("--traces", help="write each question's answer and trace to this jsonl file")
    parser.add_argument("--write-data", metavar="FILE",
                        help="only write the 50-page input as a jsonl file for local_evaluation.py --data (the "
                             "grader's evaluator loop, e.g. in the CPU image: scripts/image.py run --data FILE)")
    args = parser.parse_args(argv)
    if args.write_data:
        return write_task3_data(args.data, args.write_data, args.limit)
    return bench_task3(args.data, args.profile, args.limit, args.no_stage_budgets, args.traces)


if __name__ == "__main__":
    sys.exit(main())
