"""evaluation/experiments/grid.py: each cell's command line is as documented, and every grid follows the one rerun rule."""
import json
import sys
from pathlib import Path

from evaluation.experiments.grid import LOCAL_EVALUATION, SUITES, Outcome, command, run_cell
from evaluation.sets import Suite


def test_the_command_line_of_a_cell(tmp_path):
    cmd = command(SUITES["kg_unseen"], tmp_path / "profile.yaml", tmp_path / "out", limit=5, lock="flock LOCK")
    assert cmd[:4] == ["flock", "LOCK", sys.executable, str(LOCAL_EVALUATION)]
    assert cmd[4:] == ["--task", "2", "--data", "data/acceptance/kg_unseen.jsonl", "--kg-source", "data/kg_acceptance",
                       "--profile", str(tmp_path / "profile.yaml"), "--output-dir", str(tmp_path / "out"),
                       "--limit", "5"]
    dev = command(SUITES["dev"], "cpu", tmp_path / "o", overrides={"verifier.gate": "rules"}, fresh=True)
    assert dev == [sys.executable, str(LOCAL_EVALUATION), "--task", "1", "--data", "$CRAG_DATA/dev_data.jsonl.bz2",
                   "--tokenizer", "$CRAG_DATA/tokenizer", "--profile", "cpu", "--output-dir", str(tmp_path / "o"),
                   "--set", "verifier.gate=rules", "--no-resume"]
    assert command(SUITES["sample"], None, tmp_path / "s")[2:] == [
        "--task", "1", "--data", "data/sample/crag_sample.jsonl", "--output-dir", str(tmp_path / "s")]
    assert SUITES["sample"].arguments() == [] and SUITES["task2"].arguments() == ["--task", "2"]  # the shown form


class FakeRuns:
    """Stands in for local_evaluation.py: records each command and finishes its run, or fails (exit 3)."""

    def __init__(self, code=0):
        self.code, self.commands = code, []

    def __call__(self, cmd, log_path):
        self.commands.append(cmd)
        log_path.write_text("fake run\n")
        if self.code == 0:
            out = Path(cmd[cmd.index("--output-dir") + 1])
            (out / "summary.json").write_text(json.dumps({"metrics": {}}))
        return self.code


def test_a_finished_cell_is_read_unless_rerun_and_a_rerun_starts_afresh(tmp_path, capsys):
    fake, out = FakeRuns(), tmp_path / "cpu" / "task2"
    assert run_cell("cpu / task2", SUITES["task2"], "cpu", out, run=fake) is Outcome.RAN
    assert "--no-resume" not in fake.commands[0]  # a first run resumes whatever an interrupted one left
    assert (tmp_path / "cpu" / "task2.log").read_text() == "fake run\n"  # the log beside the folder
    assert run_cell("cpu / task2", SUITES["task2"], "cpu", out, run=fake) is Outcome.READ and len(fake.commands) == 1
    assert "[cpu / task2] read from" in capsys.readouterr().out
    assert run_cell("cpu / task2", SUITES["task2"], "cpu", out, rerun=True, run=fake) is Outcome.RAN
    assert fake.commands[1][-1] == "--no-resume"


def test_a_failed_run_never_reads_as_finished_and_a_dry_run_runs_nothing(tmp_path, capsys):
    out = tmp_path / "task3"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps({"metrics": {}}))  # an old finished run
    assert run_cell("task3", Suite("d.jsonl", 3), None, out, rerun=True, run=FakeRuns(code=3)) is Outcome.FAILED
    assert not (out / "summary.json").exists()
    assert "[task3] failed (exit 3); see" in capsys.readouterr().err
    fake = FakeRuns()
    assert run_cell("task3", Suite("d.jsonl", 3), None, out, dry_run=True, run=fake) is Outcome.PLANNED
    assert fake.commands == [] and "--data d.jsonl" in capsys.readouterr().out
