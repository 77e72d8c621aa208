"""Consulting one source about a batch's queries: the step both modes share (db3's cascade and OmniRetrieval's).

The source's native queries are written in one batched LLM call (`Descriptor.native_stage`), then the source
retrieves one `Evidence` per query, kept on its state and traced.
"""
from __future__ import annotations

from dataclasses import replace

from models.answering.llm_calls import generate_traced
from models.deadline import Deadline
from models.llm.generator import Generator, completions_of
from models.run import BatchRun, QueryState
from models.sources.base import Source


def gather(source: Source, run: BatchRun, states: list[QueryState], deadline: Deadline, generator: Generator,
           logprobs: bool) -> list[QueryState]:
    """Asks `source` about `states` (its native query written in one batched call, with the model's
    log-probabilities when `logprobs`) and keeps each query's evidence; returns the states it asked (a source
    with a native stage skips those it has no query for)."""
    if not states:
        return []
    native_stage = source.descriptor.native_stage
    if native_stage:
        requests = [(s, source.native_request(s.query, s.domain)) for s in states]
        requests = [(s, replace(r, logprobs=logprobs)) for s, r in requests if r is not None]
        outputs = generate_traced(generator, native_stage, requests, deadline)
        asks = list(zip([s for s, _ in requests], outputs))
        for k, (state, _) in enumerate(requests):  # how sure the model was of its query: the gate's evidence
            written = completions_of(outputs, k)
            if written and written[0].token_logprobs:
                state.query_logprobs[source.descriptor.name] = round(written[0].mean_logprob, 4)
    else:
        asks = [(s, None) for s in states]
    for (state, _), evidence in zip(asks, source.retrieve(run, asks, deadline)):
        state.evidence[source.descriptor.name] = evidence
        source.trace(state, evidence, run)
    return [s for s, _ in asks]
