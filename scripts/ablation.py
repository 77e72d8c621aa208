"""Ablation of ElectricSheep's stages (Yuan et al. 2024, Table 2), and of the answers computed in code for choice,
yes/no and count questions, with this package's evaluator and normalized judge.

    python scripts/ablation.py [--suites sample dev task2] [--only base +web ...] [--profile cpu] \\
        [--baseline sample=RUN_DIR dev=RUN_DIR task2=RUN_DIR] [--lock "flock LOCKFILE"] \\
        [--output-root outputs/ablation] [--limit N] [--dry-run]

Configurations (rows): the base profile, then one module switched on at a time (web page processing, the
attribute predictor under each dynamic policy, the reasoning step with and without its backup summarizer,
with the calculator, with the knowledge extractor), then all of them, and `computed-off`: the base profile with
`verifier.computed_answers` off (choice, yes/no and count questions checked by the verifier alone), and
`kg-checks-off`: the base profile with `kg.program_checks` off (KG programs run as generated), and
`sql-off`: the base profile without the SQL source, and `web-arm`: the web pages retrieved by
ARM's information alignment (`web.retriever: arm`) instead of recall + rerank, and `web-arm-structure`:
ARM with its structure alignment, drafts and voting (`web.arm.structure.enabled`), and the answer
gates: `gate-rules` (the hand thresholds), `gate-calibrated` (the fitted `models/gates/cpu.json`), and the
calibrated gate with 3 sampled answers per question or with ARM's structure alignment. Suites (column groups):
the bundled sample (Task 1), the 10 real dev questions (`$CRAG_DATA/dev_data.jsonl.bz2` with the grader's
tokenizer), the Task-2 sample (bundled mock KG API), the Task-3 sample, and `kg_unseen` (62 natural questions
over another KG, `data/kg_acceptance/`, Task 2); `--data/--task/--tokenizer` define one suite of your own instead.

For every configuration, in order (cheapest first), and every suite it resolves and checks the profile with
`load_config`, saves it as `<output-root>/<configuration>/profile.yaml`, runs `local_evaluation.py` in a
subprocess (`--lock` is put in front of it, e.g. a `flock` on a shared lock file so measured runs never
overlap; default none) into `<output-root>/<configuration>/<suite>/`, and reads that run's `summary.json`
(normalized judge) and `predictions.jsonl` (mean seconds per question). A run directory that already has a
summary is read, not rerun (`--rerun` runs it again afresh; an unfinished one resumes its predictions: the rule of
every grid, `evaluation/experiments/grid.py`). `--baseline
SUITE=DIR` reads the base row of that suite from an existing run directory (e.g. the default profile's
final runs) instead of running it. The table is printed and written to `<output-root>/ablation.md`; a cell
whose run did not happen says "not run", one whose run failed says "failed". The library is
`evaluation/experiments/ablation.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.experiments.ablation import CONFIGURATIONS, SUITES, run_ablation
from evaluation.experiments.grid import add_run_options


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suites", nargs="+", choices=sorted(SUITES), default=list(SUITES))
    parser.add_argument("--data", help="one suite of your own instead of --suites (with --task, --tokenizer)")
    parser.add_argument("--task", type=int, default=1, choices=(1, 2, 3))
    parser.add_argument("--tokenizer")
    parser.add_argument("--only", nargs="+", choices=list(CONFIGURATIONS), help="configurations to run")
    parser.add_argument("--baseline", nargs="+", default=[], metavar="SUITE=DIR",
                        help="read the base row of SUITE from this finished run directory")
    add_run_options(parser, "outputs/ablation")
    args = parser.parse_args(argv)
    return run_ablation(args.suites, data=args.data, task=args.task, tokenizer=args.tokenizer, profile=args.profile,
                        only=args.only, baseline=args.baseline, lock=args.lock, limit=args.limit,
                        output_root=args.output_root, rerun=args.rerun, dry_run=args.dry_run)


if __name__ == "__main__":
    sys.exit(main())
