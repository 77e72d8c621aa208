"""The resumable prediction run: saved per batch, resumed after a kill, no id lost or duplicated."""
import json

import pytest

from evaluation.judge import RulesJudge
from evaluation.runner import (PredictionLog, needs_asking_again, one_per_id, run_predictions, score_records,
                               write_verdicts)
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


def test_load_skips_unreadable_middle_lines_and_keeps_each_ids_last_record(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"interaction_id": "a"}\nnot json\n{"interaction_id": "b"}\n{"no_id": 1}\n'
                    '{"interaction_id": "a", "x": 2}\n')
    assert PredictionLog(path).load() == [{"interaction_id": "a", "x": 2}, {"interaction_id": "b"}]
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


class ServerDown(StandIn):
    """"i don't know" for every question while `down`, each with the trace of an LLM call the server failed:
    `retryable` as the OpenAI backend marks a connection error, or not (a refused request)."""

    def __init__(self, down=True, retryable=True):
        super().__init__()
        self.down, self.retryable = down, retryable

    def batch_generate_answer(self, batch):
        answers = super().batch_generate_answer(batch)
        if not self.down:
            return answers
        call = {"stage": "answer", "error": "server call failed after retries: connection refused"}
        if self.retryable:
            call["retryable"] = True
        self.last_answers = [Answer("i don't know", "llm", "open", trace={"llm_calls": [call]}) for _ in answers]
        return ["i don't know"] * len(answers)


def test_a_resumed_run_asks_again_what_a_server_fault_left_unanswered(tmp_path):
    log = PredictionLog(tmp_path / "predictions.jsonl")
    run_predictions(StandIn(), examples(4), log, batch_size=2)  # q0..q3 answered while the server was up
    stats = run_predictions(ServerDown(), examples(8), log, batch_size=2)  # then it went away: q4..q7
    assert stats.n_new == 4 and all(needs_asking_again(r) for r in log.load()[4:])
    model = StandIn()
    stats = run_predictions(model, examples(8), log, batch_size=2)  # back up: the resumed run completes them
    assert [b["interaction_id"] for b in model.batches] == [["q4", "q5"], ["q6", "q7"]]
    assert (stats.n_resumed, stats.n_new, stats.n_asked_again) == (4, 4, 4)
    records = log.load()
    assert [r["interaction_id"] for r in records] == [f"q{i}" for i in range(8)]
    assert [r["prediction"] for r in records] == ["a0", "i don't know", "a2", "i don't know", "a4",
                                                  "i don't know", "a6", "i don't know"]
    assert not any(needs_asking_again(r) for r in records)
    assert len(saved_ids(log)) == 12 and one_per_id(json.loads(x) for x in log.path.read_text().splitlines()) \
        == records  # the old lines stay in the file; every reader counts an id's last record
    assert run_predictions(StandIn(), examples(8), log, batch_size=2).n_new == 0


def test_a_refused_request_or_a_real_answer_is_not_asked_again(tmp_path):
    log = PredictionLog(tmp_path / "predictions.jsonl")
    run_predictions(ServerDown(retryable=False), examples(2), log, batch_size=2)
    assert not any(needs_asking_again(r) for r in log.load())
    assert run_predictions(StandIn(), examples(2), log, batch_size=2).n_new == 0
    answered = {"prediction": "a1", "trace": {"llm_calls": [{"retryable": True}]}}  # another call answered it
    assert not needs_asking_again(answered)
    assert not needs_asking_again({"prediction": "i don't know", "trace": "odd"})
