"""The reasoning module (ElectricSheep §4.6): one prompt over all references, parsed; the backup
summarizer (§4.7) for what cannot be parsed.

Time: the reasoning generation gets `budget_s` (or what the batch has left) minus the summarizer's
`reserve_s`, so that a reasoning stage that overruns still leaves time to salvage its questions. A request
that could not start before that deadline comes back "" and goes to the summarizer with the references as
its material.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

from models.deadline import Deadline
from models.llm.generator import GenerationRequest, Generator
from models.llm.prompts import PromptLibrary
from models.reasoning.config import ReasoningConfig
from models.reasoning.output import ReasoningFormatError, parse_reasoning
from models.reasoning.references import References, format_references
from models.reasoning.summarizer import BackupSummarizer
from models.types import IDK

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReasonedAnswer:
    answer: str  # final, cleaned ("i don't know" / "invalid question" exactly)
    source: str  # "reasoning" | "backup" | "none" (no answer could be produced)
    output: str = ""  # the raw reasoning output (for logs and error analysis)


class Reasoner:
    def __init__(self, config: ReasoningConfig, generator: Generator, prompts: PromptLibrary | None = None):
        prompts = prompts or PromptLibrary()
        self.config = config
        self.generator = generator
        self.template = prompts.get(config.prompt)
        self.backup = BackupSummarizer(config.backup, generator, prompts) if config.backup.enabled else None

    def _stage_deadline(self, deadline: Deadline | None) -> Deadline:
        remaining = deadline.remaining() if deadline is not None else float("inf")
        if self.backup is not None:
            remaining -= self.config.backup.reserve_s
        if self.config.budget_s > 0:
            remaining = min(remaining, self.config.budget_s)
        return Deadline(None if remaining == float("inf") else remaining)

    def render_references(self, references: References) -> str:
        return format_references(references, max_table_chars=self.config.max_table_chars,
                                 max_kg_chars=self.config.max_kg_chars, generator=self.generator,
                                 max_tokens=self.config.max_reference_tokens)

    def answer(self, queries: Sequence[str], query_times: Sequence[str], references: Sequence[References],
               deadline: Deadline | None = None) -> list[ReasonedAnswer]:
        """One answer per question, in order."""
        texts = [self.render_references(r) for r in references]
        requests = [GenerationRequest(self.template.render(references=text, query=query, query_time=time),
                                      max_new_tokens=self.config.max_new_tokens)
                    for query, time, text in zip(queries, query_times, texts)]
        try:
            outputs = self.generator.generate(requests, deadline=self._stage_deadline(deadline)) if requests else []
        except Exception:
            log.exception("reasoning generation failed; falling back to the summarizer")
            outputs = [""] * len(requests)
        results: list[ReasonedAnswer | None] = []
        failed: list[int] = []
        for index, output in enumerate(outputs):
            try:
                results.append(ReasonedAnswer(parse_reasoning(output).answer, "reasoning", output))
            except ReasoningFormatError:
                results.append(None)
                failed.append(index)
        if failed and self.backup is not None:
            # The partial reasoning if there is any, otherwise the references it would have read.
            materials = [outputs[i] if outputs[i].strip() else texts[i] for i in failed]
            backups = self.backup.answers([queries[i] for i in failed], materials, deadline)
            for index, answer in zip(failed, backups):
                results[index] = ReasonedAnswer(answer, "backup", outputs[index])
        return [r if r is not None else ReasonedAnswer(IDK, "none", outputs[i]) for i, r in enumerate(results)]
