"""`local_evaluation.py` end to end with a stand-in model (the real pipeline's run is tests/test_end_to_end.py's)."""
import contextlib
import json
import os
import sys
import types
from pathlib import Path

import pytest

import local_evaluation
from evaluation import local_run
from evaluation.metrics import METRIC_KEYS
from models import crag_data
from models.paths import ModelNotFoundError
from models.types import Answer
from tests.packaged import crag_file

QUESTIONS = [  # (query, gold, alt_ans, domain, the stand-in's answer)
    ("what is the capital of australia?", "canberra", [], "open", "Canberra"),
    ("which movie came out earlier, the matrix or fight club?", "the matrix", [], "movie", "i don't know"),
    ("how many members are in the band coldplay?", "4", ["four"], "music", "Four"),
    ("how many nba mvp awards has lionel messi won?", "invalid question", [], "sports", "invalid question"),
    ("what was the closing price of aapl on 2024-02-27?", "182.63", ["$182.63"], "finance", "181.16"),
    ("which countries border switzerland?", "france, germany, italy, austria and liechtenstein", [], "open",
     "France and Germany"),
]


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "questions.jsonl"
    rows = [{"interaction_id": f"id{i}", "query": q, "query_time": "03/01/2024, 10:00:00 PT", "answer": gold,
             "alt_ans": alt, "domain": domain, "question_type": "simple", "static_or_dynamic": "static",
             "search_results": []} for i, (q, gold, alt, domain, _) in enumerate(QUESTIONS)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


class StandInModel:
    """Answers from QUESTIONS; `fail_on_batch` (1-based, class-wide) simulates a crash mid-run."""

    fail_on_batch = None
    built = []

    def __init__(self, config):
        self.config = config
        self.pipeline = types.SimpleNamespace(config=config)  # the profile it started with (saved as config.yaml)
        self.mock_api_url = os.environ.get("CRAG_MOCK_API_URL")
        self.calls = 0
        StandInModel.built.append(self)

    def get_batch_size(self):
        return self.config.pipeline.batch_size

    def batch_generate_answer(self, batch):
        assert set(batch) == {"interaction_id", "query", "search_results", "query_time"}
        self.calls += 1
        if self.calls == self.fail_on_batch:
            raise RuntimeError("simulated crash")
        answers = {q: a for q, _, _, _, a in QUESTIONS}
        domains = {q: d for q, _, _, d, _ in QUESTIONS}
        self.last_answers = [Answer(answers[q], "web", domains[q], trace=_trace(answers[q])) for q in batch["query"]]
        return [answers[q] for q in batch["query"]]


def _trace(answer):
    """A trace shaped like the pipeline's (models/pipeline.py)."""
    return {"task": 1, "domain": "open", "source": "web", "stages": {"route": 0.01, "web": 1.5},
            "llm_calls": [{"stage": "answer answer_short", "adapter": None, "batch": 2, "seconds": 1.2,
                           "prompt_tokens": 812, "output_tokens": 4}],
            "attempts": [{"pathway": "web", "raw_output": f"{answer}.", "candidate": answer,
                          "chunks": [{"source": "https://example.org/a", "kind": "text", "score": 0.9,
                                      "text": "Canberra is the capital."}],
                          "verifier": {"accepted": True, "answer": answer, "reason": "supported (lexical 1.00)",
                                       "scores": {"lexical": 1.0, "similarity": 0.7},
                                       "supporting": "Canberra is the capital."}}]}


@pytest.fixture
def stand_in(monkeypatch):
    StandInModel.fail_on_batch, StandInModel.built = None, []
    monkeypatch.setattr(local_run, "CragModel", StandInModel)
    monkeypatch.delenv("CRAG_MOCK_API_URL", raising=False)
    return StandInModel


def run(data, out, *extra):
    return local_evaluation.main(["--data", str(data), "--output-dir", str(out), "--batch-size", "2", *extra])


def read_ids(out: Path):
    return [json.loads(line)["interaction_id"] for line in (out / "predictions.jsonl").read_text().splitlines()]


def test_full_run_prints_metrics_and_writes_every_file(data, tmp_path, stand_in, capsys):
    out = tmp_path / "out"
    assert run(data, out) == 0
    stdout = capsys.readouterr().out.strip().splitlines()
    assert len(stdout) == 1
    metrics = json.loads(stdout[0])
    assert tuple(metrics) == METRIC_KEYS
    # exact: canberra, four (an alt answer), invalid question; idk: the matrix; wrong: 181.16 (a different
    # price), two of five countries (decided by the normalized judge; unjudged by the rules alone)
    assert (metrics["n_correct"], metrics["n_miss"], metrics["n_hallucination"]) == (3, 1, 2)
    assert metrics["score"] == pytest.approx(1 / 6)
    for name in ("config.yaml", "predictions.jsonl", "verdicts.jsonl", "summary.json", "report.md",
                 "scores_by_domain.png"):
        assert (out / name).exists(), name
    assert "batch_size: 2" in (out / "config.yaml").read_text()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_unjudged"] == 0 and summary["judge"] == "normalized" and summary["router"]["accuracy"] == 1.0
    assert summary["decided_by"] == {"exact": 3, "normalized": 2, "idk-rule": 1}
    official = summary["official"]
    assert official["judge"] == "rules" and official["n_unjudged"] == 2 and official["metrics"] == metrics
    verdicts = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    assert [(v["decided_by"], v["official_decided_by"]) for v in verdicts][4:] == [
        ("judge:normalized", "unjudged"), ("judge:normalized", "unjudged")]
    assert summary["macro_score_over_domains"] == pytest.approx((0 + 0 + 1 + 1 - 1) / 5)
    assert summary["trim"].startswith("calibrated-rule")
    assert read_ids(out) == [f"id{i}" for i in range(6)]


def test_rules_judge_keeps_the_official_rules_only_numbers(data, tmp_path, stand_in, capsys):
    out = tmp_path / "out"
    assert run(data, out, "--judge", "rules") == 0
    metrics = json.loads(capsys.readouterr().out.strip())
    assert (metrics["n_correct"], metrics["n_miss"], metrics["n_hallucination"]) == (3, 1, 2)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judge"] == "rules" and summary["n_unjudged"] == 2
    assert summary["decided_by"] == {"exact": 3, "unjudged": 2, "idk-rule": 1}
    assert "Official V3 metrics (exact and invalid rules + judge: rules)" in (out / "report.md").read_text()


def test_resume_after_a_crash_and_no_resume(data, tmp_path, stand_in, capsys):
    out = tmp_path / "out"
    stand_in.fail_on_batch = 2
    assert run(data, out) == 1
    assert "rerun the same command to resume" in capsys.readouterr().err
    assert read_ids(out) == ["id0", "id1"]
    stand_in.fail_on_batch = None
    assert run(data, out) == 0
    assert read_ids(out) == [f"id{i}" for i in range(6)]
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["n_resumed"], summary["n_new"], summary["metrics"]["total"]) == (2, 4, 6)
    assert run(data, out, "--no-resume", "--limit", "3") == 0
    assert read_ids(out) == ["id0", "id1", "id2"]
    assert json.loads((out / "summary.json").read_text())["metrics"]["total"] == 3


def test_only_the_selected_questions_are_scored(data, tmp_path, stand_in):
    out = tmp_path / "out"
    assert run(data, out) == 0
    assert run(data, out, "--limit", "2") == 0  # resumes everything, scores the first two only
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["n_resumed"], summary["n_new"], summary["metrics"]["total"]) == (2, 0, 2)


@pytest.mark.parametrize("args,message", [
    (["--profile", "no-such-profile"], "unknown profile"),
    (["--data", "/no/such/file.jsonl"], "data file not found"),
    (["--judge", "openai"], "--judge-url"),
    (["--judge-fallback", "openai"], "--judge-url"),
])
def test_setup_errors_exit_2_with_a_message(data, tmp_path, stand_in, capsys, monkeypatch, args, message):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    argv = ["--data", str(data), "--output-dir", str(tmp_path / "out"), *args]
    assert local_evaluation.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_missing_weights_exit_2_without_a_traceback(data, tmp_path, monkeypatch, capsys):
    def missing(config):
        raise ModelNotFoundError("the LLM was not found at /models/x; place it there (docs/gpu.md 'Weights')")

    monkeypatch.setattr(local_run, "CragModel", missing)
    assert run(data, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "error: the LLM was not found at /models/x" in err and "Traceback" not in err


def test_tasks_2_and_3_start_the_mock_api_for_the_run(data, tmp_path, stand_in, monkeypatch):
    started = []

    @contextlib.contextmanager
    def running_server(kg_dir=None, port=0):
        started.append((kg_dir, port))
        yield "http://127.0.0.1:8123"

    fake = types.ModuleType("mock_api.server")
    fake.running_server = running_server
    monkeypatch.setitem(sys.modules, "mock_api.server", fake)
    assert run(data, tmp_path / "t2", "--task", "2") == 0
    assert started == [(None, 0)] and stand_in.built[-1].mock_api_url == "http://127.0.0.1:8123"
    assert "CRAG_MOCK_API_URL" not in os.environ
    monkeypatch.setenv("CRAG_MOCK_API_URL", "http://10.0.0.1:8000")  # a server the user runs: kept
    assert run(data, tmp_path / "t3", "--task", "3") == 0
    assert len(started) == 1 and stand_in.built[-1].mock_api_url == "http://10.0.0.1:8000"
    assert run(data, tmp_path / "t1", "--task", "1") == 0
    assert len(started) == 1


def test_exact_trim_with_the_grader_tokenizer(data, tmp_path, stand_in):
    tokenizer = crag_file(crag_data.TOKENIZER)
    assert run(data, tmp_path / "out", "--tokenizer", str(tokenizer)) == 0
    assert "llama2-tokenizer" in json.loads((tmp_path / "out" / "summary.json").read_text())["trim"]


def test_every_prediction_carries_its_trace_and_explain_prints_it(data, tmp_path, stand_in, capsys):
    out = tmp_path / "out"
    assert run(data, out) == 0
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == len(QUESTIONS)
    for record in records:
        call = record["trace"]["llm_calls"][0]
        assert set(call) >= {"stage", "adapter", "prompt_tokens", "output_tokens", "seconds"}
        assert record["trace"]["attempts"][0]["verifier"]["reason"]
    capsys.readouterr()
    assert local_evaluation.main(["--output-dir", str(out), "--explain", "id0"]) == 0
    text = capsys.readouterr().out
    assert "what is the capital of australia?" in text and "'Canberra'" in text
    assert "verdict    correct" in text and "verifier: accepted" in text and "812 prompt + 4 output tokens" in text
    assert "https://example.org/a" in text


def test_explain_of_an_unknown_id_is_a_clear_error(data, tmp_path, stand_in, capsys):
    out = tmp_path / "out"
    assert run(data, out) == 0
    assert local_evaluation.main(["--output-dir", str(out), "--explain", "nope"]) == 2
    assert "0 questions" in capsys.readouterr().err


def test_set_overrides_profile_keys_with_yaml_values_and_rejects_bad_ones(capsys):
    args = local_evaluation.parse_args(["--set", "kg.icl_k=0", "--set", "kg.api_adapter=api_generation",
                                        "--set", "verifier.min_similarity=0.65", "--task", "2"])
    overrides = local_evaluation.config_overrides(args)
    assert overrides["kg.icl_k"] == 0 and overrides["kg.api_adapter"] == "api_generation"
    assert overrides["verifier.min_similarity"] == 0.65 and overrides["pipeline.task"] == 2
    with pytest.raises(SystemExit):
        local_evaluation.parse_args(["--set", "kg.icl_k"])  # no "="
    assert "expected KEY=VALUE" in capsys.readouterr().err


def test_the_run_folder_keeps_the_profile_the_pipeline_started_with(data, tmp_path, stand_in, monkeypatch):
    """config.yaml is the profile after the start-up rewrite (a missing adapter left out), not the one asked for."""
    import dataclasses

    import yaml

    class StartedWithoutAdapters(StandInModel):
        def __init__(self, config):
            super().__init__(config)
            self.pipeline = types.SimpleNamespace(config=dataclasses.replace(
                config, llm=dataclasses.replace(config.llm, adapters={})))

    monkeypatch.setattr(local_run, "CragModel", StartedWithoutAdapters)
    out = tmp_path / "out"
    assert run(data, out) == 0
    [model] = StandInModel.built
    assert model.config.llm.adapters  # the cpu profile names its KG program adapter
    assert yaml.safe_load((out / "config.yaml").read_text())["llm"]["adapters"] == {}
