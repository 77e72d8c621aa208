"""Evaluates the submission locally the way the CRAG grader does, and writes a report.

    python local_evaluation.py                                   # 20 sample questions, Task 1, CPU profile
    python local_evaluation.py --data /path/crag_task_1_and_2_dev_v4.jsonl.bz2 --task 2 --limit 200
    python local_evaluation.py --data 'crag_task_3_dev_v4.tar.bz2.part*' --task 3 --profile g4dn \\
        --tokenizer "$CRAG_DATA/tokenizer" --judge openai --judge-url http://localhost:8001/v1
    python local_evaluation.py --ray --workers 2                 # sharded over a local Ray cluster
    python local_evaluation.py --ray auto --workers 8 --profile g4dn-server   # an existing cluster

Flow: load the profile (with --task/--batch-size/--tokenizer as overrides) and save it beside the outputs;
start the bundled mock KG API for Tasks 2/3 unless $CRAG_MOCK_API_URL is set; build `CragModel(config)`;
ask it every question in the grader's batch shape (only its four keys), saving each prediction with its
latency as soon as its batch returns (a rerun resumes; with `--ray`, Ray workers answer the batches and this
process writes them: evaluation/ray_runner.py); score everything with the V3 rules and the chosen
judges; print the chosen judge's metrics dict as one JSON line on stdout; write verdicts.jsonl, summary.json,
report.md, report.html (the whole run on one self-contained page, its path printed last) and a chart into the
output directory. A progress bar shows the total, the ETA and the latest per-question latency. `--explain ID` prints one saved question's trace (why it was answered so) and exits.

Judges (`--judge`): `normalized` (default) decides numbers, dates, yes/no, lists and names without an LLM
and hands what it cannot decide to `--judge-fallback` (`local`, `openai`, or `none`: then unjudged);
`rules` is the exact and invalid rules alone; `local` and `openai` are the V3 LLM judge. Every run also
reports the official V3 numbers (the rules plus the LLM judge, rules only when there is none) beside the
chosen judge's, and who decided each answer. Unjudged predictions are scored as hallucinations, like a
failed judge call in the official scorer (summary and report say how many).

Exit codes: 0 done, 1 the run stopped (rerun to resume; 130 on Ctrl-C), 2 setup error
(bad profile, missing data, weights or tokenizer), with a one-line message instead of a traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from itertools import islice
from pathlib import Path

from models.adapter_fallback import without_missing_adapters
from models.config import REPO_ROOT, ConfigError, load_config, parse_override, save_config
from models.crag_model import CragModel, batch_size_of
from evaluation.data import DEFAULT_DATA_PATH, LoadStats, count_examples, data_files, load_examples
from evaluation.judge import make_judge
from evaluation.html_report import write_html_report
from evaluation.report import summarize, write_report
from evaluation.normalized_judge import NormalizedJudge
from evaluation.run_dir import RunDir
from evaluation.runner import PredictionLog, run_predictions, score_official_and_normalized, write_verdicts
from models.llm.errors import LLMError
from models.llm.prompts import PromptError
from models.paths import ModelNotFoundError
from models.trim import load_grader_trim

log = logging.getLogger("local_evaluation")

MOCK_API_ENV = "CRAG_MOCK_API_URL"


class SetupError(Exception):
    """Something to fix before a run can start; printed without a traceback."""


# Missing weights, data or tokenizer, a bad profile or judge option: a message, exit 2, no traceback wall.
SETUP_ERRORS = (SetupError, ConfigError, ModelNotFoundError, PromptError, LLMError, FileNotFoundError, ValueError)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=DEFAULT_DATA_PATH,
                        help="a .jsonl/.jsonl.bz2 file, a Task-3 tar or its parts (glob), or a folder of shards")
    parser.add_argument("--task", type=int, choices=(0, 1, 2, 3), default=1,
                        help="sets pipeline.task (default 1; 0 = the model detects it per batch, as under the "
                             "grader); 2 and 3 start the bundled mock KG API unless $CRAG_MOCK_API_URL is set")
    parser.add_argument("--profile", help="profile name (cpu, g4dn) or YAML path; default $CRAG_PROFILE or cpu")
    parser.add_argument("--batch-size", type=int, help="overrides pipeline.batch_size (1..16)")
    parser.add_argument("--limit", type=int, help="only the first N questions of the data")
    parser.add_argument("--output-dir", help="default outputs/<profile>-task<task>")
    parser.add_argument("--tokenizer", help="the grader's Llama-2 tokenizer dir, for the exact 75-token trim")
    parser.add_argument("--judge", choices=("normalized", "rules", "local", "openai"), default="normalized",
                        help="whose verdicts are the headline metrics (default normalized); the official V3 "
                             "numbers (rules + LLM judge) are always reported beside them")
    parser.add_argument("--judge-fallback", choices=("none", "local", "openai"), default="none",
                        help="the LLM judge behind --judge normalized, for what it cannot decide, and the "
                             "judge of the official numbers (default none: those stay unjudged)")
    parser.add_argument("--judge-url", help="OpenAI-compatible base URL, e.g. http://localhost:8001/v1")
    parser.add_argument("--judge-model", help="model name for --judge openai (default gpt-4-0125-preview)")
    parser.add_argument("--kg-source", metavar="DIR",
                        help="Tasks 2/3: serve a KG built from these fixture-format sources instead of the bundled "
                             "one (e.g. data/kg_acceptance for data/acceptance/kg_unseen.jsonl)")
    parser.add_argument("--explain", metavar="ID",
                        help="print the saved trace of one question (interaction id or unique prefix) of the "
                             "output dir's predictions.jsonl, then exit")
    parser.add_argument("--resume", action=argparse.BooleanOptionalAction, default=True,
                        help="skip questions already in the output dir's predictions.jsonl (default: resume)")
    parser.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                        help="answer on Ray workers (evaluation/ray_runner.py): alone, a small local cluster; "
                             "with an ADDRESS (auto, ray://host:10001), that cluster")
    parser.add_argument("--workers", type=int, default=2, help="--ray: worker actors, each with its own model")
    parser.add_argument("--cpus-per-worker", type=float, default=1.0, help="--ray: CPUs Ray gives each worker")
    parser.add_argument("--gpus-per-worker", type=float, default=0.0, help="--ray: GPUs Ray gives each worker")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", type=parse_override,
                        help="overrides one profile key, the value read as YAML (repeatable), e.g. "
                             "--set kg.icl_k=0 --set kg.api_adapter=api_generation")
    return parser.parse_args(argv)


def config_overrides(args: argparse.Namespace) -> dict:
    overrides = {"pipeline.task": args.task, "pipeline.batch_size": args.batch_size,
                 "pipeline.grader_tokenizer": args.tokenizer}
    return {key: value for key, value in overrides.items() if value is not None} | dict(args.set)


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


def _run_on_ray(args, config, examples, predictions, on_batch):
    """`run_predictions` over Ray workers; each builds `CragModel` from the same resolved profile."""
    import functools

    import ray

    from evaluation.ray_runner import run_predictions_ray, start_ray

    env = {k: v for k, v in os.environ.items() if k.startswith("CRAG_") or k in ("OPENAI_API_KEY", "HF_HOME")}
    start_ray(None if args.ray == "local" else args.ray, args.workers, args.cpus_per_worker, env)
    try:
        return run_predictions_ray(functools.partial(CragModel, config), examples, predictions,
                                   batch_size_of(config), workers=args.workers,
                                   cpus_per_worker=args.cpus_per_worker, gpus_per_worker=args.gpus_per_worker,
                                   on_batch=on_batch)
    finally:
        ray.shutdown()


def build_judge(args: argparse.Namespace, model, config):
    """The LLM judge the run uses (for `--judge local|openai`, or `--judge-fallback` behind normalized),
    or None when there is none."""
    kind = args.judge if args.judge in ("local", "openai") else args.judge_fallback
    if kind == "none" or args.judge == "rules":
        return None
    generator = None
    if kind == "local":
        from models.llm.generator import make_generator

        # Reuse the answering model's generator when it has one: one copy of the weights in memory.
        generator = getattr(getattr(model, "pipeline", None), "generator", None) or \
            make_generator(config.llm, config.models_dir)
    return make_judge(kind, generator=generator, url=args.judge_url, model=args.judge_model)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.explain:
        return explain(args)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    with contextlib.ExitStack() as stack:  # keeps the mock API up until the report is written
        try:
            config, model, judge, trim, out_dir = setup(args, stack)
        except SETUP_ERRORS as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return evaluate(args, config, model, judge, trim, out_dir)


def setup(args: argparse.Namespace, stack: contextlib.ExitStack):
    """Config, output dir, mock API, model, judge and trim, in the order that fails fastest.

    Raises:
        one of SETUP_ERRORS, each with a message that says what to fix.
    """
    config = load_config(args.profile, config_overrides(args))
    data_files(args.data)  # a wrong --data fails now, not after the model has loaded
    out_dir = Path(args.output_dir) if args.output_dir else \
        REPO_ROOT / "outputs" / f"{config.name}-task{config.pipeline.task}"
    _prepare_output_dir(out_dir, args.resume)
    try:
        stack.enter_context(mock_api(config.pipeline.task, args.kg_source))
    except (RuntimeError, OSError) as exc:
        raise SetupError(f"the mock KG API did not start: {exc}") from exc
    # With --ray the workers build the model; the driver only when the local judge needs its weights.
    needs_model = not args.ray or "local" in (args.judge, args.judge_fallback)
    model = CragModel(config) if needs_model else None
    save_config(started_profile(model, config), RunDir(out_dir).config_path)
    judge = build_judge(args, model, config)
    trim = load_grader_trim(config.pipeline.grader_tokenizer or None)
    return config, model, judge, trim, out_dir


def started_profile(model, config):
    """The profile the run's pipeline started with, as saved beside the run: the missing adapters left out and the
    KG program prompt made in-context (models/adapter_fallback.py). The built pipeline's own; with --ray, where
    the workers build it, the same rewrite of `config`."""
    if model is None:
        return without_missing_adapters(config)[0]
    return model.pipeline.config


def evaluate(args, config, model, judge, trim, out_dir: Path) -> int:
    """Runs (or resumes) the predictions, then scores and reports them."""
    from tqdm import tqdm

    stats, selected = LoadStats(), []

    def remember(examples):
        for example in examples:
            selected.append(example["interaction_id"])
            yield example

    predictions = PredictionLog(RunDir(out_dir).predictions_path)
    from evaluation.experiments.current_results import current_commit

    commit = current_commit()  # the code the answers come from, kept in summary.json (current_results reads it)
    examples = remember(islice(load_examples(args.data, stats), args.limit))
    total = count_examples(args.data, stop_at=args.limit)
    with tqdm(total=total, unit="q", desc="answering", file=sys.stderr, dynamic_ncols=True) as bar:
        def on_batch(records):
            bar.update(len(records))
            bar.set_postfix(latency_s=f"{records[-1]['latency_s']:.2f}")

        try:
            if args.ray:
                run = _run_on_ray(args, config, examples, predictions, on_batch)
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
    verdicts = scorings.normalized if args.judge == "normalized" else scorings.official
    write_verdicts(RunDir(out_dir).verdicts_path, records, verdicts, official=scorings.official)
    meta = {"data": str(args.data), "profile": config.name, "task": config.pipeline.task, "commit": commit,
            "n_resumed": run.n_resumed, "n_new": run.n_new, "n_asked_again": run.n_asked_again,
            "n_duplicate_ids": run.n_duplicates,
            "n_skipped_lines": stats.n_skipped}
    official_judge = judge.name if judge is not None else "rules"
    headline_judge = NormalizedJudge(fallback=judge).name if args.judge == "normalized" else official_judge
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


def explain(args: argparse.Namespace) -> int:
    """Prints one question's trace from the output dir (the run's predictions.jsonl and verdicts.jsonl)."""
    from evaluation.explain import format_trace

    out_dir = Path(args.output_dir) if args.output_dir else \
        REPO_ROOT / "outputs" / f"{load_config(args.profile, config_overrides(args)).name}-task{args.task}"
    run = RunDir(out_dir)
    records = [r for r in run.records() if str(r["interaction_id"]).startswith(args.explain)]
    if len(records) != 1:
        print(f"error: {len(records)} questions in {run.predictions_path} match id {args.explain!r}",
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


if __name__ == "__main__":
    sys.exit(main())
