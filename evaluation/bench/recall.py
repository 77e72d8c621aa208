"""Answer-in-context recall of a web context, as the web benchmarks count it (scripts/bench_web.py, whose
docstring states the rule, and scripts/bench_retrievers.py).

A question's keys (`evaluation.experiments.context_recall.answer_keys`, at least three characters) are kept only where one of
its pages states them (`answer_keys` returns the reachable and the unreachable ones); `found` counts the keys one of
whose spellings is in the context, case-insensitively, where the context is what the LLM would read, counted by the
grader's tokenizer (`token_counter`, or whitespace words when the tokenizer folder is missing).
"""
from __future__ import annotations

import os

from evaluation.experiments import context_recall
from evaluation.experiments.context_recall import Key
from models import crag_data
from models.types import Query


class _WordCounter:
    """Token counting by whitespace words, when no tokenizer folder is available."""

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def truncate_tokens(self, text: str, max_tokens: int) -> str:
        return " ".join(text.split()[:max(0, max_tokens)])


def token_counter(tokenizer_dir: str):
    """The grader's tokenizer's counter where `tokenizer_dir` holds it (`$CRAG_DATA/tokenizer` read through the
    setting), else a word count."""
    name = crag_data.crag_name(tokenizer_dir or "")
    if name is not None:
        tokenizer_dir = str(crag_data.crag_path(name))
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
