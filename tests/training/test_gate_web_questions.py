"""The gate's labelled web questions (data/gate/gate_questions.jsonl): the committed file is what
scripts/make_gate_web_questions.py builds, every row is a CRAG row with five pages, each case's pages hold what the case
says, and no question is one of the sets the gate is reported on."""
import json
from collections import Counter
from email.utils import parsedate_to_datetime
from urllib.parse import urlparse

import pytest

from evaluation.data import LoadStats, load_examples
from models.paths import REPO_ROOT
from scripts.make_gate_web_questions import main
from training.gate.web_pages import gold_answer, page_text, states
from training.gate.web_questions import CASES, PAGES

GATE_FILE = REPO_ROOT / "data" / "gate" / "gate_questions.jsonl"
REPORTED = ("data/sample/crag_sample.jsonl", "data/sample/crag_sample_task3.jsonl",
            "data/acceptance/kg_unseen.jsonl")


@pytest.fixture(scope="module")
def rows():
    return [json.loads(line) for line in GATE_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_committed_file_matches_a_fresh_build(capsys):
    status = main(["--check"])
    assert status == 0, capsys.readouterr().out


def test_every_row_loads_with_the_crag_loader_and_has_five_pages_and_a_gold(rows):
    stats = LoadStats()
    loaded = list(load_examples(GATE_FILE, stats))
    assert stats.n_skipped == 0 and len(loaded) == len(rows)
    assert 250 <= len(rows) <= 400
    assert len({r["interaction_id"] for r in loaded}) == len(rows)
    for row in loaded:
        assert len(row["search_results"]) == PAGES, row["interaction_id"]
        assert row["answer"].strip() and row["answer"] == row["answer"].lower(), row["interaction_id"]
        for page in row["search_results"]:
            assert set(page) == {"page_name", "page_url", "page_snippet", "page_result", "page_last_modified"}
            assert ".example." in page["page_url"] and page["page_last_modified"].endswith(" GMT")


def test_cases_and_domains_are_all_present_in_roughly_the_asked_mix(rows):
    cases = Counter(r["gate_case"] for r in rows)
    assert set(cases) == set(CASES)
    assert 0.5 <= cases["stated"] / len(rows) <= 0.7 and cases["absent"] / len(rows) >= 0.18
    assert cases["conflict"] / len(rows) >= 0.1
    assert {r["domain"] for r in rows} == {"movie", "music", "finance", "sports", "open"}
    assert max(Counter(r["template"] for r in rows).values()) <= 2


def test_pages_hold_what_the_case_says(rows):
    for row in rows:
        answers = [row["answer"], *row["alt_ans"]]
        holding = [p for p in row["search_results"] if states(page_text(p), answers)]
        if row["gate_case"] == "absent":
            assert not holding, row["interaction_id"]
        else:
            assert any(states(page_text(p), [row["answer"]]) for p in row["search_results"]), row["interaction_id"]
        if row["gate_case"] == "conflict":
            # two pages about the asked subject (one URL path): the newer states the gold, the older does not
            about = {}
            for page in row["search_results"]:
                about.setdefault(urlparse(page["page_url"]).path, []).append(page)
            assert any(_when(new["page_last_modified"]) > _when(old["page_last_modified"])
                       for pages in about.values() for new in pages for old in pages
                       if new in holding and old not in holding), row["interaction_id"]


def _when(stamp: str):
    return parsedate_to_datetime(stamp)


def test_no_question_of_a_reported_set(rows):
    reported = set()
    for name in REPORTED:
        for line in (REPO_ROOT / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                reported.add(json.loads(line)["query"].strip().lower())
    assert not reported & {r["query"].strip().lower() for r in rows}


def test_no_question_of_a_reported_set_in_other_words(rows):
    """By content too: no row has the entity and gold answer of a reported set's question (training.gate.held_out)."""
    from training.gate.held_out import held_out_questions, questions, shared

    found = shared(held_out_questions(), questions("gate_web", rows))
    assert not found, "\n".join(map(str, found))


def test_gold_answers_are_spelled_as_kg_wordings_writes_them():
    assert gold_answer(["2010-07-15"]) == ("2010-07-15", ["july 15, 2010"])
    assert gold_answer([160000000]) == ("160000000", ["160,000,000"])
    assert gold_answer(["Action", "Drama"]) == ("action, drama", ["action and drama"])
    assert gold_answer([182.80809523809523]) == ("182.81", [])
