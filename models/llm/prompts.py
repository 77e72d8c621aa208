"""Prompt templates loaded from the repo's `prompts/` folder.

Each template is one file, `prompts/<name>.txt`, with a `### system` section and a `### user` section
(either may be empty). Slots are `{name}` placeholders; literal braces are written `{{` `}}`. Slots are
read from the file when it is loaded, and `render` refuses missing or unexpected slots, so a typo in a
template or a caller fails loudly at start-up rather than producing a silently wrong prompt.
"""
from __future__ import annotations

import re
import string
from dataclasses import dataclass
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"
_SECTION = re.compile(r"^### (system|user)\s*$", re.MULTILINE)


class PromptError(ValueError):
    """A template file is malformed, or rendered with the wrong slots."""


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    system: str
    user: str

    @property
    def slots(self) -> frozenset[str]:
        names = set()
        for part in (self.system, self.user):
            names.update(f for _, f, _, _ in string.Formatter().parse(part) if f)
        return frozenset(names)

    def render(self, **values) -> tuple[dict, ...]:
        """Chat messages with every slot filled; raises PromptError on missing or unknown slots."""
        missing, extra = self.slots - set(values), set(values) - self.slots
        if missing or extra:
            raise PromptError(f"prompt {self.name!r}: missing slots {sorted(missing)}, unexpected {sorted(extra)}")
        messages = []
        if self.system.strip():
            messages.append({"role": "system", "content": self.system.format(**values)})
        messages.append({"role": "user", "content": self.user.format(**values)})
        return tuple(messages)


def load_prompt(name: str, directory: Path = PROMPTS_DIR) -> PromptTemplate:
    """Reads and validates `prompts/<name>.txt`."""
    path = directory / f"{name}.txt"
    if not path.exists():
        raise PromptError(f"prompt {name!r} not found at {path}")
    text = path.read_text(encoding="utf-8")
    parts = _SECTION.split(text)
    # parts = [preamble, "system", body, "user", body] (a section may be absent)
    sections = dict(zip(parts[1::2], (body.strip("\n") for body in parts[2::2])))
    if "user" not in sections:
        raise PromptError(f"{path}: needs a '### user' section")
    template = PromptTemplate(name, sections.get("system", ""), sections["user"])
    try:
        template.slots  # parse once so unbalanced braces fail here
    except ValueError as exc:
        raise PromptError(f"{path}: {exc}") from exc
    return template


class PromptLibrary:
    """Caches loaded templates by name."""

    def __init__(self, directory: Path = PROMPTS_DIR):
        self._directory = directory
        self._cache: dict[str, PromptTemplate] = {}

    def get(self, name: str) -> PromptTemplate:
        if name not in self._cache:
            self._cache[name] = load_prompt(name, self._directory)
        return self._cache[name]
