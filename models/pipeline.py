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

Every stage runs for the whole batch at once (one LLM call per stage, adapters chosen per request), asks
the shared `Deadline` before it starts, runs under its own share of the time left (`pipeline.stage_budgets`,
so KG generation that runs long is cut and the web and answer steps still run), and degrades per item: a
query whose stage fails or runs out of time keeps its earlier answer or gets "i don't know" — one bad page or
API string never costs the batch. What a batch did lives on its `BatchRun` (models/run.py), not here.
"""
from __future__ import annotations

import logging
import os
from typing import Sequence

from models.answering import AnswerSettings, Attempt, ReasoningAnswerer, ShortAnswerer, VerifyStep, generate_traced
from models.attributes import AttributePredictor
from models.calculator.tool import NumericalCalculator
from models.config import Config
from models.deadline import Deadline, check_stage_budgets
from models.embedder import Embedder
from models.llm.generator import Generator, make_generator
from models.llm.prompts import PromptLibrary
from models.reasoning import KnowledgeExtractor, Reasoner
from models.run import BatchRun, QueryState
from models.sources import Source, SourceParts, build_sources
from models.types import Answer, Query
from models.verify import SupportVerifier, Verifier
from models.verify.attribute_policy import AttributePolicy
from models.web import WebRetriever

log = logging.getLogger(__name__)


class Pipeline:
    """Assembled from config; components can be injected (tests pass fakes), and so can the sources."""

    def __init__(self, config: Config, generator: Generator, web: WebRetriever, router, kg=None,
                 public_data=None, prompts: PromptLibrary | None = None, grader_trim=None,
                 verifier: Verifier | None = None, attributes: AttributePredictor | None = None,
                 reasoner: Reasoner | None = None, knowledge: KnowledgeExtractor | None = None,
                 calculator: NumericalCalculator | None = None, sources: Sequence[Source] | None = None):
        c = config
        self.config, self.generator, self.router = config, generator, router
        self.web, self.kg, self.public_data = web, kg, public_data  # the components, as assembled (benchmarks)
        self.prompts = prompts or PromptLibrary()
        self.sources = list(sources) if sources is not None else build_sources(
            c.pipeline.sources, SourceParts(config, generator, web, kg, public_data))
        check_stage_budgets(c.pipeline.stage_budgets)
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
        generator = make_generator(config.llm, config.models_dir)
        embedder = Embedder.from_config(config.embedder, config.models_dir)
        web = WebRetriever.from_config(config.web, config.models_dir, embedder=embedder)
        router = make_router(config.routing, generator=generator, embedder=embedder)
        kg = None
        if config.pipeline.use_kg and _kg_expected(config.pipeline.task):
            kg = KGPathway.from_config(config.kg, embedder=embedder)
        public_data = None
        if config.pipeline.use_public_data:
            public_data = PublicData.from_config(config.public_data, embedder=embedder)
        grader_trim = load_grader_trim(config.pipeline.grader_tokenizer or None)
        prompts = PromptLibrary()  # one library for the answer steps and the verifier's check prompt
        verifier = SupportVerifier(config.verifier, embedder=embedder, generator=generator, prompts=prompts)
        attributes = None
        if config.attributes.enabled:
            attributes = AttributePredictor.from_config(config.attributes, embedder=embedder, generator=generator)
        return cls(config, generator, web, router, kg=kg, public_data=public_data, prompts=prompts,
                   grader_trim=grader_trim, verifier=verifier, attributes=attributes)

    def _answerer(self, grader_trim, reasoner, knowledge, calculator):
        """db3's short answer step, or (`reasoning.enabled`) ElectricSheep's reasoning step around it, with its
        knowledge extractor and calculator (the injected ones, else built on the generator)."""
        c, g = self.config, self.generator
        short = ShortAnswerer(g, self.prompts, AnswerSettings(c.web.context_max_tokens, c.pipeline.answer_word_limit,
                                                              c.pipeline.answer_max_new_tokens), grader_trim)
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
        for source in self.sources:                                                 # 2-5, in the profile's order
            if source.runs_in(run.task):
                run.stage(source.descriptor.stage, lambda states, d: self._consult(source, run, states, d), deadline)
        return run.answers()

    def _route(self, states: list[QueryState], deadline: Deadline) -> None:
        for state, domain in zip(states, self.router.route([s.query for s in states], deadline=deadline)):
            state.domain = domain

    def _consult(self, source: Source, run: BatchRun, states: list[QueryState], deadline: Deadline) -> None:
        """Asks `source` about the open queries (its native query written in one batched call), keeps each
        query's evidence, then answers what the source's plan allows."""
        native_stage = source.descriptor.native_stage
        if native_stage:
            requests = [(s, source.native_request(s.query, s.domain)) for s in states]
            requests = [(s, r) for s, r in requests if r is not None]
            asks = list(zip([s for s, _ in requests], generate_traced(self.generator, native_stage, requests,
                                                                      deadline)))
        else:
            asks = [(s, None) for s in states]
        for (state, _), evidence in zip(asks, source.retrieve(run, asks, deadline)):
            state.evidence[source.descriptor.name] = evidence
            source.trace(state, evidence, run)
        self._answer_from(source, run, [s for s, _ in asks], deadline)

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
