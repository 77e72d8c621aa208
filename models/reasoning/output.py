"""Parsing the reasoning format (prompts/reasoning.txt, prompts/knowledge_extract.txt) into an answer.

The format ends in `Final answer: ...`, optionally preceded by `False premise: yes|no`. The last
"Final answer:" line counts (a model that restates the format before filling it in writes the label
twice). The corner-case rules of ElectricSheep §4.7 are applied to the parsed fields:
- a false premise ("False premise: yes", or the answer says so) -> `invalid question`;
- any "i don't know" phrasing in the answer -> exactly `i don't know`, no other words;
- anything else is cleaned like every other answer (models.llm.postprocess.clean_answer).
An output with no final-answer line, or an empty one, is a `ReasoningFormatError`: the caller hands it
to the backup summarizer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from models.llm.postprocess import clean_answer, is_idk
from models.types import IDK, INVALID

_FINAL = re.compile(r"^[ \t#*>-]*final\s+answer\s*\**\s*[:：]\s*\**\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)
_PREMISE = re.compile(r"^[ \t#*>-]*(?:has\s+)?false\s+premise\s*\**\s*[:：]\s*\**\s*(yes|no)\b",
                      re.IGNORECASE | re.MULTILINE)
_PLACEHOLDER = re.compile(r"^<[^<>]*>$")  # the format's own "<the answer ...>" echoed back


class ReasoningFormatError(ValueError):
    """The output has no usable "Final answer:" line."""


@dataclass(frozen=True)
class ParsedReasoning:
    answer: str  # the final answer after the corner-case rules
    false_premise: bool | None  # None: the line was missing
    raw_answer: str  # the text of the final-answer line


def parse_reasoning(output: str) -> ParsedReasoning:
    """The final answer of one reasoning output; raises ReasoningFormatError when there is none."""
    finals = [m.group(1).strip().strip('"').strip() for m in _FINAL.finditer(output or "")]
    finals = [f for f in finals if f and not _PLACEHOLDER.match(f)]
    if not finals:
        raise ReasoningFormatError("no 'Final answer:' line with an answer")
    raw = finals[-1]
    premises = _PREMISE.findall(output)
    false_premise = None if not premises else premises[-1].lower() == "yes"
    if is_idk(raw):
        answer = IDK
    elif false_premise:
        answer = INVALID
    else:
        answer = clean_answer(raw)
    return ParsedReasoning(answer, false_premise, raw)
