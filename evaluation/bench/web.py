"""The web pathway against the naive CRAG-baseline retriever on real CRAG questions, measured side by side in one
run (the command line is scripts/bench_web.py, whose docstring describes the columns and how recall is counted).

Per question: the configured pathway (`run_pathway`), the same pathway with the other extraction backend, the
official CRAG baseline's retriever (`run_naive`: bs4 text -> sentences -> the same embedder -> top 20 by cosine)
and, on request, ElectricSheep's page processing (`run_sentence_chunks`); each as CPU milliseconds per step and the
reachable answer keys found in its context (`evaluation.bench.recall`). `bench_web` prints the per-question table
and the medians and totals.
"""
from __future__ import annotations

import logging
import os
import re
import statistics
import time
from dataclasses import dataclass, replace

import numpy as np

from evaluation.experiments import context_recall
from evaluation.bench.recall import answer_keys, found, page_texts, to_query, token_counter
from evaluation.experiments.context_recall import Key
from evaluation.data import load_examples
from models import crag_data
from models.config import load_config
from models.embedder import Embedder
from models.types import Chunk, Query
from models.web import WebRetriever, format_context
from models.web.main_content import MainContentConfig, extract_main_content
from models.web.pages import snippet_document, unique_pages
from models.web.sentence_chunker import SentenceChunkConfig, SentenceChunker

NAIVE_TOP_K = 20  # the CRAG baseline's NUM_CONTEXT_SENTENCES
NAIVE_SENTENCE_CHARS = 1000  # its MAX_CONTEXT_SENTENCE_LENGTH
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass
class Row:
    extract_ms: float
    chunks: int
    embed_ms: float
    rerank_ms: float
    total_ms: float
    hits: int


def run_pathway(retriever: WebRetriever, query: Query, counter, max_tokens: int, keys: list[Key],
                task: int) -> Row:
    start = time.process_time()
    [evidence] = retriever.retrieve([query], task=task)
    total = (time.process_time() - start) * 1000
    chunks, s = evidence.items, evidence.provenance["stats"]
    context = format_context(chunks, counter, max_tokens)
    return Row(s.extract_ms + s.chunk_ms, s.children, s.embed_ms, s.rerank_ms, total, found(keys, context))


def run_naive(embedder: Embedder, query: Query, keys: list[Key]) -> Row:
    start = time.process_time()
    texts = page_texts(query)
    sentences = [s[:NAIVE_SENTENCE_CHARS] for t in texts for s in _SENTENCE_END.split(t) if s.strip()]
    extracted = time.process_time()
    hits = 0
    if sentences:
        vectors = embedder.encode(sentences)
        cosine = vectors @ embedder.encode([query.text], is_query=True)[0]
        top = [sentences[i] for i in np.argsort(-cosine)[:NAIVE_TOP_K]]
        hits = found(keys, "\n".join(top))
    end = time.process_time()
    return Row((extracted - start) * 1000, len(sentences), (end - extracted) * 1000, 0.0, (end - start) * 1000, hits)


def run_sentence_chunks(embedder: Embedder, chunker: SentenceChunker, content: MainContentConfig, query: Query,
                        counter, max_tokens: int, top_k: int, keys: list[Key]) -> tuple[Row, int]:
    """ElectricSheep's page processing + cosine top-k; also returns how many pages fell back."""
    start = time.process_time()
    chunks, seen, fallbacks = [], set(), 0
    for page in unique_pages(query.search_results):
        snippet = snippet_document(page)
        main = extract_main_content(page.page_result, page.page_name, content)
        fallbacks += main.source == "fallback"
        for chunk in ([Chunk(snippet, page.page_url, "snippet")] if snippet else []) + chunker.chunks(
                main.paragraphs, main.tables, page.page_url):
            if chunk.text not in seen:
                seen.add(chunk.text)
                chunks.append(chunk)
    extracted = time.process_time()
    hits = 0
    if chunks:
        vectors = embedder.encode([c.text for c in chunks])
        cosine = vectors @ embedder.encode([query.text], is_query=True)[0]
        top = [chunks[i] for i in np.argsort(-cosine)[:top_k]]
        hits = found(keys, format_context(top, counter, max_tokens))
    end = time.process_time()
    return Row((extracted - start) * 1000, len(chunks), (end - extracted) * 1000, 0.0, (end - start) * 1000,
               hits), fallbacks


def bench_web(data: str = crag_data.DEV_DATA, answer_keys_file: str = "", profile: str = "cpu",
              threads: int = 1, tokenizer: str = crag_data.GRADER_TOKENIZER, limit: int | None = None, task: int = 1,
              sentence_chunks: bool = False) -> None:
    """Measures every question of `data` (the first `limit`) and prints the table, then the medians and totals."""
    logging.basicConfig(level=logging.WARNING)

    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one core: no tokenizer thread pool either
    import torch
    torch.set_num_threads(threads)
    config = load_config(profile)
    cfg = config.web
    embedder = Embedder.from_config(config.embedder, config.models_dir)
    other_backend = "bs4" if cfg.extraction_backend == "selectolax" else "selectolax"
    ours = WebRetriever.from_config(cfg, config.models_dir, embedder=embedder)
    other = WebRetriever.from_config(replace(cfg, extraction_backend=other_backend), config.models_dir, embedder)
    ours.clock = other.clock = time.process_time
    counter = token_counter(tokenizer)
    embedder.encode(["warm-up"])  # first call pays one-off allocations

    chunker = SentenceChunker(SentenceChunkConfig(enabled=True)) if sentence_chunks else None
    content = MainContentConfig(enabled=True, fallback_backend=cfg.extraction_backend,
                                max_html_chars=cfg.max_html_chars, max_page_tokens=cfg.max_page_tokens,
                                max_table_tokens=cfg.max_table_tokens)
    examples = list(load_examples(data))[:limit]
    annotated = context_recall.load_key_annotations(answer_keys_file) if answer_keys_file else {}
    examples = [e | {"answer_keys": annotated[e["interaction_id"]]} if e["interaction_id"] in annotated else e
                for e in examples]
    print(f"task={task} profile={config.name} backend={cfg.extraction_backend} prefilter_k={cfg.prefilter_k} "
          f"recall_k={cfg.recall_k} rerank_k={cfg.rerank_k} context={cfg.context_max_tokens} tokens, "
          f"threads={threads}, {len(examples)} questions; times are CPU ms (process time: what one "
          f"dedicated core would take, independent of other load on the machine)")
    header = (f"{'id':8} {'question':34} | {'extr':>5} {'chunks':>6} {'embed':>6} {'rerank':>6} {'total':>6} "
              f"{'hit':>3} | {other_backend:>10} {'hit':>3} | {'n.extr':>6} {'sents':>5} {'n.emb':>6} "
              f"{'n.tot':>6} {'hit':>3} | " + (f"{'es.extr':>7} {'chunks':>6} {'es.emb':>6} {'es.tot':>6} {'hit':>3} | "
                                                 if chunker else "") + "keys")
    print(header + "\n" + "-" * len(header))
    results = []
    for example in examples:
        query = to_query(example)
        keys, unreachable = answer_keys(example, page_texts(query))
        mine = run_pathway(ours, query, counter, cfg.context_max_tokens, keys, task)
        alt = run_pathway(other, query, counter, cfg.context_max_tokens, keys, task)
        naive = run_naive(embedder, query, keys)
        sheep, fallbacks = (run_sentence_chunks(embedder, chunker, content, query, counter, cfg.context_max_tokens,
                                                cfg.rerank_k, keys) if chunker else (None, 0))
        results.append((mine, alt, naive, len(keys), sheep, fallbacks))
        note = ", ".join("/".join(k) for k in keys)
        note += f" (unreachable: {', '.join('/'.join(k) for k in unreachable)})" if unreachable else ""
        print(f"{query.interaction_id[:8]:8} {query.text[:34]:34} | {mine.extract_ms:5.0f} {mine.chunks:6d} "
              f"{mine.embed_ms:6.0f} {mine.rerank_ms:6.0f} {mine.total_ms:6.0f} {mine.hits}/{len(keys)} | "
              f"{alt.extract_ms:8.0f}ms {alt.hits}/{len(keys)} | {naive.extract_ms:6.0f} {naive.chunks:5d} "
              f"{naive.embed_ms:6.0f} {naive.total_ms:6.0f} {naive.hits}/{len(keys)} | "
              + (f"{sheep.extract_ms:7.0f} {sheep.chunks:6d} {sheep.embed_ms:6.0f} {sheep.total_ms:6.0f} "
                 f"{sheep.hits}/{len(keys)} | " if sheep else "") + (note or "-"))
    print("-" * len(header))
    n_keys = sum(r[3] for r in results)

    def summary(name: str, rows: list[Row]) -> None:
        hits = sum(r.hits for r in rows)
        print(f"{name:28} median extract {statistics.median(r.extract_ms for r in rows):6.0f} ms, "
              f"median total {statistics.median(r.total_ms for r in rows):6.0f} ms, "
              f"sum total {sum(r.total_ms for r in rows) / 1000:6.1f} s, recall {hits}/{n_keys}")

    summary(f"pathway ({cfg.extraction_backend})", [r[0] for r in results])
    summary(f"pathway ({other_backend})", [r[1] for r in results])
    summary("naive reference", [r[2] for r in results])
    if chunker:
        summary(f"trafilatura + sentence groups (top {cfg.rerank_k})", [r[4] for r in results])
        print(f"pages on the fallback extractor: {sum(r[5] for r in results)}")
