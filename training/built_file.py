"""A generated data file that is committed: written, or compared byte for byte with a fresh build (`--check`)."""
from __future__ import annotations

from pathlib import Path


def write_or_check(text: str, out: str | Path, command: str, check: bool) -> int | None:
    """With `check`, compares `text` with the file at `out`, prints whether it is up to date (else the `command` that
    rewrites it) and returns the exit status (1 when it differs, else 0); otherwise writes `text` to `out` and
    returns None, for the caller to print what it wrote."""
    out = Path(out)
    if check:
        same = out.exists() and out.read_bytes() == text.encode("utf-8")
        print(f"{out}: {'up to date' if same else f'differs from a fresh build (run {command})'}")
        return 0 if same else 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return None
