"""Reading CRAG data files of every shape into one normalised example dict, and batching them.

Shapes accepted by `load_examples`:
- `.jsonl`, `.jsonl.bz2` (Tasks 1/2; also `.jsonl.gz`);
- a Task-3 tar (`.tar`, `.tar.bz2`, `.tar.gz`) of JSONL shards, read as a stream (the archive is several GB
  and never unpacked); its parts (`crag_task_3_dev_v4.tar.bz2.part1..4`) are joined in order, given as a
  list or a glob, exactly like `cat part* > file` but without the copy;
- a directory of shards (`*.jsonl`, `*.jsonl.bz2`), in natural order (`_2` before `_10`).

Both schemas normalise to the same fields: `alt_ans` (V3+, a list) or the old `alternative_answers` (a JSON
string such as "[]") become `alt_ans: list[str]`; a missing `popularity` (before v5) becomes "". A gold
answer of "nan" (one real dev row) is kept verbatim, as the official scorer compares against it.

A line that is not UTF-8 JSON, not an object, or has no query is skipped with a warning naming file and line
and counted in `LoadStats`; a bad line never stops a run. Examples stream one at a time, so a Task-3 file
(50 HTML pages per question) never sits in memory whole.
"""
from __future__ import annotations

import ast
import bz2
import glob
import gzip
import io
import json
import logging
import os
import re
import tarfile
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import IO, Any, Iterable, Iterator, Sequence

from models import crag_data
from models.paths import resolve_repo_path

log = logging.getLogger(__name__)

DEFAULT_DATA_PATH = "data/sample/crag_sample.jsonl"
GRADER_KEYS = ("interaction_id", "query", "search_results", "query_time")  # all the model ever sees
GOLD_KEYS = ("answer", "alt_ans", "domain", "question_type", "static_or_dynamic", "popularity", "split")

PathSpec = str | os.PathLike | Sequence[str | os.PathLike]


@dataclass
class LoadStats:
    """What a load saw: lines read, and lines skipped with where and why (first 20 kept)."""

    n_examples: int = 0
    n_skipped: int = 0
    skipped: list[str] = field(default_factory=list)

    def skip(self, where: str, reason: str) -> None:
        self.n_skipped += 1
        if len(self.skipped) < 20:
            self.skipped.append(f"{where}: {reason}")
        log.warning("skipping %s: %s", where, reason)


def load_examples(path: PathSpec = DEFAULT_DATA_PATH, stats: LoadStats | None = None) -> Iterator[dict]:
    """Streams normalised examples from any CRAG data file shape (see the module docstring).

    Args:
        path: a file, a directory, a glob, or a list of files (tar parts are joined; other files are read in
            turn). Relative paths are taken from the current directory, then from the repo root.
        stats: filled with counts of examples and skipped lines, if given.

    Returns:
        An iterator of dicts with the keys of `GRADER_KEYS` + `GOLD_KEYS`.

    Raises:
        FileNotFoundError: nothing exists at `path`.
    """
    stats = stats if stats is not None else LoadStats()
    sources = _line_sources(data_files(path))
    name = str(path)
    try:
        for name, lines in sources:
            for number, raw in enumerate(lines, start=1):
                if not raw.strip():
                    continue
                where = f"{name}:{number}"
                try:
                    example = normalise(json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw))
                except (ValueError, TypeError) as exc:  # UnicodeDecodeError, JSONDecodeError are ValueErrors
                    stats.skip(where, f"{type(exc).__name__}: {exc}"[:200])
                    continue
                example["interaction_id"] = example["interaction_id"] or where  # resume needs an id
                stats.n_examples += 1
                yield example
    except (OSError, EOFError, tarfile.TarError) as exc:
        # A truncated or corrupt compressed stream cannot be resynchronised line by line: keep what was read.
        stats.skip(name, f"stream ended early ({type(exc).__name__}: {exc}); the rest of it is lost")


def count_examples(path: PathSpec = DEFAULT_DATA_PATH, stop_at: int | None = None) -> int:
    """Non-empty lines of the data (for a progress bar's total), counting no further than `stop_at`."""
    count = 0
    for _, lines in _line_sources(data_files(path)):
        for raw in lines:
            if raw.strip():
                count += 1
                if stop_at is not None and count >= stop_at:
                    return count
    return count


def normalise(row: Any) -> dict:
    """One raw CRAG row (either schema) as a normalised example dict.

    Raises:
        ValueError: the row is not an object or has no non-empty `query`.
    """
    if not isinstance(row, dict):
        raise ValueError(f"expected a JSON object, got {type(row).__name__}")
    query = row.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("no query")
    pages = row.get("search_results")
    split = row.get("split")
    return {
        "interaction_id": str(row.get("interaction_id") or row.get("id") or ""),
        "query": query,
        "search_results": [p for p in pages if isinstance(p, dict)] if isinstance(pages, list) else [],
        "query_time": str(row.get("query_time") or ""),
        "answer": _text(row.get("answer")) if "answer" in row else _expected_answer(row.get("expected")),
        "alt_ans": _alt_answers(row.get("alt_ans", row.get("alternative_answers"))),
        "domain": _text(row.get("domain")).lower(),
        "question_type": _text(row.get("question_type")).lower(),
        "static_or_dynamic": _text(row.get("static_or_dynamic")).lower(),
        "popularity": _text(row.get("popularity")).lower(),
        "split": split if isinstance(split, int) and not isinstance(split, bool) else -1,
    }


def batched(examples: Iterable[dict], batch_size: int) -> Iterator[dict]:
    """Groups examples into the grader's batch shape plus the gold fields, kept apart.

    Returns:
        Dicts with one list per `GRADER_KEYS` key (what `batch_generate_answer` receives) and `"gold"`, a
        list of per-example dicts with the `GOLD_KEYS`; the last batch may be shorter.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    iterator = iter(examples)
    while chunk := list(islice(iterator, batch_size)):
        batch = {key: [ex[key] for ex in chunk] for key in GRADER_KEYS}
        batch["gold"] = [{key: ex[key] for key in GOLD_KEYS} for ex in chunk]
        yield batch


def iter_batches(path: PathSpec = DEFAULT_DATA_PATH, batch_size: int = 4, limit: int | None = None,
                 stats: LoadStats | None = None) -> Iterator[dict]:
    """`batched(load_examples(path))`, optionally over the first `limit` examples only."""
    return batched(islice(load_examples(path, stats), limit), batch_size)


def grader_view(batch: dict) -> dict:
    """Only the four keys the grader passes to the model (no gold, domain or question type)."""
    return {key: batch[key] for key in GRADER_KEYS}


# ---------------------------------------------------------------------------------------------- fields
def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.strip() if isinstance(value, str) else str(value)


def _expected_answer(value: Any) -> str:
    """The gold answer of a KG acceptance row (`kg_unseen.jsonl`: `expected`, the program's items, a list or its
    Python repr), as one answer: the items joined by ", ", whole numbers without ".0"."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value.strip()
    items = value if isinstance(value, (list, tuple)) else [value]
    shown = [str(int(v)) if isinstance(v, float) and v.is_integer() else _text(v) for v in items if v is not None]
    return ", ".join(v for v in shown if v)


def _alt_answers(value: Any) -> list[str]:
    """`alt_ans` as a list of non-empty strings; the old schema stores it as a JSON string."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except ValueError:
            value = [value]  # a bare string is one alternative answer
    if isinstance(value, (str, int, float)):
        value = [value]
    if not isinstance(value, list):
        return []
    return [text for text in (_text(v) for v in value) if text]


# ---------------------------------------------------------------------------------------------- files
_TAR = re.compile(r"\.tar(\.(bz2|gz|xz))?(\.part\d*)?$")


def data_files(path: PathSpec) -> list[Path]:
    """The files named by `path` (file, directory, glob or list), in reading order.

    Raises:
        FileNotFoundError: a path does not exist, a glob matches nothing, or a directory has no shards.
    """
    specs = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    files: list[Path] = []
    for spec in specs:
        text = os.fspath(spec)
        name = crag_data.crag_name(text)
        if name is not None:  # `$CRAG_DATA/<name>`, as the docs' commands write it
            text = os.fspath(crag_data.crag_path(name) if glob.has_magic(name) else crag_data.resolve(text))
        if glob.has_magic(text):
            matches = sorted(glob.glob(text), key=_natural_key) or sorted(
                glob.glob(str(resolve_repo_path(text))), key=_natural_key)
            if not matches:
                raise FileNotFoundError(f"no data file matches {text!r}")
            files.extend(Path(m) for m in matches)
            continue
        candidate = Path(text)
        if not candidate.exists():
            candidate = resolve_repo_path(text)
        if candidate.is_dir():
            shards = [p for p in candidate.rglob("*") if p.is_file() and re.search(r"\.jsonl(\.bz2|\.gz)?$", p.name)]
            if not shards:
                raise FileNotFoundError(f"directory {candidate} holds no .jsonl or .jsonl.bz2 shards")
            files.extend(sorted(shards, key=_natural_key))
        elif candidate.is_file():
            files.append(candidate)
        else:
            tried = "" if str(candidate) == text else f" (also tried {candidate})"
            raise FileNotFoundError(f"data file not found: {text}{tried}{crag_data.unexpanded_hint(text)}")
    return files


def _natural_key(path: str | Path) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(path))]


def _line_sources(files: list[Path]) -> Iterator[tuple[str, Iterable[bytes]]]:
    """(name, lines) for every JSONL stream: plain files, compressed files, and tar members."""
    tar_parts = [f for f in files if _TAR.search(f.name)]
    if tar_parts and len(tar_parts) != len(files):
        raise ValueError(f"cannot mix tar archives and JSONL files in one load: {[str(f) for f in files]}")
    if tar_parts:
        with _JoinedFiles(tar_parts) as stream, tarfile.open(fileobj=stream, mode="r|*") as archive:
            for member in archive:  # stream mode: members must be read in archive order
                if member.isfile() and re.search(r"\.jsonl(\.bz2)?$", member.name):
                    handle = archive.extractfile(member)
                    yield member.name, _decompressed(handle, member.name)
        return
    for file in files:
        with open(file, "rb") as handle:
            yield str(file), _decompressed(handle, file.name)


def _decompressed(handle: IO[bytes], name: str) -> IO[bytes]:
    if name.endswith(".bz2"):
        return bz2.BZ2File(handle)
    if name.endswith(".gz"):
        return gzip.GzipFile(fileobj=handle)
    return handle


class _JoinedFiles(io.RawIOBase):
    """Several files read back to back as one stream (`cat part1 part2 ...` without the copy)."""

    def __init__(self, paths: list[Path]):
        self._paths = list(paths)
        self._current: IO[bytes] | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while True:
            if self._current is None:
                if not self._paths:
                    return 0
                self._current = open(self._paths.pop(0), "rb")
            n = self._current.readinto(buffer)
            if n:
                return n
            self._current.close()
            self._current = None

    def close(self) -> None:
        if self._current is not None:
            self._current.close()
        super().close()
