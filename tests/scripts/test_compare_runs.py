"""The refactor check: two runs' predictions compared question by question."""
import json

from evaluation.compare import compare
from scripts.compare_runs import main


def _run(folder, rows):
    folder.mkdir(parents=True)
    (folder / "predictions.jsonl").write_text("".join(
        json.dumps({"interaction_id": i, "query": f"q{i}", "prediction": p, "source": s}) + "\n" for i, p, s in rows))
    return folder


def test_identical_runs_pass_and_a_changed_answer_fails(tmp_path, capsys):
    rows = [("1", "Canberra", "web"), ("2", "i don't know", "web")]
    _run(tmp_path / "before" / "sample", rows)
    _run(tmp_path / "after" / "sample", rows)
    assert main([str(tmp_path / "before"), str(tmp_path / "after")]) == 0
    assert "| sample | 2 | 2 / 2 | 2 / 2 | 0 |" in capsys.readouterr().out
    _run(tmp_path / "changed" / "sample", [("1", "Canberra ", "kg"), ("2", "i don't know", "web")])
    assert main([str(tmp_path / "before"), str(tmp_path / "changed")]) == 1
    out = capsys.readouterr().out
    assert "| sample | 2 | 1 / 2 | 1 / 2 | 0 |" in out and "'Canberra' -> 'Canberra '" in out and "DIFFERENT" in out


def test_a_question_in_only_one_run_fails(tmp_path):
    before = _run(tmp_path / "b", [("1", "x", "web"), ("2", "y", "web")])
    after = _run(tmp_path / "a", [("1", "x", "web")])
    result = compare(before, after)
    assert result["only_before"] == ["2"] and result["identical"] == 1
    assert main([str(before), str(after)]) == 1
