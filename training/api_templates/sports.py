"""Sports templates: NBA games and play-by-play, soccer matches (by date, last and next game)."""
from __future__ import annotations

from collections import Counter
from datetime import date
from typing import Iterator

from training.api_templates.base import DomainTable, Filling, FixtureKG, low, pt

SPORTS = DomainTable("sports")


def _nba_points(stats: dict) -> int:
    return 2 * stats["fgm"] + stats["fg3m"] + stats["ftm"]


def _nba_sides(kg: FixtureKG) -> Iterator[tuple[str, str, dict, dict, str]]:
    """(date, team, own stats, opponent stats, home|away) for both teams of every game."""
    for game in kg.nba_games:
        for own, other in (("home", "away"), ("away", "home")):
            yield game["game_date"], game[own]["team"], game[own], game[other], own


def _nba_unique_days(kg: FixtureKG):
    seen = Counter((day, team) for day, team, _, _, _ in _nba_sides(kg))
    return [side for side in _nba_sides(kg) if seen[side[0], side[1]] == 1]


def _nba_on_day(value):
    def fill(kg: FixtureKG):
        for day, team, own, other, venue in _nba_unique_days(kg):
            yield Filling({"team": low(team), "date": day}, (low(team),), (value(own, other, venue),))
    return fill


_NBA = {  # key: (value from own stats, other stats, venue; trained phrasings; unseen; held out)
    "pts": (lambda own, other, venue: _nba_points(own),
            ("how many points did the {team} score on {date}", "what did the {team} score in their game on {date}",
             "{team} points {date}", "how many points did the {team} put up on {date}"),
            ("what was the {team}'s point total in the {date} game",), False),
    "opponent": (lambda own, other, venue: other["team"],
                 ("who did the {team} play on {date}", "which team did the {team} face on {date}",
                  "{team} opponent {date}", "who were the {team} up against on {date}"),
                 ("who was on the other side of the {team} game on {date}",), True),
    "opponent_pts": (lambda own, other, venue: _nba_points(other),
                     ("how many points did the {team} give up on {date}",
                      "how many points did the {team} allow on {date}",
                      "{team} points allowed {date}", "what did the {team}'s opponent score on {date}"),
                     ("how many points were scored against the {team} on {date}",), False),
    "result": (lambda own, other, venue: "win" if _nba_points(own) > _nba_points(other) else "loss",
               ("did the {team} win on {date}", "did the {team} win or lose on {date}", "{team} result {date}",
                "how did the {team} do in their game on {date}"),
               ("was {date} a win for the {team}",), False),
    "venue": (lambda own, other, venue: venue,
              ("did the {team} play at home on {date}", "were the {team} home or away on {date}",
               "{team} home or away {date}"), ("was the {team} game on {date} a home game",), False),
    "ast": (lambda own, other, venue: own["ast"],
            ("how many assists did the {team} have on {date}", "{team} assists {date}",
             "how many assists did the {team} record on {date}"), ("what was the {team}'s assist total on {date}",),
            False),
    "reb": (lambda own, other, venue: own["oreb"] + own["dreb"],
            ("how many rebounds did the {team} get on {date}", "{team} rebounds {date}",
             "how many boards did the {team} grab on {date}"), ("what was the {team}'s rebound count on {date}",),
            True),
    "tov": (lambda own, other, venue: own["tov"],
            ("how many turnovers did the {team} have on {date}", "{team} turnovers {date}",
             "how many times did the {team} turn the ball over on {date}"),
            ("what was the {team}'s turnover total on {date}",), False),
    "fg3m": (lambda own, other, venue: own["fg3m"],
             ("how many threes did the {team} make on {date}", "{team} three pointers made {date}",
              "how many 3-pointers did the {team} hit on {date}"), ("how many shots from deep went in for the {team} "
                                                                      "on {date}",), False),
}
for _key, (_value, _questions, _unseen, _held) in _NBA.items():
    SPORTS.template('get_nba_on_date("{team}", "{date}")["' + _key + '"]', *_questions, unseen=_unseen,
                    heldout=_held, name=f"nba_{_key}")(_nba_on_day(_value))


@SPORTS.template('get_nba_on_date("{team}", "{date}")["game_id"]\nget_nba_play_by_play(*)["len"]',
                 "how many play-by-play events were recorded in the {team} game on {date}",
                 "how many events does the play-by-play of the {team} game on {date} list",
                 "{team} game {date} number of play by play events", "count the play-by-play entries of the {team} "
                 "game on {date}", unseen=("how long is the play by play log for the {team} on {date}, in events",),
                 name="nba_play_by_play_events")
def _nba_event_count(kg: FixtureKG):
    events = Counter(event["game_id"] for event in kg.nba_play_by_play)
    unique = {(side[0], side[1]) for side in _nba_unique_days(kg)}
    for game in kg.nba_games:
        for side in ("home", "away"):
            if events[game["game_id"]] and (game["game_date"], game[side]["team"]) in unique:
                yield Filling({"team": low(game[side]["team"]), "date": game["game_date"]},
                              (low(game[side]["team"]),), (events[game["game_id"]],))


def _last_nba_game(value):
    def fill(kg: FixtureKG):
        for team in sorted({side[1] for side in _nba_sides(kg)}):
            for asked in (date(2023, 1, 1), date(2024, 3, 10)):
                played = sorted((day, value(own, other)) for day, t, own, other, _ in _nba_sides(kg)
                                if t == team and day < asked.isoformat())
                # a "last game" over a year old is not asked: the KG pathway looks back one calendar year
                recent = played and date.fromisoformat(played[-1][0]).year >= asked.year - 1
                if recent and (len(played) < 2 or played[-1][0] != played[-2][0]):
                    yield Filling({"team": low(team)}, (low(team),), (played[-1][1],), pt(asked))
    return fill


SPORTS.template('get_nba_last_game("{team}")["opponent"]',
                "who did the {team} play in their last game", "which team did the {team} face most recently",
                "{team} last opponent", "who were the {team} up against last time out",
                unseen=("who did the {team} meet in their latest game",),
                name="nba_last_opponent")(_last_nba_game(lambda own, other: other["team"]))
SPORTS.template('get_nba_last_game("{team}")["pts"]',
                "how many points did the {team} score in their last game", "{team} points last game",
                "what did the {team} score last time they played", "how many did the {team} put up in their most "
                "recent game", unseen=("in their latest outing, how many points did the {team} score",),
                name="nba_last_points")(_last_nba_game(lambda own, other: _nba_points(own)))


def _soccer_sides(kg: FixtureKG) -> Iterator[tuple[str, str, str, int, int, dict, str]]:
    """(date, team, opponent, goals for, goals against, row, home|away) of both teams of every match played."""
    for row in kg.soccer:
        if not row["home_goals"]:
            continue  # a fixture not yet played
        home, away, hg, ag = row["home"], row["away"], int(row["home_goals"]), int(row["away_goals"])
        yield row["date"], home, away, hg, ag, row, "home"
        yield row["date"], away, home, ag, hg, row, "away"


def _soccer_on_day(value):
    def fill(kg: FixtureKG):
        for day, team, opponent, scored, conceded, row, side in _soccer_sides(kg):
            answer = value(opponent, scored, conceded, row, side)
            if answer not in (None, ""):
                yield Filling({"team": low(team), "date": day}, (low(team),), (answer,))
    return fill


def _outcome(scored: int, conceded: int) -> str:
    return "win" if scored > conceded else "loss" if scored < conceded else "draw"


_SOCCER = {  # key: (value, trained phrasings, unseen, held out)
    "GF": (lambda opp, gf, ga, row, side: gf,
           ("how many goals did {team} score on {date}", "how many times did {team} score in their match on {date}",
            "{team} goals {date}", "how many goals did {team} get on {date}"),
           ("what was {team}'s goal tally in the {date} match",), False),
    "GA": (lambda opp, gf, ga, row, side: ga,
           ("how many goals did {team} concede on {date}", "how many goals were scored against {team} on {date}",
            "{team} goals conceded {date}", "how many did {team} let in on {date}"),
           ("how many times was {team}'s net found on {date}",), False),
    "result": (lambda opp, gf, ga, row, side: _outcome(gf, ga),
               ("did {team} win their game on {date}", "what was the result of {team}'s match on {date}",
                "{team} result {date}", "did {team} win, lose or draw on {date}"),
               ("how did {team}'s match on {date} end for them",), True),
    "opponent": (lambda opp, gf, ga, row, side: opp,
                 ("who did {team} play on {date}", "who were {team}'s opponents on {date}", "{team} opponent {date}",
                  "which team did {team} face on {date}"), ("who was {team}'s match against on {date}",), False),
    "Captain": (lambda opp, gf, ga, row, side: row[f"{side}_captain"],
                ("who captained {team} on {date}", "who was {team}'s captain on {date}", "{team} captain {date}",
                 "who wore the armband for {team} on {date}"), ("who led {team} out as captain on {date}",), False),
    "Formation": (lambda opp, gf, ga, row, side: row[f"{side}_formation"],
                  ("what formation did {team} play on {date}", "{team} formation {date}",
                   "what shape did {team} line up in on {date}"), ("how did {team} set up tactically on {date}",),
                  False),
    "Referee": (lambda opp, gf, ga, row, side: row["referee"],
                ("who refereed {team}'s match on {date}", "who was the referee of the {team} game on {date}",
                 "{team} referee {date}"), ("who officiated {team}'s game on {date}",), True),
    "venue": (lambda opp, gf, ga, row, side: side.capitalize(),
              ("did {team} play at home on {date}", "were {team} home or away on {date}", "{team} home or away {date}"),
              ("was {team}'s match on {date} played at their own ground",), False),
}
for _key, (_value, _questions, _unseen, _held) in _SOCCER.items():
    SPORTS.template('get_soccer_on_date("{team}", "{date}")["' + _key + '"]', *_questions, unseen=_unseen,
                    heldout=_held, name=f"soccer_{_key.lower()}")(_soccer_on_day(_value))


def _last_soccer_game(value):
    """A fill asking each team's last played match before two query times; `value(side)` reads the answer from a
    `_soccer_sides` tuple. A team with two matches on its last day is not asked."""
    def fill(kg: FixtureKG):
        for team in sorted({side[1] for side in _soccer_sides(kg)}):
            for asked in (date(2024, 2, 20), date(2024, 3, 12)):
                played = sorted((side[0], value(side)) for side in _soccer_sides(kg)
                                if side[1] == team and side[0] < asked.isoformat())
                if played and (len(played) < 2 or played[-1][0] != played[-2][0]):
                    yield Filling({"team": low(team)}, (low(team),), (played[-1][1],), pt(asked))
    return fill


def _next_soccer_game(value):
    """A fill asking each team's first fixture not yet played, after two query times; `value(day, opponent)`."""
    def fill(kg: FixtureKG):
        upcoming = [(row["date"], team, opponent) for row in kg.soccer if not row["home_goals"]
                    for team, opponent in ((row["home"], row["away"]), (row["away"], row["home"]))]
        for team in sorted({team for _, team, _ in upcoming}):
            for asked in (date(2024, 3, 12), date(2024, 4, 5)):
                ahead = sorted((day, opponent) for day, t, opponent in upcoming
                               if t == team and day >= asked.isoformat())
                if ahead:
                    yield Filling({"team": low(team)}, (low(team),), (value(*ahead[0]),), pt(asked))
    return fill


SPORTS.template('get_soccer_last_game("{team}")["opponent"]',
                "who did {team} play in their last game", "which team did {team} face most recently",
                "{team} last opponent", "who did {team} play last",
                unseen=("who were {team} up against in their latest match",),
                name="soccer_last_opponent")(_last_soccer_game(lambda side: side[2]))
SPORTS.template('get_soccer_last_game("{team}")["GF"]',
                "how many goals did {team} score in their last game", "{team} goals last match",
                "how many did {team} score last time out", "how many goals did {team} get in their most recent match",
                unseen=("in their latest match, how many goals did {team} score",),
                name="soccer_last_goals")(_last_soccer_game(lambda side: side[3]))
SPORTS.template('get_soccer_next_game("{team}")["opponent"]',
                "who will {team} play in their next game", "which team do {team} face next", "{team} next opponent",
                "who's {team}'s next match against", unseen=("who do {team} meet in their upcoming fixture",),
                name="soccer_next_opponent")(_next_soccer_game(lambda day, opponent: opponent))
SPORTS.template('get_soccer_next_game("{team}")["date"]',
                "when is {team}'s next game", "when do {team} play next", "{team} next match date",
                "what date is {team}'s next fixture", unseen=("on what day is {team}'s upcoming match",),
                heldout=True, name="soccer_next_date")(_next_soccer_game(lambda day, opponent: day))
