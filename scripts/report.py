"""Draws a run's evaluation report as one self-contained HTML page, or two runs side by side.

    python scripts/report.py RUN_DIR                    # RUN_DIR/report.html (a finished or interrupted run)
    python scripts/report.py RUN_A --against RUN_B      # RUN_A/compare.html: the questions whose verdict changed

`local_evaluation.py` writes RUN_DIR/report.html itself at the end of every run; this redraws it (or a comparison,
e.g. `pipeline.mode` db3 against omni on the Task-3 sample) from the run's files. The library is
`evaluation/html_report.py`; the page needs no network and opens from disk.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluation.html_report import write_html_report
from evaluation.run_dir import RunDir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="a local_evaluation.py --output-dir folder")
    parser.add_argument("--against", type=Path, help="a second run: the page lists the questions whose verdict differs")
    parser.add_argument("--out", type=Path, help="where to write the page (default: in RUN)")
    args = parser.parse_args(argv)
    for run in (args.run, args.against):
        if run is not None and not RunDir(run).has_predictions():
            parser.error(f"{run} has no {RunDir.PREDICTIONS} (not a local_evaluation.py output folder)")
    print(write_html_report(args.run, args.against, args.out).resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
