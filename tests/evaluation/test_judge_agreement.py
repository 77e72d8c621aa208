"""Quality regression: the normalized judge against the hand-labelled set `data/judge/labels.jsonl`
(the judge's thresholds: >= 95 % agreement on decided rows, <= 10 % undecided, no hard row falsely passed)."""
import json

import pytest

from evaluation.judge import RulesJudge
from evaluation.experiments.judge_agreement import LABELS_PATH, MAX_UNDECIDED, MIN_AGREEMENT, load_labels, measure
from evaluation.normalized_judge import NormalizedJudge


@pytest.fixture(scope="module")
def rows():
    return load_labels()


def test_the_labelled_set_is_big_and_mixed(rows):
    assert len(rows) >= 150
    assert {row.source for row in rows} >= {"sample", "task2", "hard"}
    assert "dev" not in {row.source for row in rows}  # CRAG's dev questions are not shipped (tests/test_no_crag_data.py)
    assert {row.heldout for row in rows} >= {"", "first", "second"}
    assert {row.origin for row in rows} == {"run", "written"}
    assert {row.label for row in rows} == {"correct", "incorrect"}


def test_normalized_judge_meets_the_bars(rows):
    result = measure(rows, NormalizedJudge())
    assert result.agreement >= MIN_AGREEMENT, [(r.prediction, v.explanation) for r, v in result.disagreements()]
    assert result.undecided <= MAX_UNDECIDED
    assert not [row for row, _ in result.false_passes() if row.source == "hard"]
    assert result.passes()


def test_rules_alone_decide_little(rows):
    result = measure(rows, RulesJudge())
    assert result.undecided > 0.5 and not result.passes()


def test_held_out_batches_are_measured_apart(rows):
    result = measure(rows, NormalizedJudge())
    assert result.heldout_batches() == ["first", "second"]
    assert len(result.heldout("second").rows) == 31
    assert len(result.heldout().rows) == sum(len(result.heldout(b).rows) for b in result.heldout_batches())


def test_bad_rows_are_refused_with_their_line(tmp_path):
    good = json.loads(LABELS_PATH.read_text(encoding="utf-8").splitlines()[0])
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | {"label": "maybe"}) + "\n")
    with pytest.raises(ValueError, match=r"labels.jsonl:2: label 'maybe'"):
        load_labels(path)
    path.write_text(json.dumps(good | {"heldout": 3}) + "\n")
    with pytest.raises(ValueError, match=r":1: not a labelled row: heldout 3"):
        load_labels(path)
    path.write_text(json.dumps({k: v for k, v in good.items() if k != "reason"}) + "\n")
    with pytest.raises(ValueError, match=r":1: not a labelled row"):
        load_labels(path)
