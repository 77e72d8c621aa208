"""Building the store from the published CSVs, and building it on first use.

The repo ships small fixtures in the published layouts in `data/public/`; the default profile builds
them into `.cache/` on first use (`ensure_database`), so a fresh clone needs no manual step and no
binary is committed. The full datasets are built once by hand (`python scripts/build_public_data.py`).

A store records which folder it was built from and a fingerprint (name, size, mtime) of its files.
`ensure_database` rebuilds an auto-built store when those files change, and never touches a store that
was built by hand from another folder.
"""
from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

from models.paths import resolve_repo_path
from models.public_data.config import PublicDataConfig
from models.public_data.importers import IMPORTERS, import_directory
from models.public_data.store import SCHEMA_VERSION, write_database

log = logging.getLogger(__name__)


def source_fingerprint(src: Path) -> str:
    """Name, size and mtime of every known file in `src` (credits included), as JSON."""
    names = sorted(set(IMPORTERS) | {"credits.csv"})
    stats = {n: [(src / n).stat().st_size, (src / n).stat().st_mtime_ns] for n in names if (src / n).exists()}
    return json.dumps(stats, sort_keys=True)


def build_database(src: str | Path, out: str | Path) -> dict:
    """Imports every known file of `src` into a new store at `out`.

    Returns:
        Counts of records and entities (also stored in the file's meta table).

    Raises:
        PublicDataError: no known file in `src`, or a file lacks a required column.
    """
    src = Path(src).resolve()
    meta = {"source_dir": str(src), "fingerprint": source_fingerprint(src)}
    return write_database(import_directory(src), out, meta)


def store_meta(database: Path) -> dict[str, str]:
    """The meta table of `database`; {} when it is not a readable store."""
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
            return dict(db.execute("SELECT key, value FROM meta"))
    except sqlite3.Error:
        return {}


def ensure_database(cfg: PublicDataConfig) -> Path | None:
    """The configured database path, (re)built from `cfg.build_from` when missing or stale.

    Returns:
        The path of a usable store, or None (missing and nothing to build it from, built by an older
        version of this code, or the build failed), in which case the pathway is skipped: never raises.
    """
    database = resolve_repo_path(cfg.database)
    src = resolve_repo_path(cfg.build_from).resolve() if cfg.build_from else None
    if database.exists():
        meta = store_meta(database)
        ours = src is not None and src.exists() and meta.get("source_dir") == str(src)
        current = meta.get("schema_version") == SCHEMA_VERSION
        if ours and (not current or meta.get("fingerprint") != source_fingerprint(src)):
            log.info("%s is out of date with %s or with this code; rebuilding", database, src)
        elif current:
            return database
        else:
            log.warning("public-data database %s was not built by this version of the code; rebuild it "
                        "with `python scripts/build_public_data.py`; the public-data pathway is skipped", database)
            return None
    if src is None or not src.exists():
        log.warning("public-data database %s is missing and no source folder to build it from "
                    "(public_data.build_from=%r); the public-data pathway is skipped", database, cfg.build_from)
        return None
    try:
        counts = build_database(src, database)
    except Exception as exc:  # a broken fixture must cost the pathway, not the model
        log.warning("could not build the public-data database from %s (%s); the pathway is skipped", src, exc)
        return None
    log.info("built the public-data database %s from %s: %s", database, src, counts)
    return database
