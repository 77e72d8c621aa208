"""Hostile web inputs through the whole model (real extraction, real MiniLM, LLM stand-in): deep nesting,
lone surrogates, 10 MB pages, slow pages. Neighbours of a poisoned item answer as in the clean batch."""
from __future__ import annotations

import logging
import time

import pytest

from models.types import Query, SearchResult
from models.web import WebRetriever
from tests.robustness.support import (COUNTRIES, batch_of, clean_items, make_model, nested_tables, page, page_html,
                                      run_batch)


_CLEAN_RUNS: dict = {}  # the clean control batch of each extraction backend, run once per session


def _poisoned_run(case, model, poisoned_items, clean_items_, poisoned_index=1):
    backend = model.config.web.extraction_backend
    if backend not in _CLEAN_RUNS:
        _CLEAN_RUNS[backend] = run_batch(f"clean control ({backend})", model, batch_of(clean_items_))
    clean = _CLEAN_RUNS[backend]
    hostile = run_batch(case, model, batch_of(poisoned_items))
    neighbours = [i for i in range(len(clean_items_)) if i != poisoned_index]
    assert [hostile.answers[i] for i in neighbours] == [clean.answers[i] for i in neighbours]
    assert all(clean.sources[i] == "web" for i in neighbours)
    return clean, hostile


@pytest.mark.parametrize("backend", ["selectolax", "bs4"])
@pytest.mark.parametrize("depth", [3000, pytest.param(10_000, marks=pytest.mark.slow)])
def test_deeply_nested_tables_cost_no_neighbour_and_stay_in_budget(cpu_embedder, backend, depth):
    # the sweep: 10,000 nested tables took 19-45 s to extract (quadratic); 3,000 took ~26 s with bs4
    per_question = 5.0 if depth < 10_000 else 30.0
    model = make_model(cpu_embedder, per_question_s=per_question, **{"web.extraction_backend": backend})
    items = clean_items()
    country, capital = COUNTRIES[1]
    deep = page(country, capital, 9, html=page_html(country, capital, extra=nested_tables(depth)))
    poisoned = [items[0], (items[1][0], [deep, items[1][1][1]]), items[2]]
    _poisoned_run(f"nested tables x{depth} ({backend})", model, poisoned, items)


@pytest.mark.parametrize("where", ["query", "everywhere", *(pytest.param(w, marks=pytest.mark.slow)
                                                           for w in ("snippet", "page name", "html"))])
def test_lone_surrogates_and_nuls_cost_no_neighbour(cpu_embedder, where):
    # the sweep: one "\ud800" made the tokenizer raise for the whole batch (every answer "i don't know")
    model = make_model(cpu_embedder)
    items = clean_items()
    bad = "\ud800\x00\udfff"
    query, pages = items[1]
    country, capital = COUNTRIES[1]
    everywhere = where == "everywhere"
    query = query + bad if where == "query" or everywhere else query
    pages = [page(country, capital, i,
                  name=f"{country}{bad}" if where == "page name" or everywhere else None,
                  snippet=f"capital {bad} {capital}" if where == "snippet" or everywhere else None,
                  html=page_html(country, capital, extra=f"<p>{bad}</p>") if where == "html" or everywhere else None)
             for i in range(2)]
    clean, hostile = _poisoned_run(f"lone surrogates in the {where}", model, [items[0], (query, pages), items[2]],
                                   items)
    assert hostile.sources[1] == "web"  # the poisoned item itself is answered from its (cleaned) pages


def test_retrieval_isolates_a_query_its_embedder_rejects(cpu_embedder):
    """Without the boundary's cleaning (a component called directly), a query the tokenizer rejects costs
    only itself: its neighbours get the chunks they get in a clean batch."""
    model = make_model(cpu_embedder)
    web: WebRetriever = model.pipeline.web

    def queries(poison):
        return [Query(f"id{i}", q + ("\ud800" if poison and i == 1 else ""), "",
                      tuple(SearchResult.from_raw(p) for p in pages)) for i, (q, pages) in enumerate(clean_items())]

    def view(chunks):  # scores to 4 places: the batch retried item by item embeds in other batch shapes
        return [(c.text, c.source, c.kind, round(c.score, 4)) for c in chunks]

    clean = [e.items for e in web.retrieve(queries(False))]
    hostile = [e.items for e in web.retrieve(queries(True))]
    assert clean[0] and clean[2]
    assert [view(hostile[0]), view(hostile[2])] == [view(clean[0]), view(clean[2])]
    assert isinstance(hostile[1], tuple)


@pytest.mark.parametrize("megabytes", [4, pytest.param(10, marks=pytest.mark.slow)])
def test_huge_pages_stay_in_budget(cpu_embedder, megabytes):
    per_question = 5.0 if megabytes < 10 else 30.0
    backends = ["selectolax"] if megabytes < 10 else ["selectolax", "bs4"]
    for backend in backends:
        model = make_model(cpu_embedder, per_question_s=per_question, **{"web.extraction_backend": backend})
        items = clean_items()
        country, capital = COUNTRIES[1]
        filler = "<div><p>" + "lorem ipsum dolor sit amet " * 40 + "</p></div>"
        huge = page_html(country, capital, extra=filler * (megabytes * 1_000_000 // len(filler)))
        poisoned = [items[0], (items[1][0], [page(country, capital, 0, html=huge), items[1][1][1]]), items[2]]
        _poisoned_run(f"{megabytes} MB page ({backend})", model, poisoned, items)


def test_pages_not_reached_in_time_are_skipped_with_a_log_line(cpu_embedder, monkeypatch, caplog):
    """A stage slowed by an injected fake: every page takes 3 s to extract. Retrieval stops at its share of
    the deadline, the rest of the pages are represented by their snippets, and every query is answered."""
    import models.web.retriever as retriever_module

    real_extract = retriever_module.extract_page

    def slow_extract(*args, **kwargs):
        time.sleep(3.0)
        return real_extract(*args, **kwargs)

    monkeypatch.setattr(retriever_module, "extract_page", slow_extract)
    model = make_model(cpu_embedder)
    with caplog.at_level(logging.WARNING, logger="models.web.retriever"):
        run = run_batch("3 s per page (6 pages)", model, batch_of(clean_items()))
    assert any("skipped: web deadline reached" in r.getMessage() for r in caplog.records)
    assert run.sources == ["web"] * 3
