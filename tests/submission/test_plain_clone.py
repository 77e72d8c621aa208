"""A plain clone passes its own tests: a copy of the working tree with nothing beside it and no `CRAG_DATA`
(`submission/plain_clone.py`) runs every test that reads CRAG's files; each skips with a reason naming the
setting, the tests that only check more where the files are present pass, and under CI=true the same tests fail.
The whole suite on such a copy is `python scripts/check_plain_clone.py` (the slow test below)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from models import crag_data
from models.paths import REPO_ROOT
from submission.plain_clone import bad_skips, copy_tree, run_pytest, skips, tree_files

# Every test that reads CRAG's files (`tests.packaged.crag_file` / `crag_file_if_present`), with the number of its
# cases that must skip without them (0: it only checks more where they are present, and passes without them).
CRAG_TESTS = {
    "tests/test_docs_links.py": 0,  # cites `$CRAG_DATA/...` and no file beside the repository
    "tests/test_trim.py": 5,
    "tests/evaluation/test_data.py::test_real_dev_file_old_schema": 1,
    "tests/evaluation/test_current_results.py::test_each_set_has_the_size_it_shows_and_its_command": 1,
    "tests/routing/test_classifier.py::test_accuracy_on_real_crag_questions": 1,
    "tests/routing/test_train_router.py": 0,
    "tests/attributes/test_attributes.py::"
    "test_bundled_training_data_is_usable_and_never_contains_evaluation_questions": 0,
    "tests/submission/test_preflight_history.py": 2,
    "tests/test_end_to_end.py::test_real_dev_data_with_the_grader_tokenizer": 1,
    "tests/test_local_evaluation.py::test_exact_trim_with_the_grader_tokenizer": 1,
    "tests/test_no_crag_data.py": 1,
    "tests/training/test_kg_check.py::test_the_fixture_kg_does_not_serve_the_crag_dev_questions": 1,
    "tests/web/test_context.py::test_budget_in_real_llama_tokens": 4,
    "tests/web/test_real_pages.py": 1,
    "tests/verify/test_held_out.py::test_nothing_fitted_shares_a_question_with_a_set_held_out_from_it": 0,
    "tests/evaluation/test_sets.py::test_each_set_has_the_size_it_declares": 1,
}
PASSED = re.compile(r"(\d+) passed")
SKIPPED = re.compile(r"(\d+) skipped")


@pytest.fixture(scope="module")
def plain_clone(tmp_path_factory):
    return copy_tree(tmp_path_factory.mktemp("user") / "home")


def test_the_list_names_every_test_file_that_reads_crags_files():
    readers = {name for name in tree_files() if name.startswith("tests/") and name.endswith(".py")
               and name not in ("tests/packaged.py", "tests/submission/test_plain_clone.py")
               and re.search(r"\bcrag_file(_if_present)?\(", (REPO_ROOT / name).read_text(encoding="utf-8"))}
    listed = {node.split("::")[0] for node in CRAG_TESTS}
    assert readers <= listed, f"tests reading CRAG's files missing from CRAG_TESTS: {sorted(readers - listed)}"


def test_the_copy_has_the_tree_and_nothing_beside_it(plain_clone):
    assert sorted(p.name for p in plain_clone.parent.iterdir()) == [plain_clone.name]
    assert (plain_clone / "models" / "crag_data.py").is_file() and (plain_clone / ".git").is_dir()
    assert not (plain_clone / "data" / "crag" / crag_data.DEV_FILE).exists()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=plain_clone, capture_output=True, text=True)
    assert status.stdout == ""  # committed whole: tests that ask git see the same files


def test_without_crags_files_they_skip_naming_the_setting_and_fail_under_ci(plain_clone):
    user = run_pytest(plain_clone, ["-q", "-m", "", *CRAG_TESTS], timeout=1800)
    output = user.stdout + user.stderr
    assert user.returncode == 0, output[-4000:]
    assert not bad_skips(output), bad_skips(output)
    found = skips(output)
    assert all(crag_data.CRAG_DATA_ENV in reason for _, reason in found), found
    skipped = int(SKIPPED.search(output).group(1)) if SKIPPED.search(output) else 0
    assert skipped == sum(CRAG_TESTS.values()), output[-4000:]
    assert int(PASSED.search(output).group(1)) > 0

    ci = run_pytest(plain_clone, ["-q", "-x", "-m", "", "tests/test_trim.py"], ci=True, timeout=600)
    assert ci.returncode == 1 and "CI=true: .ci/run sets CRAG_DATA" in ci.stdout, ci.stdout[-3000:]


def test_bad_skips_are_told_from_crag_and_gpu_skips():
    output = ("SKIPPED [1] tests/a.py:3: CRAG's tokenizer is not at /x (CRAG_DATA unset, so data/crag/): ...\n"
              "SKIPPED [2] tests/b.py:9: no CUDA GPU visible\n"
              "SKIPPED [1] tests/c.py:4: xllamacpp is not installed\n")
    assert len(skips(output)) == 3
    assert bad_skips(output) == ["tests/c.py:4: xllamacpp is not installed"]


@pytest.mark.slow
def test_the_whole_suite_passes_on_a_plain_clone(tmp_path):
    """`scripts/check_plain_clone.py`: the default suite in a copy with nothing beside it (16 min or so)."""
    done = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "check_plain_clone.py"), "--into",
                           str(tmp_path / "user")], capture_output=True, text=True, timeout=5400)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
