"""evaluation/experiments/suite_runs.py: a run directory is read back as a cell, and each run's command line is as documented."""
import json
import math
import sys

from evaluation.experiments.suite_runs import SUITES, Cell, command, read_run, records
from models.config import REPO_ROOT


def _summary(run_dir, correct=3, missing=1, hallucination=1):
    run_dir.mkdir(parents=True, exist_ok=True)
    metrics = {"n_correct": correct, "n_miss": missing, "n_hallucination": hallucination,
               "total": correct + missing + hallucination}
    (run_dir / "summary.json").write_text(json.dumps({"metrics": metrics}))


def test_a_finished_run_is_a_cell_with_its_mean_seconds(tmp_path):
    _summary(tmp_path)
    (tmp_path / "predictions.jsonl").write_text('{"latency_s": 1.0}\n\n{"latency_s": 3.0}\n')
    assert read_run(tmp_path) == Cell("ok", 3, 1, 1, 5, 2.0)
    assert read_run(tmp_path).score == (3 - 1) / 5
    assert records(tmp_path) == [{"latency_s": 1.0}, {"latency_s": 3.0}]


def test_a_run_without_summary_is_none_and_unreadable_latencies_are_nan(tmp_path):
    assert read_run(tmp_path / "nowhere") is None and records(tmp_path / "nowhere") == []
    _summary(tmp_path)
    (tmp_path / "predictions.jsonl").write_text('{"latency_s": 1.0}\n{"no latency": 1}\n')
    assert math.isnan(read_run(tmp_path).seconds)
    (tmp_path / "predictions.jsonl").write_text('{"latency_s": 1.0}\nnot json\n')
    assert math.isnan(read_run(tmp_path).seconds) and records(tmp_path) == []
    assert math.isnan(Cell("not run").score)


def test_a_corrupt_run_is_logged_with_its_path_and_count(tmp_path, caplog):
    assert read_run(tmp_path / "nowhere") is None and not caplog.records  # missing is not corrupt: no log
    _summary(tmp_path)
    (tmp_path / "predictions.jsonl").write_text('{"latency_s": 1.0}\n{"no latency": 1}\n{"latency_s": "x"}\n')
    with caplog.at_level("WARNING", logger="evaluation.experiments.suite_runs"):
        read_run(tmp_path)
    assert [r.getMessage() for r in caplog.records] == [
        f"{tmp_path / 'predictions.jsonl'}: 2 of 3 records without a readable latency_s; its seconds per question "
        "show as n/a"]
    caplog.clear()
    (tmp_path / "summary.json").write_text("{not json")
    with caplog.at_level("WARNING", logger="evaluation.experiments.suite_runs"):
        assert read_run(tmp_path) is None
    assert len(caplog.records) == 1 and str(tmp_path / "summary.json") in caplog.records[0].getMessage()
    assert "n/a" in caplog.records[0].getMessage()


def test_the_command_line_of_a_run(tmp_path):
    cmd = command(SUITES["kg_unseen"], tmp_path / "profile.yaml", tmp_path / "out", "flock LOCK", 5)
    assert cmd[:4] == ["flock", "LOCK", sys.executable, str(REPO_ROOT / "local_evaluation.py")]
    assert cmd[4:] == ["--profile", str(tmp_path / "profile.yaml"), "--task", "2", "--output-dir",
                       str(tmp_path / "out"), "--data", "data/acceptance/kg_unseen.jsonl", "--limit", "5",
                       "--kg-source", "data/kg_acceptance"]
    dev = command(SUITES["dev"], tmp_path / "p.yaml", tmp_path / "o")
    assert dev[0] == sys.executable and dev[-2:] == ["--tokenizer", "../shared/crag/tokenizer"]
