"""The CRAG mock KG as a source (Tasks 2 and 3): the model writes a program in db3's regularized API, the KG
language runs it, and an executed program's single value, short list or count answers without the model."""
from __future__ import annotations

from models.evidence import Evidence, fact_chunks
from models.pathways import KG, KG_DIRECT
from models.sources.base import AnswerPlan, Descriptor, register_source

DESCRIPTOR = Descriptor(
    name="kg", stage="kg", native_stage="kg api", own_value=KG_DIRECT,
    knows="CRAG's mock knowledge graph: movies (films, people, Oscars), music (artists, songs, Grammys, Billboard), "
          "sports (NBA and soccer games and players), finance (stock prices, dividends, EPS, market caps)")


class KGSource:
    """Args:
        pathway: a `KGPathway` (program request, execution, verbalised facts).
        answer: the plan for facts the model must read (`pipeline.kg_answer_prompt`, `kg_answer_adapter`).
        direct: whether an executed program's own value answers (`verifier.kg_direct`).
        max_direct_items: longer value lists go to the model with the facts (`verifier.kg_direct_max_items`).
    """

    descriptor = DESCRIPTOR

    def __init__(self, pathway, answer: AnswerPlan, direct: bool = True, max_direct_items: int = 10):
        self.pathway, self.answer, self.direct, self.max_direct_items = pathway, answer, direct, max_direct_items
        self._direct_plan = AnswerPlan(DESCRIPTOR.own_value)

    def runs_in(self, task: int) -> bool:
        return task != 1

    def native_request(self, query, domain):
        return self.pathway.api_request(query, domain)

    def retrieve(self, run, asks, deadline) -> list[Evidence]:
        out = []
        for state, program in asks:
            ran = self.pathway.run(state.query, state.domain, program, deadline=deadline,
                                   max_direct_items=self.max_direct_items)
            out.append(Evidence("kg", tuple(fact_chunks(ran.facts, "kg")), ran.direct, ran.as_trace()))
        return out

    def answer_plan(self, state, task: int) -> AnswerPlan | None:
        evidence = state.evidence_of("kg")
        if evidence.direct and self.direct:  # the program's own value answers; the model only combines facts
            return self._direct_plan
        return self.answer if evidence.items else None

    def trace(self, state, evidence: Evidence, run) -> None:
        state.trace["kg"] = dict(evidence.provenance)


def _build(parts) -> KGSource:
    p, v = parts.config.pipeline, parts.config.verifier
    return KGSource(parts.get("kg"), AnswerPlan(KG, p.kg_answer_prompt, p.kg_answer_adapter), direct=v.kg_direct,
                    max_direct_items=v.kg_direct_max_items)


register_source("kg", _build, needs=("kg",))
