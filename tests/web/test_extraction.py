"""HTML extraction: both backends, one contract."""
import time

import pytest

from models.web.extraction import (BACKENDS, cap_tokens, clean_text, count_tokens, decode_unicode_escapes,
                                   extract_page, markdown_table)

PAGE = """<!DOCTYPE html><html><head><title>Ignored title</title><style>p {color: red}</style></head>
<body>
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<script>var secret = "script text";</script>
<h1>Inception</h1>
<p>Inception is a 2010 film by Christopher&nbsp;Nolan &amp; friends. Caf\\u00e9 scene &#x27;dream&#x27;.</p>
<button>Subscribe now</button>
<table><tr><th>Title</th><th>Released</th></tr>
       <tr><td>Inception</td><td>2010-07-15</td></tr>
       <tr><td>The Matrix</td><td>1999-03-30</td><td>extra | cell</td></tr></table>
<table><tr><td> </td><td></td></tr></table>
<footer>Copyright footer</footer>
</body></html>"""


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def test_main_text_drops_non_content_and_decodes(backend):
    page = extract_page(PAGE, "Inception (film)", backend=backend)
    assert page.text.startswith("Inception Inception is a 2010 film by Christopher Nolan & friends.")
    assert "Café scene 'dream'." in page.text
    for junk in ("script text", "color", "Home", "Subscribe", "Copyright", "Ignored title", "2010-07-15"):
        assert junk not in page.text, junk
    assert "  " not in page.text


def test_tables_become_markdown_with_header_separator(backend):
    page = extract_page(PAGE, "Inception (film)", backend=backend)
    assert len(page.tables) == 1  # the empty table is dropped
    lines = page.tables[0].split("\n")
    assert lines[0] == "Page name: Inception (film)"
    assert lines[1] == "| Title | Released |  |"
    assert lines[2] == "| --- | --- | --- |"
    assert lines[3] == "| Inception | 2010-07-15 |  |"
    assert lines[4] == "| The Matrix | 1999-03-30 | extra \\| cell |"
    # every row has the same number of unescaped pipes
    assert len({line.replace("\\|", "").count("|") for line in lines[1:]}) == 1


def test_backends_agree():
    assert extract_page(PAGE, "x", backend="bs4") == extract_page(PAGE, "x", backend="selectolax")


def test_layout_tables_stay_in_text_and_inner_data_tables_are_extracted(backend):
    html = ("<table><tr><td><p>Layout prose about Canberra.</p>"
            "<table><tr><th>City</th></tr><tr><td>Canberra</td></tr></table></td></tr></table>")
    page = extract_page(html, "Capitals", backend=backend)
    assert page.text == "Layout prose about Canberra."
    assert page.tables == ("Page name: Capitals\n| City |\n| --- |\n| Canberra |",)


def test_button_holding_block_content_is_a_container_not_dropped(backend):
    html = "<button class='menu'><div><p>Real article text.</p></div></button><button>Click</button>"
    assert extract_page(html, backend=backend).text == "Real article text."


@pytest.mark.parametrize("html", ["", "   ", None, "\x00\x01\x02 binary \xff\xfe junk \x00", "<<<>>>&&&",
                                  "<table></table>", "<html><body></body></html>"])
def test_bad_input_never_raises(backend, html):
    page = extract_page(html, "p", backend=backend)
    assert isinstance(page.text, str) and "\x00" not in page.text


def test_other_languages_pass_through(backend):
    page = extract_page("<p>Berna è la capitale della Svizzera. 東京は日本の首都です。</p>", backend=backend)
    assert page.text == "Berna è la capitale della Svizzera. 東京は日本の首都です。"


@pytest.mark.parametrize("backend, size", [("selectolax", 10_000_000), ("bs4", 200_000)])
def test_giant_page_and_giant_table_are_capped(backend, size):
    # bs4 builds a Python object per tag: the CPU profiles use selectolax for pages like the 10 MB one.
    rows = "".join(f"<tr><td>row {i}</td><td>{i * 7}</td></tr>" for i in range(size // 50))
    html = "<p>" + "word " * (size // 20) + "</p><table><tr><th>a</th><th>b</th></tr>" + rows + "</table>"
    assert len(html) > size
    start = time.perf_counter()
    page = extract_page(html, "big", backend=backend, max_html_chars=3_000_000, max_page_tokens=1000,
                        max_table_tokens=500)
    assert time.perf_counter() - start < 20
    assert count_tokens(page.text) == 1000
    assert 0 < sum(count_tokens(t) for t in page.tables) <= 500


def test_unknown_backend_is_an_error():
    with pytest.raises(ValueError, match="unknown extraction backend 'regex'"):
        extract_page("<p>x</p>", backend="regex")


def test_unicode_escapes():
    assert decode_unicode_escapes(r"caf\u00e9 \uD83D\uDE00 \U0001F600 lone \ud800 x") == "café 😀 😀 lone  x"
    assert decode_unicode_escapes("no escapes") == "no escapes"


def test_clean_text_spacing():
    assert clean_text(" Inception ,  a  film .\n Use .NET now ") == "Inception, a film. Use .NET now"


def test_cap_tokens():
    assert cap_tokens("one, two three", 2) == "one,"
    assert cap_tokens("one two", 5) == "one two"
    assert cap_tokens("one two", 0) == ""


def test_markdown_table_pads_rows_and_drops_empty():
    assert markdown_table([["a"], ["1", "2"], ["", ""]], "P") == "Page name: P\n| a |  |\n| --- | --- |\n| 1 | 2 |"
    assert markdown_table([[" ", ""], []], "P") == ""
