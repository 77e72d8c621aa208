"""The whole system in one place: db3's Figure 2 (Tasks 2/3) and Figure 1 (Task 1) as batched stages.

    queries ─► 1 route domains ─► 2 public data ─► 3 KG: generate API ─► parse/execute ─► value or answer ─► verify
                                                        │ (verified, not "i don't know": final)
                                                        ▼ otherwise
                                       4 web: extract ─► chunk ─► recall ─► rerank ─► <DOC> context
                                                        ▼
                                       5 short answer from public + web context ─► post-process ─► verify ─► answers
                                         or (ElectricSheep, `reasoning`): knowledge note + calculator lines ─►
                                            reasoning over all references ─► backup summarizer ─► verify

Steps 2-4 are knowledge sources (`models/sources/`), asked in the profile's order (`pipeline.sources`): each
writes its query in its own language (one batched LLM call), returns a frozen `Evidence` per query, and says how
the cascade answers from it (`answer_plan`): the KG with its program's own value or its facts, the web behind
the public-data facts, public data only through db3's shortcut. A verified answer that is not "i don't know"
settles its query; the last source answers the rest. Answers are made by the answering component
(`models/answering/`: db3's short answer step, or ElectricSheep's reasoning step for the last source) and
checked by the verify step (the verifier, then ElectricSheep's attribute policy when it is on): unsupported
means "i don't know". Each query carries a trace (`Answer.trace`) of what every stage did.

`pipeline.mode: omni` is OmniRetrieval's way (seed 002, models/omni/) over the same sources:

    queries ─► 1 route ─► select sources (per query: up to k, best first) ─► each chosen source: native query ─►
               retrieve ─► select evidence (all sources' items ranked into one context with their provenance;
               differing exact values settled by agreement, then preference) ─► the kept exact value, verified,
               or one answer from the whole context ─► verify ─► answers

Every stage runs for the whole batch at once (one LLM call per stage, adapters chosen per request), asks
the shared `Deadline` before it starts, runs under its own share of the time left (`pipeline.stage_budgets`,
so KG generation that runs long is cut and the web and answer steps still run), and degrades per item: a
query whose stage fails or runs out of time keeps its earlier answer or gets "i don't know" — one bad page or
API string never costs the batch. What a batch did lives on its `BatchRun` (models/run.py), not here.
"""
from __future__ import annotations

import logging
import os
from dataclasses import replace
from typing import Sequence

from models.adapter_fallback import without_missing_adapters
from models.answering import AnswerSettings, Attempt, ReasoningAnswerer, ShortAnswerer, VerifyStep, generate_traced
from models.attributes import AttributePredictor
from models.calculator.tool import NumericalCalculator
from models.config import Config
from models.deadline import Deadline, check_stage_budgets
from models.embedder import Embedder
from models.evidence import Evidence
from models.llm.generator import Generator, completions_of, make_generator
from models.llm.prompts import PromptLibrary
from models.llm.stand_in import BaseModelStandIn
from models.omni import Consolidated, EvidenceSelector, SourceSelector, make_source_selector
from models.reasoning import KnowledgeExtractor, Reasoner
from models.run import BatchRun, QueryState
from models.sources import Source, SourceParts, build_sources
from models.types import Answer, Query
from models.verify import SupportVerifier, Verifier
from models.verify.attribute_policy import AttributePolicy
from models.warmup import WarmUpReport, warm_up
from models.web import WebRetriever, make_web_retriever

log = logging.getLogger(__name__)

MODES = ("db3", "omni")


class Pipeline:
    """Assembled from config; components can be injected (tests pass fakes), and so can the sources."""

    def __init__(self, config: Config, generator: Generator, web: WebRetriever, router, kg=None,
                 public_data=None, prompts: PromptLibrary | None = None, grader_trim=None,
                 verifier: Verifier | None = None, attributes: AttributePredictor | None = None,
                 reasoner: Reasoner | None = None, knowledge: KnowledgeExtractor | None = None,
                 calculator: NumericalCalculator | None = None, sources: Sequence[Source] | None = None,
                 source_selector: SourceSelector | None = None, evidence_selector: EvidenceSelector | None = None):
        c = config
        self.config, self.generator, self.router = config, generator, router
        self.web, self.kg, self.public_data = web, kg, public_data  # the components, as assembled (benchmarks)
        self.prompts = prompts or PromptLibrary()
        self.sources = list(sources) if sources is not None else build_sources(
            c.pipeline.sources, SourceParts(config, generator, web, kg, public_data))
        check_stage_budgets(c.pipeline.stage_budgets)
        if c.pipeline.mode not in MODES:
            raise ValueError(f"unknown pipeline.mode {c.pipeline.mode!r}; expected one of {list(MODES)}")
        if c.pipeline.mode == "omni" and source_selector is None:
            raise ValueError("pipeline.mode omni needs a source selector (Pipeline.from_config builds it)")
        self.source_selector = source_selector
        self.evidence_selector = evidence_selector or EvidenceSelector(c.omni.evidence)
        if c.attributes.enabled and attributes is None:
            raise ValueError("attributes.enabled needs an AttributePredictor (Pipeline.from_config builds it)")
        self.attribute_policy = AttributePolicy(attributes, c.attributes, c.verifier) if c.attributes.enabled \
            else None
        self.verify = VerifyStep(verifier or SupportVerifier(c.verifier, generator=generator, prompts=self.prompts),
                                 self.attribute_policy)
        self.answerer = self._answerer(grader_trim, reasoner, knowledge, calculator)
        self.last_run: BatchRun | None = None  # the previous batch's run (stage seconds, for benchmarks)
        # Fail at start-up, not mid-batch, on a prompt or adapter the profile names but cannot serve.
        for name in (c.pipeline.answer_prompt, c.pipeline.kg_answer_prompt):
            self.prompts.get(name)
        adapters = getattr(generator, "adapters", None)
        if adapters is not None:
            adapters.require([c.pipeline.answer_adapter, c.pipeline.kg_answer_adapter, c.kg.api_adapter,
                              c.public_data.entity_adapter])

    @classmethod
    def from_config(cls, config: Config) -> "Pipeline":
        from models.kg.pathway import KGPathway
        from models.public_data import PublicData
        from models.routing import make_router
        from models.trim import load_grader_trim

        # The LLM first: vLLM forks its tensor-parallel workers unless VLLM_WORKER_MULTIPROC_METHOD=spawn (the
        # Dockerfile sets it), and a worker forked from a process that has initialised CUDA fails; so nothing
        # touches CUDA before the engine exists (README "g4dn start-up").
        config, missing = without_missing_adapters(config)  # a missing adapter: the base model stands in
        generator = make_generator(config.llm, config.models_dir)
        if missing:
            generator = BaseModelStandIn(generator, missing)
        embedder = Embedder.from_config(config.embedder, config.models_dir)
        prompts = PromptLibrary()  # one library for the answer steps, the verifier's check prompt and ARM's prompts
        web = make_web_retriever(config.web, config.models_dir, embedder, generator=generator, prompts=prompts)
        router = make_router(config.routing, generator=generator, embedder=embedder)
        kg = None
        if config.pipeline.use_kg and _kg_expected(config.pipeline.task):
            kg = KGPathway.from_config(config.kg, embedder=embedder)
        public_data = None
        if config.pipeline.use_public_data:
            public_data = PublicData.from_config(config.public_data, embedder=embedder)
        grader_trim = load_grader_trim(config.pipeline.grader_tokenizer or None)
        verifier = SupportVerifier(config.verifier, embedder=embedder, generator=generator, prompts=prompts)
        attributes = None
        if config.attributes.enabled:
            attributes = AttributePredictor.from_config(config.attributes, embedder=embedder, generator=generator)
        source_selector = evidence_selector = None
        if config.pipeline.mode == "omni":
            source_selector = make_source_selector(config.omni.selection, embedder=embedder, generator=generator,
                                                   prompts=prompts)
            source_selector.warm_up()  # the example pools are embedded at start-up, not in the first graded batch
            evidence_selector = EvidenceSelector(config.omni.evidence, embedder=embedder)
        return cls(config, generator, web, router, kg=kg, public_data=public_data, prompts=prompts,
                   grader_trim=grader_trim, verifier=verifier, attributes=attributes,
                   source_selector=source_selector, evidence_selector=evidence_selector)

    def _answerer(self, grader_trim, reasoner, knowledge, calculator):
        """db3's short answer step, or (`reasoning.enabled`) ElectricSheep's reasoning step around it, with its
        knowledge extractor and calculator (the injected ones, else built on the generator)."""
        c, g = self.config, self.generator
        a = c.answering
        short = ShortAnswerer(g, self.prompts, AnswerSettings(c.web.context_max_tokens, c.pipeline.answer_word_limit,
                                                              c.pipeline.answer_max_new_tokens, a.logprobs, a.samples,
                                                              a.sample_temperature), grader_trim)
        if c.calculator.enabled and not c.reasoning.enabled:
            raise ValueError("calculator.enabled needs reasoning.enabled: its results are references of the "
                             "reasoning step")
        if not c.reasoning.enabled:
            return short
        if c.reasoning.knowledge.enabled:
            knowledge = knowledge or KnowledgeExtractor(c.reasoning.knowledge, g, self.prompts)
        if c.calculator.enabled:
            calculator = calculator or NumericalCalculator(c.calculator, g, self.prompts)
        return ReasoningAnswerer(short, reasoner or Reasoner(c.reasoning, g, self.prompts), c.reasoning.tasks,
                                 knowledge if c.reasoning.knowledge.enabled else None, c.reasoning.knowledge.tasks,
                                 calculator if c.calculator.enabled else None, c.calculator.tasks)

    def warm_up(self) -> WarmUpReport:
        """Uses every adapter and every source's grammar once (models/warmup.py): on vLLM their kernels and
        grammars compile here, at start-up, not in the first graded batches."""
        adapters = getattr(self.generator, "adapters", None)
        return warm_up(self.generator, adapters.names if adapters is not None else (), self.sources)

    def task_for(self, queries: Sequence[Query]) -> int:
        """The configured task, or (task 0) the one the batch looks like: 50 pages = 3, a KG API = 2, else 1."""
        if self.config.pipeline.task:
            return self.config.pipeline.task
        if any(len(q.search_results) > 5 for q in queries):
            return 3
        return 2 if any(s.descriptor.name == "kg" for s in self.sources) else 1

    # ------------------------------------------------------------------ the figure
    def answer(self, queries: Sequence[Query], deadline: Deadline | None = None) -> list[Answer]:
        """Answers every query, in order; never raises for one bad query."""
        deadline = deadline or Deadline(None)
        run = self.last_run = BatchRun.start(queries, self.task_for(queries), self.config.pipeline.stage_budgets)
        run.stage("route", self._route, deadline)                                   # 1
        if self.attribute_policy is not None:  # ElectricSheep's static/dynamic prediction (off by default)
            run.stage("attributes", lambda states, d: self.attribute_policy.predict(run.task, states, d), deadline)
        if self.config.pipeline.mode == "omni":                                     # OmniRetrieval
            self._omni(run, deadline)
            return run.answers()
        for source in self.sources:                                                 # 2-5, in the profile's order
            if source.runs_in(run.task):
                run.stage(source.descriptor.stage, lambda states, d: self._consult(source, run, states, d), deadline)
        return run.answers()

    def _omni(self, run: BatchRun, deadline: Deadline) -> None:
        sources = [s for s in self.sources if s.runs_in(run.task)]
        run.stage("select sources", lambda states, d: self._select_sources(sources, states, d), deadline)
        for source in sources:  # (a query whose selection failed, engaged None, asks every source)
            run.stage(source.descriptor.stage, lambda states, d: self._gather(
                source, run, [s for s in states if s.engaged is None or source.descriptor.name in s.engaged], d),
                deadline)
        run.stage("select evidence", lambda states, d: self._select_evidence(sources, states), deadline)
        run.stage("answer", lambda states, d: self._answer_selected(run, states, d), deadline)

    def _route(self, states: list[QueryState], deadline: Deadline) -> None:
        for state, domain in zip(states, self.router.route([s.query for s in states], deadline=deadline)):
            state.domain = domain

    def _consult(self, source: Source, run: BatchRun, states: list[QueryState], deadline: Deadline) -> None:
        """Asks `source` about the open queries, then answers what the source's plan allows."""
        self._answer_from(source, run, self._gather(source, run, states, deadline), deadline)

    def _gather(self, source: Source, run: BatchRun, states: list[QueryState], deadline: Deadline
                ) -> list[QueryState]:
        """Asks `source` about `states` (its native query written in one batched call) and keeps each query's
        evidence; returns the states it asked (a source with a native stage skips those it has no query for)."""
        if not states:
            return []
        native_stage = source.descriptor.native_stage
        if native_stage:
            requests = [(s, source.native_request(s.query, s.domain)) for s in states]
            requests = [(s, replace(r, logprobs=self.config.answering.logprobs)) for s, r in requests if r is not None]
            outputs = generate_traced(self.generator, native_stage, requests, deadline)
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

    def _answer_from(self, source: Source, run: BatchRun, states: list[QueryState], deadline: Deadline) -> None:
        """Direct values first (checked without a model call), then one answer call per plan; on the last source
        whatever the verify step decides is final."""
        final = source is self.sources[-1]
        plans = [(s, source.answer_plan(s, run.task)) for s in states]
        direct = [(s, p) for s, p in plans if p is not None and p.direct]
        for plan in dict.fromkeys(p for _, p in direct):
            self.verify.settle(plan.pathway, [_direct(s, source) for s, p in direct if p == plan], deadline, final)
        asked = [(s, p) for s, p in plans if p is not None and not p.direct]
        for plan in dict.fromkeys(p for _, p in asked):
            contexts = [(s, _context(s, source, plan)) for s, p in asked if p == plan]
            pathway, attempts = self.answerer.answer(run, contexts, plan.pathway, plan.prompt, plan.adapter, deadline,
                                                     final)
            self.verify.settle(pathway, attempts, deadline, final)

    # ------------------------------------------------------------------ OmniRetrieval (pipeline.mode: omni)
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

    def _answer_selected(self, run: BatchRun, states: list[QueryState], deadline: Deadline) -> None:
        """The kept exact value where there is one (checked against its source's items, as in db3), then one
        answer call over the whole selected context for every query still open; that answer is final."""
        direct = [s for s in states if s.evidence_of("omni").direct]
        for pathway in dict.fromkeys(_exact_pathway(s) for s in direct):
            self.verify.settle(pathway, [_chosen(s) for s in direct if _exact_pathway(s) == pathway], deadline,
                               final=False)
        rest = [s for s in states if s.answer is None]
        if not rest:
            return
        p = self.config.pipeline
        contexts = [(s, list(s.evidence_of("omni").items)) for s in rest]
        pathway, attempts = self.answerer.answer(run, contexts, "omni", p.answer_prompt, p.answer_adapter, deadline,
                                                 True)
        self.verify.settle(pathway, attempts, deadline, True)


def _as_evidence(picked: Consolidated) -> Evidence:
    chosen = picked.chosen
    return Evidence("omni", picked.items, chosen.value if chosen else "",
                    {"from": chosen.source if chosen else ""})


def _exact_pathway(state: QueryState) -> str:
    return f"{state.evidence_of('omni').provenance['from']}-direct"


def _chosen(state: QueryState) -> Attempt:
    """The kept exact value as the answer, checked against the items of the source that gave it."""
    source = state.evidence_of("omni").provenance["from"]
    value = state.evidence_of("omni").direct
    return Attempt(state, value, value, state.evidence_of(source).items)


def _direct(state: QueryState, source: Source) -> Attempt:
    """The source's direct value as the answer, checked against the source's own items."""
    evidence = state.evidence_of(source.descriptor.name)
    return Attempt(state, evidence.direct, evidence.direct, evidence.items)


def _context(state: QueryState, source: Source, plan) -> list:
    """The chunks an answer is made from: the evidence of the sources the plan puts first, then the source's own."""
    names = (*plan.context_from, source.descriptor.name)
    return [chunk for name in names for chunk in state.evidence_of(name).items]


def _kg_expected(task: int) -> bool:
    """Whether to build the KG pathway: Tasks 2/3, or auto-detect with a mock API URL in the environment."""
    return task in (2, 3) or (task == 0 and bool(os.environ.get("CRAG_MOCK_API_URL")))
