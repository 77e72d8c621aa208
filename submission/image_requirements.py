"""The image's pin sets, resolved for the image's Python and platform from PyPI alone, and the CUDA major of the torch
they resolve to against the base image's (submission/preflight.py's requirements check; the module docstring there
says how)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from submission.check_result import Result

REPO_ROOT = Path(__file__).resolve().parents[1]
PYPI = "https://pypi.org/simple"
IMAGE_PYTHON = "3.11"       # Dockerfile: Miniconda3-py311
IMAGE_GLIBC_MINOR = 35      # Dockerfile: ubuntu22.04 ships glibc 2.35
# Minimum Linux driver per CUDA major for minor-version compatibility (NVIDIA CUDA Toolkit release notes,
# "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor Version Compatibility").
MIN_DRIVER = {12: "525.60.13", 13: "580.65.06"}
# The pin sets the image is built from (docs/gpu.md "Submitting"): requirements.txt on the Dockerfile's default
# base, the CUDA 12 fallback on the base its `# image:` line names (docker build --build-arg CUDA_BASE=...).
IMAGE_REQUIREMENTS = ("requirements.txt", "requirements-cu12.txt")


def image_platforms(glibc_minor: int = IMAGE_GLIBC_MINOR) -> list[str]:
    """Every manylinux tag a glibc-2.<minor> x86_64 system installs (pip does not expand --platform itself)."""
    tags = [f"manylinux_2_{m}_x86_64" for m in range(glibc_minor, 16, -1)]
    return tags + ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]


def isolated_pip_env() -> dict[str, str]:
    """The environment with pip's config files and extra package sources switched off (the image sees PyPI)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_NO_INDEX")}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def resolve_requirements(requirements: Path, index_url: str = PYPI, python: str = IMAGE_PYTHON,
                         glibc_minor: int = IMAGE_GLIBC_MINOR, timeout_s: float = 1200) -> dict:
    """pip's install report for `requirements` on the image's platform (dry run, metadata only).

    Raises:
        RuntimeError: the requirements do not resolve; the message ends with pip's own error.
    """
    env = isolated_pip_env()
    with tempfile.TemporaryDirectory() as scratch:
        wheelhouse, report = Path(scratch) / "wheels", Path(scratch) / "report.json"
        wheelhouse.mkdir()
        built: set[str] = set()
        while True:
            cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                   "--disable-pip-version-check", "--report", str(report), "--index-url", index_url,
                   "--find-links", str(wheelhouse), "--python-version", python, "--implementation", "cp",
                   "--only-binary=:all:", "--use-feature=fast-deps", "-r", str(requirements)]
            for platform in image_platforms(glibc_minor):
                cmd += ["--platform", platform]
            run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s)
            if run.returncode == 0:
                return json.loads(report.read_text(encoding="utf-8"))
            missing = re.search(r"No matching distribution found for (\S+)", run.stderr)
            if not missing or missing.group(1) in built:
                raise RuntimeError(_pip_error(run.stderr))
            # No wheel for the image's platform: build one from the sdist (pure-Python pins such as sqlitedict);
            # a requirement with no distribution at all fails here with pip's message.
            spec = missing.group(1)
            build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--index-url",
                                    index_url, "-w", str(wheelhouse), spec],
                                   capture_output=True, text=True, env=env, timeout=timeout_s)
            if build.returncode != 0:
                raise RuntimeError(_pip_error(run.stderr))
            built.add(spec)


def _pip_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("WARNING")]
    return "\n".join(lines[-12:])


def torch_cuda(report: dict) -> tuple[str, tuple[int, int] | None]:
    """(torch version, (CUDA major, minor) its wheel requires) from a pip report; None for a CPU wheel."""
    for item in report.get("install", []):
        meta = item["metadata"]
        if meta["name"].lower() != "torch":
            continue
        for requirement in meta.get("requires_dist", []):
            # torch >= 2.10 requires cuda-toolkit[...]==13.0.3; older wheels nvidia-cuda-runtime-cu12==12.8.90
            found = (re.match(r"cuda-toolkit\b[^=]*==(\d+)\.(\d+)", requirement)
                     or re.match(r"nvidia-cuda-runtime-cu\d+\s*==\s*(\d+)\.(\d+)", requirement))
            if found:
                return meta["version"], (int(found.group(1)), int(found.group(2)))
        return meta["version"], None
    raise ValueError("torch is not among the resolved packages")


def image_cuda(image: str | None) -> tuple[int, int] | None:
    """(major, minor) of an `nvidia/cuda:X.Y...` image reference, None for another image."""
    found = re.match(r"(?:\S+/)?nvidia/cuda:(\d+)\.(\d+)", image or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


def dockerfile_base(dockerfile: Path) -> str | None:
    """The image of the Dockerfile's first FROM; `${NAME}` there is replaced by the default of `ARG NAME=...`."""
    text = dockerfile.read_text(encoding="utf-8")
    found = re.search(r"^FROM\s+(?:--\S+\s+)*(\S+)", text, re.M)  # past --platform=...
    if not found:
        return None
    variable = re.fullmatch(r"\$\{?(\w+)\}?", found.group(1))
    if not variable:
        return found.group(1)
    default = re.search(rf"^ARG\s+{variable.group(1)}=(\S+)", text[:found.start()], re.M)
    return default.group(1).strip("\"'") if default else None


def dockerfile_cuda(dockerfile: Path) -> tuple[int, int] | None:
    """(major, minor) of the Dockerfile's default `nvidia/cuda:X.Y...` base, None for another base."""
    return image_cuda(dockerfile_base(dockerfile))


def requirements_image(requirements: Path) -> str | None:
    """The base image a requirements file names in its `# image: <ref>` header line; None without one."""
    found = re.search(r"^#\s*image:\s*(\S+)", requirements.read_text(encoding="utf-8"), re.M)
    return found.group(1) if found else None


def check_requirements_file(root: Path, name: str, index_url: str = PYPI) -> Result:
    """One pin set: it resolves, and its torch wheel's CUDA major is its base image's."""
    path = root / name
    if not path.exists():
        return Result("requirements", False, f"{name} is missing", f"restore {name} (docs/gpu.md 'Submitting')")
    image = requirements_image(path)
    where = f"the `# image:` line of {name}" if image else "the Dockerfile's ARG CUDA_BASE"
    image = image or dockerfile_base(root / "Dockerfile")
    try:
        report = resolve_requirements(path, index_url)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        return Result("requirements", False, f"{name} does not resolve for Python {IMAGE_PYTHON} on manylinux "
                      f"x86_64:\n{exc}", f"change the pins in {name} until pip's error above is gone (vllm pins "
                      "many of its dependencies)")
    packages = len(report.get("install", []))
    try:
        torch_version, wheel_cuda = torch_cuda(report)
    except ValueError as exc:
        return Result("requirements", False, f"{name}: {packages} packages resolve, but {exc}",
                      "the image needs torch (vllm pins it)")
    if wheel_cuda is None:
        return Result("requirements", False, f"{name}: torch {torch_version} resolves as a CPU wheel",
                      f"let vllm pin torch; do not add a CPU index to {name}")
    cuda, base_cuda = f"{wheel_cuda[0]}.{wheel_cuda[1]}", image_cuda(image)
    driver = MIN_DRIVER.get(wheel_cuda[0], "?")
    if base_cuda is None or base_cuda[0] != wheel_cuda[0]:
        return Result("requirements", False, f"{name}: torch {torch_version} is a CUDA {cuda} wheel but its base "
                      f"image {image} is CUDA {base_cuda and '.'.join(map(str, base_cuda))}",
                      f"set {where} to nvidia/cuda:{cuda}.x-base-ubuntu22.04 (host driver >= {driver})")
    return Result("requirements", True, f"{name}: {packages} packages resolve; torch {torch_version} is a CUDA "
                  f"{cuda} wheel on {image}: host driver >= {driver} (minor-version compatibility)")


def check_requirements(root: Path = REPO_ROOT, index_url: str = PYPI) -> list[Result]:
    """Every pin set of IMAGE_REQUIREMENTS, one result each."""
    return [check_requirements_file(root, name, index_url) for name in IMAGE_REQUIREMENTS]
