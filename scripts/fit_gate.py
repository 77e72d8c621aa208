"""Fits the calibrated answer gate from saved runs, or measures a fitted gate on other runs.

    python scripts/fit_gate.py RUN_DIR [RUN_DIR ...] --output models/gates/cpu.json    # fit and write the gate
    python scripts/fit_gate.py --gate models/gates/cpu.json RUN_DIR [RUN_DIR ...]      # held-out calibration

A run dir is what `local_evaluation.py --output-dir DIR` wrote (its predictions.jsonl holds every answer
candidate's verifier scores in the trace, and the gold answers). Fitting prints the 5-fold cross-validated
reliability table (folds by question) with its ECE and the per-candidate score of the rules gate and the
calibrated gate side by side, then fits on every candidate and writes the gate (feature names, centring, scale,
coefficients, intercept, what it was fitted on, the cross-validated figures) as JSON for `verifier.gate_path`.
`--gate` instead prints the same table for a fitted gate on runs it never saw. The rules' verdict is replayed
under the profile's `verifier` thresholds (`--profile`). The library is `evaluation/gate_fit.py`.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable as a plain script from anywhere

from evaluation.gate_fit import (compare_gates, cross_validated, fit, labelled_candidates,  # noqa: E402
                                 reliability)
from models.config import load_config  # noqa: E402
from models.verify.gate import CalibratedGate  # noqa: E402


def _print_scores(title: str, figures: dict) -> None:
    print(f"{title}: per-candidate score (+1 kept and right, -1 kept and wrong, 0 refused)")
    for gate, s in figures.items():
        print(f"  {gate:10s} {s['right']:4d} right {s['wrong']:4d} wrong {s['refused']:4d} refused of {s['n']:4d}: "
              f"{s['score']:+.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="local_evaluation.py output dirs")
    parser.add_argument("--output", help="where to write the fitted gate (JSON)")
    parser.add_argument("--gate", help="measure this fitted gate on the runs instead of fitting one")
    parser.add_argument("--profile", default=None, help="whose verifier thresholds the rules gate replays "
                                                        "(default $CRAG_PROFILE or cpu)")
    parser.add_argument("--c", type=float, default=1.0, help="inverse L2 strength of the logistic regression")
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)
    if bool(args.output) == bool(args.gate):
        parser.error("give --output (fit) or --gate (measure), not both")
    missing = [r for r in args.runs if not (Path(r) / "predictions.jsonl").is_file()]
    if missing:
        parser.error(f"no predictions.jsonl in {missing}")
    rows = labelled_candidates(args.runs, load_config(args.profile).verifier)
    for run, n in Counter(r.run for r in rows).items():
        correct = sum(r.label for r in rows if r.run == run)
        print(f"{run}: {n} candidates, {correct} right")
    by_pathway = Counter(r.pathway for r in rows)
    print("by pathway: " + ", ".join(f"{p} {n}" for p, n in by_pathway.most_common()))
    labels = [r.label for r in rows]
    if args.gate:
        gate = CalibratedGate.load(args.gate)
        probabilities = [gate.probability(r.features) for r in rows]
        print("\n".join(reliability(probabilities, labels).lines()))
        _print_scores("held out", compare_gates(rows, probabilities))
        return 0
    probabilities = cross_validated(rows, args.folds, args.c)
    table = reliability(probabilities, labels)
    print(f"{args.folds}-fold cross-validated (folds by question):")
    print("\n".join(table.lines()))
    figures = compare_gates(rows, probabilities)
    _print_scores("cross-validated", figures)
    gate = fit(rows, args.c, {"runs": [str(r) for r in args.runs], "by_pathway": dict(by_pathway)})
    gate = CalibratedGate(gate.names, gate.mean, gate.scale, gate.coef, gate.intercept, gate.fitted_on,
                          {"cv_folds": args.folds, "cv_ece": table.ece, "cv_scores": figures})
    gate.save(args.output)
    heaviest = sorted(zip(gate.names, gate.coef), key=lambda p: -abs(p[1]))[:10]
    print("largest coefficients (standardised): " + ", ".join(f"{n} {c:+.2f}" for n, c in heaviest))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
