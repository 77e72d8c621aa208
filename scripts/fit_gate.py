"""Fits the calibrated answer gate from saved runs, or measures a fitted gate on other runs.

    python scripts/fit_gate.py RUN_DIR [RUN_DIR ...] --output models/gates/cpu.json    # fit and write the gate
    python scripts/fit_gate.py --gate models/gates/cpu.json RUN_DIR [RUN_DIR ...]      # held-out calibration
    python scripts/fit_gate.py --collect outputs/gate-fit --output models/gates/cpu.json   # `make gate`
    python scripts/fit_gate.py --collect outputs/gate-fit --reader models/readers/cpu --output models/gates/cpu-reader.json
    python scripts/fit_gate.py RUN_DIR ... --without reader --output models/gates/cpu.json   # not reading the reader

A run dir is what `local_evaluation.py --output-dir DIR` wrote (its predictions.jsonl holds every answer
candidate's verifier scores in the trace, and the gold answers). Fitting prints the 5-fold cross-validated
reliability table (folds by question) with its ECE and the per-candidate score of the rules gate and the
calibrated gate side by side, then fits on every candidate and writes the gate (feature names, centring, scale,
coefficients, intercept, what it was fitted on, the cross-validated figures) as JSON for `verifier.gate_path`.
`--gate` instead prints the same table for a fitted gate on runs it never saw. The rules' verdict is replayed
under the profile's `verifier` thresholds (`--profile`). `--collect DIR` first runs `local_evaluation.py` (rules
gate) on the package's own fit sets (`training.gate.fit.FIT_SUITES`, the catalogue's sets fitted on by the gate,
`evaluation/sets.py`: KG template questions generated into DIR by `training/gate/kg_questions.py` (Task 2), the web
questions of `data/gate/` (Task 1), the KG wordings, checkable and public-SQL acceptance sets; none shares a
question, by entity and fact in any words, with a set held out from the gate, and the three acceptance sets, also
reported in docs/results.md, are marked in-sample there: tests/verify/test_held_out.py) into `DIR/<set>/`,
skipping those already finished, and fits on them; the gate records a digest of each fit set. The library is `training/gate/refit.py` (the fit: `training/gate/fit.py`).
"""
from __future__ import annotations

import argparse

from evaluation.cli import UsageError
from training.gate.refit import fit_gate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", metavar="RUN_DIR", help="local_evaluation.py output dirs")
    parser.add_argument("--collect", metavar="DIR", help="first evaluate the package's fit sets into DIR/<set>/ and "
                                                          "fit on them (with the RUN_DIRs given)")
    parser.add_argument("--output", help="where to write the fitted gate (JSON)")
    parser.add_argument("--gate", help="measure this fitted gate on the runs instead of fitting one")
    parser.add_argument("--profile", default=None, help="whose verifier thresholds the rules gate replays "
                                                        "(default $CRAG_PROFILE or cpu)")
    parser.add_argument("--c", type=float, nargs="+", default=[0.03, 0.1, 0.3, 1.0],
                        help="inverse L2 strengths tried; the one with the best cross-validated per-candidate score "
                             "(then the lower ECE) is fitted")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--without", nargs="+", default=[], metavar="SCORE",
                        help="scores the gate must not read, e.g. reader (the answer reader's P(right))")
    parser.add_argument("--reader", default="", metavar="FOLDER",
                        help="--collect reads every candidate with this trained answer reader (verifier.reader), so "
                             "that its P(right) is a feature to fit with or leave out (--without reader)")
    args = parser.parse_args(argv)
    try:
        return fit_gate(args.runs, collect_dir=args.collect, output=args.output, gate_path=args.gate,
                        profile=args.profile, strengths=args.c, folds=args.folds, without=tuple(args.without),
                        reader=args.reader)
    except UsageError as exc:
        parser.error(str(exc))


if __name__ == "__main__":
    raise SystemExit(main())
