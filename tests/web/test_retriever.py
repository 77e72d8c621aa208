"""WebRetriever with fake models: recall -> parent order, rerank, batching, Task 3, bad input."""
from dataclasses import replace

import pytest

from models.config import load_config
from models.paths import ModelNotFoundError
from models.types import Query, SearchResult
from models.web import WebRetriever
from models.web.config import WebConfig
from models.web.reranker import Reranker

CFG = WebConfig(extraction_backend="selectolax", child_chunk_size=30, child_chunk_overlap=0, recall_k=50,
                rerank_k=10)


class KeywordReranker(Reranker):
    """Scores a passage by whether it contains the keyword; records what it was asked."""

    def __init__(self, keyword):
        self.keyword = keyword
        self.items = []

    def score_many(self, items):
        self.items.append(items)
        return [[float(self.keyword in p.lower()) for p in passages] for _, passages in items]


def snippet_page(url, snippet):
    return SearchResult(page_name="", page_url=url, page_snippet=snippet, page_result="")


def html_page(url, body, snippet=""):
    return SearchResult(page_name=url, page_url=url, page_snippet=snippet, page_result=f"<html><body>{body}</body></html>")


def make(cfg=CFG, reranker=None, embedder=None, hashing_embedder=None):
    return WebRetriever(cfg, embedder or hashing_embedder, reranker or KeywordReranker("zzz"))


def test_parents_come_back_in_order_of_their_best_child(hashing_embedder):
    pages = (snippet_page("p0", "blue yellow orange. alpha beta."),
             snippet_page("p1", "red green purple. alpha beta gamma delta."),
             snippet_page("p2", "nothing in common here at all."))
    query = Query("q", "alpha beta gamma delta", "", pages)
    chunks = make(hashing_embedder=hashing_embedder).retrieve([query])[0].items
    assert [c.source for c in chunks] == ["p1", "p0", "p2"]
    assert [c.kind for c in chunks] == ["snippet"] * 3
    assert chunks[0].score > chunks[1].score > chunks[2].score
    top = make(replace(CFG, recall_k=1), hashing_embedder=hashing_embedder).retrieve([query])[0].items
    assert [c.source for c in top] == ["p1"]


def test_reranker_reorders_and_cuts_to_rerank_k(hashing_embedder):
    pages = tuple(snippet_page(f"p{i}", f"alpha beta item {i}.") for i in range(6)) + (
        snippet_page("special", "alpha zzz."),)
    reranker = KeywordReranker("zzz")
    retriever = make(replace(CFG, rerank_k=2), reranker=reranker, hashing_embedder=hashing_embedder)
    chunks = retriever.retrieve([Query("q", "alpha beta", "", pages)])[0].items
    assert len(chunks) == 2 and chunks[0].source == "special" and chunks[0].score == 1.0
    assert len(reranker.items) == 1 and len(reranker.items[0][0][1]) == 7  # every recalled parent scored


def test_the_whole_batch_is_embedded_in_two_calls(hashing_embedder):
    queries = [Query(str(i), f"question {i} alpha", "", (html_page(f"u{i}", f"<p>Alpha text number {i}.</p>"),))
               for i in range(3)]
    results = make(hashing_embedder=hashing_embedder).retrieve(queries)
    assert all(len(r.items) == 1 and r.source == "web" for r in results)
    assert sorted(hashing_embedder.calls, key=lambda c: c[1]) == [(3, False), (3, True)]


def test_tables_are_retrieved_as_their_own_chunks(hashing_embedder):
    body = "<p>Scores of the season.</p><table><tr><th>Date</th><th>Score</th></tr>" \
           "<tr><td>2022-10-18</td><td>123-109</td></tr></table>"
    query = Query("q", "score on 2022-10-18", "", (html_page("nba", body, snippet="Warriors results"),))
    chunks = make(hashing_embedder=hashing_embedder).retrieve([query])[0].items
    kinds = {c.kind: c.text for c in chunks}
    assert kinds["table"].startswith("Page name: nba\n| Date | Score |\n| --- | --- |")
    assert kinds["text"] == "Warriors results Scores of the season."  # db3: snippet first


def test_task3_reads_only_the_preselected_pages(hashing_embedder):
    pages = [html_page(f"u{i}", f"<p>Oslo weather story {i}.</p>", snippet=f"Oslo weather {i}") for i in range(20)]
    pages[13] = html_page("canberra", "<p>Canberra is the capital.</p>", snippet="zzz Canberra capital")
    reranker = KeywordReranker("zzz")
    retriever = make(replace(CFG, task3_top_pages=2), reranker=reranker, hashing_embedder=hashing_embedder)
    chunks = retriever.retrieve([Query("q", "capital of australia", "", tuple(pages))], task=3)[0].items
    snippets_scored = reranker.items[0][0][1]
    assert len(snippets_scored) == 20  # one reranker call with every snippet
    full = {c.source for c in chunks if c.kind == "text"}
    assert "canberra" in full and len(full) == 2
    assert sum(c.kind == "snippet" for c in chunks) >= 1  # the other 18 pages survive as snippets
    # Task 1 keeps the search order instead: the first two pages
    reranker.items.clear()
    chunks = retriever.retrieve([Query("q", "capital of australia", "", tuple(pages))], task=1)[0].items
    assert {c.source for c in chunks if c.kind == "text"} == {"u0", "u1"}


def test_task3_bm25_preselection(hashing_embedder):
    pages = [html_page(f"u{i}", f"<p>Oslo weather story {i}.</p>", snippet=f"Oslo weather {i}") for i in range(20)]
    pages[7] = html_page("canberra", "<p>Canberra.</p>", snippet="Canberra is the capital of Australia")
    retriever = make(replace(CFG, task3_top_pages=1, task3_preselect="bm25"), hashing_embedder=hashing_embedder)
    chunks = retriever.retrieve([Query("q", "capital of australia", "", tuple(pages))], task=3)[0].items
    assert {c.source for c in chunks if c.kind == "text"} == {"canberra"}


BAD_PAGES = {
    "no results": (),
    "empty html": (SearchResult(page_url="a", page_result=""),),
    "not a dict": (SearchResult.from_raw(None), SearchResult.from_raw("junk")),
    "binary junk": (SearchResult(page_url="b", page_result="\x00\xff\xfe<\x01>" * 1000),),
    "giant page": (SearchResult(page_url="c", page_result="<p>" + "lorem ipsum " * 500_000 + "</p>"),),
    "giant table": (SearchResult(page_url="d", page_result="<table>" + "<tr><td>1</td><td>2</td></tr>" * 50_000),),
    "other language": (SearchResult(page_url="e", page_result="<p>Die Schweiz grenzt an Frankreich.</p>"),),
}


def test_bad_input_never_raises(hashing_embedder):
    queries = [Query(name, "which countries border switzerland?", "", pages) for name, pages in BAD_PAGES.items()]
    results = {name: e.items for name, e in zip(BAD_PAGES, make(hashing_embedder=hashing_embedder).retrieve(queries))}
    assert results["no results"] == () and results["empty html"] == () and results["not a dict"] == ()
    assert results["other language"][0].text == "Die Schweiz grenzt an Frankreich."
    assert all(len(c.text) <= 2000 for r in results.values() for c in r)


def test_a_failing_model_costs_the_batch_its_context_not_an_exception(caplog):
    class Broken:
        def encode(self, texts, *, is_query=False):
            raise RuntimeError("CUDA error: out of memory")

    query = Query("q", "question", "", (html_page("u", "<p>Some text.</p>"),))
    assert [e.items for e in make(embedder=Broken()).retrieve([query, query])] == [(), ()]
    assert "web retrieval failed" in caplog.text


def test_bad_settings_fail_at_construction(hashing_embedder):
    with pytest.raises(ValueError, match="extraction_backend 'regex'"):
        make(replace(CFG, extraction_backend="regex"), hashing_embedder=hashing_embedder)
    with pytest.raises(ValueError, match="task3_preselect 'random'"):
        make(replace(CFG, task3_preselect="random"), hashing_embedder=hashing_embedder)


def test_g4dn_models_missing_is_a_clear_error(tmp_path, hashing_embedder):
    web = load_config("g4dn").web
    with pytest.raises(ModelNotFoundError, match=f"reranker was not found at {tmp_path}/BAAI/bge-reranker-v2-m3"):
        WebRetriever.from_config(web, str(tmp_path), embedder=hashing_embedder)


# ---------------------------------------------------------------- ElectricSheep's page processing (§4.1)
from tests.web.test_main_content import ARTICLE, needs  # noqa: E402


def article_query():
    page = SearchResult(page_name="Rovio", page_url="https://x.org/rovio", page_snippet="Rovio news",
                        page_result=ARTICLE)
    return Query("qa", "when was rovio entertainment founded?", "", (page,))


def test_default_config_reads_pages_with_the_configured_extractor(hashing_embedder):
    retriever = make(replace(CFG, child_chunk_size=200, child_chunk_overlap=20), hashing_embedder=hashing_embedder)
    assert retriever.chunker.sentence_groups is None  # off by default: db3's character-sized parents
    [evidence] = retriever.retrieve([article_query()])
    assert evidence.provenance["extractors"] == ["selectolax"]
    assert any("cookies" in c.text for c in evidence.items)  # the tag-level extractor keeps the cookie banner


def test_main_content_and_sentence_groups_replace_extractor_and_chunker(hashing_embedder):
    needs("trafilatura")
    needs("blingfire")
    cfg = replace(CFG, child_chunk_size=200, child_chunk_overlap=20,
                  main_content=replace(CFG.main_content, enabled=True, min_chars=50),
                  sentence_chunks=replace(CFG.sentence_chunks, enabled=True, group_size=2))
    retriever = make(cfg, hashing_embedder=hashing_embedder)
    [evidence] = retriever.retrieve([article_query()])
    chunks = evidence.items
    assert evidence.provenance["extractors"] == ["trafilatura"]
    assert retriever.group_chunker.sentence_groups is not None and retriever.chunker.sentence_groups is None
    texts = [c.text for c in chunks if c.kind == "text"]
    assert not any("Copyright 2024" in t or "cookies" in t for t in texts)  # boilerplate gone
    # parents are sentence groups (two sentences each), not 700-character windows
    assert "The company was founded in 2003 by three students in Espoo. Its first hit was Angry Birds, " \
           "released in 2009." in texts
    assert any(c.kind == "table" and "| 2009 | Angry Birds |" in c.text for c in chunks)  # tables whole, from the fallback


def test_main_content_falls_back_to_the_extractor_for_short_pages(hashing_embedder):
    cfg = replace(CFG, main_content=replace(CFG.main_content, enabled=True, min_chars=10_000))
    retriever = make(cfg, hashing_embedder=hashing_embedder)
    [evidence] = retriever.retrieve([article_query()])
    assert evidence.provenance["extractors"] == ["fallback"] and evidence.items


def test_page_processing_runs_only_for_its_tasks(hashing_embedder):
    cfg = replace(CFG, child_chunk_size=200, child_chunk_overlap=20,
                  main_content=replace(CFG.main_content, enabled=True, min_chars=50, tasks=(2,)),
                  sentence_chunks=replace(CFG.sentence_chunks, enabled=True, segmenter="regex", tasks=(2,)))
    retriever = make(cfg, hashing_embedder=hashing_embedder)
    default = make(replace(CFG, child_chunk_size=200, child_chunk_overlap=20), hashing_embedder=hashing_embedder)
    [evidence] = retriever.retrieve([article_query()], task=1)
    assert evidence.items == default.retrieve([article_query()], task=1)[0].items
    assert evidence.provenance["extractors"] == ["selectolax"]
