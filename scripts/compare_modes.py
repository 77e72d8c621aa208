"""db3's cascade and OmniRetrieval's mode side by side in one run, with this package's evaluator and
normalized judge.

    python scripts/compare_modes.py [--suites sample dev task2 task3 public] [--only db3 omni omni-every-source] \\
        [--profile cpu] [--output-root outputs/modes] [--limit N] [--rerun] [--lock "flock LOCKFILE"] [--dry-run]

Rows: `db3` (the profile with `pipeline.mode: db3`), `omni` (`pipeline.mode: omni` with the profile's `omni`
section) and `omni-every-source` (omni with source selection off: every source engaged for every question). Each
runs `local_evaluation.py` on every suite as scripts/ablation.py does (same suites, run folders, resumption), plus
`public`: the public-data acceptance set (data/acceptance/public_sql.jsonl, Task 1: public data and its SQL).

Columns per suite, read from each run's summary and traces:
- correct / missing / hallucinated (n), score and seconds per question (the normalized judge);
- answer-in-context recall: gold keys (`evaluation/experiments/context_recall.py`) stated by the evidence any answer attempt
  read (its chunks) or proposed (an exact value), over the keys of the questions that have one;
- source-selection accuracy (omni only), where the gold source is known: a source is a gold source of a question
  when, in the `omni-every-source` run of the same suite, its evidence (items or exact value) states a gold key;
  over the questions with at least one gold source, "top-1" counts the first engaged source being one, "any" any
  engaged source being one (the web is engaged for every question by default, so "any" is also reported without
  it: "any structured", over the questions whose gold includes a structured source);
- conflicts (omni rows): questions whose engaged sources gave differing exact values, and the rule that settled
  them.
The table is printed and written to `<output-root>/modes.md`. The library is `evaluation/experiments/modes.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.experiments.modes import MODES, SUITES, run_modes
from evaluation.experiments.grid import add_run_options


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suites", nargs="+", choices=list(SUITES), default=list(SUITES))
    parser.add_argument("--only", nargs="+", choices=list(MODES), help="rows to run (the table shows all)")
    add_run_options(parser, "outputs/modes")
    args = parser.parse_args(argv)
    return run_modes(args.suites, only=args.only, profile=args.profile, limit=args.limit, lock=args.lock,
                     output_root=args.output_root, rerun=args.rerun, dry_run=args.dry_run)


if __name__ == "__main__":
    sys.exit(main())
