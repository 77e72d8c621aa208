"""The first step of information alignment (ARM §3.2.1): the question split into keywords, `a | b | c`.

- `llm` (the paper's way; g4dn): the model writes the keywords on one line separated by `|`
  (`prompts/arm_keywords.txt`), parsed by `parse_keywords`; an empty or failed row falls back to `lexical`.
- `lexical` (CPU profile): the runs of content words between stop words and punctuation, in question order
  ("which airlines have the lowest rate of flight cancellations?" -> airlines | lowest rate | flight
  cancellations).
  A 135M model does not follow the `a | b | c` format reliably; this needs no model call, and the
  constrained rewrite that follows still runs on the LLM.
"""
from __future__ import annotations

import logging
import re
from typing import Sequence

from models.deadline import Deadline
from models.llm.generator import GenerationRequest
from models.llm.prompts import PromptLibrary
from models.web.arm.ngrams import STOP_WORDS, words

log = logging.getLogger(__name__)

_BREAK = re.compile(r"[,;:?!()\[\]\"“”]|\s-\s")


def lexical_keywords(question: str, limit: int) -> list[str]:
    """The question's content-word runs, in order, without repeats; at most `limit`."""
    keywords: list[str] = []
    for piece in _BREAK.split(question or ""):
        run: list[str] = []
        for word in words(piece) + [""]:  # "" flushes the last run
            if word and word not in STOP_WORDS:
                run.append(word)
                continue
            if run and " ".join(run) not in keywords:
                keywords.append(" ".join(run))
            run = []
    return keywords[:limit]


def parse_keywords(text: str, limit: int) -> list[str]:
    """The keywords of a model's `a | b | c` line: lower-cased, stripped, without repeats or empty ones."""
    line = (text or "").strip().split("\n")[0]
    keywords = []
    for part in line.split("|"):
        keyword = " ".join(words(part))
        if keyword and keyword not in keywords:
            keywords.append(keyword)
    return keywords[:limit]


class KeywordExtractor:
    """Keywords for a batch of questions.

    Args:
        config: `web.arm` (`keywords`: lexical | llm, `keyword_prompt`, `max_keywords`).
        generator: the LLM backend (kind llm only).
        prompts: the prompt library.
    """

    KINDS = ("lexical", "llm")

    def __init__(self, config, generator=None, prompts: PromptLibrary | None = None):
        if config.keywords not in self.KINDS:
            raise ValueError(f"unknown web.arm.keywords {config.keywords!r}; expected {list(self.KINDS)}")
        if config.keywords == "llm" and generator is None:
            raise ValueError("web.arm.keywords llm needs the LLM")
        self.config, self.generator = config, generator
        self.template = (prompts or PromptLibrary()).get(config.keyword_prompt) if config.keywords == "llm" else None

    def extract(self, questions: Sequence[str], deadline: Deadline | None = None) -> list[list[str]]:
        limit = self.config.max_keywords
        fallback = [lexical_keywords(q, limit) for q in questions]
        if self.template is None or not questions:
            return fallback
        requests = [GenerationRequest(self.template.render(question=q), max_new_tokens=48, stop=("\n",))
                    for q in questions]
        try:
            outputs = self.generator.generate(requests, deadline=deadline)
        except Exception:  # noqa: BLE001 - the lexical keywords still serve
            log.warning("ARM keyword extraction failed: lexical keywords used", exc_info=True)
            return fallback
        return [parse_keywords(text, limit) or lexical for text, lexical in zip(outputs, fallback)]
