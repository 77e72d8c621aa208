"""The base model standing in for adapters that are not there.

A profile names its LoRA adapters by role (`web_answer`, `api_generation`, `kg_answer`) and every stage asks for
its adapter by that name. When an adapter is missing and the profile allows it (`llm.require_adapters: false`) —
its folder is not there (models/adapter_fallback.py: the backend is built without it) or the LLM server does not
serve it (the server backend leaves it out at start-up) — this wrapper sends the requests that name it to the base
model instead: the stages keep their code and their names, the backend never sees a name it does not serve, and
the trace can say which adapter the base model stood in for. `make_generator` applies it, in process or behind a
server alike.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

from models.llm.adapters import AdapterNames


class StandInNames(AdapterNames):
    """The names a pipeline may ask for: the backend's own adapters plus the missing ones (which mean the base
    model). `names` lists only the served ones, so the warm-up loads real adapters only."""

    def __init__(self, served: AdapterNames, missing: Mapping[str, str]):
        self._served = served.names
        super().__init__({**{name: served.get(name) for name in served.names}, **{name: None for name in missing}})

    @property
    def names(self) -> tuple[str, ...]:
        return self._served


class BaseModelStandIn:
    """A `Generator` over another one, on which the adapters in `missing` are served by the base model.

    Attributes:
        inner: the backend, built without the missing adapters.
        missing_adapters: name -> why its folder could not be used (for the trace and the start-up log).
        adapters: `StandInNames` (a stage naming a missing adapter is valid; an unknown name still fails).
    """

    def __init__(self, inner, missing: Mapping[str, str]):
        self.inner = inner
        self.missing_adapters = {**inner.missing_adapters, **missing}
        self.adapters = StandInNames(inner.adapters, self.missing_adapters)

    def generate(self, requests: Sequence, *, deadline=None):  # GenerationRequests (generator.py imports this module)
        """The backend's completions, in order, with every request for a missing adapter sent to the base model."""
        self.adapters.require(r.adapter for r in requests)
        return self.inner.generate([replace(r, adapter=None) if r.adapter in self.missing_adapters else r
                                    for r in requests], deadline=deadline)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def truncate_tokens(self, text: str, max_tokens: int) -> str:
        return self.inner.truncate_tokens(text, max_tokens)

    def __getattr__(self, name):
        # The rest of the backend (its tokenizer, chat formatter, engine, `close`) as it is: callers that reach
        # past the Generator protocol (benchmarks, the GPU checks) see the backend they built.
        if name == "inner":  # not set yet (a copy or an unpickling in progress): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)


def with_stand_ins(generator, missing: Mapping[str, str] | None = None):
    """`generator` with the base model standing in for `missing` (name -> why) and for the adapters the backend
    found absent itself (its `missing_adapters`); `generator` itself when none is missing."""
    missing = {**generator.missing_adapters, **(missing or {})}
    return BaseModelStandIn(generator, missing) if missing else generator
