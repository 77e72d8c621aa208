"""Page deduplication and Task-3 preselection."""
import pytest

from models.types import Query, SearchResult
from models.web.pages import select_pages, snippet_document, snippet_text, unique_pages


def page(i, snippet="", html="<p>body</p>", url=None, name=None):
    return SearchResult(page_name=name or f"page {i}", page_url=url or f"https://x/{i}", page_snippet=snippet,
                        page_result=html if html is None else html.replace("body", f"body {i}"))


def test_duplicates_by_url_or_html_are_dropped():
    a = page(1)
    same_url = page(2, url=a.page_url)
    same_html = SearchResult(page_url="https://other", page_result=a.page_result)
    empty_1, empty_2 = page(3, html=""), page(4, html="")  # empty HTML is not "the same page"
    assert unique_pages([a, same_url, same_html, empty_1, empty_2]) == [a, empty_1, empty_2]


def test_snippets_are_unescaped_and_named():
    p = page(1, snippet="Rock &amp; roll&#x27;s   best", name="Music  history")
    assert snippet_text(p) == "Rock & roll's best"
    assert snippet_document(p) == "Music history: Rock & roll's best"
    assert snippet_document(page(2, snippet="")) == ""


def test_few_pages_are_all_read_in_order_and_empty_html_goes_to_snippets():
    pages = (page(1), page(2, html=""), page(3))
    selection = select_pages(Query("q", "question", "", pages), top_pages=5)
    assert selection.full == (pages[0], pages[2])
    assert selection.snippet_only == (pages[1],)


def test_task3_bm25_preselection_picks_the_pages_about_the_question():
    filler = [page(i, snippet=f"Weather report number {i} for the weekend in Oslo.") for i in range(40)]
    relevant = [page(100, snippet="Canberra is the capital city of Australia."),
                page(101, snippet="Why Canberra, not Sydney, became the capital of Australia.")]
    pages = tuple(filler[:17] + relevant[:1] + filler[17:] + relevant[1:])
    selection = select_pages(Query("q", "what is the capital of australia?", "", pages), top_pages=5)
    assert set(relevant) <= set(selection.full)
    assert len(selection.full) == 5
    assert len(selection.snippet_only) == len(pages) - 5
    assert set(selection.full).isdisjoint(selection.snippet_only)


def test_task3_preselection_follows_given_scores():
    pages = tuple(page(i) for i in range(8))
    scores = [0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.0, 0.6]
    selection = select_pages(Query("q", "anything", "", pages), top_pages=3, snippet_scores=scores)
    assert selection.full == (pages[1], pages[3], pages[5])  # best first
    with pytest.raises(ValueError, match="3 snippet scores for 8 pages"):
        select_pages(Query("q", "anything", "", pages), top_pages=3, snippet_scores=[1, 2, 3])
