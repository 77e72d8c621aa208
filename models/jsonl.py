"""Reading JSON Lines files, once: every error names the file and the line (`path:line: reason`).

The package reads many small JSONL files (example pools, labels, acceptance sets, saved predictions); each caller
says what a row must be with `parse` (a function that returns the value kept, or raises ValueError, KeyError or
TypeError, the message saying what is wrong) and which error type its own callers catch.
"""
from __future__ import annotations

import bz2
import gzip
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")
SKIP = object()  # what `parse` returns for a row to leave out without an error


class JSONLError(ValueError):
    """A line of a JSONL file that is not JSON, or not the row its reader expects (`path:line: reason`)."""


def open_text(path: str | os.PathLike):
    """A text handle on `path`, decompressing `.bz2` and `.gz` files."""
    path = Path(path)
    opener = {".bz2": bz2.open, ".gz": gzip.open}.get(path.suffix, open)
    return opener(path, "rt", encoding="utf-8")


def numbered_rows(path: str | os.PathLike, *, error: Callable[[str], Exception] = JSONLError,
                  on_error: Callable[[str], None] | None = None) -> Iterator[tuple[int, Any]]:
    """(line number, decoded JSON value) for every non-blank line of `path`, in order.

    Args:
        on_error: given, a line that is not JSON is passed over after calling it with the message (a log line; a
            file a killed run left with half a line), instead of raising.

    Raises:
        `error` (JSONLError by default): a line that is not JSON (`path:line: not JSON (why)`).
        OSError: the file cannot be read.
    """
    with open_text(path) as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                message = f"{path}:{number}: not JSON ({exc.msg})"
                if on_error is None:
                    raise error(message) from exc
                on_error(message)
                continue
            yield number, value


def read_jsonl(path: str | os.PathLike, parse: Callable[[Any], T] | None = None, *, what: str = "",
               error: Callable[[str], Exception] = JSONLError, catch: tuple[type[BaseException], ...] = ()
               ) -> list[T]:
    """The rows of `path`, each decoded and passed through `parse` (blank lines skipped; `SKIP` leaves one out).

    Args:
        parse: the row's value from its JSON (default: the JSON itself); raises ValueError, KeyError, TypeError
            (or one of `catch`) for a bad row.
        what: what a row is, for the message of a bad one ("bad KG example" -> `pool.jsonl:3: bad KG example: ...`).
        error: the exception raised (the caller's own type; it is given the whole message).

    Raises:
        `error`: a line that is not JSON, or that `parse` rejects, with `path:line:` first.
    """
    rows = []
    for number, value in numbered_rows(path, error=error):
        if parse is None:
            rows.append(value)
            continue
        try:
            row = parse(value)
        except (ValueError, KeyError, TypeError, *catch) as exc:
            raise error(f"{path}:{number}: {what + ': ' if what else ''}{exc}") from exc
        if row is not SKIP:
            rows.append(row)
    return rows
