"""Checks a submission before you tag it: what the grader will need, checked where it can be checked.

    python scripts/preflight.py --task 3                      # every check (make preflight TASK=3)
    python scripts/preflight.py --only requirements,dockerfile  # what CI runs (no weights needed)
    python scripts/preflight.py --only history                # no CRAG dev question in HEAD's history
    python scripts/preflight.py --task 3 --profile g4dn-hf    # another profile than the image's (a WARN line)
    python scripts/preflight.py --task 3 --variant cpu        # the CPU submission (submission/Dockerfile.cpu)

The checks (requirements, dockerfile, config, weights, adapters, lfs, aicrowd, history) and what each proves are in
`submission/preflight.py`; each line says PASS, WARN, SKIP or FAIL and names the fix when one fails. The profile
checked is the one the image runs (the Dockerfile's `ENV CRAG_PROFILE`) unless `--profile` names another.
Exit status 1 when a check fails (a WARN or SKIP does not fail). A check that breaks is reported as failed with its
error; the report is always printed whole.
"""
from __future__ import annotations

import argparse
import sys

from models import crag_data
from submission.image_requirements import PYPI
from submission.preflight import CHECKS, run_preflight


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", type=int, choices=(1, 2, 3), default=3, help="the task you submit to")
    parser.add_argument("--profile", default=None,
                        help="the profile to check (default: the Dockerfile's ENV CRAG_PROFILE, the image's)")
    parser.add_argument("--only", default=",".join(CHECKS), help=f"comma-separated subset of {','.join(CHECKS)}")
    parser.add_argument("--variant", choices=("gpu", "cpu"),
                        help="the submission checked (default: aicrowd.json's: cpu when it says \"gpu\": false)")
    parser.add_argument("--index-url", default=PYPI, help="the index the image's pip uses")
    parser.add_argument("--dev-data", default=None,
                        help=f"CRAG's dev file for the history check (default: {crag_data.DEV_DATA}; "
                             "the check is skipped where it is absent)")
    args = parser.parse_args(argv)
    chosen = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = sorted(set(chosen) - set(CHECKS))
    if unknown:
        parser.error(f"unknown checks {unknown}; choose from {CHECKS}")
    return run_preflight(chosen, args.task, args.profile, args.index_url, args.dev_data, args.variant)


if __name__ == "__main__":
    sys.exit(main())
