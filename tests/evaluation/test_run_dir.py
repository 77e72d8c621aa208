"""evaluation/run_dir.py: a run folder is read back as its records (an id's last), verdicts, summary and cell, and
a corrupt file is said, with its path, never read as a finished run."""
import json
import math

import pytest

from evaluation.run_dir import Cell, RunDir, one_per_id
from models.jsonl import JSONLError


def _summary(run_dir, correct=3, missing=1, hallucination=1):
    run_dir.mkdir(parents=True, exist_ok=True)
    metrics = {"n_correct": correct, "n_miss": missing, "n_hallucination": hallucination,
               "total": correct + missing + hallucination}
    (run_dir / "summary.json").write_text(json.dumps({"metrics": metrics}))


def test_a_finished_run_is_a_cell_with_its_mean_seconds(tmp_path):
    _summary(tmp_path)
    (tmp_path / "predictions.jsonl").write_text('{"latency_s": 1.0}\n\n{"latency_s": 3.0}\n')
    run = RunDir(tmp_path)
    assert run.finished() and run.cell() == Cell("ok", 3, 1, 1, 5, 2.0)
    assert run.cell().score == (3 - 1) / 5
    assert run.records() == [{"latency_s": 1.0}, {"latency_s": 3.0}]


def test_an_id_asked_again_counts_once_as_its_last_record(tmp_path):
    rows = [{"interaction_id": "a", "prediction": "i don't know"}, {"interaction_id": "b", "prediction": "x"},
            {"interaction_id": "a", "prediction": "paris"}]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert RunDir(tmp_path).records() == one_per_id(rows) == [rows[2], rows[1]]


def test_verdicts_and_summary_of_an_interrupted_run(tmp_path):
    run = RunDir(tmp_path / "nowhere")
    assert run.records() == [] and run.verdicts() == {} and run.summary() is None
    assert not run.finished() and run.cell() is None and not run.has_predictions()
    (tmp_path / "verdicts.jsonl").write_text(json.dumps({"interaction_id": "a", "outcome": "correct"}) + "\n")
    assert RunDir(tmp_path).verdicts() == {"a": {"interaction_id": "a", "outcome": "correct"}}


def test_unreadable_latencies_are_nan_and_a_corrupt_file_raises_naming_its_line(tmp_path):
    _summary(tmp_path)
    (tmp_path / "predictions.jsonl").write_text('{"latency_s": 1.0}\n{"no latency": 1}\n')
    assert math.isnan(RunDir(tmp_path).cell().seconds)
    (tmp_path / "predictions.jsonl").write_text('{"latency_s": 1.0}\nnot json\n')
    assert math.isnan(RunDir(tmp_path).cell().seconds)
    with pytest.raises(JSONLError, match="predictions.jsonl:2"):
        RunDir(tmp_path).records()
    assert math.isnan(Cell("not run").score)


def test_a_corrupt_run_is_logged_with_its_path_and_count(tmp_path, caplog):
    assert RunDir(tmp_path / "nowhere").cell() is None and not caplog.records  # missing is not corrupt: no log
    _summary(tmp_path)
    (tmp_path / "predictions.jsonl").write_text('{"latency_s": 1.0}\n{"no latency": 1}\n{"latency_s": "x"}\n')
    with caplog.at_level("WARNING", logger="evaluation.run_dir"):
        RunDir(tmp_path).cell()
    assert [r.getMessage() for r in caplog.records] == [
        f"{tmp_path / 'predictions.jsonl'}: 2 of 3 records without a readable latency_s; its seconds per question "
        "show as n/a"]
    caplog.clear()
    (tmp_path / "summary.json").write_text("{not json")
    with caplog.at_level("WARNING", logger="evaluation.run_dir"):
        assert RunDir(tmp_path).cell() is None
    assert len(caplog.records) == 1 and str(tmp_path / "summary.json") in caplog.records[0].getMessage()
    assert "n/a" in caplog.records[0].getMessage()


def test_the_layout_is_named_once():
    run = RunDir("out")
    assert [p.name for p in (run.predictions_path, run.verdicts_path, run.summary_path, run.config_path,
                             run.report_path, run.chart_path, run.page_path, run.compare_page_path)] == [
        "predictions.jsonl", "verdicts.jsonl", "summary.json", "config.yaml", "report.md", "scores_by_domain.png",
        "report.html", "compare.html"]
