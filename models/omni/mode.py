"""OmniRetrieval's figure (the OmniRetrieval paper; `pipeline.mode: omni`) over the Source seam's sources:

    queries ─► (routed) ─► select sources (per query: up to k, best first) ─► each chosen source: native query ─►
               retrieve ─► select evidence (all sources' items ranked into one context with their provenance;
               differing exact values settled by agreement, then preference) ─► the kept exact value, verified,
               or one answer from the whole context ─► verify ─► answers

Each step is one stage of the batch's `BatchRun`, under the same deadline and per-item isolation as db3's cascade
(`models/pipeline.py`), which builds this mode when the profile asks for it.
"""
from __future__ import annotations

from typing import Sequence

from models.answering import Attempt
from models.deadline import Deadline
from models.evidence import Evidence
from models.omni.consolidate import Consolidated, EvidenceSelector
from models.omni.selection import SourceSelector
from models.pathways import OMNI, Pathway
from models.run import BatchRun, QueryState
from models.sources.base import Source
from models.sources.gather import gather


class OmniMode:
    """Answers a routed batch the OmniRetrieval way.

    Args:
        config: the resolved profile (`pipeline` for the answer prompt and adapter, `answering.logprobs`).
        generator, verify, answerer: the pipeline's LLM, verify step and answer step (shared with db3's cascade).
        source_selector, evidence_selector: `omni.selection` and `omni.evidence`.
    """

    def __init__(self, config, generator, verify, answerer, source_selector: SourceSelector,
                 evidence_selector: EvidenceSelector):
        self.config, self.generator, self.verify, self.answerer = config, generator, verify, answerer
        self.source_selector, self.evidence_selector = source_selector, evidence_selector

    def answer(self, run: BatchRun, sources: Sequence[Source], deadline: Deadline) -> None:
        sources = [s for s in sources if s.runs_in(run.task)]
        run.stage("select sources", lambda states, d: self._select_sources(sources, states, d), deadline)
        for source in sources:  # (a query whose selection failed, engaged None, asks every source)
            run.stage(source.descriptor.stage, lambda states, d: gather(
                source, run, [s for s in states if s.engaged is None or source.descriptor.name in s.engaged], d,
                self.generator, self.config.answering.logprobs), deadline)
        run.stage("select evidence", lambda states, d: self._select_evidence(sources, states), deadline)
        own_values = {s.descriptor.name: s.descriptor.own_value for s in sources}
        run.stage("answer", lambda states, d: self._answer_selected(run, states, own_values, d), deadline)

    def _select_sources(self, sources: list[Source], states: list[QueryState], deadline: Deadline) -> None:
        descriptors = [s.descriptor for s in sources]
        choices = self.source_selector.select([s.query.text for s in states], descriptors, deadline, states)
        for state, choice in zip(states, choices):
            state.engaged = choice.engaged
            state.trace["omni"] = {"selection": choice.as_trace()}

    def _select_evidence(self, sources: list[Source], states: list[QueryState]) -> None:
        """One `Consolidated` per query, kept as its "omni" evidence (the context, the kept exact value)."""
        names = [s.descriptor.name for s in sources]
        for state in states:
            engaged = [n for n in names if n in (state.engaged or names)]
            dates = {p.page_url: p.page_last_modified for p in state.query.search_results}
            picked = self.evidence_selector.select(state.query.text, state.evidence, engaged, dates)
            state.evidence["omni"] = _as_evidence(picked)
            state.trace.setdefault("omni", {})["evidence"] = dict(picked.trace)

    def _answer_selected(self, run: BatchRun, states: list[QueryState], own_values: dict[str, Pathway | None],
                         deadline: Deadline) -> None:
        """The kept exact value where there is one (checked against its source's items, as in db3, under the
        source's declared own-value pathway), then one answer call over the whole selected context for every query
        still open; that answer is final."""
        direct = [s for s in states if s.evidence_of("omni").direct]
        for source in dict.fromkeys(_exact_source(s) for s in direct):
            pathway = own_values.get(source)
            if pathway is None:  # a direct value its source never declared would be checked as a model's answer
                raise ValueError(f"source {source!r} gave an exact value but declares no `Descriptor.own_value`")
            self.verify.settle(pathway, [_chosen(s) for s in direct if _exact_source(s) == source],
                               deadline, final=False, source=source)
        rest = [s for s in states if s.answer is None]
        if not rest:
            return
        p = self.config.pipeline
        contexts = [(s, list(s.evidence_of("omni").items)) for s in rest]
        pathway, attempts = self.answerer.answer(run, contexts, OMNI, p.answer_prompt, p.answer_adapter, deadline,
                                                 True)
        self.verify.settle(pathway, attempts, deadline, True)


def _as_evidence(picked: Consolidated) -> Evidence:
    chosen = picked.chosen
    return Evidence("omni", picked.items, chosen.value if chosen else "",
                    {"from": chosen.source if chosen else ""})


def _exact_source(state: QueryState) -> str:
    """The source whose exact value was kept (its pathway is the source's `Descriptor.own_value`)."""
    return state.evidence_of("omni").provenance["from"]


def _chosen(state: QueryState) -> Attempt:
    """The kept exact value as the answer, checked against the items of the source that gave it."""
    source = state.evidence_of("omni").provenance["from"]
    value = state.evidence_of("omni").direct
    return Attempt(state, value, value, state.evidence_of(source).items)
