"""The resumable prediction run: saved per batch, resumed after a kill, no id lost or duplicated."""
import json

import pytest

from evaluation.judge import RulesJudge
from evaluation.runner import PredictionLog, run_predictions, score_records, write_verdicts
from models.types import Answer


def examples(n, duplicate_last=False):
    rows = [{"interaction_id": f"q{i}", "query": f"question {i}", "query_time": "t", "search_results": [],
             "answer": f"a{i}", "alt_ans": [], "domain": "open", "question_type": "simple",
             "static_or_dynamic": "static", "popularity": "", "split": 0} for i in range(n)]
    return rows + rows[-1:] if duplicate_last else rows


class StandIn:
    """Answers `a<i>` for even questions, "i don't know" for odd ones; raises on batch `fail_on` (1-based)."""

    def __init__(self, fail_on=None):
        self.fail_on, self.batches = fail_on, []

    def batch_generate_answer(self, batch):
        self.batches.append(batch)
        if len(self.batches) == self.fail_on:
            raise RuntimeError("killed")
        ids = [int(q.split()[-1]) for q in batch["query"]]
        self.last_answers = [Answer("x", "kg" if i % 2 else "web", "open") for i in ids]
        self.last_latencies = [0.5] * len(ids)
        return [f"a{i}" if i % 2 == 0 else "i don't know" for i in ids]


def saved_ids(log):
    return [json.loads(line)["interaction_id"] for line in log.path.read_text().splitlines()]


def test_records_hold_what_the_report_needs(tmp_path):
    log = PredictionLog(tmp_path / "predictions.jsonl")
    model = StandIn()
    stats = run_predictions(model, examples(3), log, batch_size=2)
    assert (stats.n_new, stats.n_resumed) == (3, 0)
    assert all(set(b) == {"interaction_id", "query", "search_results", "query_time"} for b in model.batches)
    first = log.load()[0]
    assert first["prediction"] == "a0" and first["gold"] == "a0" and first["source"] == "web"
    assert first["predicted_domain"] == "open" and first["model_latency_s"] == 0.5
    assert first["latency_s"] >= 0 and first["over_budget"] is False


def test_resume_after_a_kill_loses_and_duplicates_nothing(tmp_path):
    log = PredictionLog(tmp_path / "predictions.jsonl")
    with pytest.raises(RuntimeError, match="killed"):
        run_predictions(StandIn(fail_on=3), examples(9), log, batch_size=2)
    assert saved_ids(log) == ["q0", "q1", "q2", "q3"]
    with open(log.path, "a") as handle:  # the kill also landed in the middle of writing a line
        handle.write('{"interaction_id": "q4", "predic')
    model = StandIn()
    stats = run_predictions(model, examples(9, duplicate_last=True), log, batch_size=2)
    assert (stats.n_resumed, stats.n_new, stats.n_duplicates) == (4, 5, 1)
    assert [b["interaction_id"] for b in model.batches] == [["q4", "q5"], ["q6", "q7"], ["q8"]]
    assert saved_ids(log) == [f"q{i}" for i in range(9)]
    assert run_predictions(StandIn(), examples(9), log, batch_size=2).n_new == 0


def test_load_skips_unreadable_middle_lines_and_duplicates(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"interaction_id": "a"}\nnot json\n{"no_id": 1}\n{"interaction_id": "a", "x": 2}\n')
    assert PredictionLog(path).load() == [{"interaction_id": "a"}]
    assert PredictionLog(tmp_path / "none.jsonl").load() == []


def test_a_model_returning_the_wrong_number_of_answers_is_an_error(tmp_path):
    class Short(StandIn):
        def batch_generate_answer(self, batch):
            return super().batch_generate_answer(batch)[:-1]

    with pytest.raises(ValueError, match="1 answers for 2 questions"):
        run_predictions(Short(), examples(2), PredictionLog(tmp_path / "p.jsonl"), batch_size=2)


def test_scoring_saved_records_and_writing_verdicts(tmp_path):
    log = PredictionLog(tmp_path / "predictions.jsonl")
    run_predictions(StandIn(), examples(4), log, batch_size=4)
    records = log.load()
    verdicts = score_records(records, RulesJudge(), lambda text: text)
    assert [v.outcome for v in verdicts] == ["correct", "missing", "correct", "missing"]
    write_verdicts(tmp_path / "verdicts.jsonl", records, verdicts)
    lines = [json.loads(line) for line in (tmp_path / "verdicts.jsonl").read_text().splitlines()]
    assert [(line["interaction_id"], line["decided_by"]) for line in lines] == [
        ("q0", "exact"), ("q1", "idk-rule"), ("q2", "exact"), ("q3", "idk-rule")]
