"""Main-content extraction (trafilatura with the repo's extractor as fallback) and sentence-group chunks."""
from __future__ import annotations

import importlib.util

import pytest

from models.web.main_content import MainContentConfig, extract_main_content
from models.web.sentence_chunker import SentenceChunkConfig, SentenceChunker, is_question
from tests.packaged import missing_installed


def needs(module: str) -> None:
    """Skip without `module` locally; in CI (CI=true), where requirements are installed, fail instead."""
    if importlib.util.find_spec(module) is None:
        missing_installed(f"{module} is in the requirements but not installed")


ARTICLE = """<html><head><title>t</title></head><body>
<header><nav><a href="/">Home</a> | <a href="/news">News</a> | <a href="/sports">Sports</a></nav></header>
<div class="cookie">We use cookies. Accept all cookies to continue browsing.</div>
<article><h1>Rovio Entertainment acquired</h1>
<p>Rovio Entertainment is a Finnish video game developer. It has been a subsidiary of Sega Sammy Holdings since
2023, when the Japanese group bought it for 706 million euros.</p>
<p>The company was founded in 2003 by three students in Espoo. Its first hit was Angry Birds, released in
2009. Bad Piggies followed in 2012 and topped the paid charts of the App Store within three days.</p>
<table><tr><th>Year</th><th>Game</th></tr><tr><td>2009</td><td>Angry Birds</td></tr><tr><td>2012</td><td>Bad Piggies</td></tr></table>
<table><tr><td></td></tr></table>
</article>
<footer><p>Copyright 2024 Example Media. All rights reserved. Privacy policy. Terms of use. Contact us.</p>
<ul><li><a href="/a">Related: ten best mobile games</a></li><li><a href="/b">Related: top developers</a></li></ul></footer>
</body></html>"""


def test_trafilatura_keeps_the_article_and_drops_boilerplate():
    needs("trafilatura")
    content = extract_main_content(ARTICLE, "Rovio", MainContentConfig(min_chars=50))
    text = "\n".join(content.paragraphs)
    assert content.source == "trafilatura"
    assert "subsidiary of Sega Sammy Holdings since 2023" in text and "Bad Piggies followed in 2012" in text
    assert "Copyright" not in text and "Related: ten best mobile games" not in text and "Sports" not in text
    assert content.tables == ("Page name: Rovio\n| Year | Game |\n| --- | --- |\n| 2009 | Angry Birds |\n"
                              "| 2012 | Bad Piggies |",)  # whole, as Markdown; the empty table dropped


@pytest.mark.parametrize("html", ["", "\x00\x00", "<html><body><p>short</p></body></html>", "<<<>>>" * 1000,
                                  "<table><tr><td>only a table</td></tr></table>"])
def test_fallback_on_pages_without_main_text(html):
    content = extract_main_content(html, "p", MainContentConfig())
    assert content.source == "fallback"
    assert all(isinstance(p, str) and p for p in content.paragraphs)


def test_page_token_cap():
    needs("trafilatura")
    content = extract_main_content(ARTICLE, "p", MainContentConfig(min_chars=50, max_page_tokens=12))
    assert sum(len(p.split()) for p in content.paragraphs) <= 12


@pytest.mark.parametrize("sentence, question", [
    ("Who founded Rovio?", True), ("What is it", True), ("Island nations are many.", False),
    ("Does it work.", True), ("It does?", True), ("The company was founded in 2003.", False), ("“How fast is it", True)])
def test_is_question(sentence, question):
    assert is_question(sentence) is question


def test_grouping_rules():
    chunker = SentenceChunker(SentenceChunkConfig(segmenter="regex", group_size=3, question_group_chars=45,
                                                  max_sentence_chars=40))
    sentences = chunker.sentences(["One a. Two b. Three c. Four d.", "Can I install it twice? No. Only once. "
                                   "Another fact here. " + "X" * 100 + "."])
    assert sentences[-1] == "X" * 40  # truncated
    assert chunker.groups(sentences) == [
        "One a. Two b. Three c.", "Four d.",  # groups of 3; a question starts a new group
        "Can I install it twice? No. Only once.",  # question + answers up to 45 characters
        "Another fact here. " + "X" * 40]


def test_chunks_keep_tables_whole_and_label_kinds():
    chunker = SentenceChunker(SentenceChunkConfig(segmenter="regex"))
    chunks = chunker.chunks(["A b. C d."], ["| a |\n| --- |\n| 1 |", "  "], source="u")
    assert [(c.kind, c.source) for c in chunks] == [("text", "u"), ("table", "u")]
    assert chunks[1].text == "| a |\n| --- |\n| 1 |"


def test_blingfire_segmenter_keeps_paragraph_boundaries():
    needs("blingfire")
    chunker = SentenceChunker(SentenceChunkConfig(segmenter="blingfire", group_size=1))
    assert chunker.sentences(["Title without a stop", "Dr. Smith arrived. He sat down."]) == [
        "Title without a stop", "Dr. Smith arrived.", "He sat down."]


def test_bad_config():
    with pytest.raises(ValueError, match="segmenter"):
        SentenceChunker(SentenceChunkConfig(segmenter="nltk"))
