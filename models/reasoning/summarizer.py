"""The backup summarizer (ElectricSheep §4.7, "Incorrect Format"): a short answer from what is there.

It runs for the questions whose reasoning output has no parsable final answer: the output was cut by
`max_new_tokens`, wandered off the format, or never started because the reasoning stage's time budget ran
out. Its material is the partial reasoning output, or, when there is none, the references themselves.
"""
from __future__ import annotations

import logging
from typing import Sequence

from models.deadline import Deadline
from models.llm.generator import GenerationRequest, Generator
from models.llm.postprocess import clean_answer
from models.llm.prompts import PromptLibrary
from models.reasoning.config import BackupConfig
from models.types import IDK

log = logging.getLogger(__name__)


class BackupSummarizer:
    def __init__(self, config: BackupConfig, generator: Generator, prompts: PromptLibrary | None = None):
        self.config = config
        self.generator = generator
        self.template = (prompts or PromptLibrary()).get(config.prompt)

    def answers(self, queries: Sequence[str], materials: Sequence[str], deadline: Deadline | None = None) -> list[str]:
        """One cleaned answer per question (`i don't know` when there is no material or no time)."""
        results = [IDK] * len(queries)
        todo = [i for i, material in enumerate(materials) if material.strip()]
        if not todo:
            return results
        requests = [GenerationRequest(self.template.render(query=queries[i],
                                                           material=materials[i][:self.config.max_input_chars]),
                                      max_new_tokens=self.config.max_new_tokens, stop=("\n\n",))
                    for i in todo]
        try:
            outputs = self.generator.generate(requests, deadline=deadline)
        except Exception:
            log.exception("backup summarizer failed; answering i don't know")
            return results
        for index, output in zip(todo, outputs):
            results[index] = clean_answer(output)
        return results
