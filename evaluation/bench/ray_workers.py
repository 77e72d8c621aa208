"""Questions per minute of the evaluation on local Ray workers against one process, measured side by side in one
run (the command line is scripts/bench_ray.py, whose docstring says what the wall time includes).

`timed_single` and `timed_ray` each build the model(s) and answer every question into a fresh predictions file,
returning the whole wall time; `bench_ray` measures the single process and each worker count and prints the table
and one JSON line.
"""
from __future__ import annotations

import json
import tempfile
import time
from itertools import islice
from pathlib import Path

from evaluation.data import DEFAULT_DATA_PATH, load_examples
from evaluation.runner import PredictionLog, run_predictions
from models.config import REPO_ROOT, load_config
from models.crag_model import CragModel, batch_size_of


def build_model(profile: str):
    return CragModel(load_config(profile))


def timed_single(profile: str, examples: list[dict], out: Path) -> float:
    started = time.perf_counter()
    model = build_model(profile)
    run_predictions(model, examples, PredictionLog(out), model.get_batch_size())
    return time.perf_counter() - started


def timed_ray(profile: str, examples: list[dict], out: Path, workers: int) -> float:
    import functools

    import ray

    from evaluation.ray_runner import run_predictions_ray, start_ray

    started = time.perf_counter()
    start_ray(None, workers, 1.0)
    try:
        run_predictions_ray(functools.partial(build_model, profile), examples, PredictionLog(out),
                            batch_size_of(load_config(profile)), workers=workers)
    finally:
        ray.shutdown()
    return time.perf_counter() - started


def bench_ray(data: str = str(REPO_ROOT / DEFAULT_DATA_PATH), limit: int = 0, profile: str = "cpu",
              worker_counts: str = "1,2", single: bool = True) -> int:
    """Times the first `limit` questions of `data` (0: all) on one process (unless not `single`) and on each
    comma-separated worker count of `worker_counts`, and prints the table."""
    examples = list(islice(load_examples(data), limit or None))
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        if single:
            seconds = timed_single(profile, examples, Path(scratch) / "single.jsonl")
            rows.append(("one process (no Ray)", seconds))
        for workers in (int(w) for w in worker_counts.split(",")):
            seconds = timed_ray(profile, examples, Path(scratch) / f"ray{workers}.jsonl", workers)
            rows.append((f"Ray, {workers} worker{'s' if workers > 1 else ''}", seconds))
    print(f"{len(examples)} questions, profile {profile}\n| run | wall s | questions / min | vs first |\n|---|---|---|---|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.1f} | {60 * len(examples) / seconds:.1f} | {rows[0][1] / seconds:.2f}x |")
    print(json.dumps({name: round(seconds, 1) for name, seconds in rows}))
    return 0
