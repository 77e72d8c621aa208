"""The SQL a model may write, as a Lark grammar generated from the schema and the question.

One SELECT over one table: columns and aggregates of that table only, conditions typed by column (text columns
compare with `=`, `!=`, `LIKE` or `IN (...)` against text; numbers with `=`, `<`, `>`, ... against numbers),
`GROUP BY`, `ORDER BY`, `LIMIT`. No joins, subqueries or functions beyond the aggregates: the tables are flat
(models/public_data/tables.py) so the questions the source is for need none, and every construct left out is one
a 135M model cannot get wrong.

Literals are closed too: a text is a quoted span of the question (1-6 words, as typed; `LIKE` gets it wrapped in
`%`) or one of the values a low-cardinality column really holds ('director', 'best picture', 'en'); a number is one
the question states (`question_numbers`). So a constrained model cannot invent an entity or a year: it can only
point at the question's words.

The canonical form (single spaces, upper-case keywords) is what `parse_statement` reads back for the checks;
llguidance (the transformers backend) and vLLM's structured outputs both take this grammar unchanged. Only
plain Lark constructs are used, as in the KG grammar (models/kg/language/grammar.py).
"""
from __future__ import annotations

import json
import re
from typing import Iterable, Sequence

from models.public_data.sql.schema import SchemaDescriptor, TableInfo
from models.verify.stated_values import quantities_in

_NUMERIC = ("INTEGER", "REAL")
FLAGS = frozenset({"won"})  # 0/1 columns: compared with 0 or 1 only, never with the question's numbers
_MAX_SPAN_WORDS = 6
_EMPTY = '"\'\'"'  # the empty SQL string, as a Lark literal: a rule cannot be empty
YEAR = re.compile(r"\b(?:1[89]\d\d|20\d\d)\b")
DECADE = re.compile(r"\b(1[89]\d0|20\d0)s\b")  # "the 1990s": its first year
_WORD = re.compile(r"[\w][\w.&'\-]*", re.UNICODE)


def question_spans(question: str, max_words: int = _MAX_SPAN_WORDS) -> list[str]:
    """Contiguous runs of 1..max_words words of the question, as typed; one ending in a possessive also without
    it ("nolan's" -> "nolan", while "the king's speech" stays whole)."""
    spans = set()
    for clause in re.split(r'[,;:?!()"]', (question or "").replace("\u2019", "'")):  # no span across a comma
        spans.update(_spans(clause, max_words))
    return sorted(s for s in spans if s)


def _spans(clause: str, max_words: int) -> set[str]:
    words = [w.rstrip(".") for w in _WORD.findall(clause)]
    words = [w for w in words if w]
    spans = set()
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + max_words) + 1):
            span = " ".join(words[i:j])
            spans.update((span, span.removesuffix("'s")) if span.endswith("'s") else (span,))
    return spans


def question_numbers(question: str) -> list[str]:
    """The numbers a statement may use: the question's own (years, and quantities with their scale: "2 trillion"
    is 2000000000000) and a decade's first and last year ("the 1970s": 1970, 1979). A model that may write any
    number copies its examples' years. (A flag column takes 0 or 1 by a rule of its own.)"""
    q = " ".join((question or "").lower().split())
    numbers = set(YEAR.findall(q))
    for decade in DECADE.findall(q):
        numbers.update((decade, str(int(decade) + 9)))
    for value, _ in quantities_in(q):
        numbers.add(str(int(value)) if float(value).is_integer() else f"{value:g}")
    return sorted(numbers, key=lambda n: (len(n), n), reverse=True)  # longest first: "2012" before "2"


def sql_string(text: str) -> str:
    """`text` as an SQL string literal ('' doubles a quote)."""
    return "'" + text.replace("'", "''") + "'"


def _alternatives(literals: Iterable[str]) -> str:
    """A Lark alternation of exact strings (JSON quoting is valid Lark string syntax)."""
    return " | ".join(json.dumps(x, ensure_ascii=False) for x in dict.fromkeys(literals))


def sql_grammar(schema: SchemaDescriptor, tables: Sequence[str], question: str,
                categorical: dict[str, Sequence[str]] | None = None) -> str:
    """The Lark grammar of statements over `tables` whose text literals come from `question` or `categorical`
    (`"table.column" -> values` the column holds).

    Raises:
        ValueError: none of `tables` is in the schema.
    """
    infos = [t for t in (schema.table(name) for name in tables) if t is not None]
    if not infos:
        raise ValueError(f"no table of {list(tables)} in the schema")
    spans, numbers = question_spans(question), question_numbers(question)
    rules = [f"start: {' | '.join(f'q_{t.name}' for t in infos)}"]
    for t in infos:
        rules += _table_rules(t, bool(spans), bool(numbers), (categorical or {}))
    rules += [
        f"span: {_alternatives(sql_string(s) for s in spans) if spans else _EMPTY}",
        f"like: {_alternatives(sql_string(f'%{s}%') for s in spans) if spans else _EMPTY}",
        'agg: "SUM" | "AVG" | "MIN" | "MAX"',
        'numop: " = " | " != " | " < " | " > " | " <= " | " >= "',
        'textop: " = " | " != "',
        'dir: " ASC" | " DESC"',
        'limit: " LIMIT " INT',
        f"NUMBER: {_alternatives(numbers) if numbers else _EMPTY}",
        "INT: /[1-9][0-9]{0,2}/",
    ]
    return "\n".join(rules) + "\n"


def _table_rules(t: TableInfo, has_spans: bool, has_numbers: bool, categorical) -> list[str]:
    n = t.name
    numeric = [c.name for c in t.columns if c.type in _NUMERIC and c.name not in FLAGS]
    flags = [c.name for c in t.columns if c.name in FLAGS]
    text = [c.name for c in t.columns if c.type not in _NUMERIC]
    values = [sql_string(v) for c in text for v in categorical.get(f"{n}.{c}", ())]
    literal = " | ".join((["span"] if has_spans else []) + ([_alternatives(values)] if values else [])) or _EMPTY
    rules = [
        f'q_{n}: "SELECT " sel_{n} " FROM {n}" where_{n}? group_{n}? order_{n}? limit?',
        f'sel_{n}: item_{n} (", " item_{n})*',
        f'item_{n}: col_{n} | "COUNT(*)" | "COUNT(DISTINCT " col_{n} ")"'
        + (f' | agg "(" ncol_{n} ")"' if numeric else ""),
        f'where_{n}: " WHERE " cond_{n} ((" AND " | " OR ") cond_{n})*',
        f'group_{n}: " GROUP BY " col_{n}',
        f'order_{n}: " ORDER BY " (col_{n} | "COUNT(*)"' + (f' | agg "(" ncol_{n} ")"' if numeric else "") + ") dir?",
        f"col_{n}: {_alternatives(c.name for c in t.columns)}",
        f"lit_{n}: {literal}",
    ]
    conds = []
    if text:
        rules.append(f"tcol_{n}: {_alternatives(text)}")
        conds += [f"tcol_{n} textop lit_{n}", f'tcol_{n} " LIKE " like',
                  f'tcol_{n} " IN (" lit_{n} (", " lit_{n})* ")"']
    if numeric:
        rules += [f"ncol_{n}: {_alternatives(numeric + flags)}", f"mcol_{n}: {_alternatives(numeric)}"]
    if numeric and has_numbers:
        conds += [f"mcol_{n} numop NUMBER", f'mcol_{n} " BETWEEN " NUMBER " AND " NUMBER']
    conds += [f'"{flag} = " ("0" | "1")' for flag in flags]
    rules.append(f"cond_{n}: {' | '.join(conds)}")
    return rules
