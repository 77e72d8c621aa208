"""Raw generations -> final answers: strip chat artefacts, normalise refusals, trim for the grader.

Scoring is +1 correct, 0 "i don't know", -1 wrong, so refusals are worth getting exactly right:
- any phrasing of "I don't know" (any apostrophe, "I do not know", "not sure", "cannot be determined",
  "no information", an empty output, ...) becomes exactly `i don't know`;
- "invalid question" (or "false premise") becomes exactly `invalid question`;
- when an output contains both, `i don't know` wins: it costs nothing when wrong, a wrong
  "invalid question" costs a point.
Everything else keeps its case (db3 lowercased every answer; the judge does not need that and proper
names read better). Chat artefacts: control tokens that leak through (`<|im_end|>`, `<|eot_id|>`,
`<|start_header_id|>`, `</s>`, ...) split the output into turns and the first turn with content is the
answer; leading role or "Answer:" labels are removed (db3 kept the text after the last "assistant", which
loses answers that mention the word), whitespace is collapsed and wrapping quotes dropped. Last,
`grader_trim` (models/trim.py) cuts the answer to the grader's 75-token limit.
"""
from __future__ import annotations

import re
from typing import Callable

from models.types import IDK, INVALID

_APOSTROPHES = str.maketrans({c: "'" for c in "\u2018\u2019\u02bc\u0060\u00b4\u2032"})
# A control token such as <|im_end|>, <|eot_id|>, <|start_header_id|>; </s> and [/INST] from older templates.
_CONTROL = re.compile(r"<\|[^|<>]{1,40}\|>|</s>|\[/?INST\]")
# A role or answer label at the start ("assistant\n", "Answer:"); needs a colon or line break after it,
# so an answer that merely starts with the word ("Answer Me" by a band) is kept.
_LABEL = re.compile(r"^\s*(?:assistant|answer|final answer|response)\s*(?::|\n|$)\s*", re.IGNORECASE)
_IDK = re.compile(
    r"\bi\s*(?:do\s*n[o']?t|do not|don't)\s+know\b"
    r"|\bnot\s+(?:sure|certain)\b|\bunsure\b"
    r"|\b(?:can\s*not|can't|could\s*not|couldn't|unable to)\s+(?:be\s+)?(?:determined?|answer|tell|say|find|know)\b"
    r"|\b(?:no|not enough|insufficient)\s+(?:relevant\s+)?(?:information|data|context)\b"
    r"|\bi\s+have\s+no\s+(?:idea|information)\b",
    re.IGNORECASE)
# A small model that keeps going after its answer echoes the prompt's pattern ("... Question: ... Answer: ...").
_CONTINUATION = re.compile(r"\s(?:Question|Query|Context)\s*:")  # capitalised: a label, not prose
_INVALID = re.compile(r"\binvalid\s+question\b|\bfalse\s+(?:premise|preposition|assumption)s?\b", re.IGNORECASE)


def clean_answer(raw: str | None, grader_trim: Callable[[str], str] | None = None) -> str:
    """The final answer for one raw generation.

    Args:
        raw: the generator's output ("" or None when nothing was generated).
        grader_trim: optional str -> str cutting an answer to the grader's token limit.

    Returns:
        `i don't know`, `invalid question`, or the cleaned answer text (never empty).
    """
    text = _strip_artefacts(raw if isinstance(raw, str) else "")
    if is_idk(text):
        return IDK
    if _INVALID.search(text):
        return INVALID
    if grader_trim is not None:
        text = grader_trim(text).strip()
    return text or IDK


def is_idk(text: str | None) -> bool:
    """True when `text` is empty or says, in any phrasing, that the answer is not known."""
    if not isinstance(text, str) or not text.strip():
        return True
    return bool(_IDK.search(text.translate(_APOSTROPHES)))


def _strip_artefacts(text: str) -> str:
    # Control tokens split the output into turns; the answer is the first turn with content once role
    # labels are removed ("<|start_header_id|>assistant<|end_header_id|>\n\nCanberra<|eot_id|>user ...").
    text = text.translate(_APOSTROPHES)
    for segment in _CONTROL.split(text):
        segment = _first_paragraph(_strip_labels(segment))
        if len(segment) >= 2 and segment[0] == segment[-1] and segment[0] in "\"'`":
            segment = segment[1:-1].strip()
        if segment:
            return segment
    return ""


def _first_paragraph(text: str) -> str:
    """The first paragraph, cut where the model starts echoing the prompt; whitespace collapsed.

    The prompts ask for a one-line answer; after a blank line, or once the model writes a made-up
    "Question: ..." of its own, it is rambling on, not answering (a list wrapped over lines is kept)."""
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    return " ".join(_CONTINUATION.split(" " + paragraph, maxsplit=1)[0].split())


def _strip_labels(text: str) -> str:
    while True:
        stripped = _LABEL.sub("", text, count=1)
        if stripped == text:
            return text
        text = stripped
