"""Music domain: artists, songs, Grammys and the Billboard Hot 100 over the 19 `music/` routes.

Every attribute of an artist or a song is its own route, so rows are `LazyRecord`s: `get_person("coldplay")
["members"]` costs the search plus one call, and only an unselected whole row costs one call per field.
Names go through the search routes and `EntityMatcher` first, because the attribute routes (and the
Grammy counts, which match substrings case-sensitively) need the KG's exact spelling.
"""
from __future__ import annotations

from models.kg.apis.context import CallContext
from models.kg.apis.records import LazyRecord, Row, Table
from models.kg.apis.registry import kg_function
from models.kg.language.signature import TEXT, YEAR, ArgKind, Param

_DATE = frozenset({ArgKind.STRING, ArgKind.NONE})
_RANK = frozenset({ArgKind.NUMBER, ArgKind.STAR})
_ARTIST_ALIASES = {"music": "works", "songs": "works", "all works": "works", "albums": "works",
                   "country": "birth_place", "origin": "birth_place", "hometown": "birth_place",
                   "born": "birth_date", "birthday": "birth_date", "formed": "birth_date", "band members": "members"}
_SONG_ALIASES = {"writer": "author", "songwriter": "author", "composer": "author", "artist": "author",
                 "singer": "author", "country": "release_country", "date": "release_date",
                 "released": "release_date", "year": "release_date", "release year": "release_date"}
_GRAMMY_ALIASES = {"award count": "grammy_award_count", "count": "grammy_award_count", "awards": "grammy_award_count",
                   "wins": "grammy_award_count", "years": "grammy_award_years", "award years": "grammy_award_years",
                   "dates": "grammy_award_years", "award dates": "grammy_award_years"}
_YEAR_ALIASES = {"best artist": "best_new_artist", "new artist": "best_new_artist", "best song": "song_of_the_year",
                 "song": "song_of_the_year", "best album": "album_of_the_year", "album": "album_of_the_year"}
_BILLBOARD_ATTRIBUTES = ("rank", "rank_last_week", "weeks_in_chart", "top_position")


@kg_function("music", Param("artist_name", TEXT), searches=True)
def get_person(ctx: CallContext, artist_name: str) -> Table:
    """get_person(artist_name)[key]: name, birth_place (country code), birth_date, members, lifespan, works."""
    rows = _searched_rows(ctx, "music_search_artist_entity_by_name", artist_name, {
        "birth_place": "music_get_artist_birth_place", "birth_date": "music_get_artist_birth_date",
        "members": "music_get_members", "lifespan": "music_get_lifespan", "works": "music_get_artist_all_works",
    })
    return Table(rows, f"artist matching {artist_name!r}", aliases=_ARTIST_ALIASES, found=bool(rows))


@kg_function("music", Param("song_name", TEXT), searches=True)
def get_song(ctx: CallContext, song_name: str) -> Table:
    """get_song(song_name)[key]: name, author, release_country, release_date."""
    rows = _searched_rows(ctx, "music_search_song_entity_by_name", song_name, {
        "author": "music_get_song_author", "release_country": "music_get_song_release_country",
        "release_date": "music_get_song_release_date",
    })
    return Table(rows, f"song matching {song_name!r}", aliases=_SONG_ALIASES, found=bool(rows))


@kg_function("music", Param("artist_name", TEXT))
def get_grammy_person(ctx: CallContext, artist_name: str) -> Table:
    """get_grammy_person(artist_name)[key]: name, grammy_award_count, grammy_award_years."""
    name = _spelling(ctx, "music_search_artist_entity_by_name", artist_name)
    fields = LazyRecord({"name": name}, {
        "grammy_award_count": _route(ctx, "music_grammy_get_award_count_by_artist", name),
        "grammy_award_years": lambda: sorted(ctx.api.call("music_grammy_get_award_date_by_artist", name) or []),
    })
    return Table((Row(fields, name, "name"),), f"Grammy record of {name}", aliases=_GRAMMY_ALIASES)


@kg_function("music", Param("song_name", TEXT))
def get_grammy_song(ctx: CallContext, song_name: str) -> Table:
    """get_grammy_song(song_name)[key]: name, grammy_award_count."""
    name = _spelling(ctx, "music_search_song_entity_by_name", song_name)
    fields = LazyRecord({"name": name}, {"grammy_award_count": _route(ctx, "music_grammy_get_award_count_by_song",
                                                                      name)})
    return Table((Row(fields, name, "name"),), f"Grammy record of the song {name}", aliases=_GRAMMY_ALIASES)


@kg_function("music", Param("year", YEAR))
def get_grammy_year(ctx: CallContext, year) -> Table:
    """get_grammy_year(year)[key]: best_new_artist, song_of_the_year, album_of_the_year of that ceremony year."""
    number = int(float(year))
    fields = LazyRecord({"year": number}, {
        "best_new_artist": _route(ctx, "music_grammy_get_best_artist_by_year", number),
        "song_of_the_year": _route(ctx, "music_grammy_get_best_song_by_year", number),
        "album_of_the_year": _route(ctx, "music_grammy_get_best_album_by_year", number),
    })
    return Table((Row(fields, f"the {number} Grammy Awards", "year"),), f"Grammy winners of {number}",
                 aliases=_YEAR_ALIASES)


@kg_function("music")
def get_grammy_best_new_artists(ctx: CallContext) -> Table:
    """get_grammy_best_new_artists()[key]: every artist of the KG's Best New Artist Grammy records (name)."""
    names = ctx.api.call("music_grammy_get_all_awarded_artists")
    rows = tuple(Row({"name": name}, name, "name") for name in (names if isinstance(names, list) else ())
                 if isinstance(name, str) and name)
    return Table(rows, "Best New Artist Grammy artists", found=isinstance(names, list))


@kg_function("music", Param("rank", _RANK), Param("date", _DATE, required=False))
def get_billboard_rank(ctx: CallContext, rank, date: str | None = None) -> Table:
    """get_billboard_rank(rank, date)[key]: song and artist at a Hot 100 rank on a chart date (all dates
    if None)."""
    rank = int(float(rank))
    chart_dates = _chart_dates(ctx, date)
    rows = []
    for day in chart_dates:
        found = ctx.api.call("music_get_billboard_rank_date", rank, day)
        songs, artists = (found + [None, None])[:2] if isinstance(found, list) else (None, None)
        for song, artist in zip(songs or [], artists or []):
            label = f"the Billboard Hot 100 number {rank}" + (f" on {day}" if day else "")
            rows.append(Row({"rank": rank, "date": day, "song": song, "artist": artist}, label, "song"))
        if rows and date is not None:
            break  # the first chart date of the span that has the rank
    where = f" on {date}" if date else ""
    return Table(tuple(rows), f"Billboard Hot 100 entries at rank {rank}{where}")


@kg_function("music", Param("song_name", TEXT), Param("date", frozenset({ArgKind.STRING})))
def get_billboard_song(ctx: CallContext, song_name: str, date: str) -> Table:
    """get_billboard_song(song_name, date)[key]: rank, rank_last_week, weeks_in_chart, top_position on a
    chart date."""
    name = _spelling(ctx, "music_search_song_entity_by_name", song_name)
    rows = []
    for day in _chart_dates(ctx, date):  # the first day of the span that is a chart date of this song
        if ctx.api.call("music_get_billboard_attributes", day, "rank", name) is None:
            continue
        loaders = {a: lambda a=a, day=day: ctx.api.call("music_get_billboard_attributes", day, a, name)
                   for a in _BILLBOARD_ATTRIBUTES}
        rows.append(Row(LazyRecord({"song": name, "date": day}, loaders), f"{name} on the Billboard Hot 100 of {day}",
                        "song"))
        break
    return Table(tuple(rows), f"Billboard Hot 100 entry of {name} on {date}")


def _searched_rows(ctx: CallContext, search: str, name: str, routes: dict[str, str]) -> tuple[Row, ...]:
    """One lazy row per entity the search matched; each field is its own attribute route."""
    rows = []
    for found in ctx.pick(name, ctx.api.call(search, name)):
        loaders = {field: _route(ctx, method, found) for field, method in routes.items()}
        rows.append(Row(LazyRecord({"name": found}, loaders), found, "name"))
    return tuple(rows)


def _route(ctx: CallContext, method: str, argument):
    """A loader calling one attribute route (a [begin, end] lifespan becomes "1996 to present")."""
    if method == "music_get_lifespan":
        return lambda: _lifespan(ctx.api.call(method, argument))
    return lambda: ctx.api.call(method, argument)


def _spelling(ctx: CallContext, search_method: str, name: str) -> str:
    """The KG's spelling of a name (the routes match exactly), or the name as written."""
    picked = ctx.matcher.pick(name, ctx.api.call(search_method, name) or [])
    return picked[0] if picked else name


def _lifespan(span) -> str | None:
    if not isinstance(span, (list, tuple)) or not any(span):
        return None
    begin, end = (list(span) + [None, None])[:2]
    return f"{begin or 'unknown'} to {end or 'present'}"


def _chart_dates(ctx: CallContext, date: str | None) -> list[str | None]:
    """Days to try for a chart date: the day itself, or each day of a span up to a week."""
    if date is None:
        return [None]
    span = ctx.time(date)
    if span.single_day:
        return [span.single_day.isoformat()]
    end = span.end or ctx.today()
    start = span.start if span.start and (end - span.start).days < 7 else end.fromordinal(end.toordinal() - 6)
    return [start.fromordinal(d).isoformat() for d in range(end.toordinal(), start.toordinal() - 1, -1)]
