"""Every `--set KEY=VALUE` the documentation shows works as written: each documented command line is split as the
shell splits it (`shlex`, quotes removed, `# comments` dropped), and each `--set` argument the program would receive
goes through `models.config.parse_override` and `load_config` with the command's `--profile` (the default `cpu`
without one; a profile file's own comments use that profile).

Where: README.md, docs/*.md (fenced commands, with their `\\` continuation lines, and inline code spans) and the
comments of models/profiles/*.yaml. `--set key=value` itself (the form, not a key) is skipped.
"""
import re
import shlex
from pathlib import Path

import pytest

from models.config import load_config, parse_override
from tests.test_docs_links import INLINE_CODE, outside_fences

REPO = Path(__file__).resolve().parent.parent
SET = re.compile(r"--set[ =](?!s)")
PLACEHOLDER_KEYS = {"key", "KEY"}


def _logical_line(lines: list[str], index: int) -> str:
    """The line at `index` with the lines it continues (`\\` at the end) joined on both sides."""
    start = index
    while start > 0 and lines[start - 1].rstrip().endswith("\\"):
        start -= 1
    end = index
    while lines[end].rstrip().endswith("\\") and end + 1 < len(lines):
        end += 1
    return " ".join(line.rstrip().removesuffix("\\") for line in lines[start:end + 1])


def documented_commands(path: Path) -> list[tuple[int, str]]:
    """(line, command text) of each place of `path` that shows a `--set`."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    found = []
    if path.suffix == ".md":
        prose = outside_fences(text)
        for index, line in enumerate(lines):
            if not SET.search(line):
                continue
            if prose[index]:  # outside fenced code: the inline code spans that hold --set
                found += [(index + 1, span.group(0).strip("`")) for span in INLINE_CODE.finditer(line)
                          if SET.search(span.group(0))]
            else:
                found.append((index + 1, _logical_line(lines, index)))
    else:  # a profile: its comments
        for index, line in enumerate(lines):
            comment = line.partition("#")[2]
            if SET.search(comment):
                found.append((index + 1, comment[comment.index("--set"):]))
    return found


def overrides_of(command: str) -> tuple[str | None, list[str]]:
    """(the --profile value or None, the --set arguments) the program receives from `command`."""
    return profile_and_sets(shlex.split(command, comments=True))


def profile_and_sets(args: list[str]) -> tuple[str | None, list[str]]:
    """(the --profile value or None, the --set arguments) among a command's arguments."""
    profile, sets = None, []
    for index, arg in enumerate(args):
        if arg == "--profile" and index + 1 < len(args):
            profile = args[index + 1]
        elif arg == "--set" and index + 1 < len(args):
            sets.append(args[index + 1])
        elif arg.startswith("--set="):
            sets.append(arg.removeprefix("--set="))
    return profile, sets


def places() -> list[tuple[Path, int, str]]:
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "models" / "profiles").glob("*.yaml"))]
    return [(path, line, command) for path in files for line, command in documented_commands(path)]


PLACES = places()


def test_the_scan_sees_the_documented_overrides():
    commands = [command for _, _, command in PLACES]
    assert any("kg.api_prompt" in command for command in commands)
    assert len([s for command in commands for s in overrides_of(command)[1]]) >= 7


@pytest.mark.parametrize("path,line,command", PLACES, ids=[f"{p.relative_to(REPO)}:{n}" for p, n, _ in PLACES])
def test_each_documented_set_loads(path, line, command):
    profile, sets = overrides_of(command)
    if path.suffix == ".yaml":
        profile = profile or path.stem
    for argument in sets:
        key, value = parse_override(argument)
        if key in PLACEHOLDER_KEYS:
            continue
        config = load_config(profile or "cpu", {key: value})  # raises ConfigError on an unknown key or type
        section, _, name = key.partition(".")
        if "." not in name:  # a two-part key: its value is what was asked
            assert getattr(getattr(config, section), name) == value or value is None, (argument, config)


# --- the parts, on small inputs ---

def test_the_shell_form_of_an_empty_string_is_the_empty_string():
    (argument,) = overrides_of('python local_evaluation.py --set kg.api_prompt=""')[1]
    assert argument == "kg.api_prompt="
    assert parse_override(argument) == ("kg.api_prompt", "")
    assert load_config("cpu", dict([parse_override(argument)])).kg.api_prompt == ""
    assert parse_override("kg.api_adapter=null") == ("kg.api_adapter", None)
    assert parse_override('kg.api_prompt=""') == ("kg.api_prompt", "")  # --set 'kg.api_prompt=""'


def test_commands_are_read_as_the_shell_reads_them(tmp_path):
    doc = tmp_path / "guide.md"
    doc.write_text("Run `tool --set a.b=1` or `--set key=value`.\n\n```bash\npython x.py --profile g4dn \\\n"
                   "    --set 'c.d=[1, 2]' --set=e.f=\"two words\"   # a comment --set g.h=3\n```\n", encoding="utf-8")
    commands = documented_commands(doc)
    assert [line for line, _ in commands] == [1, 1, 5]
    assert overrides_of(commands[0][1]) == (None, ["a.b=1"])
    assert overrides_of(commands[2][1]) == ("g4dn", ["c.d=[1, 2]", "e.f=two words"])
    profile = tmp_path / "p.yaml"
    profile.write_text("llm:\n  x: 1  # try --set llm.x=2\n", encoding="utf-8")
    assert documented_commands(profile) == [(2, "--set llm.x=2")]
