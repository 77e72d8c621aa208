"""The repository as a new user gets it: a copy of the tree with nothing beside it, its test suite run there.

A user clones the repository into a folder of their own: no CRAG files (they fill `$CRAG_DATA` themselves, or
not), no development folders beside it. `copy_tree` makes such a copy of the working tree (tracked files and
untracked ones git does not ignore, committed afresh in a new repository, so the tests that read git see the same
files), in a temporary folder with nothing beside it. `run_pytest` runs pytest there with the copy first on the
import path, without `CRAG_DATA` and without `CI`, as on a user's machine. `bad_skips` reads pytest's `-rs`
summary: a plain clone may skip a test only for CRAG's files (the reason names `CRAG_DATA`) or for a CUDA GPU
it does not have; any other skip means the clone lacks something the repository should carry.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from models import crag_data
from models.paths import REPO_ROOT

# `SKIPPED [2] tests/x.py:12: reason` (pytest -rs); the count is absent for one.
SKIP_LINE = re.compile(r"^SKIPPED \[\d+\] (?P<where>[^:]+:\d+): (?P<reason>.*)$", re.M)
# Skips a plain clone may have besides CRAG's files: what a machine without a GPU, or without a built submission
# image, lacks by design (the in-image commands are then checked by --help in the virtualenv).
BY_DESIGN = ("no CUDA GPU", "a CUDA GPU is present", "no `crag-submission` image",
             "no Chromium on PATH")  # the browser test's: a system package that .ci/run installs, not `make setup`


def tree_files(root: Path = REPO_ROOT) -> list[str]:
    """The working tree's files as a clone of it would hold them: tracked, and untracked but not ignored."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, text=True, check=True).stdout
    return [name for name in listed.split("\0") if name and (root / name).is_file()]


def copy_tree(into: Path, root: Path = REPO_ROOT) -> Path:
    """A copy of `root`'s working tree at `into/<name>` (`into` holds nothing else), committed in a fresh git
    repository; returns the copy's root."""
    into.mkdir(parents=True, exist_ok=True)
    if any(into.iterdir()):
        raise ValueError(f"{into} is not empty: the copy must have nothing beside it")
    copy = into / root.name
    for name in tree_files(root):
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target, follow_symlinks=False)
    git = ["git", "-c", "user.name=plain clone", "-c", "user.email=plain-clone@localhost", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--no-verify", "-m", "the working tree"]):
        subprocess.run(git + args, cwd=copy, check=True, capture_output=True)
    return copy


def user_environment(copy: Path, ci: bool = False) -> dict[str, str]:
    """The environment of a user's shell in `copy`: no `CRAG_DATA`, no `CI` (unless `ci`), the copy imported first."""
    env = {key: value for key, value in os.environ.items()
           if key not in (crag_data.CRAG_DATA_ENV, "CI", "PYTHONPATH")}
    env["PYTHONPATH"] = str(copy)  # before an editable install of another checkout in the same virtualenv
    if ci:
        env["CI"] = "true"
    return env


def run_pytest(copy: Path, args: list[str], python: str = sys.executable, ci: bool = False,
               timeout: float | None = None) -> subprocess.CompletedProcess:
    """`python -m pytest -rfEs -p no:cacheprovider ARGS` in `copy`, as a user would run it (`user_environment`)."""
    return subprocess.run([python, "-m", "pytest", "-rfEs", "-p", "no:cacheprovider", *args], cwd=copy,
                          env=user_environment(copy, ci), capture_output=True, text=True, timeout=timeout)


def skips(output: str) -> list[tuple[str, str]]:
    """(where, reason) of every skip in pytest's `-rs` summary."""
    return [(m["where"], m["reason"]) for m in SKIP_LINE.finditer(output)]


def bad_skips(output: str) -> list[str]:
    """The skips a plain clone should not have: neither for CRAG's files (naming the setting) nor by design."""
    return [f"{where}: {reason}" for where, reason in skips(output)
            if crag_data.CRAG_DATA_ENV not in reason and not any(mark in reason for mark in BY_DESIGN)]
