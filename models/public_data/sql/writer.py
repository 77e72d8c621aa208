"""Asking the model for one SQL statement: which questions, which tables, which examples, which grammar.

- **Which questions**: those of a store domain (movie, music, finance) that aggregate, compare or count ("how
  many", "average", "total", "which ... most", "A or B" with a comparative). A plain lookup ("who directed X") is
  the entity facts' job; asking SQL for it would only add a way to be wrong.
- **Which tables**: the domain's (`TABLE_GROUPS`); the prompt's schema and the grammar cover only those.
- **Which examples**: the `k` pool examples of the same domain nearest the question (MiniLM cosine), the nearest
  last, next to the question, where a small model copies from best; pool order without an embedder.
- **Which grammar**: grammar.py's, with the question's own spans and the domain's categorical values as the only
  text literals.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from models.jsonl import read_jsonl
from models.llm.constraints import DecodingConstraint
from models.llm.generator import GenerationRequest
from models.llm.prompts import PromptLibrary
from models.public_data.sql.grammar import sql_grammar
from models.public_data.sql.schema import SchemaDescriptor
from models.similar import embed_pool, similarities

TABLE_GROUPS = {
    "movie": ("oscar_nominations", "movies", "movie_credits", "movie_genres"),
    "music": ("grammy_nominations",),
    "finance": ("companies",),
}
_AGGREGATES = re.compile(
    r"\b(?:how many|number of|count|total|combined|in all|sum|average|mean|most|least|fewest|highest|lowest|"
    r"largest|smallest|biggest|longest|shortest|more|fewer|less|higher|lower|bigger|larger|smaller|longer|shorter|"
    r"better|worse|greater|top)\b")
_STOP = ("\n",)
# Words that name a table's rows ("oscar" nominations, "directed" credits); a table without one (films) is the
# default of its group.
_TABLE_CUES = {
    "oscar_nominations": r"\boscars?\b|\bacademy awards?\b|\bnominat",
    "movie_credits": r"\bdirect|\bstarr|\bacted\b|\bactor|\bactress|\bplayed\b|\w+'s (?:films|movies)\b",
}


@dataclass(frozen=True)
class SQLExample:
    question: str
    domain: str
    sql: str


def load_examples(path: str | Path) -> list[SQLExample]:
    """The few-shot pool (JSONL of question, domain, sql).

    Raises:
        ValueError: a line that is not such a record (the message names the line).
    """
    return read_jsonl(path, lambda record: SQLExample(record["question"], record["domain"], record["sql"]),
                      what="not a question/domain/sql record")


def asks_aggregate(question: str) -> bool:
    """Whether the question aggregates, compares or counts (the questions SQL is asked about)."""
    return bool(_AGGREGATES.search(" ".join((question or "").lower().split())))


class SQLWriter:
    """Args:
        config: `SQLConfig`.
        schema: the store's `SchemaDescriptor`.
        examples: the few-shot pool.
        embedder: optional, `encode(texts, is_query=True)` with L2-normalised rows.
        prompts: the prompt library (`config.prompt` must exist).
    """

    def __init__(self, config, schema: SchemaDescriptor, examples: Sequence[SQLExample], embedder=None,
                 prompts: PromptLibrary | None = None):
        self.config, self.schema, self.examples = config, schema, list(examples)
        self.embedder, self.prompts = embedder, prompts or PromptLibrary()
        self.template = self.prompts.get(config.prompt)  # fails at start-up, not in a batch
        self.categorical = schema.categorical()
        self._vectors = embed_pool(embedder, [e.question for e in self.examples], "SQL example pool")

    def tables_for(self, domain: str) -> tuple[str, ...]:
        return tuple(t for t in TABLE_GROUPS.get(domain, ()) if self.schema.table(t) is not None)

    def request(self, question: str, domain: str) -> GenerationRequest | None:
        """The request for the statement, or None (not a store domain, or not an aggregate question)."""
        tables = self.tables_for(domain)
        if not tables or not asks_aggregate(question):
            return None
        # The tables the question's words point at (else the domain's): a shorter prompt (the movie group's four
        # tables are ~1,000 tokens, a 135M model's prefill on 2 cores), examples that read them, and a grammar the
        # model cannot stray from.
        used = self.tables_asked(question, tables)
        constraint = None
        if self.config.constrained:
            grammar = sql_grammar(self.schema, used, question, self.categorical)
            constraint = DecodingConstraint(is_valid_prefix=_any_prefix, grammar=grammar)
        return GenerationRequest(self._messages(question, domain, used), adapter=self.config.adapter,
                                 max_new_tokens=self.config.max_new_tokens, stop=_STOP, constraint=constraint)

    def _messages(self, question: str, domain: str, tables: Sequence[str]) -> tuple[dict, ...]:
        """Few-shot as a conversation: the template's first user turn holds the schema and the first question
        (an example's, else the real one), each example is answered by an assistant turn holding its statement,
        and the real question is the last user turn."""
        turns = [(e.question, e.sql) for e in self.select(question, domain, tables)] + [(question, None)]
        *system, first = self.template.render(schema=self.schema.text(tables), question=f"Question: {turns[0][0]}")
        messages = [*system]
        for i, (asked, sql) in enumerate(turns):
            messages.append(first if i == 0 else {"role": "user", "content": f"Question: {asked}"})
            if sql is not None:
                messages.append({"role": "assistant", "content": sql})
        return tuple(messages)

    def tables_asked(self, question: str, tables: Sequence[str]) -> tuple[str, ...]:
        """The tables of `tables` whose cue the question has: awards for "oscar", credits for "directed", genres
        for a genre the store knows; else every table of `tables` without a cue of its own (films)."""
        q = " ".join((question or "").lower().split())
        genres = self.categorical.get("movie_genres.genre", ())
        cued = tuple(t for t in tables if (t in _TABLE_CUES and re.search(_TABLE_CUES[t], q))
                     or (t == "movie_genres" and any(re.search(rf"\b{re.escape(g.lower())}\b", q) for g in genres)))
        return cued or tuple(t for t in tables if t not in _TABLE_CUES and t != "movie_genres") or tuple(tables)

    def select(self, question: str, domain: str, tables: Sequence[str] = ()) -> list[SQLExample]:
        """The `examples_k` pool examples of `domain` (reading one of `tables`, when given) nearest `question`, the
        nearest last."""
        same = [i for i, e in enumerate(self.examples) if e.domain == domain
                and (not tables or any(f" FROM {t}" in e.sql for t in tables))]
        scores = similarities(self.embedder, self._vectors, question, "SQL example choice") if same else None
        if scores is not None:
            same.sort(key=lambda i: -scores[i])
        return [self.examples[i] for i in reversed(same[:self.config.examples_k])]


def _any_prefix(_: str) -> bool:
    """Without llguidance there is no prefix check for SQL: the guard and the checks judge what comes out."""
    return True
