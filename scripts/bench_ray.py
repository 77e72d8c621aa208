"""Questions per minute of the evaluation on 1 and 2 local Ray workers, measured side by side in one run.

    python scripts/bench_ray.py                      # the bundled sample (20 questions), CPU profile, 1 then 2 workers
    python scripts/bench_ray.py --workers 1,2,4 --limit 40 --data path/to/dev.jsonl.bz2

Each configuration starts its own local cluster (one CPU per worker, a 256 MB object store), builds one model
per worker and answers every question into a fresh predictions file; the time is the whole wall time (cluster
start, model loads, answering), which is what an entrant waits for. The single-process run is measured beside
them (`--no-single` skips it). On a machine with fewer cores than workers, the workers share the cores: that
measures the cost of Ray, not a speed-up. Run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import json
import sys
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(REPO_ROOT / DEFAULT_DATA_PATH))
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--single", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    examples = list(islice(load_examples(args.data), args.limit or None))
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        if args.single:
            seconds = timed_single(args.profile, examples, Path(scratch) / "single.jsonl")
            rows.append(("one process (no Ray)", seconds))
        for workers in (int(w) for w in args.workers.split(",")):
            seconds = timed_ray(args.profile, examples, Path(scratch) / f"ray{workers}.jsonl", workers)
            rows.append((f"Ray, {workers} worker{'s' if workers > 1 else ''}", seconds))
    print(f"{len(examples)} questions, profile {args.profile}\n| run | wall s | questions / min | vs first |\n|---|---|---|---|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.1f} | {60 * len(examples) / seconds:.1f} | {rows[0][1] / seconds:.2f}x |")
    print(json.dumps({name: round(seconds, 1) for name, seconds in rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
