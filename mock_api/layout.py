"""The official `cragkg/` file layout, shared by the server (which reads it) and the fixture builder (which writes it).

Deviation: the official server silently creates an empty sqlite file when one is missing (and then answers
null for everything in that domain); here every missing file is a `KGDataError` at start-up that names it,
so a half-copied KG fails loudly and is never modified.
"""
from __future__ import annotations

from pathlib import Path

OPEN_KG = ("open/kg.0.jsonl.bz2", "open/kg.1.jsonl.bz2")
MOVIE_DB = "movie/movie_db.json"
PERSON_DB = "movie/person_db.json"
YEAR_DB = "movie/year_db.json"
MUSIC_ARTISTS = "music/artist_dict_simplified.pickle"
MUSIC_SONGS = "music/song_dict_simplified.pickle"
MUSIC_GRAMMY = "music/grammy_df.pickle"
MUSIC_RANKS = "music/rank_dict_hot100.pickle"
MUSIC_HOT100 = "music/song_dict_hot100.pickle"
MUSIC_WORKS = "music/artist_work_dict.pickle"
FINANCE_COMPANIES = "finance/company_name.dict"
FINANCE_PRICE = "finance/finance_price.sqlite"
FINANCE_DETAILED = "finance/finance_detailed_price.sqlite"
FINANCE_DIVIDEND = "finance/finance_dividend.sqlite"
FINANCE_MARKETCAP = "finance/finance_marketcap.sqlite"
FINANCE_INFO = "finance/finance_info.sqlite"
NBA_DB = "sports/nba.sqlite"
SOCCER = "sports/soccer_team_match_stats.pkl"

ALL_FILES = (*OPEN_KG, MOVIE_DB, PERSON_DB, YEAR_DB, MUSIC_ARTISTS, MUSIC_SONGS, MUSIC_GRAMMY, MUSIC_RANKS,
             MUSIC_HOT100, MUSIC_WORKS, FINANCE_COMPANIES, FINANCE_PRICE, FINANCE_DETAILED, FINANCE_DIVIDEND,
             FINANCE_MARKETCAP, FINANCE_INFO, NBA_DB, SOCCER)


class KGDataError(RuntimeError):
    """A KG directory is incomplete or a file in it does not have the official shape."""


def require(kg_dir: str | Path, relative: str) -> Path:
    """The path of one KG file.

    Raises:
        KGDataError: the file does not exist.
    """
    path = Path(kg_dir) / relative
    if not path.is_file():
        raise KGDataError(f"KG file {relative} is missing under {kg_dir} (expected the official cragkg/ layout: "
                          f"{', '.join(ALL_FILES)})")
    return path
