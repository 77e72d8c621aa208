"""The public-data store: one SQLite file with records, entity names and an FTS5 trigram index.

Schema:
    meta(key, value)                          schema version, source dir, file fingerprint, counts
    records(id, source, domain, year, category, winner, text)   winner: 1/0 for award nominations, else NULL
    entities(id, domain, name, norm)          one row per distinct normalised name per domain
    mentions(entity_id, record_id)            which records an entity is named in
    entity_fts(norm)                          FTS5, tokenize=trigram, rowid = entities.id
    oscar_nominations, grammy_nominations, movies, movie_credits, movie_genres, companies, sql_tables
                                              the same rows typed, for the SQL source (tables.py)

Why a trigram index: a trigram phrase query is an indexed *substring* search ("matrix" finds "the
matrix reloaded"), and an OR of trigrams ranked by bm25 finds near-misses with typos ("the matirx"),
which are the candidates the embedding stage of linking compares. Both work over the 45,000-movie
file without loading names into memory or embedding them at start-up.

The file is written to a temporary name and renamed, so a reader never opens half a database, and is
opened read-only at query time.
"""
from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Iterable, Sequence

from models.public_data.records import Record
from models.text import name_key
from models.public_data.tables import create_tables, insert_rows

# Bump when the tables or the serialisation of records change: stores built earlier are then rebuilt
# (auto-built ones) or refused with a message (hand-built ones).
SCHEMA_VERSION = "2"
_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE records(id INTEGER PRIMARY KEY, source TEXT, domain TEXT, year INTEGER, category TEXT,
                     winner INTEGER, text TEXT);
CREATE TABLE entities(id INTEGER PRIMARY KEY, domain TEXT, name TEXT, norm TEXT, UNIQUE(domain, norm));
CREATE TABLE mentions(entity_id INTEGER, record_id INTEGER, PRIMARY KEY(entity_id, record_id)) WITHOUT ROWID;
CREATE INDEX records_year ON records(source, year);
CREATE VIRTUAL TABLE entity_fts USING fts5(norm, tokenize='trigram');
"""


def write_database(records: Iterable[Record], out: str | os.PathLike, meta: dict[str, str] | None = None) -> dict:
    """Writes `records` into a new SQLite store at `out` (replacing any old one atomically).

    Returns:
        Counts: `{"records": n, "entities": n, "by_source": {source: n}}`.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    partial.unlink(missing_ok=True)
    by_source: dict[str, int] = {}
    db = sqlite3.connect(partial)
    try:
        db.executescript(_SCHEMA)
        create_tables(db)
        entity_ids: dict[tuple[str, str], int] = {}
        for record in records:
            cursor = db.execute(
                "INSERT INTO records(source, domain, year, category, winner, text) VALUES (?,?,?,?,?,?)",
                (record.source, record.domain, record.year, record.category, record.winner, record.text))
            by_source[record.source] = by_source.get(record.source, 0) + 1
            insert_rows(db, record.rows)
            for name in record.names:
                norm = name_key(name)
                if not norm:
                    continue
                key = (record.domain, norm)
                if key not in entity_ids:
                    entity_ids[key] = db.execute("INSERT INTO entities(domain, name, norm) VALUES (?,?,?)",
                                                 (record.domain, name, norm)).lastrowid
                db.execute("INSERT OR IGNORE INTO mentions VALUES (?,?)", (entity_ids[key], cursor.lastrowid))
        db.execute("INSERT INTO entity_fts(rowid, norm) SELECT id, norm FROM entities")
        counts = {"records": sum(by_source.values()), "entities": len(entity_ids), "by_source": by_source}
        db.executemany("INSERT INTO meta VALUES (?,?)",
                       [(k, v) for k, v in {**(meta or {}), "counts": json.dumps(counts),
                                            "schema_version": SCHEMA_VERSION}.items()])
        db.commit()
    finally:
        db.close()
    os.replace(partial, out)
    return counts


class PublicStore:
    """Read-only queries over a built store."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not self.path.exists():
            raise FileNotFoundError(f"public-data database {self.path} does not exist")
        # Read-only URI: a wrong path can never create an empty database; one connection serves the
        # (single-threaded) pipeline, check_same_thread=False lets a server thread reuse it.
        self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        self._db.execute("SELECT count(*) FROM entity_fts").fetchone()  # fails now on a foreign file

    def meta(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, value FROM meta"))

    def exact(self, domain: str, norm: str) -> list[tuple[int, str, str]]:
        """Entities whose normalised name equals `norm`: `(id, name, norm)`."""
        return self._db.execute("SELECT id, name, norm FROM entities WHERE domain=? AND norm=?",
                                (domain, norm)).fetchall()

    def containing(self, domain: str, norm: str, limit: int = 200) -> list[tuple[int, str, str]]:
        """Entities whose normalised name contains `norm` as a substring (indexed; `norm` >= 3 chars)."""
        if len(norm) < 3:
            return []
        return self._db.execute(
            "SELECT e.id, e.name, e.norm FROM entity_fts f JOIN entities e ON e.id = f.rowid "
            "WHERE entity_fts MATCH ? AND e.domain=? LIMIT ?", (_phrase(norm), domain, limit)).fetchall()

    def contained_in(self, domain: str, norm: str, min_chars: int) -> list[tuple[int, str, str]]:
        """Entities of at least `min_chars` whose normalised name is a substring of `norm` (a scan)."""
        return self._db.execute(
            "SELECT id, name, norm FROM entities WHERE domain=? AND length(norm) >= ? AND instr(?, norm) > 0",
            (domain, min_chars, norm)).fetchall()

    def similar(self, domain: str, norm: str, limit: int) -> list[tuple[int, str, str]]:
        """Entities sharing the most trigrams with `norm` (bm25 order): near-miss candidates."""
        grams = sorted({norm[i:i + 3] for i in range(len(norm) - 2)})
        if not grams:
            return []
        return self._db.execute(
            "SELECT e.id, e.name, e.norm FROM entity_fts f JOIN entities e ON e.id = f.rowid "
            "WHERE entity_fts MATCH ? AND e.domain=? ORDER BY bm25(entity_fts) LIMIT ?",
            (" OR ".join(_phrase(g) for g in grams), domain, limit)).fetchall()

    def records_of(self, entity_ids: Sequence[int], limit: int) -> list[tuple[int, str]]:
        """`(record id, text)` of records naming any of `entity_ids`, in the order of the ids given."""
        rows = []
        for entity_id in entity_ids:
            rows += self._db.execute("SELECT r.id, r.text FROM mentions m JOIN records r ON r.id = m.record_id "
                                     "WHERE m.entity_id=? LIMIT ?", (entity_id, limit)).fetchall()
        return rows[:limit]

    def award_records(self, source: str, year: int) -> list[tuple[int, str, bool, str]]:
        """`(record id, category, winner, text)` of one award ceremony (`source` oscar | grammy)."""
        rows = self._db.execute("SELECT id, category, winner, text FROM records WHERE source=? AND year=?",
                                (source, year)).fetchall()
        return [(i, category, bool(winner), text) for i, category, winner, text in rows]

    def close(self) -> None:
        self._db.close()


def _phrase(text: str) -> str:
    """An FTS5 string literal (double quotes doubled), i.e. a phrase query."""
    return '"' + text.replace('"', '""') + '"'
