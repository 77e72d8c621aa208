"""Checks the shipped sample dataset (data/sample/*.jsonl) and its generator (evaluation/acceptance/sample_data.py, run as
scripts/make_sample.py).

The sample is what `python local_evaluation.py` runs by default, so these tests guard both the CRAG schema
(every key and type a loader or the grader relies on) and the properties that make the sample useful for
measuring retrieval: gold answers present in the pages, answers hidden in tables, near-miss pages and the
edge cases real CRAG data has (empty page_result, duplicate URLs, non-English and non-ASCII pages).
"""
from __future__ import annotations

import json
import re
import shutil
import uuid
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from scripts.make_sample import main as make_sample_main

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DIR = REPO / "data" / "sample"
TASK1 = SAMPLE_DIR / "crag_sample.jsonl"
TASK3 = SAMPLE_DIR / "crag_sample_task3.jsonl"

ROW_TYPES = {"interaction_id": str, "query_time": str, "domain": str, "question_type": str,
             "static_or_dynamic": str, "query": str, "answer": str, "alt_ans": list, "split": int,
             "popularity": str, "search_results": list}
PAGE_KEYS = {"page_name", "page_url", "page_snippet", "page_result", "page_last_modified"}
DOMAINS = {"finance", "music", "movie", "sports", "open"}
QUESTION_TYPES = {"simple", "simple_w_condition", "comparison", "aggregation", "set", "false_premise",
                  "post-processing", "multi-hop"}
DYNAMISM = {"static", "slow-changing", "fast-changing", "real-time"}
POPULARITY = {"head", "torso", "tail", ""}
INVALID = "invalid question"
TIME_WINDOW = (datetime(2024, 2, 20, 9, 0, 0), datetime(2024, 3, 15, 18, 0, 0))
LAST_MODIFIED = re.compile(r"^ (Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$")


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def task1() -> list[dict]:
    return _rows(TASK1)


@pytest.fixture(scope="module")
def task3() -> list[dict]:
    return _rows(TASK3)


def _soup(page: dict) -> BeautifulSoup:
    return BeautifulSoup(page["page_result"], "lxml")


def _text(page: dict) -> str:
    return _soup(page).get_text(" ") if page["page_result"] else ""


def _mentions(text: str, answer: str) -> bool:
    """Whole-word, case-insensitive occurrence, so the answer "4" is not found inside "2024"."""
    return re.search(rf"(?<!\w){re.escape(answer.lower())}(?!\w)", text.lower()) is not None


def _answer_only_in_table(page: dict, answer: str) -> bool:
    if not page["page_result"]:
        return False
    soup = _soup(page)
    if not _mentions(soup.get_text(" "), answer):
        return False
    for table in soup.find_all("table"):
        table.decompose()
    return not _mentions(soup.get_text(" "), answer)


def _gold_questions(rows: list[dict]) -> list[dict]:
    """Questions whose gold answer is a fact; "invalid question" is a label and appears in no page."""
    return [r for r in rows if r["answer"] != INVALID]


# ------------------------------------------------------------------------------------------------- schema

@pytest.mark.parametrize("path", [TASK1, TASK3], ids=["task1", "task3"])
def test_every_row_has_the_crag_schema(path):
    for row in _rows(path):
        assert set(row) == set(ROW_TYPES), row.get("interaction_id")
        for key, kind in ROW_TYPES.items():
            assert isinstance(row[key], kind), (row["interaction_id"], key)
        assert uuid.UUID(row["interaction_id"])
        assert row["domain"] in DOMAINS and row["question_type"] in QUESTION_TYPES
        assert row["static_or_dynamic"] in DYNAMISM and row["popularity"] in POPULARITY
        assert row["split"] == 0 and all(isinstance(a, str) for a in row["alt_ans"])
        when = datetime.strptime(row["query_time"], "%m/%d/%Y, %H:%M:%S PT")
        assert TIME_WINDOW[0] <= when <= TIME_WINDOW[1], row["query_time"]
        assert (row["question_type"] == "false_premise") == (row["answer"] == INVALID), row["query"]
        for page in row["search_results"]:
            assert set(page) == PAGE_KEYS and all(isinstance(v, str) for v in page.values())
            assert page["page_url"].startswith("https://") and page["page_name"]
            assert page["page_last_modified"] == "" or LAST_MODIFIED.match(page["page_last_modified"])
            if page["page_last_modified"]:  # a page cannot change after the search ran (GMT is PT + 8 h)
                modified = datetime.strptime(page["page_last_modified"], " %a, %d %b %Y %H:%M:%S GMT")
                assert modified - timedelta(hours=8) <= when, (row["query"], page["page_url"])
            assert page["page_result"] == "" or page["page_result"].lstrip().lower().startswith(("<!doctype", "<html"))


def test_task1_rows_have_five_pages_and_task3_rows_up_to_fifty(task1, task3):
    assert len(task1) == 20
    assert all(len(r["search_results"]) == 5 for r in task1)
    assert 6 <= len(task3) < len(task1)
    assert all(40 <= len(r["search_results"]) <= 50 for r in task3)


def test_interaction_ids_are_unique_and_shared_between_tasks(task1, task3):
    ids = [r["interaction_id"] for r in task1]
    assert len(set(ids)) == len(ids)
    assert len({r["interaction_id"] for r in task3}) == len(task3)
    by_id = {r["interaction_id"]: r for r in task1}
    for row in task3:
        twin = by_id[row["interaction_id"]]
        assert (row["query"], row["answer"]) == (twin["query"], twin["answer"])
        # Task 3 extends the Task-1 pages with distractors; it never drops one.
        urls = [p["page_url"] for p in row["search_results"]]
        assert all(p["page_url"] in urls for p in twin["search_results"])


def test_domains_and_question_types_are_covered(task1, task3):
    assert {r["domain"] for r in task1} == DOMAINS
    assert {r["domain"] for r in task3} == DOMAINS
    assert {r["question_type"] for r in task1} >= QUESTION_TYPES - {"post-processing"}
    assert len({r["static_or_dynamic"] for r in task1}) >= 3
    assert {r["popularity"] for r in task1} == POPULARITY


# ------------------------------------------------------------------------------------------------- content

@pytest.mark.parametrize("path", [TASK1, TASK3], ids=["task1", "task3"])
def test_every_gold_answer_occurs_in_a_page_of_its_question(path):
    for row in _gold_questions(_rows(path)):
        assert any(_mentions(_text(p), row["answer"]) for p in row["search_results"]), row["query"]


def test_some_answers_appear_only_inside_html_tables(task1):
    hidden = [r["query"] for r in _gold_questions(task1)
              if any(_answer_only_in_table(p, r["answer"]) for p in r["search_results"])]
    assert len(hidden) >= 5, hidden


def test_every_question_also_has_pages_without_the_answer(task1):
    # Near-miss and unrelated pages are what make retrieval matter. A comparison's answer is one of the two
    # entities it names, which near-miss pages mention too, so those questions are exempt.
    for row in _gold_questions(task1):
        if row["question_type"] == "comparison":
            continue
        assert any(not _mentions(_text(p), row["answer"]) for p in row["search_results"]), row["query"]


def test_pages_are_realistic_html_of_varied_length(task1):
    pages = [p for r in task1 for p in r["search_results"] if p["page_result"]]
    words = sorted(len(_soup(p).get_text(" ").split()) for p in pages)
    assert words[0] < 300 and words[-1] > 1500 and words[len(words) // 2] > 300
    full = [p["page_result"].lower() for p in pages]
    for marker in ("<!doctype", "<title>", "<meta", "<script", "<style", "<nav", "<footer", "cookie"):
        assert sum(marker in h for h in full) >= 0.9 * len(full), marker


def test_edge_cases_of_real_crag_data_are_present(task1):
    pages = [p for r in task1 for p in r["search_results"]]
    assert any(p["page_result"] == "" for p in pages)
    assert any(len({p["page_url"] for p in r["search_results"]}) < 5 for r in task1), "no duplicate URL"
    assert any('lang="de"' in p["page_result"] for p in pages), "no German page"
    assert any(re.search(r"[^\x00-\x7f]", p["page_result"]) for p in pages), "no non-ASCII text"
    assert any("&#x27;" in p["page_snippet"] for p in pages), "no entity in a snippet"
    assert any(re.search(r"&[a-z]+;", p["page_result"]) for p in pages), "no named entity in HTML"
    assert any(p["page_last_modified"] == "" for p in pages) and any(p["page_last_modified"] for p in pages)

    def one_giant_table(page: dict) -> bool:
        body = _soup(page).body if page["page_result"] else None
        children = [c.name for c in body.children if c.name] if body else []
        return children == ["table"]

    assert any(one_giant_table(p) for p in pages), "no page whose HTML is one table"


def test_sample_stays_small():
    total = sum(p.stat().st_size for p in SAMPLE_DIR.rglob("*") if p.is_file())
    assert total < 2.5e6, total


# ------------------------------------------------------------------------------------------------- generator

def _run(capsys, *args: str) -> tuple[int, str]:
    """scripts/make_sample.py's exit status and its stderr."""
    status = make_sample_main(list(args))
    return status, capsys.readouterr().err


def test_generator_reproduces_the_committed_files_byte_for_byte(capsys):
    status, err = _run(capsys, "--check")
    assert status == 0, err


def test_check_fails_on_a_stale_file(tmp_path, capsys):
    assert _run(capsys, "--out-dir", str(tmp_path))[0] == 0
    assert (tmp_path / TASK1.name).read_bytes() == TASK1.read_bytes()
    with (tmp_path / TASK3.name).open("a", encoding="utf-8") as f:
        f.write("\n")
    status, err = _run(capsys, "--check", "--out-dir", str(tmp_path))
    assert status == 1 and TASK3.name in err


def test_generator_rejects_an_unquoted_date_answer(tmp_path, capsys):
    source = tmp_path / "source"
    shutil.copytree(SAMPLE_DIR / "source", source)
    movie = source / "movie.yaml"
    movie.write_text(movie.read_text(encoding="utf-8").replace('answer: "2010-07-15"', "answer: 2010-07-15"),
                     encoding="utf-8")
    status, err = _run(capsys, "--check", "--source", str(source), "--out-dir", str(tmp_path))
    assert status == 2
    assert "m1.answer: expected a quoted string, got date" in err
