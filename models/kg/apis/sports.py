"""Sports domain: soccer and NBA games by date, last/next game, NBA play-by-play over the `sports/` routes.

Games become rows from the asked team's point of view (team, opponent, venue home/away, result
win/draw/loss, its points or goals, "score" as "123-109"), because questions are about one team. The
routes match dates by granularity (`YYYY-MM-DD`, `YYYY-MM`, `YYYY`) and team names exactly, so:
- a span ("last week", "2024-02") is fetched at the smallest granularity covering it and filtered;
- last/next game (taught by db3, never executed) fetch the query year (then the year before/after) and
  take the last played / first unplayed game around the query time;
- team names are canonicalised: NBA nicknames, cities and abbreviations ("warriors", "gsw") map to the
  full name; common soccer spellings map to the data's ("manchester united" → "Manchester Utd").
Soccer results are `DataFrame.to_json` (`{column: {"('league', 'season', 'team', 'game')": value}}`),
NBA results `{column: {"0": value}}`; both are turned into records by `_records`.
"""
from __future__ import annotations

import ast as python_ast
from dataclasses import dataclass
from typing import Any, Callable

from models.kg.apis.context import CallContext
from models.kg.apis.records import Row, Table
from models.kg.apis.registry import kg_function
from models.kg.language.signature import OPTIONAL_TEXT, TEXT, ArgKind, Param
from models.kg.language.timeexpr import TimeSpan, parse_date
from models.text import kg_match_key

_DATE = frozenset({ArgKind.STRING})
_OUTCOMES = {"w": "win", "d": "draw", "l": "loss", "win": "win", "draw": "draw", "tie": "draw", "loss": "loss",
             "lose": "loss", "lost": "loss", "won": "win"}
_NBA_STATS = ("fgm", "fga", "fg_pct", "fg3m", "fg3a", "fg3_pct", "ftm", "fta", "ft_pct", "oreb", "dreb", "reb",
              "ast", "stl", "blk", "tov", "pf", "plus_minus")
_NBA_TEAMS = (  # full name | abbreviation and nicknames (the city and last word of the name also match)
    "Atlanta Hawks|atl", "Boston Celtics|bos", "Brooklyn Nets|bkn", "Charlotte Hornets|cha", "Chicago Bulls|chi",
    "Cleveland Cavaliers|cle cavs", "Dallas Mavericks|dal mavs", "Denver Nuggets|den", "Detroit Pistons|det",
    "Golden State Warriors|gsw", "Houston Rockets|hou", "Indiana Pacers|ind", "LA Clippers|lac",
    "Los Angeles Lakers|lal", "Memphis Grizzlies|mem", "Miami Heat|mia", "Milwaukee Bucks|mil",
    "Minnesota Timberwolves|min wolves", "New Orleans Pelicans|nop", "New York Knicks|nyk",
    "Oklahoma City Thunder|okc", "Orlando Magic|orl", "Philadelphia 76ers|phi sixers", "Phoenix Suns|phx",
    "Portland Trail Blazers|por blazers", "Sacramento Kings|sac", "San Antonio Spurs|sas", "Toronto Raptors|tor",
    "Utah Jazz|uta", "Washington Wizards|was",
)
_SOCCER_TEAMS = {
    "manchester united": "Manchester Utd", "man united": "Manchester Utd", "man utd": "Manchester Utd",
    "man city": "Manchester City", "tottenham hotspur": "Tottenham", "spurs": "Tottenham",
    "newcastle united": "Newcastle Utd", "newcastle": "Newcastle Utd", "nottingham forest": "Nott'ham Forest",
    "nottingham": "Nott'ham Forest", "west ham united": "West Ham", "wolverhampton": "Wolves",
    "wolverhampton wanderers": "Wolves", "brighton and hove albion": "Brighton", "brighton hove albion": "Brighton",
    "sheffield united": "Sheffield Utd", "paris saint germain": "Paris S-G", "psg": "Paris S-G",
    "luton": "Luton Town", "afc bournemouth": "Bournemouth", "inter milan": "Inter", "ac milan": "Milan",
}
_GAME_ALIASES = {"points": "pts", "goals": "GF", "goals for": "GF", "goals scored": "GF", "goals against": "GA",
                 "conceded": "GA", "points allowed": "opponent_pts", "opponent points": "opponent_pts",
                 "possession": "Poss", "expected goals": "xG", "outcome": "result", "win": "result",
                 "home or away": "venue", "stadium": "venue", "competition": "league", "rebounds": "reb",
                 "assists": "ast", "steals": "stl", "blocks": "blk", "turnovers": "tov", "opponent team": "opponent"}


@dataclass(frozen=True)
class _League:
    name: str
    route: str
    canonical_team: Callable[[str], str]
    rows: Callable[[Any, str | None], list[Row]]
    knows: Callable[[str], bool]  # a canonical team name the league's data surely has (so "no game" is evidence)


@kg_function("sports", Param("team_name", OPTIONAL_TEXT), Param("date", _DATE))
def get_soccer_on_date(ctx: CallContext, team_name: str | None, date: str) -> Table:
    """get_soccer_on_date(team_name, date)[key]: games with date, time, day, venue, result, GF, GA, score,
    opponent, xG, xGA, Poss, Captain, Formation, Referee; date "YYYY-MM-DD", "YYYY-MM", "YYYY" or relative."""
    return _games(ctx, _SOCCER, team_name, ctx.time(date))


@kg_function("sports", Param("team_name", TEXT))
def get_soccer_last_game(ctx: CallContext, team_name: str) -> Table:
    """get_soccer_last_game(team_name)[key]: the team's most recent played game before the query time."""
    return _games(ctx, _SOCCER, team_name, TimeSpan(None, ctx.today(), pick="last"), played=True)


@kg_function("sports", Param("team_name", TEXT))
def get_soccer_next_game(ctx: CallContext, team_name: str) -> Table:
    """get_soccer_next_game(team_name)[key]: the team's first game not yet played at the query time."""
    return _games(ctx, _SOCCER, team_name, TimeSpan(ctx.today(), None, pick="first"), played=False)


@kg_function("sports", Param("team_name", OPTIONAL_TEXT), Param("date", _DATE))
def get_nba_on_date(ctx: CallContext, team_name: str | None, date: str) -> Table:
    """get_nba_on_date(team_name, date)[key]: games with date, opponent, venue, result, pts, opponent_pts,
    score, game_id, season_type and box-score totals (fgm, fg3m, reb, ast, stl, blk, tov, ...)."""
    return _games(ctx, _NBA, team_name, ctx.time(date))


@kg_function("sports", Param("game_id", TEXT))
def get_nba_play_by_play(ctx: CallContext, game_id: str) -> Table:
    """get_nba_play_by_play(game_id)[key]: the game's events (period, pctimestring, homedescription,
    visitordescription, score, player1_name, ...); pass * after a line selecting ["game_id"]."""
    game = str(game_id).strip()
    rows = [Row(dict(record), _event_label, "game_id")
            for _, record in _records(ctx.api.call("sports_nba_get_play_by_play_data_by_game_ids", [game]))]
    return Table(tuple(rows), f"play-by-play events of NBA game {game}")


@kg_function("sports", Param("team_name", TEXT))
def get_nba_last_game(ctx: CallContext, team_name: str) -> Table:
    """get_nba_last_game(team_name)[key]: the team's most recent game before the query time."""
    return _games(ctx, _NBA, team_name, TimeSpan(None, ctx.today(), pick="last"), played=True)


# ---------------------------------------------------------------------- games
def _games(ctx: CallContext, league: _League, team_name: str | None, span: TimeSpan,
           played: bool | None = None) -> Table:
    team = league.canonical_team(team_name) if team_name else None
    known = team is None or league.knows(team)
    rows: dict[tuple, Row] = {}
    for query in _date_queries(span):
        for row in league.rows(ctx.api.call(league.route, query, team), team):
            day = row.fields.get("date") or ""
            if _in_span(span, day) and (played is None or _was_played(row, ctx) == played):
                rows.setdefault((day, row.fields.get("team"), row.fields.get("opponent")), row)
        if rows and span.pick != "all":
            break  # the nearest year had a game
    ordered = sorted(rows.values(), key=lambda r: (r.fields.get("date") or "", r.fields.get("time") or ""))
    if span.pick != "all" and ordered:
        ordered = [ordered[-1] if span.pick == "last" else ordered[0]]
    which = {"last": "last game", "first": "next game"}.get(span.pick, f"games on {span.describe()}")
    return Table(tuple(ordered), f"{league.name} {which} of {team or 'all teams'}", aliases=_GAME_ALIASES,
                 equals={"result": _same_outcome}, found=bool(ordered) or known)


def _date_queries(span: TimeSpan) -> list[str]:
    """Route date arguments covering the span (open spans: the nearest year, then the next one out)."""
    if span.single_day:
        return [span.single_day.isoformat()]
    if span.start is None and span.end is not None:
        return [str(span.end.year), str(span.end.year - 1)]
    if span.end is None and span.start is not None:
        return [str(span.start.year), str(span.start.year + 1)]
    if span.start is None:
        return []
    if (span.start.year, span.start.month) == (span.end.year, span.end.month):
        return [f"{span.start.year:04d}-{span.start.month:02d}"]
    return [str(year) for year in range(span.start.year, min(span.end.year, span.start.year + 2) + 1)]


def _in_span(span: TimeSpan, day: str) -> bool:
    parsed = parse_date(day)
    return parsed is not None and span.contains(parsed)


def _was_played(row: Row, ctx: CallContext) -> bool:
    if row.fields.get("result"):
        return True
    return bool(ctx.now) and (row.fields.get("date") or "") < ctx.now.date().isoformat()


def _records(result) -> list[tuple[str, dict]]:
    """(index, record) pairs from a `{column: {index: value}}` frame dump or a list of records."""
    if isinstance(result, list):
        return [(str(i), r) for i, r in enumerate(result) if isinstance(r, dict)]
    if not isinstance(result, dict):
        return []
    columns = [c for c, values in result.items() if isinstance(values, dict)]
    index = list(dict.fromkeys(i for c in columns for i in result[c]))
    return [(i, {c: result[c].get(i) for c in columns}) for i in index]


def _soccer_rows(result, team: str | None) -> list[Row]:
    rows = []
    for index, game in _records(result):
        league, season, team_name = (_index_parts(index) + [None] * 3)[:3]
        team_name = team_name or team or ""
        fields = {"team": team_name, "date": str(game.get("date") or "")[:10], "league": league, "season": season}
        fields.update({k: v for k, v in game.items() if k != "date"})
        fields["result"] = _OUTCOMES.get(str(game.get("result") or "").lower())
        fields["score"] = _score(game.get("GF"), game.get("GA"))
        rows.append(Row(fields, f"{team_name} vs {fields.get('opponent')} on {fields['date']}", "team"))
    return rows


def _nba_rows(result, team: str | None) -> list[Row]:
    rows = []
    for _, game in _records(result):
        us, them = ("away", "home") if team and game.get("team_name_away") == team else ("home", "away")
        fields = {"team": game.get(f"team_name_{us}"), "opponent": game.get(f"team_name_{them}"),
                  "date": str(game.get("game_date") or "")[:10], "venue": us,
                  "result": _OUTCOMES.get(str(game.get(f"wl_{us}") or "").lower()),
                  "pts": game.get(f"pts_{us}"), "opponent_pts": game.get(f"pts_{them}"),
                  "score": _score(game.get(f"pts_{us}"), game.get(f"pts_{them}")),
                  "matchup": game.get(f"matchup_{us}"), "season_type": game.get("season_type"),
                  "game_id": game.get("game_id")}
        fields.update({stat: game.get(f"{stat}_{us}") for stat in _NBA_STATS})
        rows.append(Row(fields, f"{fields['team']} vs {fields['opponent']} on {fields['date']}", "game_id"))
    return rows


def _index_parts(index: str) -> list:
    """('ENG-Premier League', '2324', 'Arsenal', '2024-02-04 Arsenal-Liverpool') from its repr (literals only)."""
    try:
        parts = python_ast.literal_eval(index)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    return [str(p) for p in parts] if isinstance(parts, tuple) else []


def _score(ours, theirs) -> str | None:
    try:
        return f"{int(float(ours))}-{int(float(theirs))}"
    except (TypeError, ValueError):
        return None


def _event_label(fields) -> str:
    return (f"game {fields.get('game_id')} event {fields.get('eventnum')} (period {fields.get('period')}, "
            f"{fields.get('pctimestring')})")


def _same_outcome(field: str, wanted: str) -> bool:
    return _OUTCOMES.get(kg_match_key(field)) == _OUTCOMES.get(kg_match_key(wanted), "?")


def _nba_team(name: str) -> str:
    wanted = kg_match_key(name)
    for entry in _NBA_TEAMS:
        full, _, extra = entry.partition("|")
        words = kg_match_key(full).split()
        aliases = {" ".join(words), words[-1], " ".join(words[:-1]), *extra.split()}
        if wanted in aliases or f" {' '.join(words)} " in f" {wanted} ":
            return full
    return name.strip().title()


def _soccer_team(name: str) -> str:
    return _SOCCER_TEAMS.get(kg_match_key(name), name.strip().title() if name.islower() else name.strip())


_NBA_NAMES = frozenset(entry.partition("|")[0] for entry in _NBA_TEAMS)
_SOCCER = _League("soccer", "sports_soccer_get_games_on_date", _soccer_team, _soccer_rows,
                  lambda team: team in _SOCCER_TEAMS.values())
_NBA = _League("NBA", "sports_nba_get_games_on_date", _nba_team, _nba_rows, lambda team: team in _NBA_NAMES)
