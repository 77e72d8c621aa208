"""The chat-format SFT dataset on disk: one JSON object per line, appended as it is built.

    {"id": "...", "adapter": "web_answer", "label": "...", "reason": "judged_correct",
     "messages": [{"role": "system", ...}, {"role": "user", ...}, {"role": "assistant", "content": label}],
     "meta": {"prediction": "...", "domain": "...", ...}}

Design decisions:
- The file is both the training input of `train_lora.py` and the resume state of `build_sft_data.py`: a
  record is written (and flushed) as soon as it is decided, so an interrupted run loses at most the batch in
  flight, and a rerun skips every id already in the file.
- Skipped examples (no gold answer, empty context, a judge that failed after its retries) go to a sidecar
  file `<name>.skipped.jsonl` with the reason, never into the training file: a record there has no label.
  Reasons that a rerun could change (a failed judge call) are retried on resume; permanent ones are not.
- The last message is always the assistant label; everything before it is what the adapter sees at
  inference. `train_lora.py` needs nothing else, so any JSONL with valid `messages` trains.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, TypeVar

from models.jsonl import numbered_rows

log = logging.getLogger(__name__)

ROLES = ("system", "user", "assistant")
T = TypeVar("T")


class SFTFormatError(ValueError):
    """A line of an SFT file that is not a usable chat example."""


@dataclass(frozen=True)
class SFTRecord:
    """One training example: the chat the adapter sees, its assistant label, and why that label."""

    id: str
    messages: tuple[dict, ...]  # ends with the assistant label
    adapter: str = ""
    reason: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.messages[-1]["content"]

    def to_json(self) -> str:
        row = asdict(self)
        row["messages"] = list(self.messages)
        row["meta"] = dict(self.meta)
        row["label"] = self.label  # redundant, but makes the file readable with `jq .label`
        return json.dumps(row, ensure_ascii=False)


def validate_messages(messages: Any) -> tuple[dict, ...]:
    """Checks a chat for training: role/content dicts, one user turn at least, assistant label last.

    Returns:
        The messages as a tuple of plain `{"role", "content"}` dicts.

    Raises:
        SFTFormatError: naming what is wrong.
    """
    if not isinstance(messages, (list, tuple)) or len(messages) < 2:
        raise SFTFormatError("messages must be a list of at least a user and an assistant message")
    clean = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise SFTFormatError(f"message {i} is not an object")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise SFTFormatError(f"message {i} has role {role!r}; expected one of {ROLES}")
        if not isinstance(content, str):
            raise SFTFormatError(f"message {i} ({role}) has no text content")
        clean.append({"role": role, "content": content})
    if clean[-1]["role"] != "assistant" or not clean[-1]["content"].strip():
        raise SFTFormatError("the last message must be a non-empty assistant label")
    if not any(m["role"] == "user" for m in clean[:-1]):
        raise SFTFormatError("no user message before the label")
    return tuple(clean)


def parse_record(row: Any) -> SFTRecord:
    """One decoded JSON line as an `SFTRecord`; raises SFTFormatError when it cannot train."""
    if not isinstance(row, Mapping):
        raise SFTFormatError(f"expected a JSON object, got {type(row).__name__}")
    meta = row.get("meta") or {}
    return SFTRecord(id=str(row.get("id") or ""), messages=validate_messages(row.get("messages")),
                     adapter=str(row.get("adapter") or ""), reason=str(row.get("reason") or ""),
                     meta=dict(meta) if isinstance(meta, Mapping) else {})


def read_records(path: str | os.PathLike, strict: bool = False) -> Iterator[SFTRecord]:
    """Streams the records of an SFT file.

    Args:
        path: a `.jsonl` file.
        strict: raise on the first bad line instead of skipping it with a warning.

    Raises:
        FileNotFoundError: no file at `path`.
        SFTFormatError: a bad line, when `strict`.
    """
    return read_validated(path, parse_record, SFTFormatError, strict)


def read_validated(path: str | os.PathLike, parse: Callable[[Any], T], error: type[ValueError],
                   strict: bool) -> Iterator[T]:
    """`parse(row)` of every JSON line of a file; a line that is not JSON or that `parse` rejects (with a
    ValueError) raises `error` naming file and line when `strict`, else is logged and skipped."""
    for number, row in numbered_rows(path, error=error,
                                     on_error=None if strict else lambda message: log.warning("skipping %s", message)):
        try:
            yield parse(row)
        except ValueError as exc:  # the format errors are ValueErrors
            if strict:
                raise error(f"{path}:{number}: {exc}") from exc
            log.warning("skipping %s:%d: %s", path, number, exc)


def skipped_path(path: str | os.PathLike) -> Path:
    """The sidecar file of skipped examples: `labels.jsonl` -> `labels.skipped.jsonl`."""
    path = Path(path)
    return path.with_name(path.name.removesuffix(".jsonl") + ".skipped.jsonl")


def read_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    """Objects of a JSONL file that may not exist yet (a fresh run) or end in a half-written line (a
    killed run): both are read as far as they go."""
    if not Path(path).exists():
        return
    for _, row in numbered_rows(path, on_error=lambda message: None):
        if isinstance(row, dict):
            yield row


class SFTWriter:
    """Appends records and skips to an SFT file and its sidecar; knows which ids are done.

    Use as a context manager; every write is flushed so a killed run keeps what it decided.
    """

    def __init__(self, path: str | os.PathLike, retry_reasons: Iterable[str] = ()):
        """Opens (appending) `path` and its sidecar and reads back what earlier runs decided.

        Args:
            path: the SFT `.jsonl` output.
            retry_reasons: skip reasons that do not make an id done (a rerun tries it again).
        """
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        retry = set(retry_reasons)
        self.done: set[str] = {str(r.get("id")) for r in read_jsonl(self.path)}
        self.done |= {str(r.get("id")) for r in read_jsonl(skipped_path(self.path)) if r.get("reason") not in retry}
        self._records = _open_for_append(self.path)
        self._skipped = _open_for_append(skipped_path(self.path))

    def write(self, record: SFTRecord) -> None:
        self._records.write(record.to_json() + "\n")
        self._records.flush()
        self.done.add(record.id)

    def skip(self, example_id: str, reason: str, detail: Mapping[str, Any] | None = None) -> None:
        row = {"id": example_id, "reason": reason, "meta": dict(detail or {})}
        self._skipped.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._skipped.flush()

    def close(self) -> None:
        self._records.close()
        self._skipped.close()

    def __enter__(self) -> "SFTWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _open_for_append(path: Path):
    """Opens for appending; a file a killed run left without its final newline gets one first, so the
    torn line stays a (skipped) line of its own instead of swallowing the next record."""
    torn = False
    if path.exists() and path.stat().st_size:
        with open(path, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            torn = handle.read(1) != b"\n"
    handle = open(path, "a", encoding="utf-8")
    if torn:
        handle.write("\n")
    return handle
