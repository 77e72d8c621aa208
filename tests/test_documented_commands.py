"""Every command the documentation shows in a fenced shell block works as written, checked in the environment it
names.

Where: README.md and docs/*.md. A shell block is a fence tagged bash, sh, shell or console; in an untagged (or
`text`) fence, the lines that start with `$ ` are commands (a transcript: the rest is output). A command is a
logical line (`\\` continuations joined), split at `&&`, `||`, `;`, `|`, `&` and parentheses, as the shell splits it.

Each command runs in an environment the block names, on a line of its own before it:

    # environment: cpu        the CPU virtualenv `.venv` (`make setup`; `make eval` and `make test` make it too)
    # environment: gpu-venv   the CUDA virtualenv `.venv-gpu` on a GPU machine (`make setup GPU=1`)
    # environment: image      inside the submission image (`docker run ... crag-submission COMMAND`)
    # environment: gpu        a GPU machine's own shell: docker, git, the image's build

A line names the environment of every command after it in its block, until the next such line. A command no line
names fails. What is checked, by program:

- `python SCRIPT ...`, `python -m MODULE ...`: the script or module exists; each option (`--name`, `-x`) is one its
  `--help` lists; `--profile NAME` is a profile that loads, and each `--set key=value` loads with it
  (`models.config.load_config`). `python -c CODE` runs (cheap: it only loads a config).
- `make TARGET VAR=value ...`: `make -n` accepts the target; each variable is one the Makefile reads; the scripts
  the recipe runs get the options in `ARGS` (checked as above); in `gpu-venv` the recipe uses `.venv-gpu`, in `cpu`
  it does not (a GPU step without `GPU=1` would train the 8B on the CPU).
- `VAR=value command`, `export VAR=value`: the code reads `VAR`.
- `pip install`: its options are pip's, its `-r` files exist.
- `docker run ... IMAGE COMMAND`: COMMAND is an in-image command. Where a built `crag-submission` image and a Docker
  daemon are at hand it is checked in the image (`--help` there); elsewhere in the CPU virtualenv, and
  `test_in_image_commands_are_checked_in_the_image` says so by skipping.
- `git SUBCOMMAND`: git's usage of that subcommand lists each long option.
- anything else (`docker build`, `wc`, `du`, `cd`, `kill`, `for ... done`): a program on this machine or a shell
  word; an unknown program fails.

The checks run `--help`, `make -n` and config loads, never a model: the whole file takes well under two minutes.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from models.config import ConfigError, load_config, parse_override
from tests.test_docs_links import FENCE
from tests.test_documented_overrides import profile_and_sets

REPO = Path(__file__).resolve().parent.parent
ENVIRONMENTS = {
    "cpu": "the CPU virtualenv .venv (make setup)",
    "gpu-venv": "the CUDA virtualenv .venv-gpu on a GPU machine (make setup GPU=1)",
    "image": "inside the submission image",
    "gpu": "a GPU machine's own shell",
}
IMAGE = "crag-submission"
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
TRANSCRIPT_LANGUAGES = {"", "text"}
ENVIRONMENT_LINE = re.compile(r"^\s*#\s*environment:\s*(\S+)")
CONTROL = {"&&", "||", ";", "|", "&", "(", ")", ";;"}
SHELL_WORDS = {"cd", "kill", "done", "do", "for", "then", "fi", "if", "wait", "echo", "true", ".", "source"}
PYTHONS = {"python", "python3", ".venv/bin/python", ".venv-gpu/bin/python"}
# Placeholders the documentation writes for a value the reader chooses: `<interaction id>`, `[--only ROW ...]`.
PLACEHOLDER = re.compile(r"<[A-Za-z][^<>\n]*>")
# docker run's options that take a value as the next word.
DOCKER_VALUE_OPTIONS = {"-v", "--volume", "-w", "--workdir", "-e", "--env", "--gpus", "--name", "-p", "--publish",
                        "--shm-size", "--entrypoint", "-u", "--user", "--network", "--mount"}
# Variables Python or the shell reads, not the package: documented commands may set them.
STANDARD_VARIABLES = {"PYTHONPATH", "PATH", "CUDA_VISIBLE_DEVICES"}
# Tools a GPU machine has and CI may not: checked where installed; absent, the word is the program's name alone.
EXTERNAL_TOOLS = {"git-lfs", "nvidia-smi"}
# Where the code reads environment variables that documented commands set.
CODE_PLACES = ("models", "evaluation", "scripts", "training", "mock_api", "local_evaluation.py", "Makefile",
               "Dockerfile")


@dataclasses.dataclass(frozen=True)
class Command:
    where: str                  # file:line
    environment: str | None     # a key of ENVIRONMENTS, or None where the block names none
    text: str                   # the command as written (one simple command)

    def __str__(self):
        return f"{self.where} [{self.environment}] {self.text}"


def _fences(text: str):
    """(first line number, language, lines) of each fenced block of a Markdown text."""
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        marker = opening.group(1)
        language = lines[index].strip()[len(marker):].strip().split(" ")[0].lower()
        body, start = [], index + 1
        index += 1
        while index < len(lines):
            closing = FENCE.match(lines[index])
            if closing and closing.group(1)[0] == marker[0] and len(closing.group(1)) >= len(marker) \
                    and not lines[index].strip()[len(closing.group(1)):].strip():
                break
            body.append(lines[index])
            index += 1
        index += 1
        yield start + 1, language, [line.strip() for line in body]


def _split(line: str) -> list[list[str]]:
    """The simple commands of one logical line, each as the words the program receives (quotes removed)."""
    lexer = shlex.shlex(PLACEHOLDER.sub("PLACEHOLDER", line), posix=True, punctuation_chars="();&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands, current = [], []
    for word in lexer:
        if word in CONTROL or (word and set(word) <= set("();&|")):
            if current:
                commands.append(current)
            current = []
        else:
            current.append(word)
    if current:
        commands.append(current)
    return commands


def commands_of(path: Path, root: Path = REPO) -> list[Command]:
    """Every command of the shell blocks (and transcripts) of the Markdown file `path`."""
    found = []
    relative = path.relative_to(root)
    for first, language, body in _fences(path.read_text(encoding="utf-8")):
        transcript = language in TRANSCRIPT_LANGUAGES or language == "console"
        if language not in SHELL_LANGUAGES and language not in TRANSCRIPT_LANGUAGES:
            continue
        if transcript and not any(line.startswith("$ ") for line in body):
            continue  # a diagram or an output, no command
        environment, index = None, 0
        while index < len(body):
            start, line = index, body[index]
            named = ENVIRONMENT_LINE.match(line)
            if named:
                environment = named.group(1)
                index += 1
                continue
            if transcript:
                if not line.startswith("$ "):
                    index += 1
                    continue
                line = line[2:]
            while line.rstrip().endswith("\\") and index + 1 < len(body):
                index += 1
                line = line.rstrip()[:-1] + " " + body[index]
            index += 1
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            for words in _split(line):
                found.append(Command(f"{relative}:{first + start}", environment, shlex.join(words)))
    return found


def documents(root: Path = REPO) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


# --- what a program accepts ---

def _python_env() -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


@functools.cache
def help_text(*program: str) -> str:
    """The `--help` output of `program` (a list of words), run in this (the CPU) virtualenv from the repository root;
    an error names the program and its output."""
    result = subprocess.run([*program, "--help"], cwd=REPO, env=_python_env(), capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        raise AssertionError(f"`{shlex.join(program)} --help` failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return result.stdout + result.stderr


def _lists_option(help_output: str, option: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", help_output) is not None


@functools.cache
def _code_text() -> str:
    parts = []
    for place in CODE_PLACES:
        path = REPO / place
        files = [path] if path.is_file() else sorted(path.rglob("*.py")) + sorted(path.rglob("*.yaml"))
        parts += [file.read_text(encoding="utf-8", errors="replace") for file in files]
    return "\n".join(parts)


def _reads_variable(name: str) -> bool:
    return name in STANDARD_VARIABLES or re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", _code_text()) is not None


def _options(words: list[str]) -> list[str]:
    """The options among `words`: `--name` (of `--name=value` too) and `-x`; `[`/`]` of optional parts dropped."""
    found = []
    for word in words:
        word = word.strip("[]")
        if re.fullmatch(r"--[A-Za-z][\w-]*(=.*)?", word, re.S):
            found.append(word.split("=", 1)[0])
        elif re.fullmatch(r"-[A-Za-z]", word):
            found.append(word)
    return found


def _check_profile_and_sets(words: list[str]) -> list[str]:
    problems = []
    profile, sets = profile_and_sets(words)
    if profile and ("/" in profile or profile.endswith(".yaml")) and not (REPO / profile).exists():
        profile = None  # a profile file an earlier command of the block writes (under /tmp): loaded there
    try:
        load_config(profile or "cpu", dict(parse_override(s) for s in sets if not s.startswith("PLACEHOLDER")))
    except (ConfigError, FileNotFoundError, ValueError) as error:
        problems.append(f"--profile {profile} / --set {sets}: {error}")
    return problems


def check_python(words: list[str], environment: str) -> list[str]:
    """`python ...` (words[0] the interpreter)."""
    rest = words[1:]
    if rest[:2] == ["-m", "venv"]:
        return []
    if rest[:1] == ["-c"]:
        result = subprocess.run([sys.executable, "-c", rest[1]], cwd=REPO, env=_python_env(), capture_output=True,
                                text=True, timeout=120)
        return [] if result.returncode == 0 else [f"python -c failed: {result.stderr[-1500:]}"]
    if rest[:1] == ["-m"]:
        module, arguments = rest[1], rest[2:]
        if module.startswith("scripts.") and not (REPO / "scripts" / f"{module.removeprefix('scripts.')}.py").exists():
            return [f"no such module: {module}"]
        program = (sys.executable, "-m", module)
    else:
        script, arguments = rest[0], rest[1:]
        if not (REPO / script).is_file():
            return [f"no such script: {script}"]
        program = (sys.executable, script)
    try:
        usage = help_text(*program)
        subcommands = re.search(r"\{([\w,-]+)\}", usage)
        if arguments and subcommands and arguments[0] in subcommands.group(1).split(","):
            program, arguments = (*program, arguments[0]), arguments[1:]  # a subcommand: its own options
            usage = help_text(*program)
    except AssertionError as error:
        return [str(error)]
    passed_on = []
    if "--" in arguments:  # what follows `--` is another program's: `scripts.image run -- OPTIONS` is local_evaluation's
        arguments, passed_on = arguments[:arguments.index("--")], arguments[arguments.index("--") + 1:]
    problems = [f"{option}: not an option of {shlex.join(words[:2 if rest[:1] != ['-m'] else 3])} (its --help)"
                for option in _options(arguments) if not _lists_option(usage, option)]
    if passed_on:
        problems += check_python([words[0], "local_evaluation.py", *passed_on], environment)
    if "--profile" in arguments or any(a == "--set" or a.startswith("--set=") for a in arguments):
        problems += _check_profile_and_sets(arguments)
    return problems


@functools.cache
def _makefile_variables() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"\$\((\w+)\)", text)) | set(re.findall(r"^(\w+)\s*[?:]?=", text, re.M))


def check_make(words: list[str], environment: str) -> list[str]:
    problems, targets, variables = [], [], {}
    for word in words[1:]:
        if re.fullmatch(r"\w+=.*", word, re.S):
            name, value = word.split("=", 1)
            variables[name] = value
        elif not word.startswith("-"):
            targets.append(word)
    for name in variables:
        if name not in _makefile_variables():
            problems.append(f"{name}=: no variable of that name in the Makefile")
    result = subprocess.run(["make", "-n", *words[1:]], cwd=REPO, capture_output=True, text=True, timeout=60,
                            env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL")})
    if result.returncode != 0:
        return problems + [f"make -n failed: {result.stderr.strip()[-800:]}"]
    recipe = result.stdout
    if environment == "gpu-venv" and ".venv-gpu/bin/python" not in recipe and any(t != "clean" for t in targets):
        problems.append("runs in the CPU virtualenv, not .venv-gpu: add GPU=1")
    if environment == "cpu" and ".venv-gpu" in recipe:
        problems.append("runs in .venv-gpu, but the block names the CPU environment")
    for line in recipe.split("\n"):
        words_of_line = shlex.split(line) if re.search(r"/bin/python (scripts/\w+\.py|local_evaluation\.py)", line) else []
        if words_of_line and "ARGS" in variables:
            python = next(i for i, w in enumerate(words_of_line) if w.endswith("/bin/python"))
            problems += check_python(["python", *words_of_line[python + 1:]], environment)
    return problems


def check_pip(words: list[str], environment: str) -> list[str]:
    usage = help_text(sys.executable, "-m", "pip", "install")
    problems = [f"{option}: not an option of pip install" for option in _options(words[2:])
                if not _lists_option(usage, option)]
    for index, word in enumerate(words):
        if word == "-r" and not (REPO / words[index + 1]).is_file():
            problems.append(f"-r {words[index + 1]}: no such file")
    return problems


def check_git(words: list[str], environment: str) -> list[str]:
    if words[1] == "lfs":  # git-lfs, a separate program; CI has none, a submitter installs it (docs/gpu.md)
        if shutil.which("git-lfs") is None:
            return []
        usage = subprocess.run(["git", "lfs", words[2], "--help"], capture_output=True, text=True).stdout
        return [f"{option}: not an option of git lfs {words[2]}" for option in _options(words[3:])
                if not _lists_option(usage, option)]
    result = subprocess.run(["git", words[1], "-h"], cwd=REPO, capture_output=True, text=True, timeout=30)
    usage = result.stdout + result.stderr
    if "usage:" not in usage:
        return [f"git {words[1]}: not a git subcommand"]
    return [f"{option}: not an option of git {words[1]}" for option in _options(words[2:])
            if option.startswith("--") and not _lists_option(usage, option)]


@functools.cache
def image_at_hand() -> bool:
    if not shutil.which("docker"):
        return False
    return subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True, timeout=60).returncode == 0


def check_in_image(words: list[str]) -> list[str]:
    """An in-image command: in the image where it is at hand, else in the CPU virtualenv."""
    if image_at_hand() and words[0] in PYTHONS and words[1:2] != ["-c"]:
        script = words[1:3] if words[1] == "-m" else words[1:2]
        result = subprocess.run(["docker", "run", "--rm", IMAGE, "python", *script, "--help"], capture_output=True,
                                text=True, timeout=300)
        if result.returncode != 0:
            return [f"in the image, {shlex.join(script)} --help failed: {result.stderr[-800:]}"]
        usage = result.stdout
        arguments = words[1 + len(script):]
        return [f"{option}: not an option of {shlex.join(script)} in the image" for option in _options(arguments)
                if not _lists_option(usage, option)]
    return check_words(words, "image")


def check_docker(words: list[str], environment: str) -> list[str]:
    if words[1] == "build":
        return [] if (REPO / "Dockerfile").is_file() else ["docker build: no Dockerfile"]
    if words[1] != "run":
        return []
    index = 2
    while index < len(words) and words[index].startswith("-"):
        index += 2 if words[index] in DOCKER_VALUE_OPTIONS else 1
    if index >= len(words):
        return ["docker run: no image named"]
    inner = words[index + 1:]
    return check_in_image(inner) if inner else []


def check_words(words: list[str], environment: str) -> list[str]:
    """The problems of one simple command (its words) in `environment`."""
    problems = []
    while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0], re.S):  # VAR=value before the program
        name = words[0].split("=", 1)[0]
        if not _reads_variable(name):
            problems.append(f"{name}: no code reads this variable")
        words = words[1:]
    if not words:
        return problems
    program = words[0]
    if program == "export":
        return problems + [f"{w.split('=')[0]}: no code reads this variable" for w in words[1:]
                           if not _reads_variable(w.split("=")[0])]
    if program in PYTHONS:
        if program == ".venv-gpu/bin/python" and environment != "gpu-venv":
            problems.append(".venv-gpu's python outside the gpu-venv environment")
        return problems + check_python(words, environment)
    checks = {"make": check_make, "pip": check_pip, "git": check_git, "docker": check_docker}
    if program in checks:
        return problems + checks[program](words, environment)
    if program in SHELL_WORDS or program.startswith("PLACEHOLDER"):
        return problems
    installed = Path(sys.executable).parent / program  # a console script of this virtualenv (hf, ...)
    if installed.is_file():
        subcommand = [words[1]] if len(words) > 1 and not words[1].startswith("-") else []
        try:
            usage = help_text(str(installed), *subcommand)
        except AssertionError as error:
            return problems + [str(error)]
        return problems + [f"{option}: not an option of {shlex.join(words[:1 + len(subcommand)])}"
                           for option in _options(words[1:]) if not _lists_option(usage, option)]
    if program in EXTERNAL_TOOLS:
        return problems
    if shutil.which(program) is None:
        problems.append(f"{program}: no such program")
    return problems


def check(command: Command) -> list[str]:
    if command.environment is None:
        return ["names no environment: put a `# environment: NAME` line above it "
                f"({', '.join(ENVIRONMENTS)})"]
    if command.environment not in ENVIRONMENTS:
        return [f"unknown environment {command.environment!r}; one of {', '.join(ENVIRONMENTS)}"]
    words = shlex.split(command.text)
    if command.environment == "image":
        return check_in_image(words)
    return check_words(words, command.environment)


COMMANDS = [command for path in documents() for command in commands_of(path)]


@pytest.fixture(scope="module", autouse=True)
def _help_in_parallel():
    """Fill the --help cache two at a time (the scripts' imports dominate the file's time)."""
    programs = set()
    for command in COMMANDS:
        words = [w for w in shlex.split(command.text)]
        while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0], re.S):
            words = words[1:]
        if len(words) > 1 and words[0] in PYTHONS and words[1] not in ("-c", "-m") and (REPO / words[1]).is_file():
            programs.add((sys.executable, words[1]))
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda program: _quietly(help_text, *program), sorted(programs)))


def _quietly(function, *arguments):
    try:
        function(*arguments)
    except AssertionError:
        pass  # reported by the command's own test


def test_the_scan_sees_the_documented_commands():
    texts = [command.text for command in COMMANDS]
    assert len(COMMANDS) >= 80
    assert any(text.startswith("make eval") for text in texts)
    assert any("scripts/gpu_smoke.py" in text for text in texts)
    assert {command.environment for command in COMMANDS} >= {"cpu", "gpu-venv", "image", "gpu"}


@pytest.mark.parametrize("command", COMMANDS, ids=[f"{c.where}:{c.text[:60]}" for c in COMMANDS])
def test_each_documented_command_works_in_its_environment(command):
    assert check(command) == [], str(command)


def test_in_image_commands_are_checked_in_the_image():
    in_image = [c for c in COMMANDS if c.environment == "image" or c.text.startswith("docker run")]
    assert in_image
    if not image_at_hand():
        pytest.skip(f"no `{IMAGE}` image and Docker daemon here: the {len(in_image)} in-image commands were checked "
                    "by --help in the CPU virtualenv instead")
    for command in in_image:
        assert check(command) == [], str(command)


# --- planted failures: each kind of defect is reported ---

def _problems(tmp_path, block: str) -> list[str]:
    (tmp_path / "docs").mkdir(exist_ok=True)
    doc = tmp_path / "docs" / "guide.md"
    doc.write_text("Intro.\n\n```bash\n" + block + "\n```\n", encoding="utf-8")
    return [problem for command in commands_of(doc, tmp_path) for problem in check(command)]


def test_a_planted_wrong_option_is_reported(tmp_path):
    assert _problems(tmp_path, "# environment: cpu\npython local_evaluation.py --task 2") == []
    problems = _problems(tmp_path, "# environment: cpu\npython local_evaluation.py --task 2 --no-such-option")
    assert problems == ["--no-such-option: not an option of python local_evaluation.py (its --help)"]


def test_options_after_a_double_dash_are_checked_against_local_evaluation(tmp_path):
    assert _problems(tmp_path, "# environment: cpu\npython3 -m scripts.image run -- --set pipeline.batch_size=8") == []
    assert _problems(tmp_path, "# environment: cpu\npython3 -m scripts.image run -- --no-such-option") == \
        ["--no-such-option: not an option of python3 local_evaluation.py (its --help)"]


def test_a_planted_missing_script_is_reported(tmp_path):
    assert _problems(tmp_path, "# environment: cpu\npython scripts/no_such_script.py --out x") == \
        ["no such script: scripts/no_such_script.py"]


def test_a_command_that_names_no_environment_is_reported(tmp_path):
    problems = _problems(tmp_path, "python local_evaluation.py --task 2")
    assert len(problems) == 1 and problems[0].startswith("names no environment")


def test_a_planted_missing_make_target_variable_profile_and_key_are_reported(tmp_path):
    assert any("make -n failed" in p for p in _problems(tmp_path, "# environment: cpu\nmake no-such-target"))
    assert _problems(tmp_path, "# environment: cpu\nmake eval TAKS=2") == \
        ["TAKS=: no variable of that name in the Makefile"]
    assert any("no-such-profile" in p for p in
               _problems(tmp_path, "# environment: cpu\npython local_evaluation.py --profile no-such-profile"))
    assert any("llm.no_such_key" in p for p in
               _problems(tmp_path, "# environment: cpu\npython local_evaluation.py --set llm.no_such_key=1"))


def test_a_gpu_step_without_gpu_1_and_an_unread_variable_are_reported(tmp_path):
    block = "# environment: gpu-venv\nmake adapters DATA=x BASE=y"
    assert _problems(tmp_path, block) == ["runs in the CPU virtualenv, not .venv-gpu: add GPU=1"]
    assert _problems(tmp_path, "# environment: gpu-venv\nmake adapters GPU=1 DATA=x BASE=y") == []
    assert _problems(tmp_path, "# environment: cpu\nCRAG_NO_SUCH_SETTING=1 python local_evaluation.py") == \
        ["CRAG_NO_SUCH_SETTING: no code reads this variable"]


def test_make_args_reach_the_script_they_are_passed_to(tmp_path):
    block = "# environment: gpu-venv\nmake adapters GPU=1 DATA=x BASE=y ARGS=\"--qlora on --no-such-option\""
    assert _problems(tmp_path, block) == \
        ["--no-such-option: not an option of python scripts/make_adapters.py (its --help)"]


def test_commands_are_split_as_the_shell_splits_them(tmp_path):
    doc = tmp_path / "g.md"
    doc.write_text("```bash\n# environment: cpu\nexport A=1 && python x.py --o \\\n    <a file> # note\n"
                   "# environment: gpu\n(cd /tmp && git tag v1)\n```\n\n```\n$ python y.py\noutput 1\n```\n",
                   encoding="utf-8")
    found = commands_of(doc, tmp_path)
    assert [(c.where, c.environment, c.text) for c in found] == [
        ("g.md:3", "cpu", "export A=1"), ("g.md:3", "cpu", "python x.py --o PLACEHOLDER"),
        ("g.md:6", "gpu", "cd /tmp"), ("g.md:6", "gpu", "git tag v1"), ("g.md:10", None, "python y.py")]
