"""Rows, lazy records, key resolution and the table operators (where, sorted_by, limit)."""
from __future__ import annotations

from models.kg.apis.records import LazyRecord, Row, Table, resolve_key
from models.kg.language.ast import Condition, Literal


def test_lazy_record_loads_each_field_once_and_only_when_read():
    loads = []
    record = LazyRecord({"name": "Coldplay"}, {"members": lambda: loads.append("m") or ["a", "b"],
                                               "name": lambda: loads.append("never")})
    assert sorted(record) == ["members", "name"] and len(record) == 2 and loads == []
    assert record["members"] == ["a", "b"] and record["members"] == ["a", "b"]
    assert loads == ["m"] and record["name"] == "Coldplay"


def test_row_labels_and_references_may_be_lazy():
    record = LazyRecord({}, {"title": lambda: "Inception"})
    row = Row(record, lambda f: f"Tom in {f['title']}", "title")
    assert row.entity == "Tom in Inception" and row.reference == "Inception"
    assert Row({}, "Coldplay").reference == "Coldplay"


def test_resolve_key():
    fields = {"release_date": 1, "length": 2, "founders": 3, "marketCap": 4, "GF": 5}
    aliases = {"runtime": "length"}
    assert resolve_key(fields, "release_date") == "release_date"
    assert resolve_key(fields, "Release Date") == "release_date"
    assert resolve_key(fields, "runtime", aliases) == "length"
    assert resolve_key(fields, "founder") == "founders"  # singular/plural
    assert resolve_key(fields, "market cap") == "marketCap"  # camelCase
    assert resolve_key(fields, "gf") == "GF"
    assert resolve_key(fields, "budget") is None
    assert resolve_key({"birth_place": 1, "place_of_death": 2}, "place") is None  # ambiguous containment


def _table():
    rows = [Row({"title": t, "year": y, "rating": r}, t) for t, y, r in
            [("A", 2010, 7.5), ("B", None, 9.0), ("C", 2015, "8.1"), ("D", 2001, 6.0)]]
    return Table(tuple(rows), "movies", aliases={"score": "rating"})


def test_where_filters_with_typed_conditions():
    table = _table()
    newer = table.where([Condition("ge", "year", Literal("number", 2005))], None)
    assert [r.entity for r in newer.rows] == ["A", "C"]
    rated = table.where([Condition("ge", "score", Literal("string", "8"))], None)
    assert [r.entity for r in rated.rows] == ["B", "C"]
    assert table.where([Condition("eq", "unknown", Literal("number", 1))], None).rows == ()


def test_sorted_by_puts_missing_values_last_and_limit_keeps_the_total():
    table = _table()
    assert [r.entity for r in table.sorted_by("year", False).rows] == ["D", "A", "C", "B"]
    assert [r.entity for r in table.sorted_by("year", True).rows] == ["C", "A", "D", "B"]
    assert [r.entity for r in table.sorted_by("score", True).rows] == ["B", "C", "A", "D"]
    limited = table.limit(2)
    assert len(limited.rows) == 2 and limited.size == 4 and table.limit(10) is table
