"""Benchmark of the web pathway against the naive CRAG-baseline retriever, on real CRAG questions.

    python scripts/bench_web.py [--data ../shared/crag/dev_data.jsonl.bz2] [--profile cpu] [--threads 1]

Per question, and as medians/totals, it prints for the configured pathway (and, for comparison, the same
pathway with the other extraction backend): extraction ms, chunk count, embedding ms, rerank ms, total ms
and answer-in-context recall; and for the naive reference measured in the same run (the official CRAG
baseline's retriever: bs4 `get_text` -> sentences -> the same embedder -> top-20 by cosine): extraction
ms, sentence count, embedding ms, total ms and recall; and, with `--sentence-chunks` (needs trafilatura and
blingfire), ElectricSheep's page processing measured the same way: trafilatura main content (the profile's
extractor as fallback and for tables) -> blingfire sentence groups + whole tables + snippets -> the same
embedder -> top `rerank_k` by cosine -> the same context budget (`es.*` columns).

How answer-in-context recall is counted. Several gold answers are sentences, and some short ones are
meaningless as substrings ("yes", "en", "nan"). Each question therefore gets *key strings*
(`evaluation.context_recall.answer_keys`, whose docstring states the rule): for a sentence-long gold answer one
key per fact it adds to the question; otherwise one key whose spellings are the gold answer and its alternatives
(found if any spelling is), keeping spellings of at most four words and three or more characters that are not
yes/no/nan/refusals; or, with `--answer-keys FILE` (a JSONL file of {"interaction_id", "answer_keys"} kept beside
the data, never in the repository), the keys written there. A key
counts only if it occurs in the text of at least one of the question's pages (otherwise no retriever can find it;
such keys are listed as unreachable). Recall = reachable keys found (case-insensitively) in the context / reachable
keys, where the context is exactly what the LLM would read (`format_context`, the profile's token budget,
counted with the grader's Llama tokenizer when `--tokenizer` exists, else whitespace words).
"""
from __future__ import annotations

import argparse
import logging
import os
import re
import statistics
import time
from dataclasses import dataclass, replace


import numpy as np

from models.config import load_config
from evaluation import context_recall
from evaluation.context_recall import Key
from evaluation.data import load_examples
from models.embedder import Embedder
from models.types import Chunk, Query
from models.web import WebRetriever, format_context
from models.web.main_content import MainContentConfig, extract_main_content
from models.web.pages import snippet_document, unique_pages
from models.web.sentence_chunker import SentenceChunkConfig, SentenceChunker

NAIVE_TOP_K = 20  # the CRAG baseline's NUM_CONTEXT_SENTENCES
NAIVE_SENTENCE_CHARS = 1000  # its MAX_CONTEXT_SENTENCE_LENGTH
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class _WordCounter:
    """Token counting by whitespace words, when no tokenizer folder is available."""

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def truncate_tokens(self, text: str, max_tokens: int) -> str:
        return " ".join(text.split()[:max(0, max_tokens)])


def token_counter(tokenizer_dir: str):
    if tokenizer_dir and os.path.isdir(tokenizer_dir):
        from transformers import AutoTokenizer

        from models.llm.chat import ChatFormatter
        return ChatFormatter(AutoTokenizer.from_pretrained(tokenizer_dir), max_model_len=1 << 20)
    return _WordCounter()


def to_query(example: dict) -> Query:
    return Query.from_crag(example)


def page_texts(query: Query) -> list[str]:
    """bs4 `get_text` of every page, as the CRAG baseline reads them."""
    from bs4 import BeautifulSoup

    return [BeautifulSoup(p.page_result, "lxml").get_text(" ", strip=True) if p.page_result else ""
            for p in query.search_results]


def answer_keys(example: dict, texts: list[str]) -> tuple[list[Key], list[Key]]:
    """(reachable keys, unreachable keys) of one question; see the module docstring."""
    pages = " ".join(texts + [p.page_snippet for p in to_query(example).search_results]).lower()
    keys = context_recall.answer_keys(example, min_chars=3)
    reachable = [tuple(k for k in key if k in pages) for key in keys]
    return [k for k in reachable if k], [key for key, r in zip(keys, reachable) if key and not r]


def found(keys: list[Key], context: str) -> int:
    context = context.lower()
    return sum(any(spelling in context for spelling in key) for key in keys)


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
    chunks = retriever.retrieve([query], task=task)[0]
    total = (time.process_time() - start) * 1000
    s = retriever.last_stats
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/crag/dev_data.jsonl.bz2")
    parser.add_argument("--answer-keys", default="", help="annotated keys per interaction_id (see above)")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (the targets are for one core)")
    parser.add_argument("--tokenizer", default="../shared/crag/tokenizer", help="token counter for the context")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--task", type=int, default=1, choices=(1, 2, 3), help="3: snippet preselection of 50 pages")
    parser.add_argument("--sentence-chunks", action="store_true",
                        help="add ElectricSheep's trafilatura + sentence-group row (needs trafilatura, blingfire)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one core: no tokenizer thread pool either
    import torch
    torch.set_num_threads(args.threads)
    config = load_config(args.profile)
    cfg = config.web
    embedder = Embedder.from_config(config.embedder, config.models_dir)
    other_backend = "bs4" if cfg.extraction_backend == "selectolax" else "selectolax"
    ours = WebRetriever.from_config(cfg, config.models_dir, embedder=embedder)
    other = WebRetriever.from_config(replace(cfg, extraction_backend=other_backend), config.models_dir, embedder)
    ours.clock = other.clock = time.process_time
    counter = token_counter(args.tokenizer)
    embedder.encode(["warm-up"])  # first call pays one-off allocations

    chunker = SentenceChunker(SentenceChunkConfig(enabled=True)) if args.sentence_chunks else None
    content = MainContentConfig(enabled=True, fallback_backend=cfg.extraction_backend,
                                max_html_chars=cfg.max_html_chars, max_page_tokens=cfg.max_page_tokens,
                                max_table_tokens=cfg.max_table_tokens)
    examples = list(load_examples(args.data))[:args.limit]
    annotated = context_recall.load_key_annotations(args.answer_keys) if args.answer_keys else {}
    examples = [e | {"answer_keys": annotated[e["interaction_id"]]} if e["interaction_id"] in annotated else e
                for e in examples]
    print(f"task={args.task} profile={config.name} backend={cfg.extraction_backend} prefilter_k={cfg.prefilter_k} "
          f"recall_k={cfg.recall_k} rerank_k={cfg.rerank_k} context={cfg.context_max_tokens} tokens, "
          f"threads={args.threads}, {len(examples)} questions; times are CPU ms (process time: what one "
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
        mine = run_pathway(ours, query, counter, cfg.context_max_tokens, keys, args.task)
        alt = run_pathway(other, query, counter, cfg.context_max_tokens, keys, args.task)
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


if __name__ == "__main__":
    main()
