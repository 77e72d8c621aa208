"""ElectricSheep's answering (Yuan et al. 2024 §4.4-4.7): reasoning over every reference, with a knowledge note and
calculator lines made first, in place of the short answer step of the last source in its tasks.

The knowledge note and the calculator lines are made under their own budgets (`knowledge`, `calculator` in
`pipeline.stage_budgets`); calculator lines join the verifier's evidence (they are computed from it), the note
does not (it is the model's memory). Everything else is answered by the short answer step it wraps.
"""
from __future__ import annotations

import logging
import time

from models.answering.attempt import Attempt
from models.answering.short import ShortAnswerer
from models.calculator.tool import NumericalCalculator
from models.deadline import Deadline, stage_deadline
from models.evidence import fact_chunks
from models.isolation import per_item
from models.llm.postprocess import is_idk
from models.pathways import REASONING, Pathway
from models.reasoning import KnowledgeExtractor, ReasonedAnswer, Reasoner, References
from models.run import BatchRun, QueryState
from models.types import IDK, Chunk

log = logging.getLogger(__name__)


class ReasoningAnswerer:
    """Answers the last source's queries by reasoning (in `tasks`); every other call goes to `short`.

    Args:
        short: the short answer step, for every source but the last and for tasks the reasoning is off in.
        reasoner, knowledge, calculator: ElectricSheep's LLM stages (knowledge and calculator may be None).
        tasks, knowledge_tasks, calculator_tasks: where each runs (`reasoning.tasks`, ...).
    """

    def __init__(self, short: ShortAnswerer, reasoner: Reasoner, tasks, knowledge: KnowledgeExtractor | None = None,
                 knowledge_tasks=(), calculator: NumericalCalculator | None = None, calculator_tasks=()):
        self.short, self.reasoner, self.tasks = short, reasoner, tuple(tasks)
        self.knowledge, self.knowledge_tasks = knowledge, tuple(knowledge_tasks)
        self.calculator, self.calculator_tasks = calculator, tuple(calculator_tasks)

    def answer(self, run: BatchRun, asks, pathway: str, prompt: str, adapter, deadline,
               final: bool = False) -> tuple[Pathway, list[Attempt]]:
        if not final or run.task not in self.tasks:
            return self.short.answer(run, asks, pathway, prompt, adapter, deadline, final)
        return REASONING, self._reason(run, [(s, list(c)) for s, c in asks], deadline)

    def _reason(self, run: BatchRun, asks: list[tuple[QueryState, list[Chunk]]], deadline: Deadline) -> list[Attempt]:
        reasons_over = [bool(chunks or s.evidence_of("kg").texts) for s, chunks in asks]
        asking = [ask for ask, asked in zip(asks, reasons_over) if asked]
        notes, calculations = [""] * len(asking), [None] * len(asking)
        if self.knowledge is not None and run.task in self.knowledge_tasks:
            notes = self._input_stage(run, "knowledge", lambda budget: self._notes(asking, budget), deadline, notes)
        if self.calculator is not None and run.task in self.calculator_tasks:
            calculations = self._input_stage(run, "calculator", lambda budget: self._calculations(asking, budget),
                                             deadline, calculations)
        references = []
        for (state, chunks), calculation, note in zip(asking, calculations, notes):
            lines = (calculation.as_reference(),) if calculation else ()
            kg = state.evidence_of("kg").texts
            references.append(References(
                web=tuple(c.text for c in chunks if c.kind in ("text", "snippet")),
                tables=tuple(c.text for c in chunks if c.kind == "table"), kg=kg,
                public=state.evidence_of("public_data").texts, calculations=lines, knowledge_note=note))
            # the verifier's evidence: a calculation is about the question it was computed for (the verifier
            # wants evidence that shares the question's words), the operands came from the chunks above
            computed = [f'Calculated for the question "{state.query.text}": {line}' for line in lines]
            chunks += fact_chunks(kg, "kg") + fact_chunks(computed, "calculator")
        started = time.monotonic()
        results = per_item(
            lambda batch: self.reasoner.answer([s.query.text for (s, _), _ in batch],
                                               [s.query.query_time for (s, _), _ in batch], [r for _, r in batch],
                                               deadline),
            list(zip(asking, references)), lambda _: ReasonedAnswer(IDK, "none"), "reasoning", deadline=deadline)
        seconds = run.timed("reasoning", started)
        out, answered = [], iter(enumerate(results))
        for (state, chunks), asked in zip(asks, reasons_over):
            if not asked:  # nothing to reason over
                out.append(Attempt(state, None, IDK, tuple(chunks)))
                continue
            k, result = next(answered)
            state.trace["reasoning"] = {"source": result.source, "answer": result.answer,
                                        "output": result.output[:2000], "seconds": round(seconds, 3),
                                        **results.error_of(k)}
            # raw = what the answer was read from: the reasoning output, or the summarizer's answer ("" when
            # neither produced anything: the verify step then says the deadline cut the generation)
            raw = result.output if result.output.strip() or result.source != "backup" or is_idk(result.answer) \
                else result.answer
            out.append(Attempt(state, raw, result.answer, tuple(chunks), results.reasons.get(k)))
        return out

    @staticmethod
    def _input_stage(run: BatchRun, name: str, make, deadline: Deadline, default: list) -> list:
        """An optional input of the reasoning step, `make(its budget)`; `default` when skipped at the deadline
        or failed (it costs that input, never the answers)."""
        if deadline.expired():
            run.skipped_stages.append(name)
            return default
        started = time.monotonic()
        try:
            return make(stage_deadline(deadline, run.budgets, name))
        except Exception:
            log.exception("stage %s failed", name)
            return default
        finally:
            run.timed(name, started)

    def _notes(self, asking, deadline: Deadline) -> list[str]:
        started = time.monotonic()
        notes = per_item(lambda batch: self.knowledge.notes([s.query.text for s, _ in batch],
                                                            [s.query.query_time for s, _ in batch], deadline),
                         asking, lambda _: "", "knowledge extraction", deadline=deadline)
        seconds = round(time.monotonic() - started, 3)
        for k, ((state, _), note) in enumerate(zip(asking, notes)):
            state.trace["knowledge"] = {"note": note, "seconds": seconds, **notes.error_of(k)}
        return list(notes)

    def _calculations(self, asking, deadline: Deadline) -> list:
        started = time.monotonic()
        items = [(s, [c.text for c in chunks] + list(s.evidence_of("kg").texts)) for s, chunks in asking]
        results = per_item(
            lambda batch: self.calculator.calculate([s.query.text for s, _ in batch],
                                                    [s.query.query_time for s, _ in batch], [r for _, r in batch],
                                                    deadline),
            items, lambda _: None, "calculator", deadline=deadline)
        seconds = round(time.monotonic() - started, 3)
        for k, ((state, _), result) in enumerate(zip(asking, results)):
            state.trace["calculator"] = {**(result.as_trace() if result else {"value": None}), "seconds": seconds,
                                         **results.error_of(k)}
        return list(results)
