"""Loading every CRAG file shape into normalised examples, skipping bad lines, and batching."""
import bz2
import io
import json
import re
import tarfile
from pathlib import Path

import pytest

from evaluation.data import GOLD_KEYS, GRADER_KEYS, LoadStats, batched, grader_view, iter_batches, load_examples
from models import crag_data
from tests.packaged import crag_file



def row(i: int, **fields) -> dict:
    base = {"interaction_id": f"id-{i}", "query": f"question {i}?", "query_time": "01/15/2024, 09:12:33 PT",
            "answer": f"answer {i}", "alt_ans": [f"alt {i}"], "domain": "Movie", "question_type": "simple",
            "static_or_dynamic": "static", "popularity": "head", "split": 0,
            "search_results": [{"page_name": "p", "page_url": "u", "page_snippet": "s", "page_result": "",
                                "page_last_modified": ""}]}
    return base | fields


def jsonl(rows) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def test_real_dev_file_old_schema():
    dev_file = crag_file(crag_data.DEV_FILE)
    stats = LoadStats()
    examples = list(load_examples(dev_file, stats))
    assert len(examples) == 10 and stats.n_examples == 10 and stats.n_skipped == 0
    for example in examples:
        assert set(example) == set(GRADER_KEYS) | set(GOLD_KEYS)
        assert example["alt_ans"] == [] and example["popularity"] == "" and example["split"] == 1
        assert len(example["search_results"]) == 5
    assert [e["answer"] for e in examples].count("nan") == 1
    ids = [e["interaction_id"] for e in examples]
    with bz2.open(dev_file, "rt", encoding="utf-8") as handle:  # read here, never copied into the repository
        assert ids == [json.loads(line)["interaction_id"] for line in handle if line.strip()]  # as given, in order
    assert len(set(ids)) == 10 and all(re.fullmatch(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}", i) for i in ids)


def test_new_and_old_schema_normalise_alike(tmp_path):
    old = row(1, alternative_answers='["alt 1"]', popularity=None, domain="movie")
    del old["alt_ans"]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(jsonl([old, row(2), row(3, alt_ans="['not json']", answer=float("nan"), split=True)]))
    first, second, third = load_examples(path)
    assert first["alt_ans"] == ["alt 1"] and first["popularity"] == "" and first["domain"] == "movie"
    assert second["alt_ans"] == ["alt 2"] and second["popularity"] == "head" and second["domain"] == "movie"
    assert third["alt_ans"] == ["['not json']"] and third["answer"] == "nan" and third["split"] == -1


def test_bad_lines_are_skipped_counted_and_logged(tmp_path, caplog):
    path = tmp_path / "bad.jsonl.bz2"
    lines = [jsonl([row(1)]), b"{not json\n", b"\xff\xfe garbage\n", b"[1, 2]\n", jsonl([row(9, query="")]),
             b"\n", jsonl([row(2, interaction_id=None)])]
    path.write_bytes(bz2.compress(b"".join(lines)))
    stats = LoadStats()
    examples = list(load_examples(path, stats))
    assert [e["query"] for e in examples] == ["question 1?", "question 2?"]
    assert examples[1]["interaction_id"].endswith("bad.jsonl.bz2:7")  # an id is made up from the location
    assert stats.n_skipped == 4 and stats.n_examples == 2
    assert "bad.jsonl.bz2:2" in stats.skipped[0] and "skipping" in caplog.text


def test_truncated_compressed_file_keeps_what_was_read(tmp_path):
    data = bz2.compress(jsonl([row(i) for i in range(200)]))
    path = tmp_path / "cut.jsonl.bz2"
    path.write_bytes(data[: len(data) // 2])
    stats = LoadStats()
    examples = list(load_examples(path, stats))
    assert 0 <= len(examples) < 200 and stats.n_skipped == 1 and "stream ended early" in stats.skipped[0]


def make_task3_tar(path: Path, shards: dict[str, list[dict]]) -> None:
    with tarfile.open(path, "w:bz2") as archive:
        for name, rows in shards.items():
            payload = jsonl(rows)
            info = tarfile.TarInfo(f"crag_task_3_dev_v4/{name}")
            info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload))


def test_task3_tar_whole_and_in_parts(tmp_path):
    tar = tmp_path / "crag_task_3_dev_v4.tar.bz2"
    make_task3_tar(tar, {"crag_task_3_dev_v4_0.jsonl": [row(0), row(1)], "crag_task_3_dev_v4_1.jsonl": [row(2)],
                         "README.txt": []})
    whole = [e["interaction_id"] for e in load_examples(tar)]
    assert whole == ["id-0", "id-1", "id-2"]
    data = tar.read_bytes()
    cuts = [0, len(data) // 3, 2 * len(data) // 3, len(data)]
    for k in range(3):  # part1..part3, split like the released files
        (tmp_path / f"{tar.name}.part{k + 1}").write_bytes(data[cuts[k]:cuts[k + 1]])
    parts = sorted(tmp_path.glob("*.part*"))
    assert [e["interaction_id"] for e in load_examples(str(tmp_path / "*.tar.bz2.part*"))] == whole
    assert [e["interaction_id"] for e in load_examples(parts)] == whole
    (tmp_path / "x.jsonl").write_bytes(jsonl([row(3)]))
    with pytest.raises(ValueError, match="cannot mix"):
        list(load_examples([tar, tmp_path / "x.jsonl"]))


def test_directory_of_shards_in_natural_order(tmp_path):
    for index in (10, 2, 1):
        (tmp_path / f"crag_task_3_dev_v4_{index}.jsonl").write_bytes(jsonl([row(index)]))
    (tmp_path / "notes.txt").write_text("ignored")
    assert [e["interaction_id"] for e in load_examples(tmp_path)] == ["id-1", "id-2", "id-10"]


def test_missing_paths_are_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        list(load_examples(tmp_path / "nope.jsonl"))
    with pytest.raises(FileNotFoundError, match="no data file matches"):
        list(load_examples(str(tmp_path / "*.part*")))
    with pytest.raises(FileNotFoundError, match="no .jsonl"):
        list(load_examples(tmp_path))


def test_batches_have_the_grader_shape_and_gold_apart(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(jsonl([row(i) for i in range(5)]))
    batches = list(iter_batches(path, batch_size=2))
    assert [len(b["query"]) for b in batches] == [2, 2, 1]
    assert set(grader_view(batches[0])) == set(GRADER_KEYS)
    assert batches[2]["gold"] == [{"answer": "answer 4", "alt_ans": ["alt 4"], "domain": "movie",
                                   "question_type": "simple", "static_or_dynamic": "static", "popularity": "head",
                                   "split": 0}]
    assert [len(b["query"]) for b in iter_batches(path, batch_size=4, limit=3)] == [3]
    with pytest.raises(ValueError):
        list(batched([], 0))


def test_kg_acceptance_rows_read_their_expected_items_as_the_gold_answer():
    from evaluation.data import normalise

    row = normalise({"id": "kgu-1", "query": "la la land budget?", "expected": "[30000000]"})
    assert row["interaction_id"] == "kgu-1" and row["answer"] == "30000000"
    assert normalise({"query": "q", "expected": ["Black Panther", "Creed"]})["answer"] == "Black Panther, Creed"
    assert normalise({"query": "q", "expected": "[118.6, 2.0]"})["answer"] == "118.6, 2"
    assert normalise({"query": "q", "answer": "x", "expected": "[1]"})["answer"] == "x"  # a gold answer wins
