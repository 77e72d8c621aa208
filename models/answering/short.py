"""db3's answer step: one prompt over the context, one batched LLM call, the reply cleaned to a short answer."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from models.answering.attempt import Attempt
from models.answering.llm_calls import generate_traced
from models.isolation import fallback_reasons
from models.llm.generator import GenerationRequest, Generator
from models.llm.postprocess import clean_answer
from models.llm.prompts import PromptLibrary
from models.run import BatchRun, QueryState
from models.types import IDK, Chunk
from models.web import format_context

# Answers are one line; a blank line or a self-made next question means the model is rambling (saves time).
ANSWER_STOPS = ("\n\n", " Question:")


@dataclass(frozen=True)
class AnswerSettings:
    """The answer prompt's limits (from `pipeline` and `web.context_max_tokens`)."""

    context_max_tokens: int
    word_limit: int
    max_new_tokens: int


class ShortAnswerer:
    """Answers each query from its own chunks with `prompt` (prompts/<name>.txt) under `adapter`."""

    def __init__(self, generator: Generator, prompts: PromptLibrary, settings: AnswerSettings, grader_trim=None):
        self.generator, self.prompts, self.settings, self.grader_trim = generator, prompts, settings, grader_trim

    def answer(self, run: BatchRun, asks: Sequence[tuple[QueryState, Sequence[Chunk]]], pathway: str, prompt: str,
               adapter: str | None, deadline, final: bool = False) -> tuple[str, list[Attempt]]:
        """(pathway, attempts): a query with no context is "i don't know" without a call (raw None), listed
        first; the others in order, from one batched call."""
        template = self.prompts.get(prompt)
        empty, requests = [], []
        for state, chunks in asks:
            context = format_context(list(chunks), self.generator, self.settings.context_max_tokens)
            if not context:
                empty.append(Attempt(state, None, IDK, tuple(chunks)))
                continue
            messages = template.render(context=context, query=state.query.text, query_time=state.query.query_time,
                                       token_limit=self.settings.word_limit)
            requests.append((state, tuple(chunks), GenerationRequest(
                messages, adapter=adapter, max_new_tokens=self.settings.max_new_tokens, stop=ANSWER_STOPS)))
        outputs = generate_traced(self.generator, f"answer {prompt}", [(s, r) for s, _, r in requests], deadline)
        errors = fallback_reasons(outputs)
        return pathway, empty + [Attempt(state, raw, clean_answer(raw, self.grader_trim), chunks, errors.get(k))
                                 for k, ((state, chunks, _), raw) in enumerate(zip(requests, outputs))]
