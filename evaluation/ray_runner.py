"""`run_predictions` sharded over a Ray cluster (`local_evaluation.py --ray [ADDRESS] --workers N`).

Plain actors, not Ray Data, and why:
- the unit of work is one model batch, formed by the driver exactly as `run_predictions` forms it (same
  questions, same order, same size), so each batch meets the same model in the same shape and the predictions are
  the single-process run's;
- the driver appends each batch's records to the same `predictions.jsonl` the moment it returns, so a killed run
  resumes at question granularity with nothing lost or repeated (the resume logic is `run_predictions`'s);
- a batch in flight on a worker that dies is re-run by Ray itself (`max_restarts` rebuilds the actor, its model
  loaded again; `max_task_retries` re-sends the call), and if the retries are spent the driver re-sends it to
  another worker: a worker's death costs time, never a question;
- Ray Data would convert every row to Arrow blocks (a Task-3 question is ~15 MB of HTML) and decide batch
  composition itself; here the examples stay a stream the driver reads lazily, with at most two batches per
  worker in flight (Task-3 tar shards are never loaded whole).
Ray does not keep order, so each batch carries its ids; the report orders records by the data, as it does today.

Each worker builds its model once (`build()` in the actor's process: the profile's weights, on the GPUs Ray gives
it with `gpus_per_worker`). A local cluster is started small: `num_cpus` = the workers' CPUs and a bounded object
store (Ray reserves ~30 % of RAM by default), no dashboard.
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Iterable

from evaluation.data import batched, grader_view
from evaluation.runner import PredictionLog, RunStats, answer_details, save_batch, still_to_ask

log = logging.getLogger(__name__)

OBJECT_STORE_BYTES = 256 * 1024 * 1024  # a local cluster's object store: batches of pages, never the data set
IN_FLIGHT_PER_WORKER = 2  # one running, one queued: a worker never waits for the driver


class EvaluationWorker:
    """A Ray actor holding one model: `answer(batch)` is one `batch_generate_answer` call, timed."""

    def __init__(self, build: Callable[[], object]):
        self.model = build()

    def answer(self, batch: dict) -> tuple[list, list[dict], list | None, float]:
        started = time.perf_counter()
        answers = self.model.batch_generate_answer(batch)
        elapsed = time.perf_counter() - started
        return (list(answers) if isinstance(answers, (list, tuple)) else answers,
                answer_details(getattr(self.model, "last_answers", None)),
                getattr(self.model, "last_latencies", None), elapsed)


def start_ray(address: str | None, workers: int, cpus_per_worker: float, env: dict | None = None):
    """Joins the cluster at `address` ("auto": the one on this machine), or starts a small local one."""
    import ray

    runtime_env = {"env_vars": dict(env)} if env else None
    if address:
        return ray.init(address=address, runtime_env=runtime_env, ignore_reinit_error=True)
    return ray.init(num_cpus=max(1, int(workers * cpus_per_worker + 0.999)), object_store_memory=OBJECT_STORE_BYTES,
                    include_dashboard=False, runtime_env=runtime_env, ignore_reinit_error=True,
                    log_to_driver=False)


def run_predictions_ray(build: Callable[[], object], examples: Iterable[dict], predictions: PredictionLog,
                        batch_size: int, *, workers: int = 2, cpus_per_worker: float = 1.0, gpus_per_worker: float = 0,
                        retries: int = 2, on_batch: Callable[[list[dict]], None] | None = None) -> RunStats:
    """Asks every example not yet in `predictions` on `workers` Ray actors, each built with `build()`.

    Ray must be initialised (`start_ray`). Batches are formed as `run_predictions` forms them; each finished
    batch is appended to `predictions` by this (the driver's) process, in the order batches finish.

    Raises:
        ValueError: a worker returned a different number of answers than it was asked questions.
        RuntimeError: a batch failed on every attempt (its worker kept dying, or the model raised); the batches
            finished before it are saved and a rerun resumes after them.
    """
    import ray

    remote = ray.remote(EvaluationWorker).options(num_cpus=cpus_per_worker, num_gpus=gpus_per_worker,
                                                  max_restarts=retries, max_task_retries=retries)
    actors = [remote.remote(build) for _ in range(max(1, workers))]
    stats = RunStats()
    pending: dict = {}  # object ref -> (batch, actor index, attempt)
    queue = batched(still_to_ask(examples, predictions, stats), batch_size)
    load = [0] * len(actors)

    def submit(batch: dict, attempt: int, avoid: int | None = None) -> None:
        k = min((i for i in range(len(actors)) if i != avoid or len(actors) == 1), key=load.__getitem__)
        pending[actors[k].answer.remote(grader_view(batch))] = (batch, k, attempt)
        load[k] += 1

    def fill() -> None:
        while len(pending) < IN_FLIGHT_PER_WORKER * len(actors):
            batch = next(queue, None)
            if batch is None:
                return
            submit(batch, 1)

    fill()
    while pending:
        [ref], _ = ray.wait(list(pending), num_returns=1)
        batch, k, attempt = pending.pop(ref)
        load[k] -= 1
        try:
            answers, details, model_latencies, elapsed = ray.get(ref)
        except ray.exceptions.RayError as exc:  # the worker died past its retries, or the model raised
            if attempt > retries:
                raise RuntimeError(f"a batch of {len(batch['query'])} questions failed {attempt} times; the last "
                                   f"error: {exc}") from exc
            log.warning("a batch failed on worker %d (attempt %d): %s; sending it to another", k, attempt, exc)
            submit(batch, attempt + 1, avoid=k)
            continue
        save_batch(predictions, stats, batch, answers, elapsed, details, model_latencies, on_batch)
        fill()
    return stats
