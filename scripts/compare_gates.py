"""The answer gates side by side, each with and without ConfQA's prompt line, on every reported set.

    python scripts/compare_gates.py                                   # every configuration on every set
    python scripts/compare_gates.py --only rules reader rules+confqa reader+confqa --sets sample task2
    python scripts/compare_gates.py --dry-run                         # the commands only

Configurations: `rules`, `reader` (the answer reader's P(right) >= 0.5), `calibrated` (`models/gates/cpu.json`,
fitted without the reader's feature) and `calibrated-reader` (`models/gates/cpu-reader.json`, fitted with it), each
also `+confqa` (`pipeline.answer_prompt: answer_confqa`); a calibrated one whose gate file is not there is not run.
Each (configuration, set) is one `local_evaluation.py` run into `<output-root>/<configuration>/<set>/`, read back
when finished (`--rerun` runs it again). The table marks the sets the gate is fitted on in-sample, pools the sets
held out from it, names the best configuration by that pool, and is written to `<output-root>/answer_gates.md`.
The library is `evaluation/experiments/answer_gates.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.experiments.answer_gates import CONFIGURATIONS, SETS, run_answer_gates
from evaluation.experiments.grid import add_run_options


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=list(CONFIGURATIONS), default=list(CONFIGURATIONS))
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    add_run_options(parser, "outputs/answer-gates")
    args = parser.parse_args(argv)
    return run_answer_gates(args.only, args.sets, profile=args.profile, output_root=args.output_root,
                            limit=args.limit, lock=args.lock, rerun=args.rerun, dry_run=args.dry_run)


if __name__ == "__main__":
    sys.exit(main())
