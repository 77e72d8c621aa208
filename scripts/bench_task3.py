"""Task-3-sized benchmark of the whole CPU pipeline: is the web stage ever starved, is any batch late?

    python scripts/bench_task3.py [--data ../shared/crag/dev_data.jsonl.bz2] [--profile cpu] [--limit N]
                                  [--no-stage-budgets]

Input, built from the real dev questions: each question gets its own 5 pages plus the 45 pages of the
other 9 questions, so every question has 50 real pages (the 10 dev questions' 50 pages hold 14.9 MB of
HTML, the Task-3 size; nothing is padded or invented). The pages are shuffled with a fixed seed, so a
question's own pages are not simply the first five.

Run as the grader would: the profile's batch size, `pipeline.task` as the profile sets it (the CPU profile's
0 detects Task 3 from the 50 pages), and the bundled mock KG API started in-process as `local_evaluation.py`
does for Tasks 2/3. Printed per batch: seconds against the budget (batch_size x per_question_budget_s) and
each stage's seconds; per question: whether the web retriever ran for it, where its answer came from, and
the answer. Then the medians. `--no-stage-budgets` empties `pipeline.stage_budgets` (every stage may use
all the time left, the behaviour before stage budgets) for a side-by-side comparison.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import random
import statistics
import sys
import time


from models.config import load_config
from models.crag_model import CragModel
from evaluation.data import load_examples

GRADER_KEYS = ("interaction_id", "query", "search_results", "query_time")
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


def html_megabytes(example: dict) -> float:
    return sum(len(p.get("page_result") or "") for p in example["search_results"]) / 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/crag/dev_data.jsonl.bz2")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--limit", type=int, help="only the first N questions (each still gets 50 pages)")
    parser.add_argument("--no-stage-budgets", action="store_true", help="every stage may use all the time left")
    parser.add_argument("--traces", help="write each question's answer and trace to this jsonl file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    examples = task3_examples(list(load_examples(args.data)))[:args.limit]
    sizes = [html_megabytes(e) for e in examples]
    print(f"{len(examples)} questions x {len(examples[0]['search_results'])} pages, "
          f"HTML per question {min(sizes):.1f}-{max(sizes):.1f} MB; {os.cpu_count()} cores, load average "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()))

    overrides = {"pipeline.stage_budgets": {}} if args.no_stage_budgets else {}
    config = load_config(args.profile, overrides)
    from mock_api.server import running_server

    with running_server(kg_dir=None, port=0) as url:
        os.environ[MOCK_API_ENV] = url
        started = time.monotonic()
        model = CragModel(config)
        print(f"model loaded in {time.monotonic() - started:.1f} s; profile {config.name}, batch size "
              f"{model.get_batch_size()}, stage budgets {dict(config.pipeline.stage_budgets) or 'none'}")
        retrieved: set[str] = set()
        real_retrieve = model.pipeline.web.retrieve

        def recording_retrieve(queries, *a, **kw):
            retrieved.update(q.interaction_id for q in queries)
            return real_retrieve(queries, *a, **kw)

        model.pipeline.web.retrieve = recording_retrieve
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
            stages = dict(model.pipeline.last_run.stage_seconds)
            for name, value in stages.items():
                stage_totals.setdefault(name, []).append(value / len(chunk))
            print(f"\nbatch {start // size + 1}: {seconds:.1f} s of {budget:.0f} s budget "
                  f"({'OVER' if seconds > budget else 'ok'}); task {model.pipeline.last_run.task}; stages: "
                  + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()))
            web_stats = model.pipeline.web.last_stats
            if "web retrieval" in stages:
                print(f"  web retrieval: extract {web_stats.extract_ms / 1000:.1f} s, "
                      f"chunk {web_stats.chunk_ms / 1000:.1f} s, "
                      f"embed {web_stats.embed_ms / 1000:.1f} s ({web_stats.embedded} children), "
                      f"rerank {web_stats.rerank_ms / 1000:.1f} s")
            for example, answer, detail in zip(chunk, answers, model.last_answers):
                ran = example["interaction_id"] in retrieved
                web_ran += ran
                per_question.append(seconds / len(chunk))
                print(f"  web {'ran    ' if ran else 'SKIPPED'} source {detail.source:8} {answer[:60]!r} "
                      f"| {example['query'][:50]}")
                traced.append({"interaction_id": example["interaction_id"], "query": example["query"],
                               "gold": example.get("answer", ""), "prediction": answer, "trace": detail.trace})
        os.environ.pop(MOCK_API_ENV, None)
    if args.traces:
        with open(args.traces, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(record, default=str) + "\n" for record in traced)

    print(f"\nload average now " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    print(f"web stage ran for {web_ran} of {len(examples)} questions; {over} batches over budget; "
          f"median {statistics.median(per_question):.1f} s per question (batch time / batch size); "
          "median per-question stage seconds: "
          + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in stage_totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
