"""What a knowledge source returns for one query: a frozen value every later stage reads.

A source (public data, the KG, the web; `models/sources/`) answers a query with one `Evidence`: its items as
context chunks (each with where it came from: a page URL, "kg", "public"; its kind: text, table, snippet, kg,
public; its score), a direct value where the source has one (an executed KG program's single value, list or
count, which answers without the model), and the provenance of the retrieval as a whole (for the KG: the
program as generated, its parsed calls and arguments, the outcome, the error). The answer step, the verifier and
the ElectricSheep stages read evidence, never the trace; the trace is written from it (`as_trace`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from models.types import Chunk


@dataclass(frozen=True)
class Evidence:
    """One source's evidence for one query.

    Attributes:
        source: the name of the source that produced it ("public_data", "kg", "web", ...).
        items: the evidence as context chunks, best first (`Chunk.source` is the URL or the pathway).
        direct: a value that answers the question by itself ("" = none: the model must read the items).
        provenance: how the evidence was obtained (KG: program, calls, outcome, error, statements; public data:
            the entity text asked for; web: the extractor of each page read, the batch's `RetrievalStats`, and
            with ARM its alignment and every object's scores). What a source traces of it is plain JSON-able data.
    """

    source: str
    items: tuple[Chunk, ...] = ()
    direct: str = ""
    provenance: Mapping[str, Any] = field(default_factory=dict)

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(item.text for item in self.items)

    def __bool__(self) -> bool:
        """Evidence is worth answering from when it holds an item or a direct value."""
        return bool(self.items or self.direct)


NO_EVIDENCE = Evidence("")


def fact_chunks(facts: Sequence[str], pathway: str) -> list[Chunk]:
    """Verbalised structured facts (KG, public data, calculator lines) as context chunks of kind `pathway`."""
    return [Chunk(fact, pathway, pathway) for fact in facts]
