"""scripts/bench_judge.py on a few written rows: the report's lines, and the exit status of the thresholds."""
import json

from scripts.bench_judge import main


def _labels(path, rows):
    path.write_text("".join(json.dumps({"source": source, "origin": "written", "query": "what is the capital of "
                                        "australia?", "gold": "canberra", "alt_ans": [], "prediction": prediction,
                                        "label": label, "reason": "written for this test"}) + "\n"
                            for source, prediction, label in rows))
    return str(path)


def test_the_bars_hold_on_agreeing_rows(tmp_path, capsys):
    labels = _labels(tmp_path / "ok.jsonl", [("sample", "canberra", "correct"), ("hard", "i don't know", "incorrect")])
    assert main(["--labels", labels, "--judge", "rules", "--all"]) == 0
    out = capsys.readouterr().out
    assert f"judge rules on {labels}" in out and "agreement 100.0%" in out
    assert "label \\ judge" in out and "\nper source:\nsample   rows    1" in out
    assert "undecided (0):\n  none" in out and out.rstrip().endswith("PASS")


def test_a_hard_false_pass_fails_the_bars(tmp_path, capsys):
    labels = _labels(tmp_path / "bad.jsonl", [("hard", "canberra", "incorrect")])
    assert main(["--labels", labels]) == 1
    out = capsys.readouterr().out
    assert "labelled incorrect, judged correct (1; hard rows must be 0):\n  [hard/written]" in out
    assert out.rstrip().endswith("FAIL")
