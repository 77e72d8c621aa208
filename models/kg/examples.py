"""The pool of query → program examples, and choosing in-context examples per query by similarity.

db3 picked its in-context examples by hand, one fixed list per domain, and noted that choosing them per
query "may be extremely effective ... as for similar queries, only the entity names have to be
substituted", but never built it. Here the pool (`data/kg/icl_pool.jsonl`: query, query_time, domain,
program) is embedded once; for each query the `k` most similar examples of the same domain are used
(other domains fill up a domain with fewer than `k`), the most similar placed last, next to the query,
where a small model copies from best. Without an embedder the pool's own order is used.

Every program in the pool must compile for its domain: a broken example fails at start-up, not in a prompt.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from models.jsonl import read_jsonl
from models.kg.apis import compile_program
from models.kg.language.ast import format_program
from models.kg.language.errors import KGError
from models.similar import embed_pool, similarities


@dataclass(frozen=True)
class Example:
    query: str
    query_time: str
    domain: str
    program: str  # canonical form


class ExamplePool:
    """Args:
        examples: the pool.
        embedder: optional, `encode(texts, is_query=True) -> np.ndarray` (L2-normalised rows).
    """

    def __init__(self, examples: Sequence[Example], embedder=None):
        self.examples = list(examples)
        self.embedder = embedder
        self._vectors = embed_pool(embedder, [e.query for e in self.examples], "KG example pool")

    @classmethod
    def load(cls, path: str | Path, embedder=None) -> "ExamplePool":
        """Reads a JSONL pool and checks every program.

        Raises:
            ValueError: a line that is not a record with query/query_time/domain/program, or a program
                that does not compile for its domain (message names the line).
        """
        def example(record) -> Example:
            program = compile_program(record["program"], record["domain"])
            return Example(record["query"], record["query_time"], record["domain"], format_program(program))

        return cls(read_jsonl(path, example, what="bad KG example", catch=(KGError,)), embedder)

    def select(self, query: str, domain: str, k: int) -> list[Example]:
        """The k examples for a query, least similar first."""
        if k <= 0:
            return []
        same = [i for i, e in enumerate(self.examples) if e.domain == domain]
        other = [i for i, e in enumerate(self.examples) if e.domain != domain]
        scores = self._scores(query)
        if scores is not None:
            same.sort(key=lambda i: -scores[i])
            other.sort(key=lambda i: -scores[i])
        chosen = (same + other)[:k]
        return [self.examples[i] for i in reversed(chosen)]

    def _scores(self, query: str):
        return similarities(self.embedder, self._vectors, query, "KG example selection")
