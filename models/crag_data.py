"""Where CRAG's own files are: one setting, `$CRAG_DATA`, default `data/crag/` inside the repository.

CRAG's data and the grader's tokenizer are not shipped (licensing). A user downloads them once from CRAG's own
release (README "Papers and data") into one folder, looked up by name:
- `dev_data.jsonl.bz2`: the starter kit's `example_data/dev_data.jsonl.bz2`, 10 real dev questions with 5 real
  pages each (the "real CRAG dev questions" set);
- `tokenizer/`: the starter kit's `tokenizer/` folder, the grader's Llama 2 tokenizer (the exact 75-token trim).

`data/crag/` is git-ignored, so files put there are never committed. Text that names a CRAG file for people
(a command in the docs, a default in `--help`) spells it `$CRAG_DATA/<name>`; `resolve` turns such text into the
path. A missing file is a `CragFileMissing` whose message says which file, where it was looked for, and how to
get it.
"""
from __future__ import annotations

import os
from pathlib import Path

from models.paths import REPO_ROOT

CRAG_DATA_ENV = "CRAG_DATA"
DEFAULT_CRAG_DATA = "data/crag"
DEV_FILE = "dev_data.jsonl.bz2"
TOKENIZER = "tokenizer"
# Every name a user may keep in the folder: the two above, and CRAG's full release files for the bigger runs
# (README "Evaluating on real CRAG data").
FILES = (DEV_FILE, TOKENIZER, "crag_task_1_and_2_dev_v4.jsonl.bz2", "crag_task_3_dev_v4.tar.bz2.part*", "cragkg")
# What a person types, and what the docs and `--help` show: the shell expands it where CRAG_DATA is exported.
PREFIX = f"${CRAG_DATA_ENV}/"
HOW_TO_GET = ("copy it from CRAG's starter kit into data/crag/ (README.md, 'Evaluating on real CRAG data'), "
              f"or set {CRAG_DATA_ENV} to the folder that holds it")


class CragFileMissing(FileNotFoundError):
    """One of CRAG's files is not where `$CRAG_DATA` says."""


def crag_data_dir() -> Path:
    """The folder `$CRAG_DATA` names (relative to the current directory), else the repository's `data/crag/`."""
    configured = os.environ.get(CRAG_DATA_ENV, "").strip()
    if configured:
        return Path(configured).expanduser().absolute()
    return REPO_ROOT / DEFAULT_CRAG_DATA


def crag_path(name: str) -> Path:
    """Where the CRAG file `name` is looked for (it may not exist)."""
    return crag_data_dir() / name


def shown(name: str) -> str:
    """`$CRAG_DATA/<name>`: the file as commands in the docs and `--help` name it."""
    return PREFIX + name


def require(name: str) -> Path:
    """The CRAG file `name`, or a `CragFileMissing` saying what, where, and how to get it."""
    path = crag_path(name)
    if not path.exists():
        raise CragFileMissing(missing_message(name, path))
    return path


def missing_message(name: str, path: Path | None = None) -> str:
    """Which CRAG file is missing, where it was looked for (`path`, default where the setting says), how to get it."""
    path = crag_path(name) if path is None else path
    where = os.environ.get(CRAG_DATA_ENV, "").strip()
    setting = f"{CRAG_DATA_ENV}={where}" if where else f"{CRAG_DATA_ENV} unset, so {DEFAULT_CRAG_DATA}/"
    return f"CRAG's {name} is not at {path} ({setting}): {HOW_TO_GET}"


def crag_name(text: str | os.PathLike) -> str | None:
    """`<name>` of a path written `$CRAG_DATA/<name>` or `${CRAG_DATA}/<name>` (before any shell expanded it);
    None for any other path."""
    text = os.fspath(text)
    for prefix in (PREFIX, "${" + CRAG_DATA_ENV + "}/"):
        if text.startswith(prefix) and len(text) > len(prefix):
            return text[len(prefix):]
    return None


def resolve(text: str | os.PathLike) -> Path:
    """A path as a person wrote it: `$CRAG_DATA/<name>` is looked up in the setting's folder (it must exist:
    `CragFileMissing` otherwise); anything else is returned as given. For defaults and suites written as text."""
    name = crag_name(text)
    return require(name) if name is not None else Path(os.fspath(text))


def unexpanded_hint(path: str | os.PathLike) -> str:
    """Why a data path that does not exist may be wrong: `--data "$CRAG_DATA/dev_data.jsonl.bz2"` typed in a shell
    where CRAG_DATA is not exported becomes `/dev_data.jsonl.bz2`. Empty when that is not the case."""
    text = os.fspath(path)
    if os.environ.get(CRAG_DATA_ENV, "").strip():
        return ""
    parent, name = os.path.split(text)
    if parent in ("", "/") and name in (DEV_FILE, TOKENIZER):
        return (f"; {CRAG_DATA_ENV} is not set in this shell, so \"${CRAG_DATA_ENV}/{name}\" became {text!r}: "
                f"export {CRAG_DATA_ENV}=data/crag (or your folder) first")
    return ""


# The two files by the text people see; `resolve` (and every loader that takes a data or tokenizer path) reads them.
DEV_DATA = shown(DEV_FILE)
GRADER_TOKENIZER = shown(TOKENIZER)
