"""db3's answer step: one prompt over the context, one batched LLM call, the reply cleaned to a short answer."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from models.answering.attempt import Attempt
from models.answering.llm_calls import generate_traced
from models.isolation import fallback_reasons
from models.llm.generator import GenerationRequest, Generator, completions_of
from models.llm.postprocess import clean_answer
from models.llm.prompts import PromptLibrary
from models.pathways import Pathway
from models.run import BatchRun, QueryState
from models.types import IDK, Chunk
from models.web import format_context

# Answers are one line; a blank line or a self-made next question means the model is rambling (saves time).
ANSWER_STOPS = ("\n\n", " Question:")


@dataclass(frozen=True)
class AnswerSettings:
    """The answer prompt's limits (from `pipeline` and `web.context_max_tokens`) and what is measured about each
    answer (`answering`: its token log-probabilities, k sampled answers beside it)."""

    context_max_tokens: int
    word_limit: int
    max_new_tokens: int
    logprobs: bool = False
    samples: int = 0
    sample_temperature: float = 0.7


class ShortAnswerer:
    """Answers each query from its own chunks with `prompt` (prompts/<name>.txt) under `adapter`.

    The answer is the greedy completion. With `settings.samples` = k, one more request per query draws k answers
    at `sample_temperature` in the same batched call, after the greedy ones (a deadline cuts the samples first);
    they go to the verifier as `signals["samples"]`, which counts how many state the checked answer.
    """

    def __init__(self, generator: Generator, prompts: PromptLibrary, settings: AnswerSettings, grader_trim=None):
        self.generator, self.prompts, self.settings, self.grader_trim = generator, prompts, settings, grader_trim

    def answer(self, run: BatchRun, asks: Sequence[tuple[QueryState, Sequence[Chunk]]], pathway: Pathway, prompt: str,
               adapter: str | None, deadline, final: bool = False) -> tuple[Pathway, list[Attempt]]:
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
        settings = self.settings
        if settings.logprobs:
            requests = [(s, c, replace(r, logprobs=True)) for s, c, r in requests]
        asks = [(s, r) for s, _, r in requests]
        sampled = [(s, replace(r, temperature=settings.sample_temperature, n=settings.samples, logprobs=False))
                   for s, r in asks] if settings.samples else []
        outputs = generate_traced(self.generator, f"answer {prompt}", asks + sampled, deadline)
        errors = fallback_reasons(outputs)
        attempts = []
        for k, (state, chunks, _) in enumerate(requests):
            raw, signals = outputs[k], {}
            greedy = completions_of(outputs, k)
            if greedy and greedy[0].token_logprobs:
                signals.update(mean_logprob=round(greedy[0].mean_logprob, 4), min_logprob=round(greedy[0].min_logprob, 4))
            if sampled:
                samples = [clean_answer(c.text, self.grader_trim) for c in completions_of(outputs, len(asks) + k)]
                if samples:
                    signals["samples"] = samples
            attempts.append(Attempt(state, raw, clean_answer(raw, self.grader_trim), chunks, errors.get(k), signals))
        return pathway, empty + attempts
