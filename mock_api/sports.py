"""Sports domain: soccer team-match stats (a pickled DataFrame) and NBA games / play-by-play (`nba.sqlite`).

Shapes are the official ones because they are produced the official way, `DataFrame.to_json(date_format="iso")`
parsed back: soccer gives `{column: {"('league', 'season', 'team', 'game')": value}}`, NBA
`{column: {"0": value, ...}}`. A date is `YYYY-MM-DD`, `YYYY-MM` or `YYYY` and matches at that granularity;
team names are exact. Nothing found, or any error, is null (the official handlers catch everything here).

Deviations: the official NBA server pastes the team name and date into its SQL, so a name containing a quote
returns null; here both are bound parameters and such names work. A date with more than three `-` parts is
null instead of "every game in the database". The sqlite file is opened read-only.
"""
from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pandas as pd

from mock_api.layout import NBA_DB, SOCCER, KGDataError, require
from mock_api.routes import GameIdsQuery, GamesQuery, Route

log = logging.getLogger(__name__)

_DATE_FORMATS = {3: "%Y-%m-%d", 2: "%Y-%m", 1: "%Y"}  # number of "-"-separated parts -> strftime pattern


def _date_format(date: str) -> str | None:
    return _DATE_FORMATS.get(len(date.split("-")))


def _as_result(frame: pd.DataFrame):
    return json.loads(frame.to_json(date_format="iso")) if len(frame) else None


class SportsKG:
    def __init__(self, kg_dir: str | Path):
        matches = pd.read_pickle(require(kg_dir, SOCCER))
        if not isinstance(matches, pd.DataFrame) or "league" not in (matches.index.names or ()):
            raise KGDataError(f"{SOCCER}: expected a DataFrame indexed by (league, season, team, game)")
        if not pd.api.types.is_datetime64_any_dtype(matches.get("date")):
            raise KGDataError(f"{SOCCER}: the `date` column must be datetime64")
        self.soccer = matches[matches.index.get_level_values("league").notna()]
        path = require(kg_dir, NBA_DB)
        # Endpoints run one at a time on the server's event loop, which may not be the loading thread.
        self.nba = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)

    def soccer_games(self, date: str, team: str | None):
        fmt = _date_format(date)
        if fmt is None:
            return None
        games = self.soccer
        if team is not None:
            games = games[games.index.get_level_values("team") == team]
        return _as_result(games[games["date"].dt.strftime(fmt) == date])

    def nba_games(self, date: str, team: str | None):
        fmt = _date_format(date)
        if fmt is None:
            return None
        sql, params = f"select * from game where strftime('{fmt}', game_date) = ?", [date]
        if team is not None:
            sql += " and (team_name_home = ? or team_name_away = ?)"
            params += [team, team]
        return _as_result(pd.read_sql(sql, self.nba, params=params))

    def nba_play_by_play(self, game_ids: list[str]):
        if not game_ids:
            return None
        marks = ", ".join("?" for _ in game_ids)
        return _as_result(pd.read_sql(f"select * from play_by_play where game_id in ({marks})", self.nba,
                                      params=list(game_ids)))

    def close(self) -> None:
        self.nba.close()

    def routes(self) -> list[Route]:
        return [
            Route("/sports/soccer/get_games_on_date", GamesQuery,
                  _null_on_error(lambda body: self.soccer_games(body.date, body.team_name))),
            Route("/sports/nba/get_games_on_date", GamesQuery,
                  _null_on_error(lambda body: self.nba_games(body.date, body.team_name))),
            Route("/sports/nba/get_play_by_play_data_by_game_ids", GameIdsQuery,
                  _null_on_error(lambda body: self.nba_play_by_play(body.game_ids))),
        ]


def _null_on_error(handler):
    def guarded(body):
        try:
            return handler(body)
        except Exception:  # official sports handlers answer null on any error; keep the cause in the log
            log.debug("sports handler failed for %r", body, exc_info=True)
            return None
    return guarded
