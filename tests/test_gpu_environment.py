"""The Makefile's CUDA environment (`GPU=1`): what it installs, that its pins are the CPU environment's and the
image's, and that the stamp does not hide a changed torch. Read through `make -n` (nothing is installed)."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^([A-Za-z0-9_.\-\[\]]+)==([^\s#;]+)", re.M)

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def dry_run(*arguments: str) -> str:
    """What `make -n ARGUMENTS` would run, from the repository root."""
    done = subprocess.run(["make", "-n", "--no-print-directory", *arguments], cwd=REPO, capture_output=True,
                          text=True, check=True)
    return done.stdout


def pins(name: str) -> dict[str, str]:
    text = (REPO / name).read_text(encoding="utf-8")
    return {package.lower(): version for package, version in PIN.findall(text)}


def installed_torch(commands: str) -> str:
    (torch,) = re.findall(r"pip install -q (?:--index-url \S+ )?\s*'(torch[^']*)'", commands)
    return torch


def test_gpu_1_builds_its_own_environment_with_a_cuda_torch_and_the_gpu_requirements(tmp_path):
    commands = dry_run("setup", "GPU=1", f"VENV={tmp_path / 'gpu'}")
    assert f"{tmp_path / 'gpu'}/bin/pip install -q -r requirements-gpu-train.txt" in commands
    assert installed_torch(commands) == "torch==2.13.0"  # PyPI's Linux wheel: the CUDA build
    assert "--index-url" not in commands.split("requirements-gpu-train.txt")[0]  # pip's own index
    assert "torch.version.cuda" in commands  # a CPU wheel from a wrong index fails at set-up, not in training


def test_the_gpu_steps_run_in_the_cuda_environment_and_the_default_in_the_cpu_one():
    assert ".venv-gpu/bin/python scripts/make_adapters.py --data D --base B" in dry_run(
        "adapters", "GPU=1", "DATA=D", "BASE=B")
    assert ".venv-gpu/bin/python scripts/gpu_smoke.py --no-vllm --tiny" in dry_run("gpu-smoke")
    cpu = dry_run("setup", "--always-make")  # what a set-up from scratch runs, whatever .venv's stamp says
    assert ".venv/bin/pip install -q -r requirements-cpu.txt" in cpu and installed_torch(cpu) == "torch==2.13.0+cpu"
    for name in ("requirements-gpu-train.txt", "requirements-cpu.txt", "scripts/make_adapters.py",
                 "scripts/gpu_smoke.py"):
        assert (REPO / name).is_file(), name


def test_a_torch_other_than_the_stamps_remakes_the_environment_and_replaces_torch(tmp_path):
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".installed").write_text("torch==2.13.0+cpu https://download.pytorch.org/whl/cpu\n")
    assert "pip install" not in dry_run("setup", f"VENV={venv}")  # the same torch: nothing to do

    changed = dry_run("setup", f"VENV={venv}", "TORCH_INDEX=https://mirror.example/whl/cpu")
    assert "pip uninstall -q -y torch" in changed
    assert "replacing 'torch==2.13.0+cpu https://download.pytorch.org/whl/cpu'" in changed
    assert installed_torch(changed) == "torch==2.13.0+cpu"
    assert f"echo 'torch==2.13.0+cpu https://mirror.example/whl/cpu' > {venv}/.installed" in changed


def test_the_gpu_pins_are_the_cpu_environments_and_the_images():
    gpu, cpu, image = pins("requirements-gpu-train.txt"), pins("requirements-cpu.txt"), pins("requirements.txt")
    assert "torch" not in gpu  # the Makefile's TORCH installs it, so TORCH=torch==2.10.0 stays installed
    for package, version in gpu.items():
        for other_name, other in (("requirements-cpu.txt", cpu), ("requirements.txt", image)):
            assert other.get(package, version) == version, f"{package}: {version} here, {other[package]} in {other_name}"
    assert gpu["bitsandbytes"] == image["bitsandbytes"] and gpu["peft"] == image["peft"]
    # the torch of both environments is the one vllm pins in the image (requirements.txt's header)
    assert installed_torch(dry_run("setup", "GPU=1", "--always-make")) == f"torch=={cpu['torch']}"
    assert f"torch=={cpu['torch']}" in (REPO / "requirements.txt").read_text(encoding="utf-8")
    # the CUDA 12 choice the Makefile names is the torch the fallback image's vllm pins
    (fallback,) = set(re.findall(r"torch \(?==(\d+\.\d+\.\d+)", (REPO / "requirements-cu12.txt").read_text()))
    assert f"TORCH=torch=={fallback}" in (REPO / "Makefile").read_text(encoding="utf-8")
