"""scripts/compare_modes.py: the table puts both modes side by side (traces: tests/evaluation/test_modes.py)."""
import json
from pathlib import Path

from scripts.compare_modes import main
from tests.evaluation.test_modes import attempt, record


def write_run(run_dir: Path, rows, correct, missing, hallucination):
    run_dir.mkdir(parents=True)
    metrics = {"n_correct": correct, "n_miss": missing, "n_hallucination": hallucination, "total": len(rows)}
    (run_dir / "summary.json").write_text(json.dumps({"metrics": metrics}))
    (run_dir / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_table_puts_both_modes_side_by_side_and_says_what_was_not_run(tmp_path, capsys):
    write_run(tmp_path / "db3" / "task2", [record("a", "1999", [attempt("kg-direct", "1999")])], 1, 0, 0)
    write_run(tmp_path / "omni" / "task2", [record("a", "1999", [attempt("web", "", "no")], engaged=["web"])],
              0, 1, 0)
    write_run(tmp_path / "omni-every-source" / "task2",
              [record("a", "1999", items=[("kg", "1999")], exact=[("kg", "1999")])], 1, 0, 0)
    assert main(["--suites", "task2", "public", "--output-root", str(tmp_path), "--dry-run"]) == 0
    text = (tmp_path / "modes.md").read_text()
    assert "| task2 | db3 | 1 / 0 / 0 (1) | +1.000 | 1.0 | 1/1 (100%) | — | — | — | — |" in text
    assert "| task2 | omni | 0 / 1 / 0 (1) | +0.000 | 1.0 | 0/1 (0%) | 0/1 (0%) | 0/1 (0%) | 0/1 (0%) | 0 |" in text
    assert "| public | omni | not run |" in text
    out = capsys.readouterr().out
    assert "[db3 / public]" in out and "--data data/acceptance/public_sql.jsonl" in out
    assert "[db3 / task2] read from" in out and "--output-dir " + str(tmp_path / "db3" / "task2") not in out
