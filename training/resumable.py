"""Fingerprints of a step's inputs and the marker a finished step leaves, so that a rerun skips it.

    inputs = {"data": file_fingerprint(path), "base": model_fingerprint(base), "limit": 200, ...}
    state = StepState(work / "labels_web_answer", inputs, resume_ignores=("limit",))
    if state.finished(): ...           # the marker holds the same fingerprint: skip
    state.begin(outputs)               # outputs of other inputs (apart from `limit`) are moved aside
    ...                                # the step appends to its outputs (its writers resume by id)
    state.finish(counts)

Design decisions:
- A fingerprint is the sha256 of the inputs as canonical JSON (sorted keys), cut to 16 hex digits: it names what
  the output was made from, readably enough to compare in a log.
- A file is fingerprinted by its name, size and content hash; above `FULL_HASH_MAX_BYTES` only its first and last
  MiB are hashed (CRAG's dev file is several GB; a different file of the same size with the same ends is not a
  case worth minutes of hashing on every run). The path is left out, so a moved file is the same input.
- A model folder is fingerprinted by its name, its files' names and sizes, and the content of its small files
  (config.json, tokenizer files): weights of a different model differ in those. A spec that is not a folder
  (`pkg:...`, a hub name) is its own fingerprint.
- Two keys per step: `fingerprint` (all inputs: equal means done) and `resume_key` (the inputs without those a
  rerun may change and still append to the partial output: e.g. `limit`). A step whose outputs were begun under
  another resume key starts again from nothing (those outputs are moved aside, into `stale-<key>/`, never
  deleted: labels can be hours of GPU time); otherwise the step resumes where its outputs end.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Iterable, Mapping

FULL_HASH_MAX_BYTES = 64 << 20
_ENDS_BYTES = 1 << 20
_SMALL_FILE_BYTES = 4 << 20


def fingerprint(inputs: Mapping) -> str:
    """16 hex digits naming `inputs` (JSON-able; anything else is written with `str`)."""
    text = json.dumps(inputs, sort_keys=True, default=str, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def file_fingerprint(path: str | Path) -> dict:
    """`{"name", "size", "sha256"}` of a file (the whole file, or its two ends when large; module docstring)."""
    path = Path(path)
    size = path.stat().st_size
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        if size <= FULL_HASH_MAX_BYTES:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        else:
            digest.update(handle.read(_ENDS_BYTES))
            handle.seek(size - _ENDS_BYTES)
            digest.update(handle.read(_ENDS_BYTES))
    return {"name": path.name, "size": size, "sha256": digest.hexdigest()[:16]}


def model_fingerprint(spec: str | Path) -> dict:
    """A model folder's name, files and small files' content; a spec that is no folder, as written."""
    folder = Path(spec)
    if not folder.is_dir():
        return {"spec": str(spec)}
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    digest = hashlib.sha256()
    for path in files:
        relative = path.relative_to(folder).as_posix()
        size = path.stat().st_size
        digest.update(f"{relative}\0{size}\0".encode())
        if size <= _SMALL_FILE_BYTES and not relative.endswith((".safetensors", ".bin", ".pt", ".gguf")):
            digest.update(path.read_bytes())
    return {"name": folder.name, "files": len(files), "sha256": digest.hexdigest()[:16]}


class StepState:
    """The markers of one step: `<folder>/started.json` (its resume key) and `<folder>/done.json`."""

    def __init__(self, folder: str | Path, inputs: Mapping, resume_ignores: Iterable[str] = ()):
        self.folder = Path(folder)
        self.inputs = dict(inputs)
        self.fingerprint = fingerprint(self.inputs)
        ignored = set(resume_ignores)
        self.resume_key = fingerprint({k: v for k, v in self.inputs.items() if k not in ignored})

    @property
    def done_path(self) -> Path:
        return self.folder / "done.json"

    @property
    def started_path(self) -> Path:
        return self.folder / "started.json"

    def finished(self) -> dict | None:
        """The done marker when it names these inputs (the step need not run), else None."""
        marker = read_json(self.done_path)
        return marker if marker and marker.get("fingerprint") == self.fingerprint else None

    def begin(self, outputs: Iterable[str | Path] = ()) -> Path | None:
        """Marks the step started; moves `outputs` aside when they were begun under another resume key.

        Returns:
            The folder the stale outputs were moved to (`<folder>/stale-<their resume key>/`), or None.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        started = read_json(self.started_path)
        aside = None
        if started is not None and started.get("resume_key") != self.resume_key:
            aside = self.folder / f"stale-{started.get('resume_key')}"
            for path in map(Path, outputs):
                if path.exists():
                    aside.mkdir(parents=True, exist_ok=True)
                    target = aside / path.name
                    if target.is_dir():
                        shutil.rmtree(target)
                    path.replace(target)
        self.done_path.unlink(missing_ok=True)
        write_json(self.started_path, {"resume_key": self.resume_key, "inputs": self.inputs})
        return aside

    def finish(self, counts: Mapping) -> dict:
        """Writes the done marker (fingerprint, inputs, counts, time) and returns it."""
        marker = {"fingerprint": self.fingerprint, "inputs": self.inputs, "counts": dict(counts),
                  "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}
        write_json(self.done_path, marker)
        return marker


def read_json(path: Path) -> dict | None:
    """A marker's JSON object; None when it is absent, unreadable or not an object (the step is not done)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def write_json(path: Path, value: Mapping) -> None:
    """Writes a marker whole or not at all (a temporary file renamed over it): an interrupted run leaves no half
    marker."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, indent=1, sort_keys=True, default=str), encoding="utf-8")
    tmp.replace(path)
