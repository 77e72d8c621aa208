"""Runs the test suite on a plain clone: a copy of this working tree with nothing beside it and no `CRAG_DATA`.

    python scripts/check_plain_clone.py                    # the default suite, in this virtualenv
    python scripts/check_plain_clone.py --fresh            # `make test` in the copy: its own .venv (slow, 3.6 GB)
    python scripts/check_plain_clone.py -- tests/test_trim.py -x   # other pytest arguments

The copy lies in a new temporary folder (or `--into DIR`, which must be empty), as a user's clone does: no CRAG
files, no folder beside it, `CI` unset. Passes when the suite passes and every skip is for CRAG's files (its
reason names `CRAG_DATA`) or for a CUDA GPU this machine does not have; prints the skips and, on failure, the
tail of pytest's output. The library is `submission/plain_clone.py`.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from submission.plain_clone import bad_skips, copy_tree, run_pytest, skips, user_environment


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--into", type=Path, help="an empty folder for the copy (default: a new temporary one)")
    parser.add_argument("--fresh", action="store_true",
                        help="run `make test` in the copy, which sets up its own .venv as a newcomer's does")
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments (default: the default suite)")
    args = parser.parse_args(argv)
    into = args.into or Path(tempfile.mkdtemp(prefix="plain-clone-"))
    copy = copy_tree(into)
    print(f"plain clone: {copy} (nothing beside it; CRAG_DATA and CI unset)", flush=True)
    if args.fresh:
        pytest_args = " ".join(["-rfEs", *args.pytest_args])
        done = subprocess.run(["make", "test", f"ARGS={pytest_args}"], cwd=copy, env=user_environment(copy),
                              capture_output=True, text=True)
    else:
        done = run_pytest(copy, ["-q", *args.pytest_args])
    output = done.stdout + done.stderr
    for where, reason in skips(output):
        print(f"skip  {where}: {reason}")
    bad = bad_skips(output)
    for line in bad:
        print(f"BAD SKIP (a plain clone should not lack this)  {line}")
    summary = [line for line in output.splitlines() if " passed" in line or " failed" in line]
    print(summary[-1] if summary else output[-3000:])
    if done.returncode != 0:
        print(output[-6000:])
        print(f"FAIL: pytest exited {done.returncode} on the plain clone")
        return 1
    if bad:
        print(f"FAIL: {len(bad)} skips that are neither for CRAG's files nor for a GPU")
        return 1
    print("PASS: the suite passes on a plain clone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
