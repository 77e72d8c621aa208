"""evaluation/experiments/answer_gates.py: every configuration is a valid profile, the pool counts only the sets held
out from the gate, the rules keep the profile unless beaten, and a calibrated gate that is not fitted is not run."""
import pytest

from evaluation.experiments import answer_gates
from evaluation.experiments.answer_gates import (CONFIGURATIONS, HELD_OUT, SETS, best, missing_gate, pooled,
                                                 run_answer_gates, table)
from evaluation.run_dir import Cell
from models.config import load_config, save_config


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_configuration_round_trips(name, tmp_path):
    config = load_config("cpu", CONFIGURATIONS[name])
    save_config(config, tmp_path / "profile.yaml")
    assert load_config(tmp_path / "profile.yaml") == config
    assert config.pipeline.answer_prompt == ("answer_confqa" if name.endswith("+confqa") else "answer_ctrl")


def test_every_reported_set_and_the_unseen_kg_are_measured_and_only_held_out_sets_are_pooled():
    assert "kg_unseen" in SETS and {"sample", "dev", "task2", "task3", "kg_unseen"} == set(HELD_OUT)
    assert {"kg_wordings", "checkable", "public_sql"} <= set(SETS) - set(HELD_OUT)


def _row(scores):
    """One configuration's cells: per held-out set (right, wrong) of 10 questions."""
    return {s: Cell("ok", r, 10 - r - w, w, 10) for s, (r, w) in zip(HELD_OUT, scores)}


def test_the_pool_sums_counts_and_an_unfinished_set_leaves_it_unmeasured():
    cells = _row([(5, 1), (2, 0), (8, 1), (3, 0), (4, 4)])
    pool = pooled(list(cells.values()))
    assert (pool.correct, pool.hallucination, pool.total) == (22, 6, 50) and pool.score == pytest.approx(0.32)
    assert pooled([*cells.values(), Cell("not run")]).status == "not run"


def test_the_rules_stay_unless_another_configuration_scores_strictly_higher():
    rules = _row([(5, 1)] * 5)
    assert best({"rules": rules, "reader": _row([(5, 1)] * 5)}) == "rules"  # a tie keeps the rules
    assert best({"rules": rules, "reader": _row([(5, 0)] * 5), "reader+confqa": _row([(4, 0)] * 5)}) == "reader"
    unfinished = {**_row([(9, 0)] * 5), "dev": Cell("not run")}
    assert best({"rules": rules, "reader": unfinished}) == "rules"  # not measured on every held-out set


def test_the_table_marks_in_sample_sets_and_shows_the_pool():
    cells = {"rules": {**_row([(5, 1)] * 5), "checkable": Cell("ok", 8, 22, 0, 30)}}
    text = table(cells, [*HELD_OUT, "checkable"])
    assert "checkable (in-sample)" in text and "sample (in-sample)" not in text
    assert "| rules | 5 / 4 / 1, +0.40 |" in text and "| 8 / 22 / 0, +0.27 | 25 / 20 / 5, +0.40 |" in text


def test_a_calibrated_gate_without_its_file_is_not_run(tmp_path, capsys, monkeypatch):
    assert missing_gate(CONFIGURATIONS["rules"]) is None
    unfitted = {"verifier.gate": "calibrated", "verifier.gate_path": "models/gates/nowhere.json"}
    assert missing_gate(unfitted) == "models/gates/nowhere.json"
    monkeypatch.setitem(answer_gates.CONFIGURATIONS, "calibrated-unfitted", unfitted)
    assert run_answer_gates(["calibrated-unfitted"], ["sample"], output_root=str(tmp_path), dry_run=True) == 0
    assert "not fitted" in capsys.readouterr().out and not (tmp_path / "calibrated-unfitted").exists()


def test_a_dry_run_prints_one_command_per_cell_under_each_configurations_profile(tmp_path, capsys):
    assert run_answer_gates(["rules", "reader+confqa"], ["sample", "kg_unseen"], output_root=str(tmp_path),
                            dry_run=True) == 0
    out = capsys.readouterr().out
    assert out.count("local_evaluation.py") == 4 and "--kg-source data/kg_acceptance" in out
    saved = load_config(tmp_path / "reader+confqa" / "profile.yaml")
    assert (saved.verifier.gate, saved.pipeline.answer_prompt) == ("reader", "answer_confqa")
