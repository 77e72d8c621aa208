"""The shipped sample dataset `data/sample/*.jsonl`, assembled from the hand-written sources in `data/sample/source/`.

`Builder(*load_sources(SOURCE_DIR)).build()` is {file name: JSONL text} of both files; `make_sample` writes them
or compares them with the files on disk (the library of scripts/make_sample.py).

Design decisions:
- Every fact is written once, in `source/<domain>.yaml`: questions, their five pages as lists of blocks
  (`p`, `h2`, `table`, ...), topical `background` paragraphs and a per-domain `filler` pool. This module only
  assembles; it invents no facts, so reviewing the sample means reading the YAML.
- A page is a site skeleton (`source/sites/<site>.html`, `{{slot}}` markers, so CSS/JS braces need no escaping)
  around its rendered blocks, padded with paragraphs drawn without replacement from the question's background
  then the domain filler. Padding makes pages a few hundred to ~2,000 words, so chunking and retrieval matter;
  it is drawn per question without replacement (reshuffled only when a question needs more than the pool), so
  pages of one question rarely share a paragraph and one page never repeats one.
- All randomness is `random.Random(<question id>-derived string)`; output has a fixed key order, UTF-8 text
  (`ensure_ascii=False`) and no timestamps, so a rebuild is byte-identical and `--check` can compare bytes.
- Task 3 rows carry the five Task-1 pages plus 45 distractors: the question's hand-written near-topic stubs
  (snippet + short HTML), then shortened pages of other questions, same domain first, shuffled together.
- interaction_id is uuid5 of the question id, so ids are stable across rebuilds and shared by both files.
"""
from __future__ import annotations

import html
import json
import random
import re
import sys
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse

import yaml

REPO = Path(__file__).resolve().parents[2]
SOURCE_DIR = REPO / "data" / "sample" / "source"
OUT_DIR = REPO / "data" / "sample"
TASK1_FILE, TASK3_FILE = "crag_sample.jsonl", "crag_sample_task3.jsonl"
DOMAIN_ORDER = ("movie", "music", "finance", "sports", "open")  # source files, and row order in the output
PAGES_PER_QUESTION = 5  # Tasks 1/2
TASK3_PAGES = 50
SHORT_PAGE_BLOCKS = 2  # blocks kept when another question's page is reused as a Task-3 distractor
SHORT_PAGE_SITE = "brief"  # compact skeleton for Task-3 distractors, keeping data/sample small
UUID_NAMESPACE = uuid.NAMESPACE_URL
QUERY_TIME_FORMAT = "%m/%d/%Y, %H:%M:%S PT"
PT_BEHIND_GMT_HOURS = 8  # query times are US Pacific, page_last_modified is GMT (DST ignored: dates are in winter)
# page_last_modified is RFC 1123 in English whatever the locale, so names are spelled out rather than %a/%b.
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_QUESTION_KEYS = {"id", "query_time", "question_type", "static_or_dynamic", "popularity", "query", "answer",
                  "alt_ans", "background", "pages", "distractors"}
_PAGE_KEYS = {"name", "url", "site", "snippet", "modified", "lang", "pad", "body", "empty", "duplicate_of"}


class SourceError(ValueError):
    """The YAML source is malformed; the message names the question and page."""


@dataclass
class Question:
    """One question with its raw page specs, as read from the YAML."""

    qid: str
    domain: str
    fields: dict
    pages: list
    background: list
    distractors: list


# ----------------------------------------------------------------------------------------------- loading

def _require_str(value, where: str) -> str:
    # YAML turns 2010-07-15 into a date and 4 into an int; gold answers must stay exactly as written.
    if not isinstance(value, str):
        raise SourceError(f"{where}: expected a quoted string, got {type(value).__name__} {value!r}")
    return value


def load_sources(source_dir: Path) -> tuple[list[Question], dict[str, list[str]], dict[str, str]]:
    """Reads `<domain>.yaml` and `sites/*.html`.

    Returns:
        (questions in output order, filler paragraphs per domain, skeleton html per site name).
    Raises:
        SourceError: on unknown keys, non-string fields or a question without exactly five pages.
    """
    questions, filler = [], {}
    for domain in DOMAIN_ORDER:
        doc = yaml.safe_load((source_dir / f"{domain}.yaml").read_text(encoding="utf-8"))
        filler[domain] = [_require_str(p, f"{domain} filler") for p in doc["filler"]]
        for raw in doc["questions"]:
            qid = raw.get("id", "?")
            unknown = set(raw) - _QUESTION_KEYS
            if unknown:
                raise SourceError(f"{qid}: unknown keys {sorted(unknown)}")
            fields = {k: _require_str(raw[k], f"{qid}.{k}") for k in
                      ("query_time", "question_type", "static_or_dynamic", "popularity", "query", "answer")}
            fields["alt_ans"] = [_require_str(a, f"{qid}.alt_ans") for a in raw.get("alt_ans", [])]
            datetime.strptime(fields["query_time"], QUERY_TIME_FORMAT)  # fails loudly on a malformed time
            pages = raw["pages"]
            if len(pages) != PAGES_PER_QUESTION:
                raise SourceError(f"{qid}: {len(pages)} pages, expected {PAGES_PER_QUESTION}")
            for i, page in enumerate(pages):
                if set(page) - _PAGE_KEYS:
                    raise SourceError(f"{qid} page {i}: unknown keys {sorted(set(page) - _PAGE_KEYS)}")
            questions.append(Question(qid, domain, fields, pages, raw.get("background", []),
                                      raw.get("distractors", [])))
    sites = {p.stem: p.read_text(encoding="utf-8") for p in sorted((source_dir / "sites").glob("*.html"))}
    return questions, filler, sites


# ----------------------------------------------------------------------------------------------- rendering

def _inline(text: str) -> str:
    """Escapes text for HTML and turns `[label](href)` into links."""
    return _LINK.sub(r'<a href="\2">\1</a>', html.escape(str(text), quote=False))


def _table(spec: dict) -> str:
    # `csv` is a compact form for long tables: one row per line, cells split on `sep` (default ",").
    sep = spec.get("sep", ",")
    rows = [r.split(sep) for r in spec["csv"].strip().splitlines()] if "csv" in spec else spec["rows"]
    css = f' class="{spec["class"]}"' if "class" in spec else ' class="data"'
    parts = [f"<table{css}>"]
    if "caption" in spec:
        parts.append(f"<caption>{_inline(spec['caption'])}</caption>")
    if "head" in spec:
        parts.append("<thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in spec["head"]) + "</tr></thead>")
    parts.append("<tbody>")
    parts += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in rows]
    parts.append("</tbody></table>")
    return "".join(parts)


# One renderer per block kind (dispatch table, not an if-chain); `html` is inserted verbatim for entities.
_BLOCKS = {
    "p": lambda v: f"<p>{_inline(v)}</p>",
    "h2": lambda v: f'<h2 class="mw-heading">{_inline(v)}</h2>',
    "h3": lambda v: f"<h3>{_inline(v)}</h3>",
    "quote": lambda v: f"<blockquote><p>{_inline(v)}</p></blockquote>",
    "ul": lambda v: "<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in v) + "</ul>",
    "ol": lambda v: "<ol>" + "".join(f"<li>{_inline(i)}</li>" for i in v) + "</ol>",
    "table": _table,
    "html": lambda v: v,
}


def render_block(block: dict, where: str) -> str:
    """Renders one `{kind: value}` block.

    Raises:
        SourceError: on an unknown kind or a block with more than one key.
    """
    if not isinstance(block, dict) or len(block) != 1 or next(iter(block)) not in _BLOCKS:
        raise SourceError(f"{where}: bad block {block!r}; kinds are {sorted(_BLOCKS)}")
    kind, value = next(iter(block.items()))
    return _BLOCKS[kind](value)


def _modified_time(value) -> datetime | None:
    """A page's `modified` field (`2024-02-27 22:55:55`, str or YAML datetime) as a datetime; absent -> None."""
    if not value:
        return None
    return value if isinstance(value, datetime) else datetime.strptime(str(value), "%Y-%m-%d %H:%M:%S")


def last_modified(when: datetime | None) -> str:
    """CRAG's header format, leading space included: `" Tue, 27 Feb 2024 22:55:55 GMT"`; None -> ""."""
    if when is None:
        return ""
    return f" {_DAYS[when.weekday()]}, {when.day:02d} {_MONTHS[when.month - 1]} {when:%Y %H:%M:%S} GMT"


def _display_date(page: dict, query_time: datetime, rng: random.Random) -> str:
    """The human date a skeleton shows: the last-modified day, else a few days before the query (never after
    it, and never before the events that a page without `modified` reports)."""
    when = _modified_time(page.get("modified")) or query_time - timedelta(days=rng.randint(2, 15))
    return f"{when.day} {_MONTHS[when.month - 1]} {when.year}"


def fill_skeleton(skeleton: str, page: dict, body: str, date: str) -> str:
    """Puts the rendered body and page metadata into a site skeleton."""
    host = urlparse(page["url"]).netloc
    description = html.unescape(page.get("snippet", ""))[:160]
    slots = {"title": html.escape(page["name"]), "lang": page.get("lang", "en"), "url": html.escape(page["url"]),
             "site": host.removeprefix("www."), "description": html.escape(description), "date": date,
             "body": body}
    for name, value in slots.items():
        skeleton = skeleton.replace("{{" + name + "}}", value)
    return skeleton


# ----------------------------------------------------------------------------------------------- assembling

class _Padding:
    """Padding paragraphs for one question: its background first, then the domain filler, without replacement.

    When a question asks for more than the pool holds, the pool is reshuffled, so a paragraph can recur on a
    later page of the question but never twice on the same page.
    """

    def __init__(self, background: list[str], filler: list[str], rng: random.Random):
        self._all = background + filler
        self._rng = rng
        self._queue = rng.sample(background, len(background)) + rng.sample(filler, len(filler))

    def draw(self, n: int) -> list[str]:
        """Returns n distinct paragraphs.

        Raises:
            SourceError: when n exceeds the number of distinct paragraphs available.
        """
        if n > len(self._all):
            raise SourceError(f"{n} padding paragraphs wanted, only {len(self._all)} exist")
        taken: list[str] = []
        while len(taken) < n:
            if not self._queue:
                self._queue = [p for p in self._rng.sample(self._all, len(self._all)) if p not in taken]
            taken.append(self._queue.pop(0))
        return taken


class Builder:
    """Turns loaded sources into rows; holds the skeletons and filler so helpers stay small."""

    def __init__(self, questions: list[Question], filler: dict[str, list[str]], sites: dict[str, str]):
        self.questions, self.filler, self.sites = questions, filler, sites

    def _page(self, q: Question, page: dict, blocks: list[str], rng: random.Random, site: str = "") -> dict:
        site = site or page.get("site", "news")
        if site not in self.sites:
            raise SourceError(f"{q.qid} page {page.get('url')}: unknown site {site!r}; have {sorted(self.sites)}")
        query_time = datetime.strptime(q.fields["query_time"], QUERY_TIME_FORMAT)
        result = "" if page.get("empty") else fill_skeleton(
            self.sites[site], page, "\n".join(blocks), _display_date(page, query_time, rng))
        modified = _modified_time(page.get("modified"))
        # A page reused as another question's distractor cannot have changed after that question's search ran.
        if modified and modified - timedelta(hours=PT_BEHIND_GMT_HOURS) > query_time:
            modified = None
        return {"page_name": page["name"], "page_url": page["url"], "page_snippet": page.get("snippet", ""),
                "page_result": result, "page_last_modified": last_modified(modified)}

    def task1_pages(self, q: Question) -> list[dict]:
        """The five pages of a question, padded and in a stable shuffled order."""
        rng = random.Random(f"pages:{q.qid}")
        padding = _Padding(q.background, self.filler[q.domain], rng)
        built: list[dict] = []
        for i, page in enumerate(q.pages):
            if "duplicate_of" in page:  # same URL and HTML as an earlier page; only name/snippet may differ
                original = dict(built[page["duplicate_of"]])
                original.update({k: v for k, v in (("page_name", page.get("name")),
                                                   ("page_snippet", page.get("snippet"))) if v})
                built.append(original)
                continue
            pad = page.get("pad", 0)
            before, after = (0, pad) if isinstance(pad, int) else pad
            extra = [f"<p>{_inline(p)}</p>" for p in padding.draw(before + after)]
            blocks = [render_block(b, f"{q.qid} page {i}") for b in page.get("body", [])]
            built.append(self._page(q, page, extra[:before] + blocks + extra[before:], rng))
        return random.Random(f"order:{q.qid}").sample(built, len(built))

    def _short(self, q: Question, page: dict, rng: random.Random) -> dict:
        """A distractor for question q: a stub's snippet plus filler, or the first blocks of another page."""
        if "body" in page:
            blocks = [render_block(b, f"{q.qid} distractor") for b in page["body"][:SHORT_PAGE_BLOCKS]]
        else:
            extra = rng.sample(self.filler[q.domain], rng.randint(1, 2))
            blocks = [f"<p>{_inline(html.unescape(page.get('snippet', '')))}</p>"]
            blocks += [f"<p>{_inline(p)}</p>" for p in extra]
        return self._page(q, page, blocks, rng, site=SHORT_PAGE_SITE)

    def task3_pages(self, q: Question, task1: list[dict]) -> list[dict]:
        """Task-1 pages + near-topic stubs + shortened pages of other questions (same domain first), 50 in all."""
        rng = random.Random(f"task3:{q.qid}")
        pages = list(task1) + [self._short(q, stub, rng) for stub in q.distractors]
        others = [(o.domain, p) for o in self.questions if o.qid != q.qid
                  for p in o.pages if "body" in p and not p.get("empty")]
        same = [p for domain, p in others if domain == q.domain]
        rest = [p for domain, p in others if domain != q.domain]
        reused = rng.sample(same, len(same)) + rng.sample(rest, len(rest))
        pages += [self._short(q, page, rng) for page in reused[:TASK3_PAGES - len(pages)]]
        if len(pages) != TASK3_PAGES:
            raise SourceError(f"{q.qid}: only {len(pages)} task-3 pages could be assembled")
        return rng.sample(pages, len(pages))

    @staticmethod
    def row(q: Question, pages: list[dict]) -> dict:
        """One CRAG example (keys in the order of the official files, plus v5's popularity)."""
        f = q.fields
        return {"interaction_id": str(uuid.uuid5(UUID_NAMESPACE, f"crag-sample/{q.qid}")),
                "query_time": f["query_time"], "domain": q.domain, "question_type": f["question_type"],
                "static_or_dynamic": f["static_or_dynamic"], "query": f["query"], "answer": f["answer"],
                "alt_ans": f["alt_ans"], "split": 0, "popularity": f["popularity"], "search_results": pages}

    def build(self) -> dict[str, str]:
        """Returns {file name: JSONL text} for both sample files."""
        task1, task3 = [], []
        for q in self.questions:
            pages = self.task1_pages(q)
            task1.append(self.row(q, pages))
            if q.distractors:
                task3.append(self.row(q, self.task3_pages(q, pages)))
        return {TASK1_FILE: _jsonl(task1), TASK3_FILE: _jsonl(task3)}


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def make_sample(source: Path = SOURCE_DIR, out_dir: Path = OUT_DIR, check: bool = False) -> int:
    """Builds both files from `source` and writes them into `out_dir`, or with `check` compares them with the files
    there. Returns the exit status: 2 on a bad source, 1 when `check` finds a file out of date, else 0."""
    try:
        outputs = Builder(*load_sources(source)).build()
    except (SourceError, KeyError, ValueError) as err:
        print(f"make_sample: bad source: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    stale = []
    for name, text in outputs.items():
        path = out_dir / name
        data = text.encode("utf-8")
        if check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(str(path))
        else:
            path.write_bytes(data)
            print(f"wrote {path} ({len(data) / 1e6:.2f} MB, {text.count(chr(10))} rows)")
    if stale:
        print("make_sample: out of date (run python scripts/make_sample.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0
