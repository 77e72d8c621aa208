"""The SQL source's acceptance set (evaluation/acceptance/sql_acceptance.py, scripts/make_sql_acceptance.py) is rebuilt
byte for byte from the CSVs."""
import json
import re

import evaluation.acceptance.sql_acceptance as sql_acceptance
from models.paths import resolve_repo_path
from scripts.make_sql_acceptance import main

COMMITTED = resolve_repo_path("data/acceptance/public_sql.jsonl")
KEYS = ["interaction_id", "query_time", "domain", "question_type", "static_or_dynamic", "query", "answer", "alt_ans",
        "split", "popularity", "search_results", "kind"]


def _rows() -> list[dict]:
    return [json.loads(line) for line in COMMITTED.read_text(encoding="utf-8").splitlines()]


def test_a_fresh_build_is_byte_identical_to_the_committed_file(tmp_path, capsys):
    out = tmp_path / "public_sql.jsonl"
    assert main(["--out", str(out)]) == 0
    assert out.read_bytes() == COMMITTED.read_bytes()
    assert "questions; count" in capsys.readouterr().out


def test_the_set_mixes_counts_comparisons_and_aggregates_over_all_four_sources():
    rows = _rows()
    kinds = [r["kind"] for r in rows]
    assert len(rows) >= 24
    assert kinds.count("count") >= 8 and kinds.count("compare") >= 6 and kinds.count("aggregate") >= 5
    assert {q.source for q in sql_acceptance.QUESTIONS} == {"oscar", "grammy", "movie", "finance"}
    assert {r["domain"] for r in rows} == {"movie", "music", "finance"}


def test_rows_have_the_crag_layout_unique_ids_and_non_empty_golds():
    rows = _rows()
    ids = [r["interaction_id"] for r in rows]
    assert len(ids) == len(set(ids))
    for row in rows:
        assert list(row) == KEYS
        assert re.fullmatch(rf"sql-{row['kind']}-\d\d", row["interaction_id"])
        assert row["answer"].strip() and all(a.strip() for a in row["alt_ans"])
        assert row["query"] == row["query"].lower()
        assert row["static_or_dynamic"] == "static" and row["search_results"] == [] and row["split"] == 0
    counts = [r for r in rows if r["kind"] == "count"]
    assert all(r["answer"].isdigit() and int(r["answer"]) >= 1 for r in counts)
