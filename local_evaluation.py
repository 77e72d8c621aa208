"""Evaluates the submission locally the way the CRAG grader does, and writes a report.

    python local_evaluation.py                                   # 20 sample questions, Task 1, CPU profile
    python local_evaluation.py --data /path/crag_task_1_and_2_dev_v4.jsonl.bz2 --task 2 --limit 200
    python local_evaluation.py --data 'crag_task_3_dev_v4.tar.bz2.part*' --task 3 --profile g4dn \\
        --tokenizer "$CRAG_DATA/tokenizer" --judge openai --judge-url http://localhost:8001/v1
    python local_evaluation.py --ray --workers 2                 # sharded over a local Ray cluster
    python local_evaluation.py --ray auto --workers 8 --profile g4dn-server   # an existing cluster

The command line over `evaluation/local_run.py` (`run_locally`): the options become a `LocalRun` (--task,
--batch-size, --tokenizer and --set as profile overrides). Flow: load the profile and save it beside the outputs;
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
import logging
import sys

from evaluation.data import DEFAULT_DATA_PATH
from evaluation.local_run import LocalRun, run_locally
from models.config import parse_override


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
    """The profile keys the options set: --task, --batch-size and --tokenizer, then every --set."""
    overrides = {"pipeline.task": args.task, "pipeline.batch_size": args.batch_size,
                 "pipeline.grader_tokenizer": args.tokenizer}
    return {key: value for key, value in overrides.items() if value is not None} | dict(args.set)


def local_run(args: argparse.Namespace) -> LocalRun:
    """The run the options ask for."""
    return LocalRun(data=args.data, profile=args.profile, overrides=config_overrides(args), limit=args.limit,
                    output_dir=args.output_dir, judge=args.judge, judge_fallback=args.judge_fallback,
                    judge_url=args.judge_url, judge_model=args.judge_model, kg_source=args.kg_source,
                    explain=args.explain, resume=args.resume, ray=args.ray, workers=args.workers,
                    cpus_per_worker=args.cpus_per_worker, gpus_per_worker=args.gpus_per_worker)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.explain:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    return run_locally(local_run(args))


if __name__ == "__main__":
    sys.exit(main())
