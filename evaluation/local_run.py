"""One local evaluation run, as a library: what `local_evaluation.py` (its command line) asks for, done the way the
CRAG grader does it, then scored and reported.

    code = run_locally(LocalRun(data="data/sample/crag_sample_task3.jsonl", overrides={"pipeline.task": 3}))

Flow (`run_locally`): load the profile (with the overrides) and save it beside the outputs; start the bundled
mock KG API for Tasks 2/3 unless $CRAG_MOCK_API_URL is set; build `CragModel(config)`; ask it every question in
the grader's batch shape, saving each prediction as soon as its batch returns (a rerun resumes; with `ray`, Ray
workers answer the batches: evaluation/ray_runner.py); score everything with the V3 rules and the chosen judges;
print the chosen judge's metrics as one JSON line on stdout; write verdicts, summary, report.md, report.html and a
chart into the output directory. It returns the command's exit code: 0 done, 1 the run stopped (rerun to resume;
130 on Ctrl-C), 2 a setup error, printed as one line.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Mapping

from evaluation.data import DEFAULT_DATA_PATH, LoadStats, count_examples, data_files, load_examples
from evaluation.html_report import write_html_report
from evaluation.judge import make_judge
from evaluation.normalized_judge import NormalizedJudge
from evaluation.report import summarize, write_report
from evaluation.run_dir import RunDir, current_commit
from evaluation.runner import PredictionLog, run_predictions, score_official_and_normalized, write_verdicts
from models.adapter_fallback import without_missing_adapters
from models.config import REPO_ROOT, ConfigError, load_config, save_config
from models.crag_model import CragModel, batch_size_of
from models.llm.errors import LLMError
from models.llm.prompts import PromptError
from models.paths import ModelNotFoundError
from models.trim import load_grader_trim

log = logging.getLogger("local_evaluation")

MOCK_API_ENV = "CRAG_MOCK_API_URL"


@dataclass(frozen=True)
class LocalRun:
    """What one run asks for (the command line's options, `local_evaluation.py --help` says each).

    Attributes:
        data: a .jsonl/.jsonl.bz2 file, a Task-3 tar or its parts (glob), or a folder of shards.
        profile: a profile name or YAML path (None: $CRAG_PROFILE or cpu).
        overrides: profile keys to set ("pipeline.task": 2, ...), applied over the profile.
        limit: only the first N questions (None: all).
        output_dir: the run folder (None: outputs/<profile>-task<task>).
        judge, judge_fallback, judge_url, judge_model: who scores (normalized, rules, local, openai).
        kg_source: Tasks 2/3: serve a KG built from these fixture-format sources instead of the bundled one.
        explain: print the saved trace of this question (id or unique prefix) instead of running.
        resume: skip questions already in the run folder's predictions.
        ray, workers, cpus_per_worker, gpus_per_worker: answer on Ray workers ("local" or a cluster address).
    """

    data: str = DEFAULT_DATA_PATH
    profile: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    limit: int | None = None
    output_dir: str | None = None
    judge: str = "normalized"
    judge_fallback: str = "none"
    judge_url: str | None = None
    judge_model: str | None = None
    kg_source: str | None = None
    explain: str | None = None
    resume: bool = True
    ray: str | None = None
    workers: int = 2
    cpus_per_worker: float = 1.0
    gpus_per_worker: float = 0.0


def run_locally(spec: LocalRun) -> int:
    """Runs, scores and reports `spec` (or explains one saved question); returns the exit code."""
    if spec.explain:
        return explain(spec)
    with contextlib.ExitStack() as stack:  # keeps the mock API up until the report is written
        try:
            config, model, judge, trim, out_dir = setup(spec, stack)
        except SETUP_ERRORS as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return evaluate(spec, config, model, judge, trim, out_dir)


class SetupError(Exception):
    """Something to fix before a run can start; printed without a traceback."""


# Missing weights, data or tokenizer, a bad profile or judge option: a message, exit 2, no traceback wall.
SETUP_ERRORS = (SetupError, ConfigError, ModelNotFoundError, PromptError, LLMError, FileNotFoundError, ValueError)


@contextlib.contextmanager
def mock_api(task: int, kg_source: str | None = None):
    """Serves the bundled fixture KG (or the fixture-format sources in `kg_source`, built into a temporary
    folder: `data/kg_acceptance/` for `kg_unseen`) for Tasks 2/3 when no mock API URL is set; yields the URL."""
    if task not in (2, 3) or os.environ.get(MOCK_API_ENV):
        yield os.environ.get(MOCK_API_ENV)
        return
    import tempfile

    from mock_api.bundled_kg import build
    from mock_api.server import running_server

    with contextlib.ExitStack() as stack:
        kg_dir = build(stack.enter_context(tempfile.TemporaryDirectory(prefix="cragkg-")), kg_source) \
            if kg_source else None
        url = stack.enter_context(running_server(kg_dir=kg_dir, port=0))
        os.environ[MOCK_API_ENV] = url
        log.info("mock KG API (%s) at %s", kg_source or "bundled fixture", url)
        try:
            yield url
        finally:
            os.environ.pop(MOCK_API_ENV, None)


def _run_on_ray(spec: LocalRun, config, examples, predictions, on_batch):
    """`run_predictions` over Ray workers; each builds `CragModel` from the same resolved profile."""
    import functools

    import ray

    from evaluation.ray_runner import run_predictions_ray, start_ray

    env = {k: v for k, v in os.environ.items() if k.startswith("CRAG_") or k in ("OPENAI_API_KEY", "HF_HOME")}
    start_ray(None if spec.ray == "local" else spec.ray, spec.workers, spec.cpus_per_worker, env)
    try:
        return run_predictions_ray(functools.partial(CragModel, config), examples, predictions,
                                   batch_size_of(config), workers=spec.workers,
                                   cpus_per_worker=spec.cpus_per_worker, gpus_per_worker=spec.gpus_per_worker,
                                   on_batch=on_batch)
    finally:
        ray.shutdown()


def build_judge(spec: LocalRun, model, config):
    """The LLM judge the run uses (for `--judge local|openai`, or `--judge-fallback` behind normalized),
    or None when there is none."""
    kind = spec.judge if spec.judge in ("local", "openai") else spec.judge_fallback
    if kind == "none" or spec.judge == "rules":
        return None
    generator = None
    if kind == "local":
        from models.llm.generator import make_generator

        # Reuse the answering model's generator when it has one: one copy of the weights in memory.
        generator = getattr(getattr(model, "pipeline", None), "generator", None) or \
            make_generator(config.llm, config.models_dir)
    return make_judge(kind, generator=generator, url=spec.judge_url, model=spec.judge_model)


def setup(spec: LocalRun, stack: contextlib.ExitStack):
    """Config, output dir, mock API, model, judge and trim, in the order that fails fastest.

    Raises:
        one of SETUP_ERRORS, each with a message that says what to fix.
    """
    config = load_config(spec.profile, spec.overrides)
    data_files(spec.data)  # a wrong --data fails now, not after the model has loaded
    out_dir = Path(spec.output_dir) if spec.output_dir else \
        REPO_ROOT / "outputs" / f"{config.name}-task{config.pipeline.task}"
    _prepare_output_dir(out_dir, spec.resume)
    try:
        stack.enter_context(mock_api(config.pipeline.task, spec.kg_source))
    except (RuntimeError, OSError) as exc:
        raise SetupError(f"the mock KG API did not start: {exc}") from exc
    # With --ray the workers build the model; the driver only when the local judge needs its weights.
    needs_model = not spec.ray or "local" in (spec.judge, spec.judge_fallback)
    model = CragModel(config) if needs_model else None
    save_config(started_profile(model, config), RunDir(out_dir).config_path)
    judge = build_judge(spec, model, config)
    trim = load_grader_trim(config.pipeline.grader_tokenizer or None)
    return config, model, judge, trim, out_dir


def started_profile(model, config):
    """The profile the run's pipeline started with, as saved beside the run: the missing adapters left out and the
    KG program prompt made in-context (models/adapter_fallback.py). The built pipeline's own; with --ray, where
    the workers build it, the same rewrite of `config`."""
    if model is None:
        return without_missing_adapters(config)[0]
    return model.pipeline.config


def evaluate(spec: LocalRun, config, model, judge, trim, out_dir: Path) -> int:
    """Runs (or resumes) the predictions, then scores and reports them."""
    from tqdm import tqdm

    stats, selected = LoadStats(), []

    def remember(examples):
        for example in examples:
            selected.append(example["interaction_id"])
            yield example

    predictions = PredictionLog(RunDir(out_dir).predictions_path)
    commit = current_commit()  # the code the answers come from, kept in summary.json (current_results reads it)
    examples = remember(islice(load_examples(spec.data, stats), spec.limit))
    total = count_examples(spec.data, stop_at=spec.limit)
    with tqdm(total=total, unit="q", desc="answering", file=sys.stderr, dynamic_ncols=True) as bar:
        def on_batch(records):
            bar.update(len(records))
            bar.set_postfix(latency_s=f"{records[-1]['latency_s']:.2f}")

        try:
            if spec.ray:
                run = _run_on_ray(spec, config, examples, predictions, on_batch)
            else:
                run = run_predictions(model, examples, predictions, model.get_batch_size(), on_batch=on_batch)
        except (Exception, KeyboardInterrupt) as exc:
            if not isinstance(exc, KeyboardInterrupt):
                log.exception("the run stopped")
            print(f"run stopped; the predictions made so far are in {predictions.path}: rerun the same command "
                  f"to resume", file=sys.stderr)
            return 130 if isinstance(exc, KeyboardInterrupt) else 1
    order = {interaction_id: i for i, interaction_id in enumerate(selected)}
    records = sorted((r for r in predictions.load() if r["interaction_id"] in order),
                     key=lambda r: order[r["interaction_id"]])
    scorings = score_official_and_normalized(records, judge, trim)
    verdicts = scorings.normalized if spec.judge == "normalized" else scorings.official
    write_verdicts(RunDir(out_dir).verdicts_path, records, verdicts, official=scorings.official)
    meta = {"data": str(spec.data), "profile": config.name, "task": config.pipeline.task, "commit": commit,
            "n_resumed": run.n_resumed, "n_new": run.n_new, "n_asked_again": run.n_asked_again,
            "n_duplicate_ids": run.n_duplicates,
            "n_skipped_lines": stats.n_skipped}
    official_judge = judge.name if judge is not None else "rules"
    headline_judge = NormalizedJudge(fallback=judge).name if spec.judge == "normalized" else official_judge
    summary = summarize(records, verdicts, judge=headline_judge, trim=trim.name, meta=meta,
                        official=scorings.official, official_judge=official_judge)
    paths = write_report(summary, out_dir)
    print(json.dumps(summary["metrics"]), flush=True)
    if summary["scoring_note"]:
        log.warning(summary["scoring_note"])
    official = summary["official"]["metrics"]
    log.info("judge %s: score %.4f; official V3 (%s): score %.4f; trim %s; report: %s", headline_judge,
             summary["metrics"]["score"], official_judge, official["score"], trim.name, paths["report"])
    page = write_html_report(out_dir)  # every answer's evidence a click away; its path is the last line logged
    log.info("report (open in a browser): %s", page.resolve())
    return 0


def explain(spec: LocalRun) -> int:
    """Prints one question's trace from the output dir (the run's predictions.jsonl and verdicts.jsonl)."""
    from evaluation.explain import format_trace

    task = spec.overrides.get("pipeline.task", 1)
    out_dir = Path(spec.output_dir) if spec.output_dir else \
        REPO_ROOT / "outputs" / f"{load_config(spec.profile, spec.overrides).name}-task{task}"
    run = RunDir(out_dir)
    records = [r for r in run.records() if str(r["interaction_id"]).startswith(spec.explain)]
    if len(records) != 1:
        print(f"error: {len(records)} questions in {run.predictions_path} match id {spec.explain!r}",
              file=sys.stderr)
        return 2
    verdicts = run.verdicts()
    print(format_trace(records[0], verdicts.get(records[0]["interaction_id"])))
    return 0


def _prepare_output_dir(out_dir: Path, resume: bool) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    if not resume:
        run = RunDir(out_dir)
        for path in (run.predictions_path, run.verdicts_path):
            path.unlink(missing_ok=True)
