"""Questions per minute of the evaluation on 1 and 2 local Ray workers, measured side by side in one run.

    python scripts/bench_ray.py                      # the bundled sample (20 questions), CPU profile, 1 then 2 workers
    python scripts/bench_ray.py --workers 1,2,4 --limit 40 --data path/to/dev.jsonl.bz2

Each configuration starts its own local cluster (one CPU per worker, a 256 MB object store), builds one model
per worker and answers every question into a fresh predictions file; the time is the whole wall time (cluster
start, model loads, answering), which is what an entrant waits for. The single-process run is measured beside
them (`--no-single` skips it). On a machine with fewer cores than workers, the workers share the cores: that
measures the cost of Ray, not a speed-up. Run it on an otherwise idle machine. The library is
`evaluation/bench/ray_workers.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.bench.ray_workers import bench_ray
from evaluation.data import DEFAULT_DATA_PATH
from models.config import REPO_ROOT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(REPO_ROOT / DEFAULT_DATA_PATH))
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--single", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args(argv)
    return bench_ray(args.data, args.limit, args.profile, args.workers, args.single)


if __name__ == "__main__":
    sys.exit(main())
