"""Measures the current results and writes the one table of README.md and docs/results.md (between the markers
`<!-- current-results:start -->` and `<!-- current-results:end -->`), so that nobody types it.

    python scripts/current_results.py [--profiles cpu g4dn] [--sets sample dev ...] [--rerun] \\
        [--output-root outputs/current-results] [--limit N] [--dry-run] [--render-only] [--check] \\
        [--store docs/current_results.json] [--write README.md docs/results.md]

Sets (rows, in this order): the bundled sample (Task 1), the 10 real dev questions (`$CRAG_DATA/`, with the
grader's tokenizer), the Task-2 and Task-3 samples, and the acceptance sets kg_wordings, kg_unseen (another KG),
checkable and public_sql (`data/acceptance/`). Profiles (column groups): `cpu` (the default) and `g4dn` (on a GPU
machine with the weights in place).

Every set of `--sets` is run on every profile of `--profiles`, one at a time, as the command the table shows plus
`--profile P --output-dir <output-root>/<P>/<set>`; a run directory that already has a summary is read, not rerun
(`--rerun` runs it again afresh, `--no-resume`; an unfinished one resumes its predictions: the rule of every grid,
`evaluation/experiments/grid.py`). A set whose data is not there (e.g. CRAG's, where `$CRAG_DATA` lacks them) is
skipped and its stored figure kept; a failed run is reported, keeps its stored figure and makes the exit status 1.
The figures (normalized judge's correct / missing / hallucinated, median seconds per question, date, commit,
machine) go to `--store`; every profile and set not run keeps its stored figure; the table is rendered from them
into every file of `--write` (all files are checked for the markers before anything is written) and printed.

`--limit N` runs N questions per set into `<output-root>/limit-N/` and writes nothing (the table is printed);
`--dry-run` prints the commands; `--render-only` re-makes the documents from the stored figures; `--check` says
(exit 1) whether the documents' blocks differ from the stored figures' rendering. The library is
`evaluation/experiments/current_results.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.experiments.current_results import DOCUMENTS, OUTPUT_ROOT, PROFILES, SETS, STORE, run_current_results, stale


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profiles", nargs="+", choices=PROFILES, default=["cpu"])
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    parser.add_argument("--output-root", default=OUTPUT_ROOT)
    parser.add_argument("--rerun", action="store_true", help="run again, afresh, even where a run has finished")
    parser.add_argument("--limit", type=int, help="a quick check: N questions per set, nothing written")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    parser.add_argument("--render-only", action="store_true", help="re-make the documents from --store")
    parser.add_argument("--check", action="store_true", help="exit 1 when a document's block is not up to date")
    parser.add_argument("--store", default=str(STORE), help="the stored figures (JSON)")
    parser.add_argument("--write", nargs="+", default=[str(path) for path in DOCUMENTS], metavar="FILE",
                        help="the documents whose block is re-made")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale(args.write, args.store)
        print("\n".join(problems) or "up to date", file=sys.stderr if problems else sys.stdout)
        return 1 if problems else 0
    return run_current_results(args.profiles, args.sets, output_root=args.output_root, rerun=args.rerun,
                               limit=args.limit, dry_run=args.dry_run, render_only=args.render_only,
                               store_path=args.store, documents=args.write)


if __name__ == "__main__":
    sys.exit(main())
