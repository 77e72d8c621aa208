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

`pipeline.mode: omni` answers the routed batch OmniRetrieval's way instead (`models/omni/mode.py`), over
the same sources, verify step and answer step. The parts (the LLM, the embedder, the sources, the verifier, ...) come
assembled by registration (`models/parts.py`, built-ins in `models/assembly.py`).

Every stage runs for the whole batch at once (one LLM call per stage, adapters chosen per request), asks
the shared `Deadline` before it starts, runs under its own share of the time left (`pipeline.stage_budgets`,
so KG generation that runs long is cut and the web and answer steps still run), and degrades per item: a
query whose stage fails or runs out of time keeps its earlier answer or gets "i don't know" — one bad page or
API string never costs the batch. What a batch did lives on its `BatchRun` (models/run.py), not here.
"""
from __future__ import annotations

import logging
from typing import Sequence

import models.assembly  # noqa: F401 - registers the built-in parts
from models.adapter_fallback import without_missing_adapters
from models.answering import Attempt, VerifyStep
from models.config import Config
from models.deadline import Deadline, check_stage_budgets
from models.llm.generator import make_generator
from models.omni.mode import OmniMode
from models.parts import Parts
from models.run import BatchRun, QueryState
from models.sources import Source
from models.sources.gather import gather
from models.types import Answer, Query
from models.verify.attribute_policy import AttributePolicy
from models.warmup import WarmUpReport, warm_up

log = logging.getLogger(__name__)

MODES = ("db3", "omni")


class Pipeline:
    """db3's cascade over the parts of `parts`: the given components (tests pass fakes) and the registered ones."""

    def __init__(self, parts: Parts):
        c = self.config = parts.config
        check_stage_budgets(c.pipeline.stage_budgets)  # the profile's own mistakes first, before anything loads
        if c.pipeline.mode not in MODES:
            raise ValueError(f"unknown pipeline.mode {c.pipeline.mode!r}; expected one of {list(MODES)}")
        self.parts = parts
        self.generator, self.router, self.prompts = parts.get("generator"), parts.get("router"), parts.get("prompts")
        self.sources: list[Source] = list(parts.get("sources"))
        if c.pipeline.mode == "omni" and not parts.has("source_selector"):
            raise ValueError("pipeline.mode omni needs a source selector (Pipeline.from_config builds it)")
        if c.attributes.enabled and not parts.has("attributes"):
            raise ValueError("attributes.enabled needs an AttributePredictor (Pipeline.from_config builds it)")
        self.attribute_policy = AttributePolicy(parts.get("attributes"), c.attributes, c.verifier) \
            if c.attributes.enabled else None
        self.verify = VerifyStep(parts.get("verifier"), self.attribute_policy)
        self.answerer = parts.get("answerer")
        self.omni = OmniMode(c, self.generator, self.verify, self.answerer, parts.get("source_selector"),
                             parts.get("evidence_selector")) if c.pipeline.mode == "omni" else None
        self.last_run: BatchRun | None = None  # the previous batch's run (stage seconds, for benchmarks)
        # Fail at start-up, not mid-batch, on a prompt or adapter the profile names but cannot serve.
        for name in (c.pipeline.answer_prompt, c.pipeline.kg_answer_prompt):
            self.prompts.get(name)
        self.generator.adapters.require([c.pipeline.answer_adapter, c.pipeline.kg_answer_adapter, c.kg.api_adapter,
                                         c.public_data.entity_adapter])

    @classmethod
    def from_config(cls, config: Config) -> "Pipeline":
        """Every part the profile asks for, built (all weights load here); the LLM first: vLLM forks its
        tensor-parallel workers unless VLLM_WORKER_MULTIPROC_METHOD=spawn (the Dockerfile sets it), and a worker
        forked from a process that has initialised CUDA fails; so nothing touches CUDA before the engine exists
        (docs/gpu.md "g4dn start-up")."""
        config, missing = without_missing_adapters(config)  # a missing adapter: the base model stands in
        return cls(Parts.assemble(config, generator=make_generator(config.llm, config.models_dir, missing)))

    # the components, as assembled (benchmarks and tests read them)
    @property
    def web(self):
        return self.parts.get("web")

    @property
    def kg(self):
        return self.parts.get("kg")

    @property
    def public_data(self):
        return self.parts.get("public_data")

    def warm_up(self) -> WarmUpReport:
        """Uses every adapter and every source's grammar once (models/warmup.py): on vLLM their kernels and
        grammars compile here, at start-up, not in the first graded batches."""
        return warm_up(self.generator, self.generator.adapters.names, self.sources)

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
        if self.omni is not None:                                                   # OmniRetrieval
            self.omni.answer(run, self.sources, deadline)
            return run.answers()
        for source in self.sources:                                                 # 2-5, in the profile's order
            if source.runs_in(run.task):
                run.stage(source.descriptor.stage, lambda states, d: self._consult(source, run, states, d), deadline)
        return run.answers()

    def _route(self, states: list[QueryState], deadline: Deadline) -> None:
        for state, domain in zip(states, self.router.route([s.query for s in states], deadline=deadline)):
            state.domain = domain

    def _consult(self, source: Source, run: BatchRun, states: list[QueryState], deadline: Deadline) -> None:
        """Asks `source` about the open queries, then answers what the source's plan allows."""
        gathered = gather(source, run, states, deadline, self.generator, self.config.answering.logprobs)
        self._answer_from(source, run, gathered, deadline)

    def _answer_from(self, source: Source, run: BatchRun, states: list[QueryState], deadline: Deadline) -> None:
        """Direct values first (checked without a model call), then one answer call per plan; on the last source
        whatever the verify step decides is final."""
        final, name = source is self.sources[-1], source.descriptor.name
        plans = [(s, source.answer_plan(s, run.task)) for s in states]
        direct = [(s, p) for s, p in plans if p is not None and p.direct]
        for plan in dict.fromkeys(p for _, p in direct):
            self.verify.settle(plan.pathway, [_direct(s, source) for s, p in direct if p == plan], deadline, final,
                               name)
        asked = [(s, p) for s, p in plans if p is not None and not p.direct]
        for plan in dict.fromkeys(p for _, p in asked):
            contexts = [(s, _context(s, source, plan)) for s, p in asked if p == plan]
            pathway, attempts = self.answerer.answer(run, contexts, plan.pathway, plan.prompt, plan.adapter, deadline,
                                                     final)
            self.verify.settle(pathway, attempts, deadline, final, name)


def _direct(state: QueryState, source: Source) -> Attempt:
    """The source's direct value as the answer, checked against the source's own items."""
    evidence = state.evidence_of(source.descriptor.name)
    return Attempt(state, evidence.direct, evidence.direct, evidence.items)


def _context(state: QueryState, source: Source, plan) -> list:
    """The chunks an answer is made from: the evidence of the sources the plan puts first, then the source's own."""
    names = (*plan.context_from, source.descriptor.name)
    return [chunk for name in names for chunk in state.evidence_of(name).items]
