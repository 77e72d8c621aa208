"""Static/dynamic by in-context learning with self-consistency (ElectricSheep §4.2, Appendix D.1).

Each question gets one prompt: a random draw of `few_shot` demonstrations per class (ElectricSheep drew
demonstrations at random from public CRAG questions; seeded by the question, so runs repeat), in shuffled order.
Its `samples` votes are that many completions sampled at `temperature` from one request
(`GenerationRequest.n`): self-consistency as the paper defines it, the same mechanism the answer step's samples
use, not a prompt variant per vote. A vote that names neither class abstains; the majority of the others wins,
ties and no-votes go to "dynamic" (the cautious side: a dynamic question is the one the profile may refuse).
"""
from __future__ import annotations

import logging
import random
import re
import zlib
from collections import Counter
from typing import Sequence

from models.attributes.config import AttributeConfig
from models.deadline import Deadline
from models.llm.generator import GenerationRequest, Generator, completions_of
from models.llm.prompts import PromptLibrary

log = logging.getLogger(__name__)

_WORD = re.compile(r"\b(static|dynamic)\b", re.IGNORECASE)


def parse_vote(output: str) -> str | None:
    """The first of "static"/"dynamic" in a completion, or None."""
    match = _WORD.search(output or "")
    return match.group(1).lower() if match else None


def vote(votes: Sequence[str | None]) -> str:
    counts = Counter(v for v in votes if v)
    return "static" if counts["static"] > counts["dynamic"] else "dynamic"


class LLMAttributePredictor:
    def __init__(self, config: AttributeConfig, generator: Generator, examples: Sequence[tuple[str, str]],
                 prompts: PromptLibrary | None = None):
        by_label: dict[str, list[str]] = {"static": [], "dynamic": []}
        for text, label in examples:
            by_label[label].append(text)
        if not all(by_label.values()):
            raise ValueError("the LLM attribute predictor needs demonstrations of both classes")
        self.config = config
        self.generator = generator
        self.by_label = by_label
        self.template = (prompts or PromptLibrary()).get(config.prompt)

    def _demonstrations(self, query: str) -> str:
        # Seeded by the question: the same question always gets the same prompt (and a demonstration identical
        # to the question itself is never drawn).
        rng = random.Random(zlib.crc32(f"{self.config.seed}/{query}".encode()))
        chosen = [(text, label) for label, texts in self.by_label.items()
                  for text in rng.sample([t for t in texts if t != query], min(self.config.few_shot, len(texts) - 1))]
        rng.shuffle(chosen)
        return "\n".join(f"-----\nQuestion: {text}\nStatic or dynamic: {label}" for text, label in chosen)

    def predict(self, queries: Sequence[str], deadline: Deadline | None = None) -> list[str]:
        """One label per question ("dynamic" when the generator fails or gives no vote)."""
        n = self.config.samples
        requests = [GenerationRequest(self.template.render(examples=self._demonstrations(q), query=q),
                                      max_new_tokens=self.config.max_new_tokens, n=n,
                                      temperature=self.config.temperature if n > 1 else None)
                    for q in queries]
        try:
            outputs = self.generator.generate(requests, deadline=deadline) if requests else []
        except Exception:
            log.exception("LLM attribute prediction failed; treating the batch as dynamic")
            return ["dynamic"] * len(queries)
        return [vote([parse_vote(c.text) for c in completions_of(outputs, i)]) for i in range(len(queries))]
