"""Which pages of a query are read in full, and what the others still contribute (db3 §3.1, Task 3).

- Duplicates (same URL, or same non-empty HTML under another URL) are dropped, first one kept.
- With at most `top_pages` pages (Tasks 1 and 2: five), every page is read in full, in the given order.
- With more (Task 3: up to 50), every page's snippet is scored against the query, by the reranker (db3)
  or by BM25 (APEX), and only the `top_pages` best are read in full. The other pages' snippets are kept
  as short stand-alone documents: they cost one child each and often hold the answer on their own.
- A page without HTML is represented by its snippet (db3 dropped it; its snippet is free information).
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from models.types import Query, SearchResult
from models.web.lexical import bm25_scores

PRESELECTORS = ("reranker", "bm25")


@dataclass(frozen=True)
class PageSelection:
    """Pages to read in full (best first) and pages represented by their snippet only."""

    full: tuple[SearchResult, ...] = ()
    snippet_only: tuple[SearchResult, ...] = ()


def snippet_text(page: SearchResult) -> str:
    """The page's snippet with HTML entities decoded (`&#x27;` -> `'`), whitespace collapsed."""
    return " ".join(html.unescape(page.page_snippet or "").split())


def snippet_document(page: SearchResult) -> str:
    """What a snippet-only page contributes: its title and snippet ("" when it has no snippet)."""
    snippet = snippet_text(page)
    name = " ".join((page.page_name or "").split())
    return f"{name}: {snippet}" if snippet and name else snippet


def unique_pages(pages: Sequence[SearchResult]) -> list[SearchResult]:
    """`pages` without repeats of an earlier page's URL or HTML, order kept."""
    seen_urls, seen_html, kept = set(), set(), []
    for page in pages:
        url, body = page.page_url.strip(), page.page_result
        if (url and url in seen_urls) or (body and hash(body) in seen_html):
            continue
        seen_urls.add(url)
        if body:
            seen_html.add(hash(body))
        kept.append(page)
    return kept


def select_pages(query: Query, top_pages: int, snippet_scores: Sequence[float] | None = None) -> PageSelection:
    """Splits a query's pages into those read in full and those kept as snippets.

    Args:
        query: the question with its search results.
        top_pages: how many pages are read in full.
        snippet_scores: one score per page of `unique_pages(query.search_results)` (higher is better);
            needed only when there are more than `top_pages` pages. None: BM25 over the snippets.

    Returns:
        A `PageSelection`; pages without HTML always go to `snippet_only`.

    Raises:
        ValueError: `snippet_scores` does not have one score per unique page.
    """
    pages = unique_pages(query.search_results)
    if len(pages) > top_pages:
        if snippet_scores is not None and len(snippet_scores) != len(pages):
            raise ValueError(f"{len(snippet_scores)} snippet scores for {len(pages)} pages")
        if snippet_scores is None:
            snippet_scores = bm25_scores(query.text, [snippet_document(p) for p in pages])
        order = np.argsort(-np.asarray(snippet_scores, dtype=np.float32), kind="stable")
        chosen = set(order[:top_pages].tolist())
        ranked = [pages[i] for i in order[:top_pages]]
        rest = [p for i, p in enumerate(pages) if i not in chosen]
    else:
        ranked, rest = pages, []
    full = tuple(p for p in ranked if p.page_result.strip())
    return PageSelection(full, tuple(p for p in ranked if not p.page_result.strip()) + tuple(rest))
