"""Whether a model-written statement's result answers the question: read the statement back, check it against the
question and the store, and turn a checked one-cell result into the answer.

A statement that runs is not yet a right one. The checks refuse what a small model gets wrong most often:
- **Ungrounded literals**: a text condition (`film = 'hugo'`, `person LIKE '%nolan%'`, each member of `IN (...)`)
  that matches no row of its column. A count over a name the table does not hold is a confident 0, and a
  comparison with a missing option is no comparison.
- **A dropped year**: a year the question names that the statement does not use ("at the 2011 oscars" counted
  over every ceremony).
- **The wrong kind**: a count for a question that asks for no count, a name for one that asks "how many", a text
  column for "what is the average ...".
- **No result**: no rows, or more rows than a value can be (`max_direct_rows`).
- **A stale figure**: a statement reading a column that changes daily (`dynamic_columns`: market cap, EPS, P/E),
  of which the store holds one snapshot.

One repair comes first (`repair`): a name written against the wrong column of the right table (a ticker as a
company name, a director as a film) is moved to the one column that holds it.

Statements are read in the grammar's canonical form (models/public_data/sql/grammar.py); one in another form is
"not in the grammar's form" and is not trusted.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from models.public_data.records import format_money
from models.public_data.sql.grammar import DECADE, FLAGS, YEAR, sql_string
from models.public_data.tables import NAME_COLUMNS, TABLE_NAMES, table
from models.verify.stated_values import quantities_in
from models.verify.question_form import options_of
from models.verify.lexical import normalize

_LITERAL = r"'(?:[^']|'')*'"
_NUMBER = r"-?\d+(?:\.\d+)?"
_SHAPE = re.compile(r"SELECT (?P<select>.+?) FROM (?P<table>\w+)(?: WHERE (?P<where>.+?))?"
                    r"(?: GROUP BY (?P<group>\w+))?(?: ORDER BY (?P<order>.+?))?(?: LIMIT (?P<limit>\d+))?", re.DOTALL)
_CONDITION = re.compile(rf"(?P<column>\w+)(?: (?P<op>=|!=|<=|>=|<|>|LIKE) (?P<value>{_LITERAL}|{_NUMBER})"
                        rf"| IN \((?P<members>{_LITERAL}(?:, {_LITERAL})*)\)"
                        rf"| BETWEEN (?P<low>{_NUMBER}) AND (?P<high>{_NUMBER}))")
_JOINER = re.compile(r" (?:AND|OR) ")
_COUNT_Q = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b")
_AMOUNT_Q = re.compile(r"\baverage\b|\bmean\b|\btotal\b|\bcombined\b|\bsum\b|\bhow much\b|\bin all\b")
_NAME_Q = re.compile(r"^\s*(?:which|who|whose|name)\b|\bwhich\b|\bwho\b")
_AGGREGATE = re.compile(r"(SUM|AVG|MIN|MAX)\(")
_MONEY_COLUMNS = frozenset({"budget", "revenue", "market_cap"})
_UNITS = {"runtime": "minutes"}
# Columns naming one entity each: a LIKE pattern matching two of their values ('%apple%': Apple Inc. and Apple
# Hospitality REIT) picks no entity. Titles (and a part played) are left out: '%matrix%' for "the matrix films"
# means all of them.
_ENTITY_COLUMNS = NAME_COLUMNS - {"title", "film", "character"}
# What a question says when it measures by a column (the SQL twin of the KG's key check): a statement ordering or
# aggregating by a column the question never mentions answers another question ("rated higher" by runtime).
_COLUMN_CUES = {
    "rating": r"\brat(?:ed|ing|ings)\b|\bscore|\bbetter\b|\bworse\b|\bbest\b|\bworst\b|\bvotes? average",
    "votes": r"\bvotes?\b",
    "runtime": r"\blong|\bshort|\bruntime|\brun time|\blength|\bminutes\b|\bduration",
    "revenue": r"\bbox office|\bmade\b|\bmake\b|\bearn|\bgross|\brevenue|\bmoney|\bsuccessful",
    "budget": r"\bbudget|\bcost|\bexpensive|\bcheap",
    "market_cap": r"\bmarket cap|\bworth\b|\bvaluable|\bvaluation|\blargest|\bbiggest|\bsmallest",
    "eps": r"\beps\b|\bearnings per share",
    "pe_ratio": r"\bp/?e\b|\bprice.to.earnings|\bpe ratio",
}


@dataclass(frozen=True)
class Condition:
    column: str
    op: str  # = != < > <= >= LIKE IN BETWEEN
    values: tuple[str, ...]  # literals as written (quoted text, numbers)


@dataclass(frozen=True)
class Statement:
    table: str
    select: tuple[str, ...]
    conditions: tuple[Condition, ...]
    group: str
    order: str
    limit: int | None

    def numbers(self) -> set[str]:
        return {v for c in self.conditions for v in c.values if not v.startswith("'")}


def read_statement(text: str) -> Statement | None:
    """The canonical statement's parts; None when `text` is not in the grammar's form."""
    m = _SHAPE.fullmatch((text or "").strip().rstrip(";"))
    if not m:
        return None
    conditions = []
    for part in _JOINER.split(m.group("where")) if m.group("where") else []:
        c = _CONDITION.fullmatch(part)
        if not c:
            return None
        if c.group("members"):
            conditions.append(Condition(c.group("column"), "IN", tuple(re.findall(_LITERAL, c.group("members")))))
        elif c.group("low"):
            conditions.append(Condition(c.group("column"), "BETWEEN", (c.group("low"), c.group("high"))))
        else:
            conditions.append(Condition(c.group("column"), c.group("op"), (c.group("value"),)))
    select = tuple(s.strip() for s in m.group("select").split(", "))
    limit = int(m.group("limit")) if m.group("limit") else None
    return Statement(m.group("table"), select, tuple(conditions), m.group("group") or "", m.group("order") or "",
                     limit)


def problems(question: str, statement: Statement, result, guard, max_direct_rows: int = 1,
             dynamic_columns=()) -> list[str]:
    """Why the result cannot answer the question ([] = it can); `guard` runs the grounding lookups; a statement that
    reads one of `dynamic_columns` (a snapshot of figures that change daily) answers nothing."""
    q = " ".join((question or "").lower().split())
    found = []
    measured = _measured(statement)
    read = set(measured) | {c.column for c in statement.conditions}
    stale = sorted(read & set(dynamic_columns))
    if stale:
        found.append(f"{', '.join(stale)}: the store holds one snapshot of a figure that changes daily")
    if not result.rows:
        found.append("the statement returned no rows")
    elif result.rows[0][0] is None:
        found.append("the result is NULL: nothing matched what it aggregates")
    elif len(result.rows) > max_direct_rows or result.truncated:
        found.append(f"{len(result.rows)}{'+' if result.truncated else ''} rows: more than a value")
    for condition in statement.conditions:
        for value in condition.values:
            if value.startswith("'") and not _grounded(guard, statement.table, condition, value):
                found.append(f"{statement.table}.{condition.column} holds nothing {condition.op.lower()} {value}")
    numbers = statement.numbers()
    missing = [y for y in dict.fromkeys(YEAR.findall(q)) if y not in numbers and not _decade(q, y)]
    if missing:
        found.append(f"the question's year {', '.join(missing)} is not in the statement")
    invented = [n for n in sorted(numbers) if YEAR.fullmatch(n) and n not in q and not _in_decade(q, n)]
    if invented:
        found.append(f"the year {', '.join(invented)} is not in the question")
    stated = {v for v, _ in quantities_in(q)}
    flags = {v for c in statement.conditions if c.column in FLAGS for v in c.values}
    guessed = [n for n in sorted(numbers - flags) if not YEAR.fullmatch(n) and float(n) not in stated]
    if guessed:
        found.append(f"the number {', '.join(guessed)} is not in the question")
    decades = [c for c in statement.conditions if c.op == "=" and any(_decade(q, v) for v in c.values)]
    if decades:
        found.append(f"{decades[0].column} = {decades[0].values[0]} for a decade, not a range")
    for condition in statement.conditions:
        if condition.op == "LIKE" and condition.column in _ENTITY_COLUMNS:
            names = _matches(guard, statement.table, condition)
            if len(names) > 1:
                found.append(f"{condition.values[0]} is ambiguous: {statement.table}.{condition.column} holds "
                             f"{', '.join(names[:3])}")
    literals = " ".join(v.lower() for c in statement.conditions for v in c.values if v.startswith("'"))
    left_out = [o for o in options(q) if o not in literals]
    if left_out:
        found.append(f"the question's option(s) {', '.join(left_out)} are not in the statement")
    for column in dict.fromkeys(measured):
        if column in _COLUMN_CUES and not re.search(_COLUMN_CUES[column], q):
            found.append(f"the question does not ask about {column}")
    first = statement.select[0] if statement.select else ""
    counts, asks_count, asks_name = first.startswith("COUNT("), bool(_COUNT_Q.search(q)), bool(_NAME_Q.search(q))
    if asks_count and not counts:
        found.append("the question asks how many; the statement selects no count")
    elif counts and not asks_count:
        found.append("a count, but the question asks for no count")
    elif _AMOUNT_Q.search(q) and not asks_count and not _AGGREGATE.match(first) and not asks_name:
        found.append("the question asks for an amount; the statement selects no aggregate")
    if result.rows and not counts and asks_name and not asks_count and not isinstance(result.rows[0][0], str):
        found.append("the question asks which or who; the statement selects a number")
    return found


def _measured(statement: Statement) -> list[str]:
    """The columns the answer is measured by: aggregated in the select, or ordered by."""
    selected = [_column_of(item) for item in statement.select if _AGGREGATE.match(item)]
    ordered = _column_of(statement.order.removesuffix(" DESC").removesuffix(" ASC")) if statement.order else ""
    return [c for c in (*selected, ordered) if c]


def _decade(question: str, year: str) -> bool:
    """'1990' of 'the 1990s' (a decade, which a statement states as a range)."""
    return f"{year}s" in question


def _in_decade(question: str, year: str) -> bool:
    """Whether `year` lies in a decade the question names ("the 1990s": 1990-1999, or 2000 as its end)."""
    return any(int(d) <= int(year) <= int(d) + 10 for d in DECADE.findall(question))


def options(question: str) -> list[str]:
    """The things a question compares: "A or B", "among A, B and C", "between A and B" (lower case)."""
    found = options_of(question)
    m = re.search(r"\b(?:among|between)\s+(.+?)\??$", question)
    if m:
        found = found + re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", m.group(1))
    return [o.strip(" ?.").removesuffix("'s") for o in dict.fromkeys(found) if o.strip(" ?.")]


def _matches(guard, table: str, condition: Condition) -> list[str]:
    """The distinct values of the condition's column that its LIKE pattern matches (at most 4)."""
    column, pattern = condition.column, condition.values[0]
    probe = f"SELECT DISTINCT {column} FROM {table} WHERE {column} LIKE {pattern} LIMIT 4"
    return [str(v) for (v,) in guard.run(probe).rows]


def _grounded(guard, table: str, condition: Condition, literal: str) -> bool:
    """Whether some row of `table` has `condition.column` = (or LIKE) `literal`."""
    return _holds(guard, table, condition.column, "LIKE" if condition.op == "LIKE" else "=", literal)


@functools.lru_cache(maxsize=1024)
def _holds(guard, table: str, column: str, op: str, literal: str) -> bool:
    """One grounding probe, remembered: `repair` and `problems` ask the same ones of a read-only store, and each
    is a scan of the column (no index on a model's pattern)."""
    return bool(guard.run(f"SELECT 1 FROM {table} WHERE {column} {op} {literal} LIMIT 1").rows)


def direct_value(statement: Statement, result) -> str:
    """The first cell as an answer: a count as a whole number, money in words, other numbers rounded."""
    value = result.rows[0][0]
    if value is None or isinstance(value, bytes):
        return ""
    if isinstance(value, str):
        return value.strip()
    column = _column_of(statement.select[0])
    if column in _MONEY_COLUMNS:
        return format_money(float(value))
    text = f"{value:,.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)
    return f"{text} {_UNITS[column]}" if column in _UNITS else text


def repair(statement: Statement, text: str, guard) -> tuple[str, list[str]]:
    """The statement with each ungrounded text condition moved to the one other column of its table that holds its
    literals (`name = 'msft'` -> `ticker = 'msft'`; `film = 'sam mendes'` -> `nominee = 'sam mendes'`), or, for a
    name compared with `=`, to the one name column whose `LIKE '%...%'` matches exactly one value. Returns the
    statement (unchanged when nothing applies) and what was changed, for the trace."""
    columns = [c.name for c in table(statement.table).columns if c.type == "TEXT"] \
        if statement.table in TABLE_NAMES else []
    changes = []
    for condition in statement.conditions:
        literals = [v for v in condition.values if v.startswith("'")]
        if not literals or all(_grounded(guard, statement.table, condition, v) for v in literals):
            continue
        written = _condition_text(condition)
        moved = [c for c in columns if c != condition.column
                 and all(_grounded(guard, statement.table, Condition(c, condition.op, ()), v) for v in literals)]
        if len(moved) == 1:
            new = _condition_text(Condition(moved[0], condition.op, condition.values))
        elif condition.op == "=" and condition.column in NAME_COLUMNS:
            pattern = sql_string(f"%{literals[0][1:-1].replace(chr(39) * 2, chr(39))}%")
            unique = [c for c in columns if c in NAME_COLUMNS
                      and len(_matches(guard, statement.table, Condition(c, "LIKE", (pattern,)))) == 1]
            if len(unique) != 1:
                continue
            new = _condition_text(Condition(unique[0], "LIKE", (pattern,)))
        else:
            continue
        if text.count(written) == 1:
            text = text.replace(written, new)
            changes.append(f"{written} -> {new}")
    return text, changes


def _condition_text(condition: Condition) -> str:
    if condition.op == "IN":
        return f"{condition.column} IN ({', '.join(condition.values)})"
    if condition.op == "BETWEEN":
        return f"{condition.column} BETWEEN {condition.values[0]} AND {condition.values[1]}"
    return f"{condition.column} {condition.op} {condition.values[0]}"


def as_option(question: str, value: str, statement: Statement | None = None, guard=None) -> str:
    """A compared row's value as the option the question names it by: the answer to "A or B?" is A or B. The
    option the value names ("Meta Platforms, Inc." for "meta or netflix" is "meta"), else (with the statement and
    the guard) the one option whose condition selects that row ("Microsoft Corporation" for "msft or aapl", found
    by `ticker IN (...)`). Any other value is returned as it is."""
    asked = options(" ".join((question or "").lower().split()))
    words = f" {normalize(value)} "
    named = [o for o in asked if f" {normalize(o)} " in words]
    if len(named) == 1:
        return named[0] if normalize(value) != normalize(named[0]) else value
    if named or statement is None or guard is None or not asked or not statement.select:
        return value
    selected = _column_of(statement.select[0])
    selecting = []
    for option in asked:
        for c in statement.conditions:
            for literal in (v for v in c.values if v.startswith("'") and normalize(option) in normalize(v)):
                one = _condition_text(Condition(c.column, "=" if c.op == "IN" else c.op, (literal,)))
                probe = f"SELECT 1 FROM {statement.table} WHERE {one} AND {selected} = {sql_string(value)} LIMIT 1"
                if guard.run(probe).rows:
                    selecting.append(option)
    selecting = list(dict.fromkeys(selecting))
    return selecting[0] if len(selecting) == 1 else value


def _column_of(item: str) -> str:
    m = re.fullmatch(r"(?:\w+\()?(?:DISTINCT )?(\w+|\*)\)?", item)
    return m.group(1) if m else ""


def describe_rows(statement_text: str, result) -> list[str]:
    """The result as facts for the answer step and the verifier: the statement, then one line per row."""
    lines = [f"SQL over {', '.join(result.tables) or 'the store'}: {statement_text}"]
    for row in result.rows:
        cells = [f"{name} = {_cell(name, value)}" for name, value in zip(result.columns, row)]
        lines.append("Result: " + "; ".join(cells) + ".")
    return lines


def _cell(name: str, value) -> str:
    if isinstance(value, bytes):
        return "(binary)"
    if isinstance(value, float) and _column_of(name) in _MONEY_COLUMNS:
        return format_money(value)
    return str(value)


__all__ = ["Condition", "Statement", "as_option", "describe_rows", "direct_value", "options", "problems",
           "read_statement", "repair"]
