"""evaluation/experiments/current_results.py and scripts/current_results.py: the one current-results table is made from stored
figures, runs update only what they measured, bad markers write nothing; and the repository's documents hold exactly
the rendering of docs/current_results.json (no hand-edited table)."""
import json
import shlex
import sys
from pathlib import Path

import pytest

from evaluation.experiments import current_results as cr
from evaluation.experiments.current_results import (END, SETS, START, MarkerError, ResultSet, block_of, load_store, read_cell,
                                        render, replace_block, run_current_results, stale, write_block)
from evaluation.data import count_examples
from evaluation.experiments.grid import LOCAL_EVALUATION
from evaluation.sets import Suite
from models import crag_data
from models.config import REPO_ROOT
from tests.packaged import crag_file
from scripts.current_results import main

CELL = {"correct": 12, "missing": 6, "hallucination": 2, "total": 20, "median_s": 3.14, "date": "2025-01-02",
        "commit": "abc1234", "machine": "x86_64, 2 CPUs, no GPU", "judge": "normalized"}


def finished_run(run_dir: Path, correct=12, missing=6, hallucination=2, latencies=(1.0, 5.0, 2.0)):
    run_dir.mkdir(parents=True, exist_ok=True)
    metrics = {"n_correct": correct, "n_miss": missing, "n_hallucination": hallucination,
               "total": correct + missing + hallucination}
    (run_dir / "summary.json").write_text(json.dumps({"metrics": metrics, "judge": "normalized"}))
    (run_dir / "predictions.jsonl").write_text("".join(json.dumps({"latency_s": s}) + "\n" for s in latencies))


class FakeRuns:
    """Stands in for local_evaluation.py: records each command and writes a finished run into its --output-dir,
    or fails (exit 3, no summary) for the sets of `fail`."""

    def __init__(self, fail=()):
        self.fail, self.commands = set(fail), []

    def __call__(self, cmd, log_path):
        self.commands.append(cmd)
        out_dir = Path(cmd[cmd.index("--output-dir") + 1])
        log_path.write_text("fake run\n")
        if out_dir.name in self.fail:
            return 3
        finished_run(out_dir, correct=1, missing=1, hallucination=0, latencies=(0.5, 0.7))
        return 0


@pytest.fixture
def docs(tmp_path):
    """Two documents with the markers around an old table, and a store holding one figure of every cpu set."""
    paths = [tmp_path / "README.md", tmp_path / "docs" / "results.md"]
    for path in paths:
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# Title\n\nbefore\n\n{START}\nold table\n{END}\n\nafter\n")
    store = tmp_path / "current_results.json"
    store.write_text(json.dumps({"profiles": {"cpu": {"sets": {name: CELL for name in SETS}}}}))
    return paths, store


def options(tmp_path, docs):
    paths, store = docs
    return dict(output_root=str(tmp_path / "out"), store_path=store, documents=paths)


# --- the sets ---

@pytest.mark.parametrize("name", list(SETS))
def test_each_set_has_the_size_it_shows_and_its_command(name):
    result_set = SETS[name]
    for name in result_set.missing_inputs():  # CRAG's files, where $CRAG_DATA lacks them: a skip naming it
        crag_file(crag_data.crag_name(name) or name)
    assert count_examples(crag_data.resolve(result_set.suite.data) if crag_data.crag_name(result_set.suite.data)
                          else REPO_ROOT / result_set.suite.data) == result_set.size
    args = shlex.split(result_set.shown())
    assert args[:2] == ["python", "local_evaluation.py"]
    task = int(args[args.index("--task") + 1]) if "--task" in args else 1
    assert task == result_set.suite.task and f"Task {task})" in result_set.heading()


def test_the_shown_commands():
    assert SETS["sample"].shown() == "python local_evaluation.py"
    assert SETS["kg_unseen"].shown() == ("python local_evaluation.py --task 2 --data data/acceptance/kg_unseen.jsonl "
                                         "--kg-source data/kg_acceptance")
    assert SETS["dev"].shown() == ('python local_evaluation.py --data "$CRAG_DATA/dev_data.jsonl.bz2" '
                                   '--tokenizer "$CRAG_DATA/tokenizer"')
    assert list(SETS)[:4] == ["sample", "dev", "task2", "task3"]


# --- reading a run ---

def test_a_finished_run_is_a_cell_with_the_median_seconds(tmp_path):
    finished_run(tmp_path, latencies=(1.0, 5.0, 2.0, 10.0))
    cell = read_cell(tmp_path, "abc1234", "a machine")
    assert cell["median_s"] == 3.5  # the median, not the mean (4.5)
    assert {k: cell[k] for k in ("correct", "missing", "hallucination", "total", "commit", "machine", "judge")} == {
        "correct": 12, "missing": 6, "hallucination": 2, "total": 20, "commit": "abc1234", "machine": "a machine",
        "judge": "normalized"}
    assert len(cell["date"]) == 10 and cell["date"][:2] == "20"
    assert read_cell(tmp_path / "nowhere", "abc1234", "a machine") is None


def test_a_run_read_back_keeps_the_commit_it_recorded_not_todays(tmp_path):
    finished_run(tmp_path)
    assert read_cell(tmp_path, None, "m")["commit"] == "unrecorded"  # made before runs kept their commit
    summary = json.loads((tmp_path / "summary.json").read_text())
    (tmp_path / "summary.json").write_text(json.dumps({**summary, "commit": "0ld0000"}))
    assert read_cell(tmp_path, None, "m")["commit"] == "0ld0000"
    assert read_cell(tmp_path, "new1111", "m")["commit"] == "0ld0000"


# --- rendering ---

def test_the_rendering_of_a_small_case_exactly(monkeypatch):
    monkeypatch.setattr(cr, "SETS", {"sample": SETS["sample"], "task3": SETS["task3"]})
    monkeypatch.setattr(cr, "PROFILES", ("cpu", "g4dn"))
    store = {"profiles": {"cpu": {"sets": {"sample": CELL, "unknown-set": CELL}}}}
    assert render(store) == "\n".join([
        "| set | `cpu`: correct / `i don't know` / wrong | `cpu`: score | `cpu`: median s/q | "
        "`g4dn`: correct / `i don't know` / wrong | `g4dn`: score | `g4dn`: median s/q | command |",
        "|---|---|---|---|---|---|---|---|",
        "| bundled sample (20, Task 1) | 12 / 6 / 2 | +0.50 | 3.1 s | not measured (no GPU run yet) |  |  | "
        "`python local_evaluation.py` |",
        "| Task-3 sample (6, Task 3) | not measured |  |  | not measured (no GPU run yet) |  |  | "
        "`python local_evaluation.py --task 3 --data data/sample/crag_sample_task3.jsonl` |",
        "",
        "`cpu`: measured 2025-01-02 at commit abc1234 on x86_64, 2 CPUs, no GPU; normalized judge",
        "",
        "`g4dn`: not measured yet (needs a GPU machine).",
        "",
        "Re-made by `python scripts/current_results.py` (add `--profiles g4dn` on a GPU machine with the weights in "
        "place)."])


def test_the_score_keeps_its_sign_and_two_decimals_and_cells_of_several_dates_are_listed(monkeypatch):
    monkeypatch.setattr(cr, "SETS", {"sample": SETS["sample"], "task2": SETS["task2"]})
    monkeypatch.setattr(cr, "PROFILES", ("cpu", "g4dn"))
    worse = {**CELL, "correct": 1, "hallucination": 3, "median_s": None, "date": "2025-01-01", "commit": "0ld0000"}
    text = render({"profiles": {"g4dn": {"sets": {"sample": CELL, "task2": worse}}}})
    assert "| 12 / 6 / 2 | +0.50 | 3.1 s |" in text and "| 1 / 6 / 3 | -0.10 | n/a |" in text
    assert "| not measured |  |  | 12 / 6 / 2 |" in text  # cpu has no figure; g4dn does
    assert ("`g4dn`: measured 2025-01-01 at commit 0ld0000 on x86_64, 2 CPUs, no GPU (task2); "
            "2025-01-02 at commit abc1234 on x86_64, 2 CPUs, no GPU (sample); normalized judge") in text
    assert render({"profiles": {"cpu": {"sets": {"sample": {**CELL, "correct": 2, "hallucination": 2}}}}}).count(
        "| 2 / 6 / 2 | +0.00 |") == 1
    same = {"profiles": {"g4dn": {"sets": {"task2": worse, "sample": CELL}}}}
    assert render(same) == text  # the same figures, in whatever order they were stored: the same text


# --- the markers ---

def test_the_block_is_replaced_between_the_markers_and_again_changes_nothing():
    text = f"a\n{START}\nold\n{END}\nb\n"
    once = replace_block(text, "new\ntable", "X.md")
    assert once == f"a\n{START}\nnew\ntable\n{END}\nb\n"
    assert replace_block(once, "new\ntable", "X.md") == once and block_of(once, "X.md") == "new\ntable"


@pytest.mark.parametrize("bad", [f"{START}\nno end\n", "no markers\n", f"{END}\n{START}\n",
                                 f"{START}\n{END}\n{START}\n{END}\n", f"{START}\n{START}\n{END}\n"],
                         ids=["missing end", "none", "out of order", "doubled", "start twice"])
def test_bad_markers_are_an_error_naming_the_file_and_nothing_is_written(tmp_path, bad):
    good, broken = tmp_path / "good.md", tmp_path / "broken.md"
    good.write_text(f"{START}\nold\n{END}\n")
    broken.write_text(bad)
    with pytest.raises(MarkerError, match="broken.md"):
        write_block("new", [good, broken])
    assert good.read_text() == f"{START}\nold\n{END}\n" and broken.read_text() == bad


# --- runs ---

def test_a_partial_run_updates_only_its_cells(tmp_path, docs, capsys):
    paths, store = docs
    fake = FakeRuns()
    assert run_current_results(["cpu"], ["task2", "task3"], run=fake, **options(tmp_path, docs)) == 0
    assert [cmd[cmd.index("--output-dir") + 1] for cmd in fake.commands] == [
        str(tmp_path / "out" / "cpu" / "task2"), str(tmp_path / "out" / "cpu" / "task3")]
    assert all(cmd[:2] == [sys.executable, str(LOCAL_EVALUATION)] and "--no-resume" not in cmd for cmd in fake.commands)
    stored = load_store(store)["profiles"]["cpu"]["sets"]
    assert stored["task2"]["correct"] == 1 and stored["task2"]["median_s"] == 0.6
    assert stored["task3"]["total"] == 2
    assert all(stored[name] == CELL for name in SETS if name not in ("task2", "task3"))
    assert "g4dn" not in load_store(store)["profiles"]
    block = render(load_store(store))
    assert all(block_of(path.read_text(), str(path)) == block for path in paths)
    assert paths[0].read_text().startswith("# Title\n\nbefore\n\n") and paths[0].read_text().endswith("\nafter\n")
    assert block in capsys.readouterr().out  # the table is printed at the end
    assert stale(paths, store) == []
    # a second call reads the finished runs instead of running them again; --rerun runs them
    assert run_current_results(["cpu"], ["task2"], run=fake, **options(tmp_path, docs)) == 0
    assert len(fake.commands) == 2
    assert run_current_results(["cpu"], ["task2"], run=fake, rerun=True, **options(tmp_path, docs)) == 0
    assert len(fake.commands) == 3 and fake.commands[-1][-1] == "--no-resume"  # a rerun starts afresh


def test_a_failed_run_keeps_its_stored_cell_and_exits_1(tmp_path, docs, capsys):
    paths, store = docs
    finished_run(tmp_path / "out" / "cpu" / "task3")  # an old finished run: a failed rerun must not read it
    code = run_current_results(["cpu"], ["task2", "task3"], run=FakeRuns(fail={"task3"}), rerun=True,
                               **options(tmp_path, docs))
    assert code == 1
    assert "[cpu / task3] failed (exit 3)" in capsys.readouterr().err
    stored = load_store(store)["profiles"]["cpu"]["sets"]
    assert stored["task3"] == CELL and stored["task2"]["correct"] == 1  # the others are still written


def test_a_set_whose_data_is_missing_is_skipped_and_keeps_its_figure(tmp_path, docs, capsys, monkeypatch):
    monkeypatch.setitem(SETS, "dev", ResultSet("dev", 10, Suite("../no-such-shared/dev.jsonl.bz2", 1, "../nope")))
    fake = FakeRuns()
    assert run_current_results(["cpu"], ["dev", "sample"], run=fake, **options(tmp_path, docs)) == 0
    assert "[cpu / dev] skipped: ../no-such-shared/dev.jsonl.bz2, ../nope not found; its stored figure is kept" \
        in capsys.readouterr().out
    assert [Path(cmd[cmd.index("--output-dir") + 1]).name for cmd in fake.commands] == ["sample"]
    assert load_store(docs[1])["profiles"]["cpu"]["sets"]["dev"] == CELL


def test_bad_markers_stop_before_any_run(tmp_path, docs):
    paths, store = docs
    paths[1].write_text("no markers\n")
    fake = FakeRuns()
    assert run_current_results(["cpu"], ["sample"], run=fake, **options(tmp_path, docs)) == 2
    assert fake.commands == [] and json.loads(store.read_text())["profiles"]["cpu"]["sets"]["sample"] == CELL
    assert START not in paths[1].read_text() and "old table" in paths[0].read_text()


def test_limit_writes_nothing_and_prints_the_table(tmp_path, docs, capsys):
    paths, store = docs
    before = [path.read_text() for path in [*paths, store]]
    fake = FakeRuns()
    assert run_current_results(["cpu"], ["sample"], limit=2, run=fake, **options(tmp_path, docs)) == 0
    assert fake.commands[0][-2:] == ["--limit", "2"] and "limit-2" in fake.commands[0][fake.commands[0].index(
        "--output-dir") + 1]
    assert [path.read_text() for path in [*paths, store]] == before
    out = capsys.readouterr().out
    assert "nothing written" in out and "| bundled sample (20, Task 1) | 1 / 1 / 0 | +0.50 | 0.6 s |" in out


def test_dry_run_prints_the_commands_and_runs_nothing(tmp_path, docs, capsys):
    paths, store = docs
    before = [path.read_text() for path in [*paths, store]]
    fake = FakeRuns()
    assert run_current_results(["cpu", "g4dn"], ["sample", "kg_unseen"], dry_run=True, run=fake,
                               **options(tmp_path, docs)) == 0
    out = capsys.readouterr().out
    assert fake.commands == [] and [path.read_text() for path in [*paths, store]] == before
    for profile in ("cpu", "g4dn"):
        for name in ("sample", "kg_unseen"):
            line = next(line for line in out.splitlines() if line.startswith(f"[{profile} / {name}] "))
            shown = " ".join(shlex.split(SETS[name].shown())[2:])  # the table's arguments, in the run's command
            assert shown in line and f"--profile {profile} --output-dir" in line


# --- the command line ---

def test_the_script_end_to_end_on_copies(tmp_path, docs, monkeypatch, capsys):
    paths, store = docs
    fake = FakeRuns()
    monkeypatch.setattr(cr, "run_logged", fake)
    write = ["--store", str(store), "--write", *map(str, paths), "--output-root", str(tmp_path / "out")]
    assert main(["--profiles", "g4dn", "--sets", "task3", *write]) == 0
    assert [cmd[cmd.index("--profile") + 1] for cmd in fake.commands] == ["g4dn"]
    stored = load_store(store)["profiles"]
    assert stored["g4dn"]["sets"]["task3"]["total"] == 2 and stored["cpu"]["sets"]["task3"] == CELL
    assert main(["--check", *write]) == 0
    paths[0].write_text(paths[0].read_text().replace("| 1 / 1 / 0 |", "| 6 / 0 / 0 |"))  # a hand edit
    assert main(["--check", *write]) == 1 and "README.md" in capsys.readouterr().err
    assert main(["--render-only", *write]) == 0 and main(["--check", *write]) == 0
    assert len(fake.commands) == 1  # --render-only and --check run nothing


# --- the repository: its documents hold the rendering of its stored figures ---

FIX = "run `python scripts/current_results.py --render-only` (or the full command to re-measure)"


def block_disagreement(paths) -> str:
    """Why the documents do not hold one and the same block between their markers; "" when they do."""
    blocks = {}
    for path in paths:
        try:
            blocks[str(path)] = block_of(Path(path).read_text(encoding="utf-8"), str(path))
        except (OSError, MarkerError) as exc:
            return f"{exc}; {FIX}"
    return "" if len(set(blocks.values())) == 1 else f"{', '.join(blocks)} differ between the markers; {FIX}"


def test_the_repository_checks_can_pass_and_fail_on_copies(tmp_path, docs):
    paths, store = docs
    assert block_disagreement(paths) == ""  # the same old table in both
    assert stale(paths, store)  # ... but not the rendering of the stored figures
    assert run_current_results(render_only=True, **options(tmp_path, docs)) == 0
    assert block_disagreement(paths) == "" and stale(paths, store) == []
    paths[1].write_text(paths[1].read_text().replace("+0.50", "+0.55"))  # a hand edit of one copy
    assert "differ between the markers" in block_disagreement(paths) and str(paths[1]) in stale(paths, store)[0]
    paths[1].write_text("markers gone\n")
    assert "results.md" in block_disagreement(paths) and FIX in block_disagreement(paths)


def test_readme_and_results_page_hold_the_same_block():
    assert not block_disagreement(cr.DOCUMENTS), block_disagreement(cr.DOCUMENTS)


def test_the_block_is_the_rendering_of_the_stored_figures():
    assert cr.STORE.exists(), f"{cr.STORE} is missing; run `python scripts/current_results.py`"
    problems = stale(cr.DOCUMENTS, cr.STORE)
    assert not problems, "; ".join(problems) + f": the table is made, not typed; {FIX}"
