"""scripts/ablation.py: runs are read, reused and tabled honestly (configurations: tests/evaluation/test_ablation.py)."""
import json
from pathlib import Path

from models.config import load_config
from scripts.ablation import main


def fake_run(run_dir: Path, correct, missing, hallucination, latencies):
    run_dir.mkdir(parents=True)
    total = correct + missing + hallucination
    metrics = {"n_correct": correct, "n_miss": missing, "n_hallucination": hallucination, "total": total,
               "score": (correct - hallucination) / total}
    (run_dir / "summary.json").write_text(json.dumps({"metrics": metrics}))
    (run_dir / "predictions.jsonl").write_text("".join(json.dumps({"latency_s": s}) + "\n" for s in latencies))


def test_a_dry_run_reuses_the_baseline_and_measured_runs_and_says_not_run_for_the_rest(tmp_path, capsys):
    fake_run(tmp_path / "final-sample", 4, 12, 4, [2.0] * 20)
    fake_run(tmp_path / "abl" / "plus-web" / "sample", 5, 12, 3, [3.0] * 20)
    code = main(["--suites", "sample", "dev", "--baseline", f"sample={tmp_path / 'final-sample'}",
                          "--output-root", str(tmp_path / "abl"), "--lock", "flock LOCK", "--dry-run",
                          "--only", "base", "+web", "+reasoning"])
    assert code == 0
    out = capsys.readouterr().out
    assert "[base / sample] read from" in out and "[+web / sample] read from" in out
    assert "flock LOCK " in out and "--tokenizer '$CRAG_DATA/tokenizer'" in out  # dev runs with the grader's
    rows = {line.split(" | ")[0].strip("| "): line for line in out.splitlines() if line.startswith("| ")}
    assert "| 4 / 12 / 4 (20) | +0.000 | 2.0 | not run |" in rows["base"]
    assert "| 5 / 12 / 3 (20) | +0.100 | 3.0 |" in rows["+web"]
    assert rows["all"].count("not run") == 2  # every configuration is a row; what did not run says so
    assert (tmp_path / "abl" / "plus-reasoning" / "profile.yaml").exists()
    assert load_config(tmp_path / "abl" / "plus-reasoning" / "profile.yaml").reasoning.enabled


def test_a_baseline_for_an_unknown_suite_is_an_error(tmp_path):
    assert main(["--suites", "sample", "--baseline", "dev=x", "--output-root", str(tmp_path)]) == 2
