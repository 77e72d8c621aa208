"""Building the SQLite store from the fixture CSVs, its FTS5 trigram queries, and build-on-first-use."""
import json
import os
import shutil
import sqlite3

import pytest

from models.paths import resolve_repo_path
from models.public_data import PublicStore, build_database, ensure_database
from models.text import name_key
from models.public_data.config import PublicDataConfig
from models.public_data.store import SCHEMA_VERSION, write_database

FIXTURES = resolve_repo_path("data/public")


def test_build_counts_every_source(store):
    counts = json.loads(store.meta()["counts"])
    assert counts["by_source"] == {"oscar": 74, "grammy": 36, "movie": 22, "finance": 24}
    assert counts["entities"] > 250
    assert store.meta()["source_dir"] == str(FIXTURES.resolve())


def test_exact_and_substring_queries(store):
    [(_, name, norm)] = store.exact("movie", name_key("the king's speech"))
    assert (name, norm) == ("The King's Speech", "the kings speech")
    assert store.exact("music", "the kings speech") == []  # domains are separate
    containing = {name for _, name, _ in store.containing("movie", "matrix")}
    assert {"The Matrix", "The Matrix Reloaded", "The Matrix Revolutions"} <= containing
    inside = {name for _, name, _ in store.contained_in("movie", "fight club the movie from 1999", 4)}
    assert "Fight Club" in inside
    assert store.containing("movie", "ab") == []  # below the trigram length


def test_similar_ranks_near_misses_by_shared_trigrams(store):
    names = [name for _, name, _ in store.similar("movie", "the matirx", 5)]
    assert "The Matrix" in names[:3]


def test_award_records_by_ceremony_year(store):
    rows = store.award_records("oscar", 2012)
    assert {category for _, category, _, _ in rows} >= {"actor in a leading role", "best picture"}
    winners = [text for _, category, won, text in rows if won and category == "actor in a leading role"]
    assert winners == ["The award is the 84th Academy Awards, held in 2012 for films of 2011. The Oscar category "
                       "is actor in a leading role. The winner is Jean Dujardin. The film is The Artist."]


def test_records_of_follows_mentions(store):
    ids = [i for i, _, _ in store.exact("movie", "inception")]
    texts = [text for _, text in store.records_of(ids, 10)]
    assert any(t.startswith("The title is Inception.") for t in texts)
    assert any("Oscar category is cinematography" in t for t in texts)


def test_store_refuses_missing_and_foreign_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        PublicStore(tmp_path / "absent.sqlite")
    foreign = tmp_path / "foreign.sqlite"
    sqlite3.connect(foreign).execute("CREATE TABLE t(x)").connection.commit()
    with pytest.raises(sqlite3.Error):
        PublicStore(foreign)


def test_write_is_atomic_and_replaces(tmp_path):
    out = tmp_path / "db.sqlite"
    write_database([], out)
    assert os.listdir(tmp_path) == ["db.sqlite"]
    assert PublicStore(out).exact("movie", "anything") == []


def test_ensure_database_builds_on_first_use_and_rebuilds_when_stale(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(FIXTURES, src)
    cfg = PublicDataConfig(database=str(tmp_path / "cache" / "db.sqlite"), build_from=str(src))
    path = ensure_database(cfg)
    assert path.exists() and PublicStore(path).exact("finance", "msft")
    with open(src / "finance_stats.csv", "a", encoding="utf-8") as fh:
        fh.write("ZZZZ,Zeta Test Corp,1000000,1.0,2.0\n")
    assert PublicStore(ensure_database(cfg)).exact("finance", "zzzz")


def test_ensure_database_never_touches_a_store_built_from_elsewhere(tmp_path):
    own = tmp_path / "full.sqlite"
    build_database(FIXTURES, own)
    before = own.stat().st_mtime_ns
    src = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, src)
    assert ensure_database(PublicDataConfig(database=str(own), build_from=str(src))) == own
    assert own.stat().st_mtime_ns == before


def test_ensure_database_without_a_source_skips_the_pathway(tmp_path, caplog):
    cfg = PublicDataConfig(database=str(tmp_path / "absent.sqlite"), build_from="")
    assert ensure_database(cfg) is None
    assert "pathway is skipped" in caplog.text
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "finance_stats.csv").write_text("ticker,company_name\nMSFT,Microsoft\n")
    assert ensure_database(PublicDataConfig(database=str(tmp_path / "b.sqlite"), build_from=str(broken))) is None
    assert "'market_cap'" in caplog.text


def _set_schema_version(path, version):
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (version,))


def test_a_store_from_older_code_is_rebuilt_if_auto_built_else_refused(tmp_path, caplog):
    src = tmp_path / "src"
    shutil.copytree(FIXTURES, src)
    auto = PublicDataConfig(database=str(tmp_path / "auto.sqlite"), build_from=str(src))
    _set_schema_version(ensure_database(auto), "0")
    assert PublicStore(ensure_database(auto)).meta()["schema_version"] == SCHEMA_VERSION
    by_hand = tmp_path / "full.sqlite"
    build_database(FIXTURES, by_hand)
    _set_schema_version(by_hand, "0")
    assert ensure_database(PublicDataConfig(database=str(by_hand), build_from=str(src))) is None
    assert "not built by this version" in caplog.text
    foreign = tmp_path / "foreign.sqlite"
    foreign.write_bytes(b"definitely not sqlite")
    assert ensure_database(PublicDataConfig(database=str(foreign), build_from="")) is None
