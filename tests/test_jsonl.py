"""models/jsonl.py: one JSONL reader for the package; every bad line is named `path:line: reason`."""
import bz2
import gzip
import json

import pytest

from models.jsonl import SKIP, JSONLError, numbered_rows, read_jsonl


def write(path, lines, opener=open):
    with opener(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("suffix, opener", [(".jsonl", open), (".jsonl.bz2", bz2.open), (".jsonl.gz", gzip.open)])
def test_plain_and_compressed_files_read_alike_and_blank_lines_are_skipped(tmp_path, suffix, opener):
    path = write(tmp_path / f"rows{suffix}", [json.dumps({"a": 1}), "", "   ", json.dumps([2, 3])], opener)
    assert read_jsonl(path) == [{"a": 1}, [2, 3]]
    assert [n for n, _ in numbered_rows(path)] == [1, 4]  # line numbers count the blank lines


def test_a_line_that_is_not_json_is_named_by_file_and_line(tmp_path):
    path = write(tmp_path / "bad.jsonl", [json.dumps({"a": 1}), "", "{not json"])
    with pytest.raises(JSONLError, match=r"bad\.jsonl:3: not JSON \(Expecting property name"):
        read_jsonl(path)


def test_a_rejected_row_says_what_it_should_have_been(tmp_path):
    path = write(tmp_path / "pool.jsonl", [json.dumps({"q": "x"}), json.dumps({"nope": 1})])
    with pytest.raises(JSONLError, match=r"pool\.jsonl:2: not a question row: 'q'"):
        read_jsonl(path, lambda row: row["q"], what="not a question row")
    assert isinstance(JSONLError("x"), ValueError)  # callers that caught ValueError still do


def test_the_callers_own_error_type_and_extra_exceptions(tmp_path):
    class DataError(Exception):
        pass

    class Custom(Exception):
        pass

    def parse(row):
        raise Custom("unparseable program")

    path = write(tmp_path / "x.jsonl", [json.dumps(1)])
    with pytest.raises(DataError, match=r"x\.jsonl:1: unparseable program"):
        read_jsonl(path, parse, error=DataError, catch=(Custom,))
    with pytest.raises(Custom):  # not in `catch`: not a row error, it propagates
        read_jsonl(path, parse, error=DataError)


def test_skip_leaves_a_row_out(tmp_path):
    path = write(tmp_path / "x.jsonl", [json.dumps(n) for n in range(5)])
    assert read_jsonl(path, lambda n: n if n % 2 else SKIP) == [1, 3]


def test_a_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_jsonl(tmp_path / "missing.jsonl")


def test_with_on_error_a_line_that_is_not_json_is_passed_over_and_reported(tmp_path):
    path = write(tmp_path / "killed.jsonl", [json.dumps({"a": 1}), '{"b": 2', json.dumps({"c": 3})])
    told = []
    assert [row for _, row in numbered_rows(path, on_error=told.append)] == [{"a": 1}, {"c": 3}]
    assert told == [f"{path}:2: not JSON (Expecting ',' delimiter)"]
