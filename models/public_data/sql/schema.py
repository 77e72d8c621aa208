"""The schema descriptor: what the store's typed tables hold, read from the database itself, short enough for a
prompt (and, in words, the SQL source's `Descriptor.knows`).

For each typed table (the ones the store's `sql_tables` catalog lists): what it holds in words, its row count,
and each column's name, type, note and a few example values (`SELECT DISTINCT ... LIMIT n`, cut to a few words),
so the model sees how values are written ("best picture", "2010-07-15", "en").
"""
from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from models.public_data.tables import NAME_COLUMNS


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: str
    note: str
    examples: tuple[str, ...]
    values: tuple[str, ...] = ()  # every value of a text column with few (`describe`'s `categorical`), else ()


@dataclass(frozen=True)
class TableInfo:
    name: str
    holds: str
    rows: int
    columns: tuple[ColumnInfo, ...]

    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


@dataclass(frozen=True)
class SchemaDescriptor:
    tables: tuple[TableInfo, ...]

    def table(self, name: str) -> TableInfo | None:
        return next((t for t in self.tables if t.name == name), None)

    def categorical(self) -> dict[str, tuple[str, ...]]:
        """`"table.column" -> values` of the text columns with few values (grammar literals)."""
        return {f"{t.name}.{c.name}": c.values for t in self.tables for c in t.columns if c.values}

    def text(self, tables=None) -> str:
        """The prompt's view of `tables` (None: all): one line per table, one per column."""
        lines = []
        for t in self.tables:
            if tables is not None and t.name not in tables:
                continue
            lines.append(f"{t.name}: {t.holds} ({t.rows} rows)")
            for c in t.columns:
                shown = c.examples if c.type == "TEXT" or not c.note else ()  # a number's note says enough
                detail = "; ".join(x for x in (c.note, "e.g. " + ", ".join(shown) if shown else "") if x)
                lines.append(f"  {c.name} {c.type}" + (f" ({detail})" if detail else ""))
        return "\n".join(lines)

    def words(self) -> str:
        """What the tables hold, in one sentence (for source selection)."""
        return "SQL tables: " + "; ".join(f"{t.holds} ({t.name})" for t in self.tables)


def describe(path: str | os.PathLike, examples: int = 3, example_chars: int = 24,
             categorical: int = 64) -> SchemaDescriptor:
    """Reads the descriptor of the store at `path` (read-only); a text column with at most `categorical` distinct
    values, each used twice on average, lists them all (`ColumnInfo.values`): a category, not a name (never one of
    `tables.NAME_COLUMNS`).

    Raises:
        sqlite3.Error: not a store with the `sql_tables` catalog (built by an older version).
    """
    with sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True) as db:
        catalog = db.execute("SELECT name, holds, notes FROM sql_tables ORDER BY rowid").fetchall()
        tables = []
        for name, holds, notes in catalog:
            note_of = dict(part.split(": ", 1) for part in notes.split("; ") if ": " in part)
            columns = []
            for _, column, type_, *_ in db.execute(f'PRAGMA table_info("{name}")'):
                values = [v for (v,) in db.execute(f'SELECT DISTINCT "{column}" FROM "{name}" WHERE "{column}" '
                                                   f"IS NOT NULL AND \"{column}\" != '' LIMIT {int(categorical) + 1}")]
                few = ()
                if type_ == "TEXT" and column not in NAME_COLUMNS and len(values) <= categorical:  # and repeated
                    rows = db.execute(f'SELECT count("{column}") FROM "{name}"').fetchone()[0]
                    few = tuple(values) if 2 * len(values) <= rows else ()
                columns.append(ColumnInfo(column, type_, note_of.get(column, ""),
                                          tuple(_example(v, example_chars) for v in values[:examples]), few))
            count = db.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
            tables.append(TableInfo(name, holds, count, tuple(columns)))
    return SchemaDescriptor(tuple(tables))


def _example(value, limit: int) -> str:
    if isinstance(value, str):
        return "'" + (value if len(value) <= limit else value[:limit].rstrip() + "…") + "'"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:g}"
    return str(value)
