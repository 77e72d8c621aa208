"""The public-data store in its own language (as in the OmniRetrieval paper): the model writes one SELECT from the
store's schema, SQLite runs it on a read-only guarded connection, and a checked one-cell result answers by itself.

Asked only about aggregate questions of the store's domains (models/public_data/sql/writer.py); a count, sum or
comparison comes from SQL, not from reading numbers in facts. A statement that fails, is refused by the guard,
or fails a check (models/public_data/sql/checks.py) is "no evidence", its reason in the trace (`sql`).
"""
from __future__ import annotations

import logging

from models.evidence import Evidence, fact_chunks
from models.paths import resolve_repo_path
from models.pathways import SQL_DIRECT
from models.public_data.sql.checks import as_option, describe_rows, direct_value, problems, read_statement, repair
from models.public_data.sql.guard import ReadOnlySQL
from models.public_data.sql.schema import describe
from models.public_data.sql.writer import SQLWriter, load_examples
from models.public_data.tables import TABLE_NAMES
from models.sources.base import AnswerPlan, Descriptor, register_source

log = logging.getLogger(__name__)

DESCRIPTOR = Descriptor(
    name="sql", stage="sql", native_stage="sql statement", own_value=SQL_DIRECT,
    knows="the published tables as SQL (Oscar and Grammy nominations, films with budget, box office, runtime, "
          "rating, directors, lead actors and genres, listed companies' market statistics): counts, sums, "
          "averages and comparisons over rows")


class SQLSource:
    """Args:
        writer: an `SQLWriter` (which questions, the request).
        guard: a `ReadOnlySQL` over the store.
        tasks: the tasks it runs in (`pipeline.use_public_data`).
        max_direct_rows: a result of more rows is not a value (`public_data.sql.max_direct_rows`).
        dynamic_columns: figures the store holds one snapshot of; a statement reading one answers nothing.
    """

    descriptor = DESCRIPTOR

    def __init__(self, writer, guard, tasks, max_direct_rows: int = 1, dynamic_columns=()):
        self.writer, self.guard, self.tasks, self.max_direct_rows = writer, guard, tuple(tasks), max_direct_rows
        self.dynamic_columns = tuple(dynamic_columns)
        self._direct_plan = AnswerPlan(DESCRIPTOR.own_value)

    def runs_in(self, task: int) -> bool:
        return task in self.tasks

    def native_request(self, query, domain):
        return self.writer.request(query.text, domain)

    def retrieve(self, run, asks, deadline) -> list[Evidence]:
        out = []
        for state, statement in asks:
            if deadline is not None and deadline.expired():  # each statement and probe is bounded, not their sum
                out.append(Evidence("sql", provenance={"statement": statement, "error": "the stage deadline passed"}))
                continue
            try:
                out.append(self.evidence(state.query.text, statement or ""))
            except Exception as exc:  # noqa: BLE001 - one query's statement costs that query, never the batch
                log.exception("sql source failed on %r", statement)
                out.append(Evidence("sql", provenance={"statement": statement, "error": f"{type(exc).__name__}"}))
        return out

    def evidence(self, question: str, statement: str) -> Evidence:
        """Runs and checks one statement: checked rows as facts, the one cell as the direct value."""
        result = self.guard.run(statement)
        trace = {"statement": result.statement, "error": result.error, "seconds": round(result.seconds, 4),
                 "tables": list(result.tables), "rows": [list(map(_plain, r)) for r in result.rows[:5]]}
        if not result.ok:
            return Evidence("sql", provenance=trace)
        parsed = read_statement(result.statement)
        if parsed is not None:
            text, changes = repair(parsed, result.statement, self.guard)
            if changes:
                trace["repaired"] = changes
                result, parsed = self.guard.run(text), read_statement(text)
                trace.update(statement=text, error=result.error, rows=[list(map(_plain, r)) for r in result.rows[:5]])
        found = ["not in the grammar's form"] if parsed is None else [result.error] if result.error else \
            problems(question, parsed, result, self.guard, self.max_direct_rows, self.dynamic_columns)
        trace["problems"] = found
        if found:
            return Evidence("sql", provenance=trace)
        value = as_option(question, direct_value(parsed, result), parsed, self.guard)
        trace["value"] = value
        return Evidence("sql", tuple(fact_chunks(describe_rows(result.statement, result), "sql")), value, trace)

    def answer_plan(self, state, task: int) -> AnswerPlan | None:
        return self._direct_plan if state.evidence_of("sql").direct else None

    def trace(self, state, evidence: Evidence, run) -> None:
        state.trace["sql"] = dict(evidence.provenance)


def _plain(value):
    return value if isinstance(value, (int, float, str)) or value is None else repr(value)[:40]


def _build(parts) -> SQLSource | None:
    cfg = parts.config.public_data.sql
    public = parts.get("public_data")
    if not cfg.enabled or getattr(public, "store", None) is None:
        return None
    path = public.store.path
    try:
        schema = describe(path, categorical=cfg.category_values)
    except Exception as exc:  # a store built before the typed tables: the source is off, the model is not
        log.warning("public-data store %s has no SQL tables (%s); the sql source is off", path, exc)
        return None
    writer = SQLWriter(cfg, schema, load_examples(resolve_repo_path(cfg.examples)), embedder=public.embedder,
                       prompts=getattr(public, "prompts", None))
    guard = ReadOnlySQL(path, TABLE_NAMES, row_limit=cfg.row_limit, time_limit_s=cfg.time_limit_s)
    return SQLSource(writer, guard, parts.config.pipeline.use_public_data, cfg.max_direct_rows, cfg.dynamic_columns)


register_source("sql", _build, needs=("public_data",))
