"""The search results' pages as a source (every task): extract, chunk, recall, rerank (models/web). It answers
every query it is asked about, behind the public-data facts; as the last source its answer is final."""
from __future__ import annotations

import time

from models.deadline import stage_deadline
from models.evidence import Evidence
from models.pathways import WEB
from models.sources.base import AnswerPlan, Descriptor, register_source

DESCRIPTOR = Descriptor(
    name="web", stage="web",
    knows="the 5 (Task 3: 50) web pages the search engine returned for the question: any topic, as of the page's "
          "date, as text chunks and tables")


class WebSource:
    """Args:
        retriever: a `WebRetriever` or `ArmRetriever` (`retrieve(queries, task, deadline)` -> one web `Evidence`
            per query; ARM's alignment in its provenance goes into the trace as "arm").
        answer: the plan of the answer step (`pipeline.answer_prompt`, `answer_adapter`, behind public data).
        budgets: `pipeline.stage_budgets` (retrieval gets its "web retrieval" share of the web stage).
        trace_pages: trace which extractor read each page (ElectricSheep's page processing is on), from the
            evidence's provenance (`extractors`, and the batch's `stats`; evidence without stats is not traced).
        sentence_chunks: `web.sentence_chunks` (its `enabled` and `tasks`), for that trace.
    """

    descriptor = DESCRIPTOR

    def __init__(self, retriever, answer: AnswerPlan, budgets=None, trace_pages: bool = False, sentence_chunks=None):
        self.retriever, self.answer, self.budgets = retriever, answer, dict(budgets or {})
        self.trace_pages, self.sentence_chunks = trace_pages, sentence_chunks

    def runs_in(self, task: int) -> bool:
        return True

    def native_request(self, query, domain):
        return None

    def retrieve(self, run, asks, deadline) -> list[Evidence]:
        started = time.monotonic()
        retrieved = self.retriever.retrieve([s.query for s, _ in asks], task=run.task,
                                            deadline=stage_deadline(deadline, self.budgets, "web retrieval"))
        run.timed("web retrieval", started)
        return retrieved

    def answer_plan(self, state, task: int) -> AnswerPlan:
        return self.answer

    def trace(self, state, evidence: Evidence, run) -> None:
        arm = evidence.provenance.get("arm")
        if arm is not None:  # web.retriever arm: keywords, their n-grams, each chosen object's two scores
            state.trace["arm"] = arm
        stats = evidence.provenance.get("stats")
        if not self.trace_pages or stats is None:
            return
        groups = self.sentence_chunks  # extraction and chunking times are the batch's
        state.trace["web"] = {"extractors": list(evidence.provenance.get("extractors", [])),
                              "sentence_chunks": groups.enabled and run.task in groups.tasks,
                              "extract_s": round(stats.extract_ms / 1000, 3),
                              "chunk_s": round(stats.chunk_ms / 1000, 3)}


def _build(parts) -> WebSource:
    p, w = parts.config.pipeline, parts.config.web
    trace_pages = w.main_content.enabled or w.sentence_chunks.enabled
    return WebSource(parts.get("web"), AnswerPlan(WEB, p.answer_prompt, p.answer_adapter, context_from=("public_data",)),
                     p.stage_budgets, trace_pages, w.sentence_chunks)


register_source("web", _build, needs=("web",))
