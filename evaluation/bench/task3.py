"""The whole CPU pipeline on Task-3-sized input built from real dev questions: is the web stage ever starved, is any
batch late? (The command line is scripts/bench_task3.py, whose docstring describes the input and the output.)

`task3_examples` gives each question its own pages plus the other questions' pages (50 in all, shuffled with a
fixed seed); `bench_task3` answers them as the grader would, batch by batch, with the bundled mock KG API served
in-process, and prints each batch's seconds against its budget, each stage's seconds (the answers' traces), and per
question whether the web retriever ran (it returned the question web evidence, whose provenance has the retrieval's
own times) and where the answer came from.
"""
from __future__ import annotations

import json
import logging
import os
import random
import statistics
import time

from evaluation.data import GRADER_KEYS, load_examples
from models import crag_data
from models.config import load_config
from models.crag_model import CragModel

MOCK_API_ENV = "CRAG_MOCK_API_URL"


def task3_examples(examples: list[dict], pages_per_question: int = 50, seed: int = 0) -> list[dict]:
    """Each example with its own pages plus the other examples' pages, up to `pages_per_question`."""
    rng = random.Random(seed)
    out = []
    for i, example in enumerate(examples):
        own = list(example["search_results"])
        others = [p for j, e in enumerate(examples) if j != i for p in e["search_results"]]
        pages = own + others[:max(0, pages_per_question - len(own))]
        rng.shuffle(pages)
        out.append({**example, "search_results": pages})
    return out


def write_task3_data(data: str, out: str, limit: int | None = None) -> int:
    """Writes `task3_examples` of `data` (the first `limit`) as a jsonl file `local_evaluation.py --data` reads."""
    examples = task3_examples(list(load_examples(data)))[:limit]
    with open(out, "w", encoding="utf-8") as f:
        for example in examples:
            f.write(json.dumps(example) + "\n")
    print(f"{out}: {len(examples)} questions x {len(examples[0]['search_results'])} pages")
    return 0


def html_megabytes(example: dict) -> float:
    return sum(len(p.get("page_result") or "") for p in example["search_results"]) / 1e6


def bench_task3(data: str = crag_data.DEV_DATA, profile: str = "cpu", limit: int | None = None,
                no_stage_budgets: bool = False, traces: str | None = None) -> int:
    """Answers the first `limit` questions of `data` (each with 50 pages), printing per batch and the medians;
    `traces` writes each question's answer and trace as JSONL; `no_stage_budgets` empties the stage budgets."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    examples = task3_examples(list(load_examples(data)))[:limit]
    sizes = [html_megabytes(e) for e in examples]
    print(f"{len(examples)} questions x {len(examples[0]['search_results'])} pages, "
          f"HTML per question {min(sizes):.1f}-{max(sizes):.1f} MB; {os.cpu_count()} cores, load average "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()))

    overrides = {"pipeline.stage_budgets": {}} if no_stage_budgets else {}
    config = load_config(profile, overrides)
    from mock_api.server import running_server

    with running_server(kg_dir=None, port=0) as url:
        os.environ[MOCK_API_ENV] = url
        started = time.monotonic()
        model = CragModel(config)
        print(f"model loaded in {time.monotonic() - started:.1f} s; profile {config.name}, batch size "
              f"{model.get_batch_size()}, stage budgets {dict(config.pipeline.stage_budgets) or 'none'}")
        size = model.get_batch_size()
        per_question, over, web_ran, traced = [], 0, 0, []
        stage_totals: dict[str, list[float]] = {}
        for start in range(0, len(examples), size):
            chunk = examples[start:start + size]
            batch = {key: [e[key] for e in chunk] for key in GRADER_KEYS}
            budget = len(chunk) * config.pipeline.per_question_budget_s
            began = time.monotonic()
            answers = model.batch_generate_answer(batch)
            seconds = time.monotonic() - began
            over += seconds > budget
            stages = model.last_answers[0].trace.get("stages", {})  # the batch's, in every answer's trace
            for name, value in stages.items():
                stage_totals.setdefault(name, []).append(value / len(chunk))
            print(f"\nbatch {start // size + 1}: {seconds:.1f} s of {budget:.0f} s budget "
                  f"({'OVER' if seconds > budget else 'ok'}); task {model.pipeline.last_run.task}; stages: "
                  + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()))
            web = [state.evidence.get("web") for state in model.pipeline.last_run.states]
            web_stats = next((e.provenance["stats"] for e in web if e is not None and "stats" in e.provenance), None)
            if web_stats is not None:
                print(f"  web retrieval: extract {web_stats.extract_ms / 1000:.1f} s, "
                      f"chunk {web_stats.chunk_ms / 1000:.1f} s, "
                      f"embed {web_stats.embed_ms / 1000:.1f} s ({web_stats.embedded} children), "
                      f"rerank {web_stats.rerank_ms / 1000:.1f} s")
            for example, answer, detail, evidence in zip(chunk, answers, model.last_answers, web):
                ran = evidence is not None
                web_ran += ran
                per_question.append(seconds / len(chunk))
                print(f"  web {'ran    ' if ran else 'SKIPPED'} source {detail.source:8} {answer[:60]!r} "
                      f"| {example['query'][:50]}")
                traced.append({"interaction_id": example["interaction_id"], "query": example["query"],
                               "gold": example.get("answer", ""), "prediction": answer, "trace": detail.trace})
        os.environ.pop(MOCK_API_ENV, None)
    if traces:
        with open(traces, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(record, default=str) + "\n" for record in traced)

    print("\nload average now " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    print(f"web stage ran for {web_ran} of {len(examples)} questions; {over} batches over budget; "
          f"median {statistics.median(per_question):.1f} s per question (batch time / batch size); "
          "median per-question stage seconds: "
          + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in stage_totals.items()))
    return 0
