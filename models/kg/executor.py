"""Runs a compiled program against the mock API: calls, conditions, sort, `*`, selectors, `["len"]`, AVG.

Statements run in order; each produces a `StatementResult` holding plain data (rows as dicts, selected
values, a count or an average), so the verbaliser never touches the API. Semantics:
- a call's condition arguments filter the rows its function returns (functions may also use them to
  narrow their fetch, e.g. an Oscar year); `ALL` keeps every entity the search matched;
- `sort(conds, ±key)` filters and orders the *rows* of the previous statement (before its selectors) and
  replaces it in the output; `*` runs the call once per item the previous statement output (its selected
  values, else its rows' references: titles, names, tickers, game ids);
- `[key]` selects a field from each row (list fields are flattened into items; a key no row has falls
  back to the whole rows), `[:n]` keeps the first n items, `["len"]` counts items, `AVG` averages the
  numeric selected values.

Work is bounded: at most `max_calls` API calls per program (`BudgetedAPI`), at most `max_rows` rows listed per
statement (a count, an average or a following sort still sees every row found) and `max_rows` inputs per `*`
fan-out. When the call budget or the deadline runs out, execution stops, keeping what earlier statements (and
the interrupted one, as far as it got) produced. A failing
API (`KGApiError`) propagates: nothing the program found can be trusted to be complete then. A statement
whose values cannot be interpreted (`KGValueError`, e.g. an unknown date expression), or whose API data
has an unexpected shape, yields nothing, and the next statement still runs.

The interpreter dispatches on node types through tables (`_HEADS`, `_SELECTORS`, `_ARGUMENTS`), one
method per kind of node, after jmespath's visitor: a new node type is one entry, not another branch.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Mapping

from models.deadline import Deadline
from models.kg.apis import BudgetedAPI, CallContext, EntityMatcher, Table, functions, resolve_key
from models.kg.language.ast import (Call, Condition, Length, ListArg, Literal, Program, SelectKey, Slice, Sort, Star,
                                    Statement)
from models.kg.language.errors import KGApiError, KGLimitError, KGValueError
from models.kg.language.signature import ArgKind, Param
from models.kg.language.values import typed

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limits:
    max_calls: int = 40  # API calls per program
    max_rows: int = 200  # rows kept per statement, and inputs per `*` fan-out
    max_listed: int = 20  # whole rows loaded and reported per statement (the rest are only counted)


@dataclass(frozen=True)
class Value:
    """One selected item: `value` is the `key` field of `entity`."""

    entity: str
    key: str
    value: Any


@dataclass(frozen=True)
class StatementResult:
    """What one statement produced.

    Attributes:
        kind: rows | values | count | average | empty | error.
        what: the table's noun phrase ("cast members of Inception").
        rows: (entity, fields) of each output row (kind rows).
        values: the selected items (kind values; also the items counted or averaged).
        number: the count or the average.
        total: rows the function found before `max_rows` cut them.
        notes: facts about how the result was obtained.
        consumed: a following sort(...) replaced this statement's output.
        conditions: the conditions the rows were filtered by (a call's condition arguments, a sort's
            conditions), so that facts can state the filter their numbers were computed under.
        found: the entity the call names was found, so an empty result is evidence of absence.
    """

    statement: Statement
    kind: str
    what: str = ""
    rows: tuple[tuple[str, dict], ...] = ()
    values: tuple[Value, ...] = ()
    number: float | None = None
    total: int = 0
    notes: tuple[str, ...] = ()
    error: str = ""
    consumed: bool = False
    conditions: tuple[Condition, ...] = ()
    found: bool = True
    table: Table | None = field(default=None, repr=False, compare=False)  # rows before selectors, for sort
    output: tuple = field(default=(), repr=False, compare=False)  # final Rows or Values, for `*`


@dataclass(frozen=True)
class ExecutionResult:
    statements: tuple[StatementResult, ...]
    calls: int
    stopped: str = ""  # why execution stopped early ("" = it ran to the end)


def execute(program: Program, client, *, now: datetime | None = None, limits: Limits = Limits(),
            matcher: EntityMatcher | None = None, deadline: Deadline | None = None,
            question: str = "") -> ExecutionResult:
    """Runs every statement of a compiled program.

    Args:
        program: from `compile_program` (its `domain` selects the functions).
        client: the mock-API client (official wrapper method names).
        now: the query time, for relative dates.
        limits: call and row bounds.
        matcher: entity matcher (default: text stages only).
        deadline: no API call starts after it.
        question: the question's text (clues such as a year that picks between films of the same title).

    Raises:
        KGApiError: the API failed.
        KGValueError: the program has no domain.
    """
    if program.domain is None:
        raise KGValueError("execute() needs a program compiled for a domain (compile_program)")
    return _Executor(program, client, now, limits, matcher or EntityMatcher(), deadline, question).run()


class _Executor:
    def __init__(self, program: Program, client, now, limits: Limits, matcher: EntityMatcher, deadline,
                 question: str = ""):
        self.program = program
        self.functions = functions(program.domain)
        self.now = now
        self.limits = limits
        self.api = BudgetedAPI(client, limits.max_calls, deadline)
        self.matcher = matcher
        self.question = question
        self.stopped = ""

    def run(self) -> ExecutionResult:
        results: list[StatementResult] = []
        for statement in self.program.statements:
            previous = results[-1] if results else None
            try:
                result = self._statement(statement, previous)
            except KGLimitError as exc:
                self.stopped = str(exc)
                break
            except KGApiError:
                raise
            except KGValueError as exc:
                log.info("KG statement %r: %s", statement.text, exc)
                result = StatementResult(statement, "error", error=str(exc))
            except (TypeError, KeyError, AttributeError, ValueError, OverflowError) as exc:  # unexpected data
                log.warning("KG statement %r failed on the API's data", statement.text, exc_info=True)
                result = StatementResult(statement, "error", error=f"{type(exc).__name__}: {exc}")
            if isinstance(statement.head, Sort) and previous is not None:
                results[-1] = replace(previous, consumed=True)
            results.append(result)
            if self.stopped:
                break
        # whole rows are loaded last, and only for statements whose output is reported (not sorted away)
        results = [self._materialise(r) if r.kind == "rows" and not r.consumed else r for r in results]
        return ExecutionResult(tuple(results), self.api.calls, self.stopped)

    # ------------------------------------------------------------------ heads
    def _statement(self, statement: Statement, previous: StatementResult | None) -> StatementResult:
        table, conditions = _HEADS[type(statement.head)](self, statement, previous)
        if table.stopped:
            self.stopped = table.stopped
        # max_rows bounds what a statement lists; an average or a count, and a following sort, see every row the
        # function found (the highest of 390 one-minute bars is not the highest of the first 200)
        aggregates = statement.average or any(isinstance(s, Length) for s in statement.selectors)
        result = self._select(statement, table if aggregates else table.limit(self.limits.max_rows))
        # rows left unchecked when the budget ran out: an empty result is then no evidence of absence
        return replace(result, table=table, conditions=conditions, found=table.found and not table.stopped)

    def _sort(self, statement: Statement, previous: StatementResult | None) -> tuple[Table, tuple[Condition, ...]]:
        sort: Sort = statement.head
        source = previous.table if previous is not None and previous.table is not None else Table((), "earlier result")
        filtered = source.where(sort.conditions, self.now)
        if filtered.stopped:
            return filtered, sort.conditions
        return filtered.sorted_by(sort.key, sort.descending), sort.conditions

    def _call(self, statement: Statement, previous: StatementResult | None) -> tuple[Table, tuple[Condition, ...]]:
        call: Call = statement.head
        function = self.functions[call.name]
        ctx = CallContext(self.api, self.now, self.matcher, statement.all_matches, self.question)
        conditions = tuple(c for arg in call.args for c in conditions_of(arg))
        stars = [i for i, arg in enumerate(call.args) if isinstance(arg, Star)]
        if not stars:
            args = [_argument(a) for a in call.args]
            return function.implementation(ctx, *args).where(conditions, self.now), conditions
        inputs = list(dict.fromkeys(self._references(previous)))[:self.limits.max_rows]
        param = function.signature.params[stars[0]]
        tables = []
        for item in inputs:
            args = [_star_input(item, param) if i == stars[0] else _argument(a) for i, a in enumerate(call.args)]
            try:
                tables.append(function.implementation(ctx, *args))
            except KGLimitError as exc:  # keep the inputs done so far; the executor stops after this line
                if not tables:
                    raise
                self.stopped = str(exc)
                break
        if not tables:
            return Table((), f"{call.name} result for the previous line's output", found=False), conditions
        named = ", ".join(map(str, inputs[:3])) + (f" and {len(inputs) - 3} more" if len(inputs) > 3 else "")
        what = tables[0].what if len(tables) == 1 else f"results of {call.name} for {named}"
        merged = Table(tuple(r for t in tables for r in t.rows), what, notes=tuple(n for t in tables for n in t.notes),
                       aliases=tables[0].aliases, equals=tables[0].equals, found=any(t.found for t in tables),
                       ambiguous=next((t.ambiguous for t in tables if t.ambiguous), ""))
        return merged.where(conditions, self.now), conditions

    # ------------------------------------------------------------------ selectors
    def _select(self, statement: Statement, table: Table) -> StatementResult:
        selection = _Selection(StatementResult(statement, "rows", what=table.what, total=table.size,
                                               notes=table.notes, table=table), table, list(table.rows))
        for selector in statement.selectors:
            _SELECTORS[type(selector)](self, selector, selection)
            if selection.final is not None:
                return selection.final
            if selection.stop:
                break
        base, items = selection.base, selection.items
        if statement.average:
            return self._average(base, items if selection.selected else [])
        if selection.selected:
            return replace(base, kind="values" if items else "empty", values=tuple(items), output=tuple(items))
        return replace(base, kind="rows" if items else "empty", output=tuple(items))

    def _select_key(self, selector: SelectKey, selection: "_Selection") -> None:
        picked = self._pick_key(selection.items, selector.name, selection.table, selection.selected)
        if picked is None and selection.items:  # no row has the key: report the whole rows instead
            note = f"No attribute {selector.name!r} was found, so the whole records are given."
            selection.base = replace(selection.base, notes=selection.base.notes + (note,))
            selection.stop = True
            return
        selection.items, selection.selected = picked or [], True

    def _select_slice(self, selector: Slice, selection: "_Selection") -> None:
        selection.items, selection.sliced = selection.items[:selector.count], True

    def _select_length(self, selector: Length, selection: "_Selection") -> None:
        # rows cut by max_rows still count
        number = len(selection.items) if selection.selected or selection.sliced else selection.table.size
        selection.final = replace(selection.base, kind="count", number=number,
                                  values=tuple(selection.items) if selection.selected else ())

    def _references(self, previous: StatementResult | None) -> list:
        """What `*` stands for: the previous count/average, its selected values, or its rows' references."""
        if previous is None:
            return []
        if previous.kind in ("count", "average"):
            return [previous.number]
        refs = []
        for item in previous.output:
            try:
                ref = item.value if isinstance(item, Value) else item.reference
            except KGLimitError as exc:
                self.stopped = str(exc)
                break
            if isinstance(ref, (str, int, float)) and not isinstance(ref, bool):
                refs.append(ref)
        return refs

    def _pick_key(self, items: list, key: str, table: Table, selected: bool) -> list[Value] | None:
        """The items' `key` fields as flat Values; None when no item has the key."""
        picked, found = [], False
        for item in items:
            fields, entity = (item.value, item.entity) if selected else (item.fields, None)
            if not isinstance(fields, Mapping):
                continue
            name = resolve_key(fields, key, table.aliases)
            if name is None:
                continue
            found = True
            try:
                entity = entity or item.entity
                picked.extend(Value(entity, name, v) for v in _flatten(fields[name]))
            except KGLimitError as exc:
                self.stopped = str(exc)
                break
        return picked if found else None

    def _average(self, base: StatementResult, values: list[Value]) -> StatementResult:
        numbers = [n for n in (typed(v.value) for v in values) if isinstance(n, float) and not isinstance(n, bool)]
        if not numbers:
            note = "There are no numeric values to average."
            return replace(base, kind="empty", values=tuple(values), notes=base.notes + (note,))
        mean = sum(numbers) / len(numbers)
        return replace(base, kind="average", number=mean, values=tuple(values))

    def _materialise(self, result: StatementResult) -> StatementResult:
        """The result with (entity, fields) of its first `max_listed` rows, loading lazy fields while the
        call budget lasts."""
        done = []
        for row in result.output[:self.limits.max_listed]:
            try:
                done.append((row.entity, {k: row.fields[k] for k in row.fields}))
            except KGLimitError as exc:
                self.stopped = str(exc)
                break
        return replace(result, rows=tuple(done))


def _flatten(value: Any) -> list:
    """A field as items: lists are flattened one level; None and empty values give nothing."""
    if isinstance(value, (list, tuple)):
        return [v for v in value if v not in (None, "")]
    return [] if value in (None, "") else [value]


def conditions_of(arg) -> tuple[Condition, ...]:
    """The conditions an argument holds (a condition, or the conditions of a list; nothing else)."""
    if isinstance(arg, Condition):
        return (arg,)
    if isinstance(arg, ListArg):
        return tuple(item for item in arg.items if isinstance(item, Condition))
    return ()


def _argument(arg) -> Any:
    """A parsed argument as the Python value an implementation receives."""
    convert = _ARGUMENTS.get(type(arg))
    if convert is None:
        raise KGValueError(f"unexpected argument {arg!r}")
    return convert(arg)


def _star_input(item: Any, param: Param) -> Any:
    """One output of the previous line as an argument: numbers stay numbers where the parameter takes them."""
    if isinstance(item, (int, float)) and not isinstance(item, bool):
        if ArgKind.NUMBER in param.kinds:
            return item
        return str(int(item)) if float(item).is_integer() else str(item)
    return str(item)


@dataclass
class _Selection:
    """The state of a statement's selectors as they run left to right."""

    base: StatementResult
    table: Table
    items: list
    selected: bool = False  # a key was selected: items are Values, not Rows
    sliced: bool = False
    stop: bool = False  # a key no row has: the whole rows are reported, later selectors skipped
    final: StatementResult | None = None  # ["len"] decided the result


# dispatch tables: one handler per node type (jmespath's visitor)
_HEADS = {Call: _Executor._call, Sort: _Executor._sort}
_SELECTORS = {SelectKey: _Executor._select_key, Slice: _Executor._select_slice, Length: _Executor._select_length}
_ARGUMENTS = {
    Literal: lambda arg: arg.value,
    Condition: lambda arg: (arg,),
    ListArg: lambda arg: tuple(item if isinstance(item, Condition) else item.value for item in arg.items),
}
