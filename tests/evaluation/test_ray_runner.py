"""Evaluation over a local Ray cluster (2 workers, 1 CPU each, a 256 MB object store): the same predictions as one
process, a killed worker's questions re-run (none lost or duplicated), and a resumed run asking only what is left.
In CI a missing `ray` fails these tests (tests/packaged.py)."""
from __future__ import annotations

import importlib.util
import os
from itertools import islice
from pathlib import Path

import pytest

from evaluation.data import DEFAULT_DATA_PATH, load_examples
from evaluation.runner import PredictionLog, run_predictions
from models.config import REPO_ROOT
from tests.packaged import missing_installed

SAMPLE = str(REPO_ROOT / DEFAULT_DATA_PATH)


@pytest.fixture(scope="module")
def ray_cluster():
    if importlib.util.find_spec("ray") is None:
        missing_installed("ray is not installed (requirements-cpu.txt)")
    import ray

    from evaluation.ray_runner import start_ray

    start_ray(None, workers=2, cpus_per_worker=1)
    yield ray
    ray.shutdown()


class EchoModel:
    """A fast stand-in for `CragModel`: the answer names the question; `die_on` kills the worker process the first
    time it meets that id (a marker file makes it once per test), as an out-of-memory kill would."""

    def __init__(self, die_on: str = "", marker: str = ""):
        self.die_on, self.marker = die_on, marker
        self.last_answers, self.last_latencies = [], []

    def get_batch_size(self):
        return 4

    def batch_generate_answer(self, batch):
        if self.die_on in batch["interaction_id"] and not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os._exit(1)
        self.last_answers = [{"source": "web", "domain": "open", "trace": {"pid": os.getpid()}}
                             for _ in batch["query"]]
        self.last_latencies = [0.01] * len(batch["query"])
        return [f"answer to {q}" for q in batch["query"]]


def _view(path):
    return sorted((r["interaction_id"], r["prediction"], r["source"]) for r in PredictionLog(path).load())


def test_the_stand_in_through_ray_gives_the_single_process_records(ray_cluster, tmp_path):
    from evaluation.ray_runner import run_predictions_ray

    examples = list(load_examples(SAMPLE))
    run_predictions(EchoModel(), examples, PredictionLog(tmp_path / "one.jsonl"), 4)
    stats = run_predictions_ray(EchoModel, examples, PredictionLog(tmp_path / "ray.jsonl"), 4, workers=2)
    assert stats.n_new == len(examples) == 20
    assert _view(tmp_path / "ray.jsonl") == _view(tmp_path / "one.jsonl")
    pids = {r["trace"]["pid"] for r in PredictionLog(tmp_path / "ray.jsonl").load()}
    assert len(pids) == 2 and os.getpid() not in pids  # both workers answered; the driver answered nothing


def test_a_killed_workers_questions_are_rerun_none_lost_or_duplicated(ray_cluster, tmp_path):
    from evaluation.ray_runner import run_predictions_ray

    examples = list(load_examples(SAMPLE))
    victim, marker = examples[9]["interaction_id"], str(tmp_path / "killed")
    log = PredictionLog(tmp_path / "ray.jsonl")
    stats = run_predictions_ray(lambda: EchoModel(die_on=victim, marker=marker), examples, log, 4, workers=2)
    assert Path(marker).exists()  # a worker really died holding the victim's batch
    lines = (tmp_path / "ray.jsonl").read_text().splitlines()
    ids = [r["interaction_id"] for r in log.load()]
    assert stats.n_new == len(lines) == len(ids) == len(set(ids)) == 20
    assert {e["interaction_id"] for e in examples} == set(ids)


def test_a_resumed_ray_run_asks_only_what_is_left(ray_cluster, tmp_path):
    from evaluation.ray_runner import run_predictions_ray

    examples = list(load_examples(SAMPLE))
    log = PredictionLog(tmp_path / "ray.jsonl")
    run_predictions(EchoModel(), examples[:8], log, 4)  # a run killed after two batches
    stats = run_predictions_ray(EchoModel, examples, log, 4, workers=2)
    assert (stats.n_resumed, stats.n_new) == (8, 12)
    assert sorted(r["interaction_id"] for r in log.load()) == sorted(e["interaction_id"] for e in examples)


def test_the_cpu_model_on_two_workers_gives_the_single_process_predictions(ray_cluster, tmp_path):
    """The real CPU profile (SmolLM2, MiniLM), 8 questions of the bundled sample in batches of 4: one process,
    then two Ray workers of one CPU each; ids and answer texts identical. The deadline is out of the way: on a
    loaded machine it would cut the two runs at different places, which says nothing about Ray."""
    from evaluation.ray_runner import run_predictions_ray
    from models.config import load_config
    from models.crag_model import CragModel

    def build():
        return CragModel(load_config("cpu", {"pipeline.batch_size": 4, "pipeline.per_question_budget_s": 3600.0}))

    examples = list(islice(load_examples(SAMPLE), 8))
    run_predictions(build(), examples, PredictionLog(tmp_path / "one.jsonl"), 4)
    run_predictions_ray(build, examples, PredictionLog(tmp_path / "ray.jsonl"), 4, workers=2)
    one = [(r["interaction_id"], r["prediction"]) for r in PredictionLog(tmp_path / "one.jsonl").load()]
    two = [(r["interaction_id"], r["prediction"]) for r in PredictionLog(tmp_path / "ray.jsonl").load()]
    assert sorted(two) == sorted(one) and len(one) == 8
