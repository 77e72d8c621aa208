"""Builds the bundled (fixture) KG: reviewable sources in `data/kg_fixture/` -> the official binary `cragkg/` layout.

    python scripts/build_bundled_kg.py --out DIR

The sources are small JSON/CSV files written for this project (not copied from CRAG); `data/kg_fixture/README.md`
lists what they contain. Everything that can be derived is derived here rather than typed twice, so the
files cannot disagree with each other: person filmographies and Oscar lists come from the movies and the
award table, `year_db` from release dates and ceremony years, 1-minute bars from daily bars, both sides of
a soccer match from one row, NBA percentages / rebounds / plus-minus / matchups from counting stats.

Design decisions:
- Music search uses the official `fast_bm25`, which drops every token with idf <= 4; with N names a token
  shared by k names survives only if ln((N - k + 0.5) / (k + 0.5)) > 4. The artist and song corpora are
  therefore padded with filler entries whose names are unique pseudo-words (records with every field null)
  up to `MUSIC_CORPUS_SIZE`, so that tokens shared by up to 3 real names ("queen", "bohemian") stay searchable.
- `movie_db` is keyed by the normalised title (the official key); films that share a title (remakes) would
  collide there, so each of them is keyed "<title> <release year>" ("dune 1984", "dune 2021") while its record
  keeps the plain title: a search for "dune" finds both, as a program must expect.
- Tables are written with object (not pandas-3 `str`) columns so the pickles stay close to what older pandas
  wrote; they are built and read by this repo's pandas.
- `ensure_bundled_kg()` builds into `.cache/bundled_kg/` once and rebuilds only when a source file or this
  builder changes (a digest is stored next to the build); it builds in a temporary directory and renames it
  into place, so a concurrent reader never sees half a KG.
"""
from __future__ import annotations

import bz2
import csv
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
from sqlitedict import SqliteDict

from mock_api import layout
from mock_api.search import normalize
from models.paths import REPO_ROOT

SOURCE_DIR = REPO_ROOT / "data" / "kg_fixture"
CACHE_DIR = REPO_ROOT / ".cache" / "bundled_kg"
_DIGEST_FILE = ".source-digest"

MOVIE_YEARS = range(1990, 2022)  # the years year_db covers (the API rejects others)
GENRE_IDS = {"Action": 28, "Adventure": 12, "Animation": 16, "Comedy": 35, "Crime": 80, "Drama": 18,
             "History": 36, "Mystery": 9648, "Romance": 10749, "Science Fiction": 878, "Thriller": 53,
             "War": 10752}
MUSIC_CORPUS_SIZE = 240  # distinct names per music corpus; 240 keeps tokens shared by <= 3 names searchable
DETAILED_LAST_DAY = "2024-02-28"  # the 1-minute history covers the 5 trading days ending here
MINUTES_PER_SESSION = 390  # 09:30-15:59
_STAT_COLUMNS = ("fgm", "fga", "fg_pct", "fg3m", "fg3a", "fg3_pct", "ftm", "fta", "ft_pct", "oreb", "dreb", "reb",
                 "ast", "stl", "blk", "tov", "pf", "pts", "plus_minus", "video_available")
_PLAYER_FIELDS = ("id", "name", "team_id", "team_city", "team_nickname", "team_abbreviation")
PLAY_BY_PLAY_COLUMNS = (
    "game_id", "eventnum", "eventmsgtype", "eventmsgactiontype", "period", "wctimestring", "pctimestring",
    "homedescription", "neutraldescription", "visitordescription", "score", "scoremargin",
    *(column for k in (1, 2, 3) for column in (f"person{k}type", *(f"player{k}_{f}" for f in _PLAYER_FIELDS))),
    "video_available_flag")


# ---------------------------------------------------------------------- small readers and writers
def _json(path: Path):
    with open(path, encoding="utf8") as file:
        return json.load(file)


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf8", newline="") as file:
        return list(csv.DictReader(file))


def _objects(frame: pd.DataFrame) -> pd.DataFrame:
    """String columns as plain object columns (see the module docstring)."""
    for column in frame.columns:
        if pd.api.types.is_string_dtype(frame[column]):
            frame[column] = frame[column].astype(object)
    return frame


def _write_sqlitedict(path: Path, table: dict) -> None:
    with SqliteDict(str(path), flag="n") as db:  # the official layout: table "unnamed", pickled values
        for key, value in table.items():
            db[key] = value
        db.commit()


def _stamp(day: str, clock: str = "00:00:00") -> str:
    """The official keys, e.g. "2024-02-27 00:00:00 EST"; the real KG writes "EST" all year (its examples
    include '2020-06-12 00:00:00 EST'), so daylight saving is ignored here too."""
    return f"{day} {clock} EST"


# ---------------------------------------------------------------------- open
def _write_open(src: Path, out: Path) -> None:
    lines = []
    for name, entity in _json(src / "open" / "entities.json").items():
        infobox = "".join(f"| {key} = {value}\n" for key, value in entity["infobox"].items())
        wiki = f"{{{{Infobox\n{infobox}}}}}\n'''{name}''': {entity['summary_text']}\n"
        lines.append(json.dumps([name, {"summary_text": entity["summary_text"],
                                        "summary_structured": entity["infobox"], "raw_mediawiki": wiki}],
                                ensure_ascii=False))
    for shard, relative in enumerate(layout.OPEN_KG):  # entities alternate between the two shards
        with bz2.open(out / relative, "wt", encoding="utf8") as file:
            file.write("\n".join(lines[shard::len(layout.OPEN_KG)]) + "\n")


# ---------------------------------------------------------------------- movie
def _write_movie(src: Path, out: Path) -> None:
    persons = _json(src / "movie" / "persons.json")
    movies = _json(src / "movie" / "movies.json")
    awards = [{"year_ceremony": int(row["year_ceremony"]), "ceremony": int(row["ceremony"]),
               "category": row["category"], "name": row["name"], "film": row["film"],
               "winner": row["winner"] == "True"} for row in _csv(src / "movie" / "oscars.csv")]

    def person(name: str) -> dict:
        if name not in persons:
            raise ValueError(f"movies.json names {name!r}, who is not in persons.json")
        return persons[name]

    movie_db, acted, directed = {}, defaultdict(list), defaultdict(list)
    same_title = Counter(normalize(movie["title"]) for movie in movies)
    for movie in movies:
        cast = [{"name": name, "id": person(name)["id"], "character": character, "gender": gender, "order": order}
                for order, (name, character, gender) in enumerate(movie["cast"])]
        crew = [{"name": name, "id": person(name)["id"], "job": job} for name, job in movie["crew"]]
        for member in cast:
            acted[member["name"]].append(movie["id"])
        for member in crew:
            if member["job"] == "Director":
                directed[member["name"]].append(movie["id"])
        record = {key: movie[key] for key in ("title", "id", "release_date", "original_language", "budget",
                                              "revenue", "rating", "length")}
        record.update(original_title=movie.get("original_title", movie["title"]),
                      genres=[{"id": GENRE_IDS[g], "name": g} for g in movie["genres"]],
                      oscar_awards=[a for a in awards if a["film"] == movie["title"]], cast=cast, crew=crew)
        key = movie["title"]
        if same_title[normalize(key)] > 1:  # remakes ("Dune" 1984 / 2021): the release year tells the keys apart
            key = f"{key} {movie['release_date'][:4]}"
        movie_db[_unique_key(movie_db, key)] = record
    person_db = {}
    for name, info in persons.items():
        person_db[_unique_key(person_db, name)] = {
            "name": name, "id": info["id"], "acted_movies": acted[name], "directed_movies": directed[name],
            "birthday": info["birthday"], "oscar_awards": [a for a in awards if name in a["name"]]}
    year_db = {str(year): {"movie_list": [m["id"] for m in movies if m["release_date"].startswith(str(year))],
                           "oscar_awards": [a for a in awards if a["year_ceremony"] == year]}
               for year in MOVIE_YEARS}
    for relative, db in ((layout.MOVIE_DB, movie_db), (layout.PERSON_DB, person_db), (layout.YEAR_DB, year_db)):
        with open(out / relative, "w", encoding="utf8") as file:
            json.dump(db, file, ensure_ascii=False)


def _unique_key(db: dict, name: str) -> str:
    key = normalize(name)
    if key in db:
        raise ValueError(f"{name!r} normalises to {key!r}, which another entry already uses")
    return key


# ---------------------------------------------------------------------- finance
def _write_finance(src: Path, out: Path) -> None:
    companies = pd.DataFrame(_csv(src / "finance" / "companies.csv"))[["Name", "Symbol"]]
    companies.to_csv(out / layout.FINANCE_COMPANIES)  # the index column gives the official ",Name,Symbol" header
    daily: dict[str, dict[str, dict]] = defaultdict(dict)
    for row in _csv(src / "finance" / "prices.csv"):
        daily[row["ticker"]][row["date"]] = {"Open": float(row["open"]), "High": float(row["high"]),
                                             "Low": float(row["low"]), "Close": float(row["close"]),
                                             "Volume": int(row["volume"])}
    dividends: dict[str, dict[str, float]] = defaultdict(dict)
    for row in _csv(src / "finance" / "dividends.csv"):
        dividends[row["ticker"]][_stamp(row["date"])] = float(row["amount"])
    info = _json(src / "finance" / "info.json")
    tables = {
        layout.FINANCE_PRICE: {t: {_stamp(day): bar for day, bar in bars.items()} for t, bars in daily.items()},
        layout.FINANCE_DETAILED: {t: _minute_bars(bars) for t, bars in daily.items()},
        layout.FINANCE_DIVIDEND: dict(dividends),
        layout.FINANCE_MARKETCAP: {t: float(i["marketCap"]) for t, i in info.items()},
        layout.FINANCE_INFO: info,
    }
    for relative, table in tables.items():
        _write_sqlitedict(out / relative, table)


def _minute_bars(daily_bars: dict[str, dict]) -> dict[str, dict]:
    """1-minute bars for the last 5 sessions up to `DETAILED_LAST_DAY`, synthesised from each day's OHLC.

    The intraday path runs open -> first extreme -> second extreme -> close (low first on an up day), so the
    bars reproduce the day's open, high, low and close; volume is spread evenly.
    """
    bars = {}
    for day in sorted(d for d in daily_bars if d <= DETAILED_LAST_DAY)[-5:]:
        bar = daily_bars[day]
        up = bar["Close"] >= bar["Open"]
        anchors = (bar["Open"], bar["Low"] if up else bar["High"], bar["High"] if up else bar["Low"], bar["Close"])
        opening = datetime.fromisoformat(f"{day}T09:30:00")
        for minute in range(MINUTES_PER_SESSION):
            first, last = _intraday_price(anchors, minute), _intraday_price(anchors, minute + 1)
            clock = (opening + timedelta(minutes=minute)).strftime("%H:%M:%S")
            bars[_stamp(day, clock)] = {"Open": first, "High": max(first, last), "Low": min(first, last),
                                        "Close": last, "Volume": bar["Volume"] // MINUTES_PER_SESSION}
    return bars


def _intraday_price(anchors: tuple[float, ...], minute: int) -> float:
    """Linear between the 4 anchors, placed at minutes 0, 130, 260 and 390 of the session."""
    third = MINUTES_PER_SESSION / 3
    segment = min(int(minute // third), 2)
    share = (minute - segment * third) / third
    return round(anchors[segment] + share * (anchors[segment + 1] - anchors[segment]), 4)


# ---------------------------------------------------------------------- music
def _write_music(src: Path, out: Path) -> None:
    artists = _json(src / "music" / "artists.json")
    songs = _json(src / "music" / "songs.json")
    artist_dict = {name: {k: a[k] for k in ("country", "birth_date", "end_date", "members")}
                   for name, a in artists.items()}
    _pad(artist_dict, dict.fromkeys(("country", "birth_date", "end_date", "members")), salt=0)
    song_dict = dict(songs)
    _pad(song_dict, dict.fromkeys(("author", "country", "date")), salt=5003)
    grammy = pd.read_csv(src / "music" / "grammy.csv", dtype={"year": int})  # missing artist/workers: NaN
    ranks: dict[str, list] = defaultdict(list)
    hot100: dict[str, dict] = defaultdict(dict)
    for row in _csv(src / "music" / "billboard.csv"):
        ranks[row["rank"]].append({"Date": row["date"], "Song": row["song"], "Artist": row["artist"]})
        head = [row["date"], row["song"], row["artist"], row["rank"]]
        # the official rows come in two layouts; a new entry ("-" last week) stores last week last
        tail = ([row["peak"], row["weeks"], "-"] if row["last_week"] == "-"
                else [row["last_week"], row["peak"], row["weeks"]])
        hot100[row["song"]][row["date"]] = head + tail
    for relative, value in ((layout.MUSIC_ARTISTS, artist_dict), (layout.MUSIC_SONGS, song_dict),
                            (layout.MUSIC_GRAMMY, _objects(grammy)), (layout.MUSIC_RANKS, dict(ranks)),
                            (layout.MUSIC_HOT100, dict(hot100)),
                            (layout.MUSIC_WORKS, {name: a["works"] for name, a in artists.items()})):
        pd.to_pickle(value, out / relative)


def _pad(table: dict, empty_record: dict, salt: int) -> None:
    """Adds filler entries with unique pseudo-word names until the table has `MUSIC_CORPUS_SIZE` names."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    size = len(syllables)

    def word(k: int) -> str:  # k -> a 3-syllable word; 7919 is coprime with size**3, so words never repeat
        k = (k * 7919 + salt) % size ** 3
        return syllables[k // size ** 2] + syllables[k // size % size] + syllables[k % size]

    taken = {token for name in table for token in normalize(name).split()}
    names = {normalize(name) for name in table}
    k = 0
    while len(names) < MUSIC_CORPUS_SIZE:
        words = (word(2 * k), word(2 * k + 1))
        k += 1
        if taken.isdisjoint(words):
            taken.update(words)
            name = " ".join(w.capitalize() for w in words)
            names.add(normalize(name))
            table[name] = dict(empty_record)


# ---------------------------------------------------------------------- sports
def _write_sports(src: Path, out: Path) -> None:
    teams = {row["name"]: row for row in _csv(src / "sports" / "nba_teams.csv")}
    players = {row["name"]: row["player_id"] for row in _csv(src / "sports" / "nba_players.csv")}
    games = _json(src / "sports" / "nba_games.json")
    homes = {game["game_id"]: game["home"]["team"] for game in games}
    events = [_event_row(event, teams, players, homes[event["game_id"]])
              for event in _json(src / "sports" / "nba_play_by_play.json")]
    (out / layout.NBA_DB).unlink(missing_ok=True)  # to_sql would refuse existing tables on a rebuild
    with sqlite3.connect(out / layout.NBA_DB) as connection:
        pd.DataFrame([_game_row(game, teams) for game in games]).to_sql("game", connection, index=False)
        plays = pd.DataFrame(events, columns=list(PLAY_BY_PLAY_COLUMNS))
        person_types = [f"person{k}type" for k in (1, 2, 3)]
        plays[person_types] = plays[person_types].astype("Int64")  # integers with gaps, not floats
        plays.to_sql("play_by_play", connection, index=False)
    connection.close()
    pd.to_pickle(_soccer_frame(_csv(src / "sports" / "soccer_matches.csv")), out / layout.SOCCER)


def _game_row(game: dict, teams: dict) -> dict:
    """One row of the official `game` table, columns in the official order."""
    home, away = (_side_columns(game, teams, side) for side in ("home", "away"))
    return {"season_id": game["season_id"], **home["team"], "game_id": game["game_id"],
            "game_date": f"{game['game_date']} 00:00:00", **home["result"], "min": 240, **home["stats"],
            **away["team"], **away["result"], **away["stats"], "season_type": game["season_type"]}


def _side_columns(game: dict, teams: dict, side: str) -> dict[str, dict]:
    other = "away" if side == "home" else "home"
    stats, team, rival = game[side], teams[game[side]["team"]], teams[game[other]["team"]]
    points = {s: 2 * game[s]["fgm"] + game[s]["fg3m"] + game[s]["ftm"] for s in (side, other)}
    margin = points[side] - points[other]
    shooting = {f"{kind}_pct": round(stats[f"{kind}m"] / stats[f"{kind}a"], 3) for kind in ("fg", "fg3", "ft")}
    values = {**stats, **shooting, "reb": stats["oreb"] + stats["dreb"], "pts": points[side], "plus_minus": margin}
    versus = "vs." if side == "home" else "@"
    return {"team": {f"team_id_{side}": team["team_id"], f"team_abbreviation_{side}": team["abbreviation"],
                     f"team_name_{side}": team["name"]},
            "result": {f"matchup_{side}": f"{team['abbreviation']} {versus} {rival['abbreviation']}",
                       f"wl_{side}": "W" if margin > 0 else "L"},
            "stats": {f"{column}_{side}": 1 if column == "video_available" else float(values[column])
                      for column in _STAT_COLUMNS}}


def _event_row(event: dict, teams: dict, players: dict, home_team: str) -> dict:
    row = {key: value for key, value in event.items() if key != "players"}
    row["video_available_flag"] = 0
    for k, (name, team_name) in enumerate(event.get("players", []), 1):
        team = teams[team_name]
        row[f"person{k}type"] = 4 if team_name == home_team else 5  # NBA codes: 4 home player, 5 visitor
        row.update({f"player{k}_id": players[name], f"player{k}_name": name, f"player{k}_team_id": team["team_id"],
                    f"player{k}_team_city": team["city"], f"player{k}_team_nickname": team["nickname"],
                    f"player{k}_team_abbreviation": team["abbreviation"]})
    return row


def _number(text: str) -> float:
    """A CSV number as a float; an empty cell (a match not yet played) is NaN, as in the official frame."""
    return float(text) if text else float("nan")


def _soccer_frame(matches: list[dict]) -> pd.DataFrame:
    """One row per team and match, indexed (league, season, team, game) like the official pickle."""
    rows, index = [], []
    for match in matches:
        date = pd.Timestamp(match["date"])
        game = f"{match['date']} {match['home']}-{match['away']}"
        report = hashlib.md5(game.encode()).hexdigest()[:8]
        played = bool(match["home_goals"])  # a fixture not yet played has no goals (NaN/None, as the official)
        for side, other in (("home", "away"), ("away", "home")):
            scored, conceded = _number(match[f"{side}_goals"]), _number(match[f"{other}_goals"])
            possession = _number(match["home_poss"])
            result = ("W" if scored > conceded else "D" if scored == conceded else "L") if played else None
            index.append((match["league"], match["season"], match[side], game))
            rows.append({
                "date": date, "time": match["time"], "round": match["round"], "day": date.strftime("%a"),
                "venue": side.title(), "result": result, "GF": scored, "GA": conceded, "opponent": match[other],
                "xG": _number(match[f"{side}_xg"]), "xGA": _number(match[f"{other}_xg"]),
                "Poss": possession if side == "home" else 100.0 - possession,
                "Attendance": _number(match["attendance"]), "Captain": match[f"{side}_captain"] or None,
                "Formation": match[f"{side}_formation"] or None, "Referee": match["referee"] or None,
                "match_report": f"/en/matches/{report}/{game[11:]}-{date:%B}-{date.day}-{date.year}".replace(" ", "-"),
                "Notes": None})
    levels = [pd.Index([key[level] for key in index], dtype=object) for level in range(4)]
    frame = pd.DataFrame(rows, index=pd.MultiIndex.from_arrays(levels, names=["league", "season", "team", "game"]))
    frame["date"] = frame["date"].astype("datetime64[ns]")
    return _objects(frame)


# ---------------------------------------------------------------------- build and cache
def build(out_dir: str | os.PathLike, source_dir: str | os.PathLike = SOURCE_DIR) -> Path:
    """Writes the official layout (every file in `layout.ALL_FILES`) from the fixture sources.

    Raises:
        ValueError: the sources are inconsistent (an unknown person, a normalised-name collision, ...).
    """
    source, out = Path(source_dir), Path(out_dir)
    for relative in layout.ALL_FILES:
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
    for write in (_write_open, _write_movie, _write_finance, _write_music, _write_sports):
        write(source, out)
    return out


def source_digest(source_dir: str | os.PathLike = SOURCE_DIR) -> str:
    """A hash of every source file and of this builder: the cache is stale when it changes."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for path in sorted(Path(source_dir).rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(source_dir)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def ensure_bundled_kg(cache_dir: str | os.PathLike = CACHE_DIR) -> Path:
    """The built fixture KG, (re)built into `cache_dir` when missing or stale."""
    cache_dir, digest = Path(cache_dir), source_digest()
    stamp = cache_dir / _DIGEST_FILE
    if stamp.is_file() and stamp.read_text() == digest:
        return cache_dir
    cache_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".bundled_kg-", dir=cache_dir.parent))
    try:
        build(staging)
        (staging / _DIGEST_FILE).write_text(digest)
        shutil.rmtree(cache_dir, ignore_errors=True)
        try:
            staging.rename(cache_dir)
        except OSError:  # another process won the race; its build is as good as ours
            if not (stamp.is_file() and stamp.read_text() == digest):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return cache_dir

