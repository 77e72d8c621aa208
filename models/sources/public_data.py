"""The published CRAG datasets (Oscars, Grammys, finance statistics) as a source: the model names the entities,
the store links them and returns "The [attribute] is [value]." facts, which lead the web context. db3's
shortcut (`pipeline.public_shortcut`) answers Oscar/Grammy/finance questions from these facts alone first."""
from __future__ import annotations

from models.evidence import Evidence, fact_chunks
from models.pathways import PUBLIC
from models.sources.base import AnswerPlan, Descriptor, register_source

DESCRIPTOR = Descriptor(
    name="public_data", stage="public data", native_stage="public entity",
    knows="published tables: every Oscar nomination and winner, every Grammy nomination and winner, and finance "
          "statistics of listed companies, as attribute-value facts about named entities")


class PublicDataSource:
    """Args:
        public_data: a `PublicData` pathway (entity request, linked facts, shortcut domains).
        tasks: the tasks it runs in (`pipeline.use_public_data`).
        shortcut: db3's answer from these facts alone (`pipeline.public_shortcut`), with its plan.
    """

    descriptor = DESCRIPTOR

    def __init__(self, public_data, tasks, shortcut: AnswerPlan | None = None):
        self.public_data, self.tasks, self.shortcut = public_data, tuple(tasks), shortcut

    def runs_in(self, task: int) -> bool:
        return task in self.tasks

    def native_request(self, query, domain):
        return self.public_data.entity_request(query, domain)

    def retrieve(self, run, asks, deadline) -> list[Evidence]:
        return [Evidence("public_data", tuple(fact_chunks(self.public_data.facts(s.query, s.domain, entities),
                                                          "public")), provenance={"entities": entities})
                for s, entities in asks]

    def answer_plan(self, state, task: int) -> AnswerPlan | None:
        if self.shortcut is None or not state.evidence_of("public_data").items:
            return None
        return self.shortcut if self.public_data.is_shortcut_domain(state.query, state.domain) else None

    def trace(self, state, evidence: Evidence, run) -> None:
        state.trace["public_facts"] = list(evidence.texts)


def _build(parts) -> PublicDataSource:
    p = parts.config.pipeline
    shortcut = AnswerPlan(PUBLIC, p.answer_prompt, None) if p.public_shortcut else None
    return PublicDataSource(parts.get("public_data"), p.use_public_data, shortcut)


register_source("public_data", _build, needs=("public_data",))
