"""One pre-submission check's outcome (submission/preflight.py): PASS, WARN, SKIP or FAIL, with its fix."""
from __future__ import annotations

from dataclasses import dataclass


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
