"""Both web retrievers side by side under the same context budget: db3's parent/child recall + rerank and ARM's
information alignment (the ARM paper), with ARM's ablations and structure alignment (the command line is
scripts/bench_retrievers.py, whose docstring describes the suites, rows and columns).

`row_configs` gives each row's web settings; `run_row` retrieves every question with one row's retriever and counts
the reachable answer keys in its context (`evaluation.bench.recall`), CPU seconds, ARM's keyword alignments and the
structure alignment's solve times; `recall_line`, `structure_line` and `sweep_lines` (the arm row's stored scores
re-weighted) are the table's lines; `bench_retrievers` runs the suites and prints (and writes) the tables.
"""
from __future__ import annotations

import logging
import os
import statistics
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from evaluation.bench.recall import answer_keys, found, page_texts, to_query, token_counter
from evaluation.bench.task3 import task3_examples
from evaluation.data import load_examples
from models import crag_data
from models.config import load_config
from models.embedder import Embedder
from models.web import format_context, make_web_retriever
from models.web.arm.ngrams import NgramIndex
from models.web.arm.retriever import serialise_all

SUITES = {"5": 1, "50": 3}  # suite -> task it is read as
WEIGHTS = tuple(round(w, 2) for w in np.linspace(0, 1, 11))


@dataclass
class Question:
    query: object
    keys: list


@dataclass
class Row:
    name: str
    hits: list[int] = field(default_factory=list)  # keys found per question
    seconds: list[float] = field(default_factory=list)
    aligned: int = 0  # keywords with at least one n-gram
    keywords: int = 0
    ngrams: int = 0
    outside_index: int = 0  # aligned n-grams not in the question's index (must stay 0)
    scores: list = field(default_factory=list)  # arm: (ObjectScores, parents) per question, for the sweep
    alignments: list = field(default_factory=list)
    solve_ms: list = field(default_factory=list)  # structure rows: every draft's MIP solve time
    compatibility_ms: list = field(default_factory=list)  # structure rows: per question


def arm_settings(config, **arm) -> object:
    return replace(config.web, retriever="arm", arm=replace(config.web.arm, **arm))


def structure(config, **settings) -> object:
    return replace(config.web.arm.structure, **settings)


def row_configs(config, sweep: bool) -> dict[str, object]:
    rows = {"parent_child": replace(config.web, retriever="parent_child"),
            "arm": arm_settings(config),
            "arm-unaligned": arm_settings(config, align=False),
            "arm-objects": arm_settings(config, embed="objects"),
            "arm+structure": arm_settings(config, structure=structure(config, enabled=True)),
            "arm+structure-llm": arm_settings(config, structure=structure(config, enabled=True, verifier="llm"))}
    if sweep:
        a = config.web.arm
        for n in sorted({1, 3, 5} - {a.ngrams_per_keyword}):
            rows[f"arm ngrams_per_keyword={n}"] = arm_settings(config, ngrams_per_keyword=n)
        other = "all" if a.candidates == "related" else "related"
        rows[f"arm candidates={other}"] = arm_settings(config, candidates=other)
        flipped = not a.keep_keyword
        rows[f"arm keep_keyword={str(flipped).lower()}"] = arm_settings(config, keep_keyword=flipped)
    return rows


def run_row(name: str, retriever, questions: list[Question], task: int, counter, max_tokens: int) -> Row:
    row = Row(name)
    for q in questions:
        start = time.process_time()
        [evidence] = retriever.retrieve([q.query], task=task)
        row.seconds.append(time.process_time() - start)
        row.hits.append(found(q.keys, format_context(evidence.items, counter, max_tokens)))
        scores = evidence.provenance.get("scores")  # ARM's: every object's scores, and the objects
        if scores is None:
            continue
        row.scores.append(scores)
        structure = scores[0].structure
        row.solve_ms.extend(d["solve_ms"] for d in structure.get("drafts", []))
        if "compatibility_ms" in structure:
            row.compatibility_ms.append(structure["compatibility_ms"])
        index = NgramIndex(serialise_all(q.query, scores[1]), retriever.arm.max_n)  # rebuilt: an independent check
        for a in scores[0].keywords:
            row.keywords += 1
            row.aligned += bool(a.ngrams)
            row.ngrams += len(a.ngrams)
            row.outside_index += sum(g not in index for g in a.ngrams)
        row.alignments.append(scores[0].keywords)
    return row


def structure_line(row: Row) -> str:
    """MIP solve time per draft and compatibility time per question, apart from the row's total."""
    solve, comp = row.solve_ms or [0.0], row.compatibility_ms or [0.0]
    return (f"- {row.name}: MIP solve {statistics.median(solve):.1f} ms median, {max(solve):.1f} ms max per draft "
            f"({len(row.solve_ms)} drafts); compatibility {statistics.median(comp):.0f} ms median, "
            f"{max(comp):.0f} ms max per question")


def recall_line(row: Row, questions: list[Question], budget: float) -> str:
    keys = sum(len(q.keys) for q in questions)
    with_keys = [i for i, q in enumerate(questions) if q.keys]
    perfect = sum(row.hits[i] == len(questions[i].keys) for i in with_keys)
    over = sum(s > budget for s in row.seconds)
    align = (f"{row.aligned}/{row.keywords} aligned, {row.ngrams} n-grams, {row.outside_index} outside the index"
             if row.keywords else "—")
    return (f"| {row.name} | {sum(row.hits)}/{keys} ({100 * sum(row.hits) / max(1, keys):.0f}%) | "
            f"{perfect}/{len(with_keys)} | {statistics.median(row.seconds):.2f} | {statistics.mean(row.seconds):.2f} | "
            f"{max(row.seconds):.2f} | {over} | {align} |")


def sweep_lines(row: Row, questions: list[Question], counter, max_tokens: int,
                top_objects: tuple[int, ...]) -> list[str]:
    """Recall of the arm row's own scores re-weighted: w x lexical + (1 - w) x cosine, top k objects."""
    keyed = [q for q in questions if q.keys]
    by_id = {q.query.interaction_id: q for q in keyed}
    lines = ["| top objects | " + " | ".join(f"w={w}" for w in WEIGHTS) + " |",
             "|---|" + "---|" * len(WEIGHTS)]
    for k in top_objects:
        cells = []
        for w in WEIGHTS:
            hits = 0
            for q, (scores, parents) in zip(questions, row.scores):
                if q.query.interaction_id not in by_id:
                    continue
                order = np.argsort(-(w * scores.lexical + (1 - w) * scores.cosine), kind="stable")[:k]
                hits += found(q.keys, format_context([parents[i] for i in order], counter, max_tokens))
            cells.append(str(hits))
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    return lines


def bench_retrievers(data: str = crag_data.DEV_DATA, profile: str = "cpu",
                     tokenizer: str = crag_data.GRADER_TOKENIZER, limit: int | None = None,
                     suites: list[str] = tuple(SUITES), rows_only: list[str] | None = None, sweep: bool = False,
                     threads: int = 1, output: str | None = None) -> int:
    """Every row (or only `rows_only`) on every suite of the first `limit` questions of `data`: prints each table
    and, with `output`, writes them all to that Markdown file."""
    logging.basicConfig(level=logging.WARNING)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    import torch

    torch.set_num_threads(threads)
    from models.llm import make_generator

    config = load_config(profile)
    embedder = Embedder.from_config(config.embedder, config.models_dir)
    generator = make_generator(config.llm, config.models_dir)
    counter = token_counter(tokenizer)
    max_tokens = config.web.context_max_tokens
    p = config.pipeline
    budget = p.stage_budgets.get("web retrieval", 1.0) * (p.per_question_budget_s - p.deadline_margin_s)
    embedder.encode(["warm-up"])
    rows = row_configs(config, sweep)
    rows = {n: c for n, c in rows.items() if not rows_only or n in rows_only}
    retrievers = {n: make_web_retriever(c, config.models_dir, embedder, generator=generator) for n, c in rows.items()}
    for r in retrievers.values():
        r.clock = time.process_time
    out = [f"profile={config.name}, context {max_tokens} tokens, CPU seconds per question with {threads} torch "
           f"thread(s); web-retrieval budget of a CPU question: {budget:.1f} s "
           f"({p.stage_budgets.get('web retrieval', 1.0)} x ({p.per_question_budget_s} - {p.deadline_margin_s}) s)"]
    print(out[0], flush=True)
    examples = list(load_examples(data))[:limit]
    for suite in suites:
        task = SUITES[suite]
        chosen = examples if suite == "5" else task3_examples(examples)
        questions = []
        for example in chosen:
            query = to_query(example)
            own = example if suite == "5" else next(e for e in examples if e["interaction_id"] == query.interaction_id)
            keys, _ = answer_keys(own, page_texts(to_query(own)))
            questions.append(Question(query, keys))
        table = [f"\n### {suite} pages per question ({len(questions)} questions, read as Task {task})\n",
                 "| retriever | answer in context | perfect recall | median s/q | mean s/q | max s/q | over budget | "
                 "constrained rewrite |", "|---|---|---|---|---|---|---|---|"]
        results = {}
        for name, retriever in retrievers.items():
            results[name] = run_row(name, retriever, questions, task, counter, max_tokens)
            table.append(recall_line(results[name], questions, budget))
            print(table[-1], flush=True)
        structured = [r for r in results.values() if r.solve_ms]
        if structured:
            table.append("\nStructure alignment, measured apart (CPU ms):\n")
            table.extend(structure_line(r) for r in structured)
        if "arm" in results:
            table.append("\nKeywords and their aligned n-grams (arm):\n")
            for q, keywords in zip(questions, results["arm"].alignments):
                table.append(f"- {q.query.text[:70]}: " + " | ".join(
                    f"{a.keyword} -> ({'; '.join(a.ngrams)})" for a in keywords))
        if sweep and "arm" in results:
            arm = config.web.arm
            table.append(f"\nReachable keys found by the arm row's scores re-weighted (profile: w="
                         f"{arm.lexical_weight}, top {arm.top_objects}):\n")
            table.extend(sweep_lines(results["arm"], questions, counter, max_tokens,
                                     tuple(sorted({arm.top_objects, 5, 8, 10, 12}))))
        print("\n".join(table[3 + len(results):]), flush=True)
        out.extend(table)
    if output:
        Path(output).write_text("\n".join(out) + "\n", encoding="utf-8")
    return 0
