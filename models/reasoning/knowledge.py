"""The LLM knowledge extractor (ElectricSheep §4.4): the model's own answer, without references.

One greedy generation per question (no sampling: ElectricSheep kept this stage cheap). The answer is
never returned to the user: it becomes `References.knowledge_note`, which the reasoning prompt labels as
an answer from memory that may be wrong. "i don't know" and unparsable outputs give no note at all
(an empty note tells the reasoner nothing, a garbled one could mislead it).
"""
from __future__ import annotations

import logging
from typing import Sequence

from models.deadline import Deadline
from models.llm.generator import GenerationRequest, Generator
from models.llm.prompts import PromptLibrary
from models.reasoning.config import KnowledgeConfig
from models.reasoning.output import ReasoningFormatError, parse_reasoning
from models.types import IDK, INVALID

log = logging.getLogger(__name__)


def knowledge_note(output: str) -> str:
    """The reference line for one extractor output ("" when it has nothing to contribute)."""
    try:
        parsed = parse_reasoning(output)
    except ReasoningFormatError:
        return ""
    if parsed.answer == IDK:
        return ""
    if parsed.answer == INVALID:
        return "The question may have a false premise (invalid question)."
    return f"Answer: {parsed.answer}"


class KnowledgeExtractor:
    """Asks the model each question without references."""

    def __init__(self, config: KnowledgeConfig, generator: Generator, prompts: PromptLibrary | None = None):
        self.config = config
        self.generator = generator
        self.template = (prompts or PromptLibrary()).get(config.prompt)

    def notes(self, queries: Sequence[str], query_times: Sequence[str], deadline: Deadline | None = None) -> list[str]:
        """One note per question ("" = none)."""
        if not queries or (deadline is not None and deadline.remaining() < self.config.min_remaining_s):
            return [""] * len(queries)
        requests = [GenerationRequest(self.template.render(query=query, query_time=time),
                                      max_new_tokens=self.config.max_new_tokens)
                    for query, time in zip(queries, query_times)]
        try:
            outputs = self.generator.generate(requests, deadline=deadline)
        except Exception:  # optional stage: a failing backend costs the notes, not the batch
            log.exception("knowledge extractor failed; no notes for this batch")
            return [""] * len(queries)
        return [knowledge_note(output) for output in outputs]
