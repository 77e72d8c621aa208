"""Main-content paragraphs -> sentence-group chunks (ElectricSheep §4.1, Appendix B).

The rules, in order:
1. paragraphs are split into sentences (blingfire's `text_to_sentences`, or a punctuation regex when the
   profile asks for it); a paragraph boundary is always a sentence boundary;
2. a sentence longer than `max_sentence_chars` is truncated (at a word boundary);
3. a question (ends with "?" or starts with a 5W1H / auxiliary word of Appendix B) is grouped with the
   sentences that follow it until the group reaches `question_group_chars`: FAQ pages put the answer right
   after the question, and the answer alone often does not say what it answers;
4. every other run of sentences is grouped `group_size` at a time (ElectricSheep: 3).
A group never crosses a question: the next question starts a new group.
Tables are chunks of their own, whole (Markdown, kind "table"); empty ones never reach this module.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from models.types import Chunk

SEGMENTERS = ("blingfire", "regex")
# ElectricSheep's Appendix B list, matched as whole words (their `startswith` also caught "island", "dover").
QUESTION_WORDS = ("who", "what", "when", "where", "why", "how", "is", "can", "does", "do", "did", "will", "would",
                  "could", "should", "are", "was", "were", "has", "have", "had", "which", "whom", "whose")
_QUESTION_START = re.compile(r"^\W*(?:%s)\b" % "|".join(QUESTION_WORDS), re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


@dataclass(frozen=True)
class SentenceChunkConfig:
    enabled: bool = False
    tasks: tuple[int, ...] = (1, 2, 3)  # tasks in which it runs when enabled
    segmenter: str = "blingfire"  # blingfire | regex
    max_sentence_chars: int = 400  # longer sentences are truncated
    group_size: int = 3  # sentences per ordinary chunk (ElectricSheep: 3)
    question_group_chars: int = 600  # a question and its answer sentences, up to this many characters


def is_question(sentence: str) -> bool:
    """ElectricSheep's Appendix B test: ends with "?" or starts with an interrogative/auxiliary word."""
    sentence = sentence.strip()
    return sentence.endswith("?") or bool(_QUESTION_START.match(sentence))


def _truncate(sentence: str, max_chars: int) -> str:
    if len(sentence) <= max_chars:
        return sentence
    cut = sentence[:max_chars]
    space = cut.rfind(" ")
    return (cut[:space] if space > max_chars // 2 else cut).rstrip()


class SentenceChunker:
    def __init__(self, config: SentenceChunkConfig = SentenceChunkConfig()):
        if config.segmenter not in SEGMENTERS:
            raise ValueError(f"unknown segmenter {config.segmenter!r}; expected one of {list(SEGMENTERS)}")
        if config.group_size < 1 or config.max_sentence_chars < 1:
            raise ValueError("group_size and max_sentence_chars must be positive")
        self.config = config
        self._split = self._blingfire() if config.segmenter == "blingfire" else self._regex

    @staticmethod
    def _blingfire():
        import blingfire  # a required dependency of this segmenter: fail at start-up, not per page

        def split(paragraph: str) -> list[str]:
            return blingfire.text_to_sentences(paragraph).split("\n")
        return split

    @staticmethod
    def _regex(paragraph: str) -> list[str]:
        return _SENTENCE_END.split(paragraph)

    def sentences(self, paragraphs: Sequence[str]) -> list[str]:
        """Sentences of all paragraphs, truncated, empty ones dropped."""
        limit = self.config.max_sentence_chars
        return [_truncate(s.strip(), limit) for p in paragraphs if p.strip() for s in self._split(p.strip())
                if s.strip()]

    def groups(self, sentences: Sequence[str]) -> list[str]:
        """Sentence groups by the module's rules (questions with their answers, others by `group_size`)."""
        groups: list[str] = []
        current: list[str] = []
        in_question = False
        size = 0
        for sentence in sentences:
            question = is_question(sentence)
            full = (in_question and size + len(sentence) + 1 > self.config.question_group_chars) or (
                not in_question and len(current) >= self.config.group_size)
            if current and (question or full):
                groups.append(" ".join(current))
                current, size, in_question = [], 0, False
            if not current:
                in_question = question
            current.append(sentence)
            size += len(sentence) + 1
        if current:
            groups.append(" ".join(current))
        return groups

    def chunks(self, paragraphs: Sequence[str], tables: Sequence[str] = (), source: str = "") -> list[Chunk]:
        """Text chunks (kind "text") then whole tables (kind "table") of one page."""
        texts = [Chunk(group, source, "text") for group in self.groups(self.sentences(paragraphs))]
        return texts + [Chunk(table, source, "table") for table in tables if table.strip()]
