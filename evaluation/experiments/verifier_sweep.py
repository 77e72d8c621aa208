"""Choosing the verifier's thresholds by replaying saved traces under a grid of settings, as scripts/sweep_verifier.py
prints it (its docstring describes the runs and the scores).

`sweep_verifier` replays every run's records (`models.verify.replay`) under each setting of the `AXES` grid, scores
the replayed answers with the normalized judge and the V3 rules alone, and prints the settings best first, with the
profile's own setting marked. No model is loaded.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from evaluation.judge import RulesJudge
from evaluation.metrics import ScoreItem, compute_metrics, score_predictions
from evaluation.normalized_judge import NormalizedJudge
from evaluation.run_dir import RunDir, read_records
from models.config import load_config
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


def sweep_verifier(run_paths: list[str], profile: str = "cpu", tokenizer: str | None = None, top: int = 15) -> int:
    """Replays the runs (output dirs or predictions.jsonl files with traces) under every setting, with `profile`'s
    verifier section as the base and the grader's trim from `tokenizer`, and prints the `top` settings."""
    base = load_config(profile).verifier
    judge, official, trim = NormalizedJudge(), RulesJudge(), load_grader_trim(tokenizer)
    runs = {name: _records(Path(name)) for name in run_paths}
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
    for total, config, per_run in rows[:top] + [r for r in chosen if r not in rows[:top]]:
        mark = "*" if _same(config, base) else " "
        setting = " ".join(f"{k}={getattr(config, k)}" for k in AXES)
        cells = "  ".join(f"{Path(n).name}: {m['score']:+.2f} {m['accuracy']:.2f} {m['hallucination']:.2f} "
                          f"({m['n_correct']}/{m['n_miss']}/{m['n_hallucination']}) [{m['official']:+.2f}]"
                          for n, m in per_run.items())
        print(f"{mark} mean {total:+.3f} | {setting} | {cells}")
    return 0


def _records(path: Path) -> list[dict]:
    """The records of a run folder, or of a predictions file given by its path."""
    return RunDir(path).records() if path.is_dir() else read_records(path)


def _same(config, base) -> bool:
    return all(getattr(config, k) == getattr(dataclasses.replace(base, enabled=True), k) for k in AXES)
