"""The pipeline's parts, assembled by registration: one object that names every component by role.

A part is a component the pipeline or a source uses ("embedder", "web", "kg", "verifier", "sources", ...). Each
is registered once with the function that builds it from the resolved profile and the other parts
(`register_part`); the built-in ones are registered by `models/assembly.py`. A source declares the parts it
needs when it registers (`models/sources/base.py`), so a new source that needs a new part registers both and
`models/pipeline.py` does not change.

Parts are built on first use, in the order they are asked for, and kept. Two kinds of registration:
- `loads=True`: the part loads weights or data (the embedder, the KG, the web retriever, the router). It is
  built only in an assembled pipeline (`Parts.assemble`, what `Pipeline.from_config` does); in a pipeline put
  together from given components (`Parts(config, web=..., ...)`, what tests do) a loading part that was not
  given is absent (None): a test that gives no KG has none.
- `loads=False`: the part is composed of other parts (the verifier, the answer step, the sources); it is built
  whenever it was not given, by the same function in both cases.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

Builder = Callable[["Parts"], Any]  # the part, or None: not available with this profile and these parts


@dataclass(frozen=True)
class PartSpec:
    name: str
    build: Builder
    loads: bool


_REGISTRY: dict[str, PartSpec] = {}


def register_part(name: str, build: Builder, *, loads: bool) -> None:
    """Makes `name` a part; a later registration of the same name replaces it."""
    _REGISTRY[name] = PartSpec(name, build, loads)


def registered_parts() -> list[str]:
    return sorted(_REGISTRY)


class Parts:
    """name -> component for one pipeline: the given ones, and the rest built by their registered builders.

    Args:
        config: the resolved profile every builder reads.
        **given: components by part name (tests pass fakes); None is "not given" (built, or absent, as above).
    """

    def __init__(self, config, *, assembled: bool = False, **given: Any):
        self.config = config
        self.assembled = assembled
        self._parts: dict[str, Any] = {name: part for name, part in given.items() if part is not None}
        self._building: list[str] = []

    @classmethod
    def assemble(cls, config, **given: Any) -> "Parts":
        """Every part available to the profile: the given ones, the others built (weights load) on first use."""
        return cls(config, assembled=True, **given)

    def get(self, name: str) -> Any:
        """The part `name`: given, built before, or built now; None when it is absent.

        Raises:
            KeyError: `name` was neither given nor registered.
            RuntimeError: building `name` needs `name` itself (a circle of builders).
        """
        if name in self._parts:
            return self._parts[name]
        spec = _REGISTRY.get(name)
        if spec is None:
            raise KeyError(f"no part {name!r}: neither given nor registered ({registered_parts()})")
        if spec.loads and not self.assembled:
            return None
        if name in self._building:
            raise RuntimeError(f"parts {' -> '.join(self._building + [name])} build each other")
        self._building.append(name)
        try:
            part = self._parts[name] = spec.build(self)
        finally:
            self._building.pop()
        return part

    def has(self, name: str) -> bool:
        """Whether the part `name` is present (building it if it can be)."""
        return self.get(name) is not None
