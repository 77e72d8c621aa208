"""The Source seam: every knowledge source behind one interface, assembled by name from the profile.

A source is asked about the unanswered queries of a batch in two steps, so that the pipeline can make one
batched LLM call for all of them in between:
1. `native_request(query, domain)`: the query in the source's own language, as a generation request (the KG:
   a program in db3's regularized API; public data: the entity names to look up), or None. A source with a
   `native_stage` consults only the queries it could make a request for; one without takes every query as
   it is (the web).
2. `retrieve(run, asks, deadline)`: for (state, the model's native output or None) pairs, one frozen
   `Evidence` each, in order; never raises for one bad query (its evidence is empty).

What the cascade of db3's Figure 2 does with the evidence right after it arrives is the source's
`answer_plan(state, task)`: answer from it alone (the KG, with its direct value or its prompt), from it behind
earlier sources' evidence (the web, behind the public-data facts), or not at all (public data, unless db3's
shortcut applies): then its evidence only joins later contexts.

Sources are registered by name (`register_source`); a profile lists the ones it uses, in order
(`pipeline.sources`); `build_sources` makes them from the pipeline's parts (`models/parts.py`), leaving out a
source whose declared parts are absent. Adding a source is one module that registers itself (and any new part it
needs); `models/pipeline.py` does not change.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

from models.evidence import Evidence
from models.llm.generator import GenerationRequest
from models.pathways import Pathway
from models.run import BatchRun, QueryState


@dataclass(frozen=True)
class Descriptor:
    """Who a source is, for the pipeline and (later) for choosing sources per question.

    Attributes:
        name: the registry name, `Evidence.source` and the key of `QueryState.evidence` ("kg").
        stage: the pipeline stage it runs as: its name in traces and in `pipeline.stage_budgets` ("kg").
        knows: what it knows, in words (OmniRetrieval's source descriptors select on it).
        native_stage: the LLM stage that writes its native query ("kg api"); "" = it takes the question as is.
        own_value: the pathway of the value its evidence can give by itself (`Evidence.direct`), declared with
            `own_value` (models/pathways.py); None: its evidence never answers without the model.
    """

    name: str
    stage: str
    knows: str
    native_stage: str = ""
    own_value: Pathway | None = None

    def __post_init__(self):
        if self.own_value is not None and not self.own_value.own_value:
            raise ValueError(f"source {self.name!r}: own_value {self.own_value} is not declared as a source's own value")


@dataclass(frozen=True)
class AnswerPlan:
    """How the cascade answers one query from a source's evidence.

    Attributes:
        pathway: how the answer is made (models/pathways.py), in the trace and for the verifier.
        prompt: prompts/<name>.txt of the answer step.
        adapter: the LoRA adapter of the answer step (None: the base model).
        context_from: earlier sources whose evidence leads this context, in order (the web: public data).
    """

    pathway: Pathway
    prompt: str = ""
    adapter: str | None = None
    context_from: tuple[str, ...] = ()

    @property
    def direct(self) -> bool:
        """The evidence's direct value is the answer, without the model (the pathway is the source's own value)."""
        return self.pathway.own_value


class Source(Protocol):
    descriptor: Descriptor

    def runs_in(self, task: int) -> bool:
        """Whether the source is consulted in `task` (1: pages only; 2: + the KG; 3: 50 pages + the KG)."""

    def native_request(self, query, domain: str) -> GenerationRequest | None:
        """The query in the source's own language, for the model to write; None: nothing to ask."""

    def retrieve(self, run: BatchRun, asks: Sequence[tuple[QueryState, str | None]], deadline) -> list[Evidence]:
        """One `Evidence` per (state, native output), in order; never raises for one bad query."""

    def answer_plan(self, state: QueryState, task: int) -> AnswerPlan | None:
        """How the cascade answers `state` from this source's evidence now; None: not from it alone."""

    def trace(self, state: QueryState, evidence: Evidence, run: BatchRun) -> None:
        """Writes what the source did for `state` into its trace (from `evidence`)."""


SourceFactory = Callable[[Any], "Source | None"]  # (the pipeline's `Parts`) -> source; None: not available


@dataclass(frozen=True)
class _Registration:
    factory: SourceFactory
    needs: tuple[str, ...]


_REGISTRY: dict[str, _Registration] = {}


def register_source(name: str, factory: SourceFactory, needs: Sequence[str] = ()) -> None:
    """Makes `name` usable in `pipeline.sources`; a later registration of the same name replaces it.

    Args:
        factory: builds the source from the pipeline's parts (`models/parts.py`); None = not available.
        needs: the parts the source cannot run without ("kg"): when one is absent (no KG in Task 1) the source
            is left out without calling the factory.
    """
    _REGISTRY[name] = _Registration(factory, tuple(needs))


def registered_sources() -> list[str]:
    return sorted(_REGISTRY)


def build_sources(names: Sequence[str], parts) -> list[Source]:
    """The profile's sources, in order, leaving out those whose parts are absent or whose factory declines.

    Raises:
        ValueError: a name nobody registered.
    """
    unknown = [name for name in names if name not in _REGISTRY]
    if unknown:
        raise ValueError(f"pipeline.sources: unknown source(s) {unknown}; registered: {registered_sources()}")
    sources = []
    for name in names:
        registration = _REGISTRY[name]
        if all(parts.has(part) for part in registration.needs):
            source = registration.factory(parts)
            if source is not None:
                sources.append(source)
    return sources
