"""The whole system in one place: db3's Figure 2 (Tasks 2/3) and Figure 1 (Task 1) as batched stages.

    queries ─► 1 route domains ─► 2 public data ─► 3 KG: generate API ─► parse/execute ─► value or answer ─► verify
                                                        │ (verified, not "i don't know": final)
                                                        ▼ otherwise
                                       4 web: extract ─► chunk ─► recall ─► rerank ─► <DOC> context
                                                        ▼
                                       5 short answer from public + web context ─► post-process ─► verify ─► answers
                                         or (ElectricSheep, `reasoning`): knowledge note + calculator lines ─►
                                            reasoning over all references ─► backup summarizer ─► verify

ElectricSheep's stages (seed 001 §4) are off unless the profile enables them (per task): page main content
and sentence groups inside the web retriever (`web.main_content`, `web.sentence_chunks`); the attribute
predictor (1b, `attributes`: a dynamic question without KG evidence gets "i don't know" or a stricter
check, decided at the verify step so the trace says why); and the reasoning step (`reasoning`), which then
replaces step 5 with its knowledge extractor and calculator as extra references. Its answer passes the
same verifier (calculator lines count as evidence, the model's own knowledge note does not).

Every answer is checked against the evidence it was generated from (models/verify): unsupported means
"i don't know". A KG program whose result is a single value, list or count answers with that value,
formatted, without asking the model. Each query carries a trace (`Answer.trace`) of what every stage did.

Every stage runs for the whole batch at once (one LLM call per stage, adapters chosen per request), asks
the shared `Deadline` before it starts, runs under its own share of the time left
(`pipeline.stage_budgets`, so KG generation that runs long is cut and the web and answer steps still
run), and degrades per item: a query whose stage fails or runs out of
time keeps its earlier answer or gets "i don't know" — one bad page or API string never costs the batch.
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field, replace
from typing import Sequence

from models.attributes import AttributePredictor
from models.calculator.tool import Calculation, NumericalCalculator
from models.config import Config
from models.isolation import fallback_reasons, per_item
from models.reasoning import KnowledgeExtractor, ReasonedAnswer, Reasoner, References
from models.deadline import Deadline, check_stage_budgets, stage_deadline
from models.embedder import Embedder
from models.llm.generator import GenerationRequest, Generator, make_generator
from models.llm.postprocess import clean_answer, is_idk
from models.llm.prompts import PromptLibrary
from models.types import IDK, INVALID, Answer, Chunk, Query
from models.verify import Candidate, Decision, SupportVerifier, Verifier, decide
from models.web import WebRetriever, format_context

log = logging.getLogger(__name__)

# Answers are one line; a blank line or a self-made next question means the model is rambling (saves time).
_ANSWER_STOPS = ("\n\n", " Question:")


@dataclass
class _State:
    """What the stages know about one query so far."""

    query: Query
    domain: str = "open"
    public_facts: list[str] = field(default_factory=list)
    kg_facts: list[str] = field(default_factory=list)
    answer: Answer | None = None
    attribute: str | None = None  # "static" | "dynamic" when the attribute predictor ran
    trace: dict = field(default_factory=lambda: {"llm_calls": [], "attempts": []})


class Pipeline:
    """Assembled from config; components can be injected (tests pass fakes)."""

    def __init__(self, config: Config, generator: Generator, web: WebRetriever, router, kg=None,
                 public_data=None, prompts: PromptLibrary | None = None, grader_trim=None,
                 verifier: Verifier | None = None, attributes: AttributePredictor | None = None,
                 reasoner: Reasoner | None = None, knowledge: KnowledgeExtractor | None = None,
                 calculator: NumericalCalculator | None = None):
        self.config = config
        self.generator = generator
        self.web = web
        self.router = router
        self.kg = kg
        self.public_data = public_data
        self.prompts = prompts or PromptLibrary()
        self.grader_trim = grader_trim
        self.verifier = verifier or SupportVerifier(config.verifier, generator=generator, prompts=self.prompts)
        self._init_electric_sheep(attributes, reasoner, knowledge, calculator)
        self._task = config.pipeline.task or 1  # the task of the batch being answered (see task_for)
        self.stage_seconds: dict[str, float] = {}  # wall time per stage of the last batch (logged; for profiling)
        self.skipped_stages: list[str] = []  # stages of the last batch not started because the deadline passed
        check_stage_budgets(config.pipeline.stage_budgets)
        # Fail at start-up, not mid-batch, on a prompt or adapter the profile names but cannot serve.
        for name in (config.pipeline.answer_prompt, config.pipeline.kg_answer_prompt):
            self.prompts.get(name)
        adapters = getattr(generator, "adapters", None)
        if adapters is not None:
            adapters.require([config.pipeline.answer_adapter, config.pipeline.kg_answer_adapter,
                              config.kg.api_adapter, config.public_data.entity_adapter])

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

    def _init_electric_sheep(self, attributes, reasoner, knowledge, calculator) -> None:
        """ElectricSheep's optional stages: the injected ones, else built from the profile when it enables
        them (the LLM stages need only the generator; the attribute classifier needs the embedder, so
        `from_config` builds it). None = the stage is off."""
        c, g = self.config, self.generator
        if c.attributes.enabled and attributes is None:
            raise ValueError("attributes.enabled needs an AttributePredictor (Pipeline.from_config builds it)")
        if c.calculator.enabled and not c.reasoning.enabled:
            raise ValueError("calculator.enabled needs reasoning.enabled: its results are references of the "
                             "reasoning step")
        self.attributes = attributes if c.attributes.enabled else None
        self.reasoner = (reasoner or Reasoner(c.reasoning, g, self.prompts)) if c.reasoning.enabled else None
        use_knowledge = c.reasoning.enabled and c.reasoning.knowledge.enabled
        self.knowledge = (knowledge or KnowledgeExtractor(c.reasoning.knowledge, g, self.prompts)) \
            if use_knowledge else None
        self.calculator = (calculator or NumericalCalculator(c.calculator, g, self.prompts)) \
            if c.calculator.enabled else None
        # attributes.dynamic_policy "verify": the verifier's own checks, at a stricter similarity
        self._dynamic_check = replace(c.verifier, enabled=True, min_similarity=max(
            c.verifier.min_similarity, c.attributes.dynamic_verify_threshold))

    def task_for(self, queries: Sequence[Query]) -> int:
        """The configured task, or (task 0) the one the batch looks like: 50 pages = 3, a KG API = 2, else 1."""
        if self.config.pipeline.task:
            return self.config.pipeline.task
        if any(len(q.search_results) > 5 for q in queries):
            return 3
        return 2 if self.kg is not None else 1

    # ------------------------------------------------------------------ the figure
    def answer(self, queries: Sequence[Query], deadline: Deadline | None = None) -> list[Answer]:
        """Answers every query, in order; never raises for one bad query."""
        deadline = deadline or Deadline(None)
        self._task = self.task_for(queries)
        self.stage_seconds, self.skipped_stages = {}, []
        states = [_State(q) for q in queries]
        self._stage("route", self._route, states, deadline)
        if self.attributes is not None:  # ElectricSheep's static/dynamic prediction (off by default)
            self._stage("attributes", self._attributes, states, deadline)
        self._stage("public data", self._public_data, states, deadline)
        self._stage("kg", self._kg, states, deadline)
        self._stage("web", self._web, states, deadline)
        return [self._final(s) for s in states]

    def _final(self, state: _State) -> Answer:
        answer = state.answer or Answer(IDK, "fallback", state.domain)
        attempts = state.trace["attempts"]
        why = (attempts[-1]["verifier"].get("reason", "") if attempts else
               f"no pathway answered (stages run: {', '.join(self.stage_seconds) or 'none'}; skipped at the "
               f"deadline: {', '.join(self.skipped_stages) or 'none'})")
        state.trace.update(task=self._task, domain=state.domain, source=answer.source, why=why,
                           stages={k: round(v, 3) for k, v in self.stage_seconds.items()})
        return Answer(answer.text, answer.source, answer.domain, answer.detail, state.trace)

    def _stage(self, name: str, run, states: list[_State], deadline: Deadline) -> None:
        open_states = [s for s in states if s.answer is None]
        if not open_states:
            return
        if deadline.expired():
            log.warning("stage %s skipped: batch deadline reached", name)
            self.skipped_stages.append(name)
            return
        started = time.monotonic()
        try:
            run(open_states, stage_deadline(deadline, self.config.pipeline.stage_budgets, name))
        except Exception:  # a whole stage failing must not lose the batch; later stages still run
            log.exception("stage %s failed for %d queries", name, len(open_states))
        self.stage_seconds[name] = time.monotonic() - started
        log.debug("stage %s: %d queries in %.2fs", name, len(open_states), self.stage_seconds[name])

    # ------------------------------------------------------------------ 1. domain
    def _route(self, states: list[_State], deadline: Deadline) -> None:
        for state, domain in zip(states, self.router.route([s.query for s in states], deadline=deadline)):
            state.domain = domain

    # ------------------------------------------------------------------ 1b. static or dynamic (ElectricSheep)
    def _attributes(self, states: list[_State], deadline: Deadline) -> None:
        if self._task not in self.config.attributes.tasks:
            return
        started = time.monotonic()
        labels = per_item(lambda batch: self.attributes.predict([s.query.text for s in batch], deadline), states,
                          lambda _: None, "attribute prediction", deadline=deadline)
        seconds = round(time.monotonic() - started, 3)
        cfg = self.config.attributes
        for k, (state, label) in enumerate(zip(states, labels)):
            # a failed prediction is "dynamic", the cautious side (as the predictor itself does)
            state.attribute = label if label in ("static", "dynamic") else "dynamic"
            state.trace["attribute"] = {"label": state.attribute, "method": cfg.method, "policy": cfg.dynamic_policy,
                                        "failed": label is None, "seconds": seconds,
                                        **_error(labels.reasons, k)}

    def _attribute_policy(self, answered, decisions: list) -> list:
        """`attributes.dynamic_policy` on verified answers: a dynamic question without KG evidence gets
        "i don't know" (idk) or must also pass the verifier at `dynamic_verify_threshold` (verify)."""
        if self.attributes is None:
            return decisions
        out = []
        for (state, _, _), decision in zip(answered, decisions):
            if state.attribute is None or decision is None or not decision.accepted or is_idk(decision.answer):
                out.append(decision)
                continue
            action = self.attributes.action(state.attribute, has_kg_evidence=bool(state.kg_facts))
            state.trace["attribute"]["action"] = action
            if action == "idk":
                decision = Decision(IDK, False, "dynamic question without KG evidence (attribute predictor; "
                                                "attributes.dynamic_policy idk)", decision.scores)
            elif action == "verify":
                stricter = decide(decision.scores, self._dynamic_check)
                if not stricter.accepted:
                    decision = Decision(IDK, False, f"dynamic question without KG evidence, stricter check "
                                                    f"(attributes.dynamic_policy verify): {stricter.reason}",
                                        decision.scores, decision.supporting)
            out.append(decision)
        return out

    # ------------------------------------------------------------------ 2. public data
    def _public_data(self, states: list[_State], deadline: Deadline) -> None:
        if self.public_data is None or self._task not in self.config.pipeline.use_public_data:
            return
        asks = [(s, self.public_data.entity_request(s.query, s.domain)) for s in states]
        asks = [(s, r) for s, r in asks if r is not None]
        outputs = self._generate("public entity", asks, deadline)
        for (state, _), entities in zip(asks, outputs):
            state.public_facts = self.public_data.facts(state.query, state.domain, entities)
            state.trace["public_facts"] = list(state.public_facts)
        if self.config.pipeline.public_shortcut:
            # db3 (Task 1): Oscar/Grammy/finance-statistics questions answered from the public facts alone by
            # the base model; accepted unless it abstains, otherwise the facts still join the web context.
            shortcut = [s for s in states if s.public_facts and self.public_data.is_shortcut_domain(s.query, s.domain)]
            chunks = {id(s): _fact_chunks(s.public_facts, "public") for s in shortcut}
            answered = self._answer(shortcut, chunks, self.config.pipeline.answer_prompt, None, deadline)
            self._verify("public", answered, chunks, deadline, final=False)

    # ------------------------------------------------------------------ 3. KG first
    def _kg(self, states: list[_State], deadline: Deadline) -> None:
        if self.kg is None or self._task == 1:
            return
        asks = [(s, self.kg.api_request(s.query, s.domain)) for s in states]
        asks = [(s, r) for s, r in asks if r is not None]
        programs = self._generate("kg api", asks, deadline)
        direct, answerable = [], []
        for (state, _), program in zip(asks, programs):
            evidence = self.kg.run(state.query, state.domain, program, deadline=deadline,
                                   max_direct_items=self.config.verifier.kg_direct_max_items)
            state.trace["kg"] = evidence.as_trace()
            state.kg_facts = list(evidence.facts)
            if evidence.direct and self.config.verifier.kg_direct:
                # The program's own value answers; the model is asked only when facts need combining.
                direct.append((state, evidence.direct, evidence.direct))
            elif state.kg_facts:
                answerable.append(state)
        chunks = {id(s): _fact_chunks(s.kg_facts, "kg") for s in [d[0] for d in direct] + answerable}
        p = self.config.pipeline
        # db3: a KG answer that is not "i don't know" wins over the web; here it must also pass the verifier,
        # and "invalid question" from the KG is not final either (the web may still answer).
        self._verify("kg-direct", direct, chunks, deadline, final=False)
        answered = self._answer(answerable, chunks, p.kg_answer_prompt, p.kg_answer_adapter, deadline)
        self._verify("kg", answered, chunks, deadline, final=False)

    # ------------------------------------------------------------------ 4+5. web
    def _web(self, states: list[_State], deadline: Deadline) -> None:
        started = time.monotonic()
        retrieval_deadline = stage_deadline(deadline, self.config.pipeline.stage_budgets, "web retrieval")
        retrieved = self.web.retrieve([s.query for s in states], task=self._task, deadline=retrieval_deadline)
        self.stage_seconds["web retrieval"] = time.monotonic() - started
        chunks = {}
        for state, web_chunks in zip(states, retrieved):
            chunks[id(state)] = _fact_chunks(state.public_facts, "public") + list(web_chunks)
        if self._web_trace_on():
            groups, stats = self.config.web.sentence_chunks, self.web.last_stats
            for state in states:  # extraction and chunking seconds are the batch's
                state.trace["web"] = {"extractors": stats.extractors.get(state.query.interaction_id, []),
                                      "sentence_chunks": groups.enabled and self._task in groups.tasks,
                                      "extract_s": round(stats.extract_ms / 1000, 3),
                                      "chunk_s": round(stats.chunk_ms / 1000, 3)}
        if self.reasoner is not None and self._task in self.config.reasoning.tasks:
            self._verify("reasoning", self._reason(states, chunks, deadline), chunks, deadline, final=True)
            return
        p = self.config.pipeline
        answered = self._answer(states, chunks, p.answer_prompt, p.answer_adapter, deadline)
        self._verify("web", answered, chunks, deadline, final=True)

    def _web_trace_on(self) -> bool:
        """ElectricSheep's page processing is on: the trace says which extractor read each page."""
        w = self.config.web
        return (w.main_content.enabled or w.sentence_chunks.enabled) and hasattr(self.web, "last_stats")

    # ------------------------------------------------------------------ 5'. reasoning (ElectricSheep)
    def _reason(self, states: list[_State], chunks: dict, deadline: Deadline) -> list:
        """(state, raw, answer) like `_answer`, from the reasoning module over every reference. The
        knowledge note and calculator lines are made first under their own budgets; calculator lines join
        the verifier's evidence (computed from it), the note does not (the model's memory)."""
        asking = [s for s in states if chunks[id(s)] or s.kg_facts]
        notes, calculations = {}, {}
        if self.knowledge is not None and self._task in self.config.reasoning.knowledge.tasks:
            notes = self._input_stage("knowledge", lambda budget: self._knowledge_notes(asking, budget), deadline)
        if self.calculator is not None and self._task in self.config.calculator.tasks:
            calculations = self._input_stage("calculator", lambda budget: self._calculations(asking, chunks, budget),
                                             deadline)
        references = []
        for state in asking:
            calculation = calculations.get(id(state))
            lines = (calculation.as_reference(),) if calculation else ()
            references.append(_references(state, chunks[id(state)], lines, notes.get(id(state), "")))
            # the verifier's evidence: a calculation is about the question it was computed for (the verifier
            # wants evidence that shares the question's words), the operands came from the chunks above
            computed = [f'Calculated for the question "{state.query.text}": {line}' for line in lines]
            chunks[id(state)] += _fact_chunks(state.kg_facts, "kg") + _fact_chunks(computed, "calculator")
        started = time.monotonic()
        results = per_item(
            lambda batch: self.reasoner.answer([s.query.text for s, _ in batch], [s.query.query_time for s, _ in batch],
                                               [r for _, r in batch], deadline),
            list(zip(asking, references)), lambda _: ReasonedAnswer(IDK, "none"), "reasoning", deadline=deadline)
        self.stage_seconds["reasoning"] = seconds = time.monotonic() - started
        answers = {id(s): r for s, r in zip(asking, results)}
        errors = {id(s): _error(results.reasons, k) for k, s in enumerate(asking)}
        out = []
        for state in states:
            result = answers.get(id(state))
            if result is None:  # nothing to reason over
                out.append((state, None, IDK))
                continue
            state.trace["reasoning"] = {"source": result.source, "answer": result.answer,
                                        "output": result.output[:2000], "seconds": round(seconds, 3),
                                        **errors[id(state)]}
            # raw = what the answer was read from: the reasoning output, or the summarizer's answer ("" when
            # neither produced anything: the verify step then says the deadline cut the generation)
            raw = result.output if result.output.strip() or result.source != "backup" or is_idk(result.answer) \
                else result.answer
            out.append((state, raw, result.answer))
        return out

    def _input_stage(self, name: str, run, deadline: Deadline) -> dict:
        """An optional input of the reasoning step, `run(its budget)`; {} when skipped at the deadline or
        failed (it costs that input, never the answers)."""
        if deadline.expired():
            self.skipped_stages.append(name)
            return {}
        started = time.monotonic()
        try:
            return run(stage_deadline(deadline, self.config.pipeline.stage_budgets, name))
        except Exception:
            log.exception("stage %s failed", name)
            return {}
        finally:
            self.stage_seconds[name] = time.monotonic() - started

    def _knowledge_notes(self, states: list[_State], deadline: Deadline) -> dict:
        started = time.monotonic()
        notes = per_item(lambda batch: self.knowledge.notes([s.query.text for s in batch],
                                                            [s.query.query_time for s in batch], deadline),
                         states, lambda _: "", "knowledge extraction", deadline=deadline)
        seconds = round(time.monotonic() - started, 3)
        for k, (state, note) in enumerate(zip(states, notes)):
            state.trace["knowledge"] = {"note": note, "seconds": seconds, **_error(notes.reasons, k)}
        return {id(s): note for s, note in zip(states, notes) if note}

    def _calculations(self, states: list[_State], chunks: dict, deadline: Deadline) -> dict:
        started = time.monotonic()
        items = [(s, [c.text for c in chunks[id(s)]] + list(s.kg_facts)) for s in states]
        results: list[Calculation | None] = per_item(
            lambda batch: self.calculator.calculate([s.query.text for s, _ in batch],
                                                    [s.query.query_time for s, _ in batch], [r for _, r in batch],
                                                    deadline),
            items, lambda _: None, "calculator", deadline=deadline)
        seconds = round(time.monotonic() - started, 3)
        for k, (state, result) in enumerate(zip(states, results)):
            state.trace["calculator"] = {**(result.as_trace() if result else {"value": None}), "seconds": seconds,
                                         **_error(results.reasons, k)}
        return {id(s): r for s, r in zip(states, results) if r is not None}

    # ------------------------------------------------------------------ shared verify step
    def _verify(self, source, answered, chunks, deadline, final: bool) -> None:
        """Checks each (state, raw, answer) against the chunks it came from; a verified answer that is not
        "i don't know" is final, and on the last pathway (`final`) whatever the verifier returns is."""
        answered = list(answered)
        candidates = [_candidate(s, text, source, chunks.get(id(s), ())) for s, _, text in answered]
        try:
            decisions = self.verifier.verify(candidates, deadline=deadline) if candidates else []
        except Exception as exc:  # noqa: BLE001 - a broken verifier costs its answers, not the batch
            log.exception("verifier failed for %d answers", len(candidates))
            decisions = [None] * len(candidates)
            failure = f"verifier failed: {type(exc).__name__}: {exc}"
        decisions = self._attribute_policy(answered, decisions)
        for (state, raw, text), decision in zip(answered, decisions):
            attempt = {"pathway": source, "raw_output": raw or "", "candidate": text,
                       "chunks": [_chunk_trace(c) for c in chunks.get(id(state), ())]}
            if decision is None:
                attempt["verifier"] = {"accepted": False, "answer": IDK, "reason": failure}
                answer_text, accepted = IDK, False
            else:
                attempt["verifier"] = decision.as_trace()
                answer_text, accepted = decision.answer, decision.accepted
                if not (raw or "").strip():  # say why there is nothing, not "the model abstained"
                    error = _generation_error(state)
                    attempt["verifier"]["reason"] = ("no context to answer from" if raw is None else
                                                     f"no model output ({error})" if error else
                                                     "no model output (the deadline cut the generation, or it "
                                                     "was empty)")
            state.trace["attempts"].append(attempt)
            # "invalid question" settles only on the last pathway: db3 sent a KG "invalid" on to the web
            if (accepted and not is_idk(answer_text) and answer_text != INVALID) or final:
                state.answer = Answer(answer_text, source, state.domain, {"chunks": len(chunks.get(id(state), ()))})

    # ------------------------------------------------------------------ shared answer step
    def _answer(self, states, chunks, prompt_name, adapter, deadline):
        """Yields (state, raw output, cleaned answer) for each state with a non-empty context; (state, None,
        IDK) otherwise."""
        p = self.config.pipeline
        template = self.prompts.get(prompt_name)
        asks = []
        for state in states:
            context = format_context(chunks[id(state)], self.generator, self.config.web.context_max_tokens)
            if not context:
                yield state, None, IDK  # raw None: there was nothing to ask the model about
                continue
            messages = template.render(context=context, query=state.query.text,
                                       query_time=state.query.query_time, token_limit=p.answer_word_limit)
            asks.append((state, GenerationRequest(messages, adapter=adapter, max_new_tokens=p.answer_max_new_tokens,
                                                  stop=_ANSWER_STOPS)))
        for (state, _), raw in zip(asks, self._generate(f"answer {prompt_name}", asks, deadline)):
            yield state, raw, clean_answer(raw, self.grader_trim)

    def _generate(self, stage: str, asks, deadline) -> list[str]:
        """One batched LLM call for (state, request) pairs; each state's trace records its call."""
        if not asks:
            return []
        started = time.monotonic()
        outputs = self.generator.generate([r for _, r in asks], deadline=deadline)
        seconds = round(time.monotonic() - started, 3)  # the batched call's wall time, shared by its requests
        reasons = fallback_reasons(outputs)  # requests that failed alone or whose retry the deadline stopped
        for k, ((state, request), output) in enumerate(zip(asks, outputs)):
            call = {"stage": stage, "adapter": request.adapter, "batch": len(asks), "seconds": seconds,
                    "prompt_tokens": self._count_tokens(" ".join(m.get("content", "") for m in request.messages)),
                    "output_tokens": self._count_tokens(output or "")}
            if k in reasons:
                call["error"] = reasons[k]
            state.trace["llm_calls"].append(call)
        return outputs

    def _count_tokens(self, text: str) -> int | None:
        try:
            return int(self.generator.count_tokens(text))
        except Exception:  # noqa: BLE001 - a count is for the trace only
            return None


def _error(reasons: dict[int, str], index: int) -> dict:
    """{"error": why item `index` of a `per_item` call holds its fallback}, or {} when it ran."""
    return {"error": reasons[index]} if index in reasons else {}


def _generation_error(state) -> str | None:
    """Why this state's latest LLM call produced nothing, when its backend said (see `_generate`)."""
    calls = state.trace.get("llm_calls") or []
    return calls[-1].get("error") if calls else None


def _kg_expected(task: int) -> bool:
    """Whether to build the KG pathway: Tasks 2/3, or auto-detect with a mock API URL in the environment."""
    return task in (2, 3) or (task == 0 and bool(os.environ.get("CRAG_MOCK_API_URL")))


def _references(state: _State, chunks: Sequence[Chunk], calculations: tuple[str, ...], note: str) -> References:
    """Everything the reasoning step reads about one query, by source (web text, tables, KG, public data)."""
    return References(web=tuple(c.text for c in chunks if c.kind in ("text", "snippet")),
                      tables=tuple(c.text for c in chunks if c.kind == "table"), kg=tuple(state.kg_facts),
                      public=tuple(state.public_facts), calculations=calculations, knowledge_note=note)


def _chunk_trace(chunk: Chunk) -> dict:
    """A context chunk as the trace shows it: where it came from and how it starts."""
    return {"source": chunk.source, "kind": chunk.kind, "score": round(float(chunk.score), 4),
            "text": chunk.text[:300]}


_FACT_KINDS = ("public", "kg")  # chunks of verbalised structured facts (they come before web chunks)


def _candidate(state: _State, text: str, source: str, chunks: Sequence[Chunk]) -> Candidate:
    """What the verifier checks: the answer, the evidence it came from (structured facts first), and for a
    KG value the program that produced it."""
    return Candidate(state.query.text, text, tuple(c.text for c in chunks), source,
                     facts=sum(c.kind in _FACT_KINDS for c in chunks),
                     program=state.trace.get("kg", {}).get("program", "") if source == "kg-direct" else "")


def _fact_chunks(facts: Sequence[str], pathway: str) -> list[Chunk]:
    """Verbalised facts of the KG or public-data pathway as context chunks (they go before web chunks)."""
    return [Chunk(fact, pathway, pathway) for fact in facts]
