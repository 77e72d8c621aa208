"""Standalone cost (and format-following) of ElectricSheep's LLM stages on real CRAG questions, as
scripts/bench_stages.py prints it (its docstring lists the stages).

`bench_stages` builds each question's references with the profile's web pathway (not timed), then runs each stage
alone on the whole batch (`timed`: wall and CPU seconds per question) and prints what each produced beside the gold
answers.
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import replace

from evaluation.data import load_examples
from models import crag_data
from models.attributes import AttributePredictor, binary_label
from models.calculator.tool import NumericalCalculator
from models.config import load_config
from models.reasoning import KnowledgeExtractor, Reasoner, References
from models.reasoning.output import ReasoningFormatError, parse_reasoning
from models.reasoning.summarizer import BackupSummarizer
from models.types import Query


def timed(label: str, n: int, function, *args):
    start, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    print(f"{label:34} {seconds / max(1, n):7.2f} s/question wall, {cpu_seconds / max(1, n):7.2f} s CPU  "
          f"({seconds:.1f} s for {n})", flush=True)
    return result


def bench_stages(data: str = crag_data.DEV_DATA, profile: str = "cpu", limit: int = 10,
                 threads: int = 1) -> None:
    """Times every stage on the first `limit` questions of `data` with `threads` torch threads, and prints."""
    logging.basicConfig(level=logging.WARNING)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    import torch
    torch.set_num_threads(threads)

    from models.llm.generator import make_generator
    from models.embedder import Embedder
    from models.web import WebRetriever

    config = load_config(profile)
    examples = list(load_examples(data))[:limit]
    queries = [Query.from_crag(e) for e in examples]
    texts, times = [q.text for q in queries], [q.query_time for q in queries]
    embedder = Embedder.from_config(config.embedder, config.models_dir)
    retriever = WebRetriever.from_config(config.web, config.models_dir, embedder=embedder)
    chunks = [evidence.items for evidence in retriever.retrieve(queries, task=1)]
    generator = make_generator(config.llm, config.models_dir)
    n = len(queries)
    print(f"{n} questions, profile {config.name}, LLM {config.llm.path}, threads {threads}")

    attributes = replace(config.attributes, enabled=True)
    classifier = AttributePredictor.from_config(attributes, embedder=embedder)
    gold = [binary_label(e.get("static_or_dynamic")) for e in examples]
    labels = timed("attributes (classifier)", n, classifier.predict, texts)
    llm_attributes = AttributePredictor.from_config(replace(attributes, method="llm"), generator=generator)
    llm_labels = timed(f"attributes (LLM x{attributes.samples})", n, llm_attributes.predict, texts)

    calculator = NumericalCalculator(replace(config.calculator, enabled=True), generator)
    references = [[c.text for c in found] for found in chunks]
    calculations = timed(f"calculator (x{config.calculator.samples})", n, calculator.calculate, texts, times,
                         references)
    knowledge = KnowledgeExtractor(replace(config.reasoning.knowledge, enabled=True), generator)
    notes = timed("knowledge extractor", n, knowledge.notes, texts, times)

    reasoning_config = replace(config.reasoning, enabled=True)
    reasoner = Reasoner(reasoning_config, generator)
    bundles = [References(web=tuple(c.text for c in found if c.kind != "table"),
                          tables=tuple(c.text for c in found if c.kind == "table"),
                          calculations=(calc.as_reference(),) if calc else (), knowledge_note=note)
               for found, calc, note in zip(chunks, calculations, notes)]
    answers = timed("reasoning (+ backup where needed)", n, reasoner.answer, texts, times, bundles)
    summarizer = BackupSummarizer(reasoning_config.backup, generator)
    timed("backup summarizer (every question)", n, summarizer.answers, texts,
          [a.output or reasoner.render_references(b) for a, b in zip(answers, bundles)])

    parsed = 0
    for answer in answers:
        try:
            parse_reasoning(answer.output)
            parsed += 1
        except ReasoningFormatError:
            pass
    print(f"attributes: classifier {sum(p == g for p, g in zip(labels, gold))}/{n}, "
          f"LLM {sum(p == g for p, g in zip(llm_labels, gold))}/{n} correct; calculations: "
          f"{sum(c is not None for c in calculations)}/{n}; knowledge notes: {sum(bool(x) for x in notes)}/{n}; "
          f"reasoning outputs parsed: {parsed}/{n} (backup used for {sum(a.source == 'backup' for a in answers)})")
    for example, answer, calc, note in zip(examples, answers, calculations, notes):
        print(f"- {example['query'][:70]}\n    gold: {str(example.get('answer'))[:60]} | answer [{answer.source}]: "
              f"{answer.answer[:60]} | calc: {calc.as_reference()[:50] if calc else '-'} | note: {note[:40] or '-'}")
