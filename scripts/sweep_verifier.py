"""Chooses the verifier's thresholds: replays saved traces under a grid of settings and prints the
accuracy / hallucination / score of each, per run and summed.

    python scripts/sweep_verifier.py outputs/cpu-task1 /tmp/dev10 /tmp/task2 /tmp/task3

Each argument is a `local_evaluation.py` output dir (or its predictions.jsonl) whose records carry traces.
The replayed answers are scored by the deterministic `normalized` judge (the headline) and by the V3 rules
alone (the official numbers without an LLM judge), as local_evaluation.py scores them; the current
profile's setting is marked with `*`. No model is loaded.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path


from models.config import load_config
from evaluation.judge import RulesJudge
from evaluation.metrics import ScoreItem, compute_metrics, score_predictions
from evaluation.normalized_judge import NormalizedJudge
from evaluation.runner import PREDICTIONS_FILE, PredictionLog
from models.trim import load_grader_trim
from models.verify.replay import grid, replay

AXES = {
    "support_scope": ("evidence", "chunk", "sentence"),
    "min_lexical_support": (0.5, 0.75, 1.0),
    "min_similarity": (0.0, 0.5, 0.6, 0.65, 0.7),
    "min_sentence_support": (0.0, 0.5, 0.75, 0.85),
    "min_question_overlap": (0.0, 0.2, 0.3, 0.4, 0.5),
    "accept_choices": (False, True),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="output dirs or predictions.jsonl files with traces")
    parser.add_argument("--profile", default="cpu", help="the profile whose verifier section is the base")
    parser.add_argument("--tokenizer", help="the grader's tokenizer dir for the exact 75-token trim")
    parser.add_argument("--top", type=int, default=15, help="settings printed, best total score first")
    args = parser.parse_args(argv)

    base = load_config(args.profile).verifier
    judge, official, trim = NormalizedJudge(), RulesJudge(), load_grader_trim(args.tokenizer)
    runs = {name: PredictionLog(_predictions(name)).load() for name in args.runs}
    rows = []
    for config in grid(dataclasses.replace(base, enabled=True), AXES):
        per_run = {}
        for name, records in runs.items():
            items = [ScoreItem(r.get("query", ""), replay(r, config), r.get("gold", ""), tuple(r.get("alt_ans") or ()))
                     for r in records]
            per_run[name] = compute_metrics(score_predictions(items, judge, trim))
            per_run[name]["official"] = compute_metrics(score_predictions(items, official, trim))["score"]
        total = sum(m["score"] * m["total"] for m in per_run.values()) / max(1, sum(m["total"] for m in per_run.values()))
        rows.append((total, config, per_run))
    rows.sort(key=lambda row: -row[0])
    bars = [row for row in rows if all(m["score"] >= 0 and m["hallucination"] <= 0.2 for m in row[2].values())]
    print(f"{len(bars)} of {len(rows)} settings give every run a score >= 0 and hallucination <= 20 %")
    chosen = [row for row in rows if _same(row[1], base)]
    print(f"normalized judge; {len(rows)} settings; per run: score accuracy hallucination "
          f"(n correct/missing/wrong) [official rules-only score]")
    for total, config, per_run in rows[:args.top] + [r for r in chosen if r not in rows[:args.top]]:
        mark = "*" if _same(config, base) else " "
        setting = " ".join(f"{k}={getattr(config, k)}" for k in AXES)
        cells = "  ".join(f"{Path(n).name}: {m['score']:+.2f} {m['accuracy']:.2f} {m['hallucination']:.2f} "
                          f"({m['n_correct']}/{m['n_miss']}/{m['n_hallucination']}) [{m['official']:+.2f}]"
                          for n, m in per_run.items())
        print(f"{mark} mean {total:+.3f} | {setting} | {cells}")
    return 0


def _predictions(name: str) -> Path:
    path = Path(name)
    return path / PREDICTIONS_FILE if path.is_dir() else path


def _same(config, base) -> bool:
    return all(getattr(config, k) == getattr(dataclasses.replace(base, enabled=True), k) for k in AXES)


if __name__ == "__main__":
    sys.exit(main())
