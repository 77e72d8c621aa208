"""The preflight's `history` check (`submission/preflight.py`): no question or interaction id of CRAG's dev file in
the branch's history. Tiny temporary repositories with planted made-up questions (a file added then removed, a
commit message), the README's orphan-branch steps, a clean one; with the real dev file where it is present, one of
its questions planted in a temporary repository (never printed) and this repository's tree committed alone.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import submission.preflight as preflight
from models import crag_data
from models.config import REPO_ROOT
from scripts.preflight import main
from tests.packaged import crag_file

QUESTIONS = [  # made up for this test: not CRAG's
    {"interaction_id": "0f3c9a7e-5b21-4d8e-9a61-2c7f4e8b1d90", "query": "How many moons does the planet Zorblax have?",
     "answer": "seven"},
    {"interaction_id": "9d2e41b0-77aa-4c3e-8f10-5e6b2a9c3d71", "query": "who painted the ceiling of the vornak spire?",
     "answer": "quillon marsh"},
]


def _git(repo, *args) -> str:
    return subprocess.run(["git", "-c", "user.name=preflight test", "-c", "user.email=test@example.com",
                           "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false",
                           *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def _repo(tmp_path, name="repo"):
    repo = tmp_path / name
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# a package\n\nHow many moons does it have? Ask the planet.\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "start")
    return repo


@pytest.fixture
def dev(tmp_path):
    path = tmp_path / "dev.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return path


def _planted(tmp_path):
    """A repository whose second commit adds a question (another case and punctuation) that the third removes."""
    repo = _repo(tmp_path)
    (repo / "data").mkdir()
    (repo / "data" / "notes.jsonl").write_text('{"q": "how many MOONS does the planet zorblax have"}\n')
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "notes")
    planted = _git(repo, "rev-parse", "HEAD")
    _git(repo, "rm", "-q", "data/notes.jsonl")
    _git(repo, "commit", "-qm", "scrub")
    return repo, planted


def test_a_question_in_an_old_commit_fails_naming_the_commit_and_file_not_the_text(tmp_path, dev):
    repo, planted = _planted(tmp_path)
    result = preflight.check_history(repo, dev)
    assert result.status == "FAIL"
    assert f"the first: commit {planted[:12]}, data/notes.jsonl" in result.detail
    assert result.detail.startswith("1 file versions and 0 commit messages of HEAD's history (1 commits) hold")
    assert "git checkout --orphan submission-tree" in result.fix
    assert "zorblax" not in result.line().lower() and "moons" not in result.line().lower()


def test_a_branch_made_by_the_readme_steps_passes(tmp_path, dev):
    repo, _ = _planted(tmp_path)
    _git(repo, "checkout", "-q", "--orphan", "submission-tree")  # README "Submitting", step 1
    _git(repo, "commit", "-qm", "submission tree")
    _git(repo, "tag", "-am", "submission-v0.1", "submission-v0.1")
    for rev in ("HEAD", "submission-v0.1"):
        result = preflight.check_history(repo, dev, rev)
        assert result.status == "PASS", result.line()
        assert result.detail.startswith(f"none of the 2 questions of dev.jsonl (nor an interaction id) in the 1 "
                                        f"commits of {rev}'s history")
    assert preflight.check_history(repo, dev, "main").status == "FAIL"  # the old branch still holds it


def test_an_interaction_id_in_a_commit_message_fails(tmp_path, dev):
    repo = _repo(tmp_path)
    _git(repo, "commit", "-q", "--allow-empty", "-m", f"fix the row {QUESTIONS[1]['interaction_id']}")
    result = preflight.check_history(repo, dev)
    assert result.status == "FAIL" and "0 file versions and 1 commit messages" in result.detail
    assert f"commit {_git(repo, 'rev-parse', 'HEAD')[:12]}, its commit message" in result.detail


def test_a_clean_history_passes_and_an_absent_file_is_a_skip(tmp_path, dev, monkeypatch, capsys):
    repo = _repo(tmp_path)  # "how many moons does it have" is not the question: whole questions only
    assert preflight.check_history(repo, dev).status == "PASS"
    monkeypatch.setattr(preflight, "REPO_ROOT", repo)
    assert main(["--only", "history", "--dev-data", str(dev)]) == 0
    assert capsys.readouterr().out.startswith("PASS  history       none of the 2 questions")

    monkeypatch.setenv("CRAG_DATA", str(tmp_path / "no-crag-files"))  # CRAG's dev file where the setting points: absent
    assert main(["--only", "history"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SKIP  history       skipped: ") and "fix: CRAG's dev_data.jsonl.bz2 is not at" in out
    assert "CRAG_DATA=" in out and "--dev-data FILE" in out
    assert out.rstrip().endswith("preflight: 0/1 passed; skipped: history")

    (tmp_path / "second").mkdir()
    planted, _ = _planted(tmp_path / "second")
    monkeypatch.setattr(preflight, "REPO_ROOT", planted)
    assert main(["--only", "history", "--dev-data", str(dev)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL  history") and "zorblax" not in out.lower()
    assert out.rstrip().endswith("preflight: 0/1 passed; failed: history")


# ---------------------------------------------------------------------------------------------- the real dev file
@pytest.fixture
def real_dev():
    return crag_file(crag_data.DEV_FILE)


def test_a_real_dev_question_planted_in_a_temporary_repository_is_found(tmp_path, real_dev):
    from evaluation.data import load_examples

    question = next(iter(load_examples(real_dev)))["query"]
    repo = _repo(tmp_path)
    (repo / "kept.txt").write_text(f"some text\n{question}\nmore\n")  # written here only, never printed
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "kept")
    result = preflight.check_history(repo, real_dev)
    assert result.status == "FAIL" and result.detail.endswith(", kept.txt")
    assert question.lower() not in result.line().lower()


def test_this_repositorys_tree_committed_alone_holds_no_dev_question(tmp_path, real_dev, monkeypatch):
    """HEAD's files as one commit with no parent (what `git checkout --orphan` + `git commit` make), written into a
    temporary object directory so that this repository gains nothing: its history holds no dev question."""
    common = Path(_git(REPO_ROOT, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    objects = tmp_path / "objects"
    objects.mkdir()
    monkeypatch.setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", str(common / "objects"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(objects))
    orphan = _git(REPO_ROOT, "commit-tree", "HEAD^{tree}", "-m", "submission tree")
    assert _git(REPO_ROOT, "rev-list", "--count", orphan) == "1"
    result = preflight.check_history(REPO_ROOT, real_dev, orphan)
    assert result.status == "PASS", result.line()
