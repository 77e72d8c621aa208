"""HTML page -> main content (ElectricSheep §4.1): trafilatura's boilerplate removal, with the repo's own
extractor (`models.web.extraction`, bs4 or selectolax) as the fallback.

trafilatura keeps the article body and drops headers, footers, navigation, cookie banners, comment threads
and link farms that a tag-level extractor keeps. It returns one paragraph per line, which the sentence
chunker uses as a hard sentence boundary. Tables never come from trafilatura (`include_tables=False`): they
are read by the fallback extractor as Markdown, as every table of this repo is, and dropped when empty.

The fallback text is used when trafilatura is not installed, raises, returns nothing, or returns less
than `min_chars` characters (on pages that are mostly a table or a list of links it can discard the
content together with the boilerplate). `MainContent.source` says which one was used.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from models.web.extraction import _cap_tables as cap_total_tokens
from models.web.extraction import clean_text, extract_page

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MainContentConfig:
    enabled: bool = False  # off: the web pathway keeps today's extractor
    tasks: tuple[int, ...] = (1, 2, 3)  # tasks in which it runs when enabled
    fallback_backend: str = "selectolax"  # bs4 | selectolax: tables always, text when trafilatura fails
    min_chars: int = 200  # trafilatura text shorter than this -> fallback text
    favor_recall: bool = True  # trafilatura's recall mode keeps more borderline paragraphs
    max_html_chars: int = 3_000_000
    max_page_tokens: int = 12000
    max_table_tokens: int = 4000


@dataclass(frozen=True)
class MainContent:
    paragraphs: tuple[str, ...]  # cleaned, one per line of trafilatura's output (or one: the fallback text)
    tables: tuple[str, ...]  # Markdown, each prefixed by the page name; empty tables are never here
    source: str  # "trafilatura" | "fallback"


def _trafilatura_text(html: str, favor_recall: bool) -> str:
    try:
        import trafilatura
    except ImportError:
        return ""
    try:
        return trafilatura.extract(html, include_tables=False, include_comments=False, include_links=False,
                                   include_images=False, favor_recall=favor_recall, deduplicate=False) or ""
    except Exception as exc:  # lxml and trafilatura raise many types on malformed pages
        log.debug("trafilatura failed (%s); using the fallback extractor", exc)
        return ""


def extract_main_content(html: str, page_name: str = "",
                         config: MainContentConfig = MainContentConfig()) -> MainContent:
    """Main text (as paragraphs) and Markdown tables of one page; never raises on bad HTML."""
    html = (html or "")[:config.max_html_chars].replace("\x00", "")
    fallback = extract_page(html, page_name, backend=config.fallback_backend, max_html_chars=config.max_html_chars,
                            max_page_tokens=config.max_page_tokens, max_table_tokens=config.max_table_tokens)
    text = _trafilatura_text(html, config.favor_recall) if html.strip() else ""
    paragraphs = [p for p in (clean_text(line) for line in text.splitlines()) if p]
    if sum(len(p) for p in paragraphs) < config.min_chars:
        return MainContent((fallback.text,) if fallback.text else (), fallback.tables, "fallback")
    # The page's token cap over all paragraphs together (the same budget walk as the tables').
    return MainContent(cap_total_tokens(paragraphs, config.max_page_tokens), fallback.tables, "trafilatura")
