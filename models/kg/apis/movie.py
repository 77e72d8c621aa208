"""Movie domain (db3 §3's relational view): MOVIE and PERSON tables joined by CAST, CREW and OSCAR.

    get_movie(movie, cond)                      SELECT * FROM movie WHERE title = movie AND cond
    get_person(person, cond)                    SELECT * FROM person WHERE name = person AND cond
    get_movie_person_cast(movie, person, cond)  SELECT * FROM cast  WHERE movie AND person AND cond
    get_movie_person_crew(movie, person, cond)  SELECT * FROM crew  WHERE ...
    get_movie_person_oscar(movie, person, cond) SELECT * FROM oscar WHERE ... (neither: the year from cond)
    get_movie_by_id(id), get_person_by_id(id)   SELECT * FROM movie/person WHERE id = id

Routes: `movie/get_movie_info` and `get_person_info` (BM25 top 10, then `EntityMatcher`), the `_by_id`
routes for a person's movies (lazily, one call per movie actually read), `get_year_info` for Oscars of a
year. Field `year` is the release year (movies, cast, crew) or the ceremony year (Oscars); `["len"]` always
counts rows, and a movie's running time is `length` (alias `runtime`).
"""
from __future__ import annotations

import functools
from typing import Any

from models.kg.apis.context import CallContext
from models.kg.apis.matching import accepts
from models.kg.apis.records import LazyRecord, Row, Table
from models.kg.apis.registry import kg_function
from models.kg.language.ast import Condition
from models.kg.language.errors import KGValueError
from models.kg.language.signature import CONDITIONS, OPTIONAL_TEXT, TEXT, ArgKind, Param
from models.kg.language.values import condition_value
from models.text import kg_match_key

OSCAR_DATA_YEARS = (1990, 2021)  # the official get_year_info answers only these years (else a 500)
_PEOPLE = OPTIONAL_TEXT | {ArgKind.STRINGS}  # one person, or a list whose movies must all be shared
_ID = frozenset({ArgKind.NUMBER, ArgKind.STRING, ArgKind.STAR})  # a KG id, written as a number or a string
_MOVIE_ALIASES = {"runtime": "length", "duration": "length", "minutes": "length", "movie name": "title",
                  "name": "title", "movie": "title", "director": "directors", "genre": "genres",
                  "language": "original_language", "box office": "revenue", "gross": "revenue", "score": "rating",
                  "release": "release_date", "released": "release_date", "release year": "year"}
_PERSON_ALIASES = {"birth date": "birthday", "born": "birthday", "date of birth": "birthday",
                   "movies": "acted_movie_count", "number of movies": "acted_movie_count",
                   "directed movies": "directed_movie_count", "oscars": "oscar_wins", "awards": "oscar_wins"}
_ROLE_ALIASES = {"title": "movie_name", "movie": "movie_name", "film": "movie_name", "person": "name",
                 "actor": "name", "role": "character", "release year": "year"}
_OSCAR_ALIASES = {"year ceremony": "year", "ceremony year": "year", "movie": "film", "movie name": "film",
                  "title": "film", "person": "name", "winner name": "name", "won": "winner", "award": "category"}
_CATEGORY_ALIASES = {
    "actor": "actor in a leading role", "leading actor": "actor in a leading role",
    "actress": "actress in a leading role", "leading actress": "actress in a leading role",
    "supporting actor": "actor in a supporting role", "supporting actress": "actress in a supporting role",
    "director": "directing", "directing": "directing", "picture": "best picture", "film": "best picture",
    "movie": "best picture", "animated feature": "animated feature film", "animated film": "animated feature film",
    "foreign language film": "international feature film", "international feature": "international feature film",
    "original screenplay": "writing original screenplay", "adapted screenplay": "writing adapted screenplay",
    "original score": "music original score", "original song": "music original song",
}
_GENDERS = {"male": "male", "man": "male", "actor": "male", "m": "male", "2": "male",
            "female": "female", "woman": "female", "actress": "female", "f": "female", "1": "female"}


@kg_function("movie", Param("movie_name", TEXT), Param("condition", CONDITIONS, required=False), searches=True)
def get_movie(ctx: CallContext, movie_name: str, condition: tuple[Condition, ...] = ()) -> Table:
    """get_movie(movie_name, condition)[key]: title, release_date, year, original_title, original_language,
    budget, revenue, rating, length, genres, directors."""
    found = ctx.api.call("movie_get_movie_info", movie_name)
    clue = _title_clue(ctx, condition, found)
    movies, notes = _settle_title(ctx.pick(movie_name, found, _movie_names, clue), found, clue)
    rows = [Row(_movie_fields(m), _movie_title(m), "title") for m in movies]
    return Table(tuple(rows), f"movie matching {movie_name!r}", notes=notes, aliases=_MOVIE_ALIASES,
                 found=bool(rows), ambiguous=notes[0] if notes else "")


def _settle_title(picked: list[dict], candidates, clue) -> tuple[list[dict], tuple[str, ...]]:
    """One picked film among several of its title: the one the clue accepts (whichever stage of the matcher
    picked it), else the note that nothing told them apart."""
    if len(picked) != 1 or not isinstance(candidates, (list, tuple)):
        return picked, ()
    title = kg_match_key(_movie_title(picked[0]))
    twins = [m for m in candidates if isinstance(m, dict) and kg_match_key(_movie_title(m)) == title]
    accepted = [m for m in twins if clue is not None and accepts(clue, m)]
    if len(twins) > 1 and len(accepted) == 1:
        return accepted, ()
    return picked, _same_title_note(picked[0], twins) if len(accepted) != 1 else ()


def _same_title_note(picked: dict, twins: list[dict]) -> tuple[str, ...]:
    """Several films share the chosen title and nothing told them apart: say so, so the answer can hedge."""
    if len(twins) < 2:
        return ()
    years = ", ".join(str(_year(m.get("release_date")) or "year unknown") for m in twins)
    return (f"{len(twins)} movies are titled {_movie_title(picked)} (released {years}); the one released "
            f"{_year(picked.get('release_date')) or 'in an unknown year'} is shown.",)


@kg_function("movie", Param("person_name", TEXT), Param("condition", CONDITIONS, required=False), searches=True)
def get_person(ctx: CallContext, person_name: str, condition: tuple[Condition, ...] = ()) -> Table:
    """get_person(person_name, condition)[key]: name, birthday, age, acted_movie_count, directed_movie_count,
    oscar_nominations, oscar_wins."""
    people = _people(ctx, person_name)
    rows = [_person_row(person, ctx) for person in people]
    return Table(tuple(rows), f"person matching {person_name!r}", aliases=_PERSON_ALIASES, found=bool(people))


@kg_function("movie", Param("movie_id", _ID))
def get_movie_by_id(ctx: CallContext, movie_id) -> Table:
    """get_movie_by_id(movie_id)[key]: the movie with that KG id (the same keys as get_movie, and id)."""
    number = _as_id(movie_id)
    movie = ctx.api.call("movie_get_movie_info_by_id", number) if number is not None else None
    rows = (Row(_movie_fields(movie), _movie_title(movie), "title"),) if isinstance(movie, dict) else ()
    return Table(rows, f"movie with id {movie_id}", aliases=_MOVIE_ALIASES, found=bool(rows))


@kg_function("movie", Param("person_id", _ID))
def get_person_by_id(ctx: CallContext, person_id) -> Table:
    """get_person_by_id(person_id)[key]: the person with that KG id (the same keys as get_person, and id)."""
    number = _as_id(person_id)
    person = ctx.api.call("movie_get_person_info_by_id", number) if number is not None else None
    rows = (_person_row(person, ctx),) if isinstance(person, dict) else ()
    return Table(rows, f"person with id {person_id}", aliases=_PERSON_ALIASES, found=bool(rows))


@kg_function("movie", Param("movie_name", OPTIONAL_TEXT), Param("person_name", _PEOPLE),
             Param("condition", CONDITIONS, required=False))
def get_movie_person_cast(ctx: CallContext, movie_name: str | None, person_name, condition=()) -> Table:
    """get_movie_person_cast(movie_name, person_name, condition)[key]: cast rows with movie_name, year,
    release_date, name, character, gender, order; a list of people = the movies they share."""
    rows, what, found, ambiguous = _role_rows(ctx, "cast", movie_name, person_name, condition)
    return Table(tuple(rows), what, aliases=_ROLE_ALIASES, equals={"character": _same_role, "gender": _same_gender},
                 found=found, ambiguous=ambiguous)


@kg_function("movie", Param("movie_name", OPTIONAL_TEXT), Param("person_name", _PEOPLE),
             Param("condition", CONDITIONS, required=False))
def get_movie_person_crew(ctx: CallContext, movie_name: str | None, person_name, condition=()) -> Table:
    """get_movie_person_crew(movie_name, person_name, condition)[key]: crew rows with movie_name, year,
    release_date, name, job (e.g. eq(job, "director")); a person alone = the movies they directed."""
    rows, what, found, ambiguous = _role_rows(ctx, "crew", movie_name, person_name, condition)
    return Table(tuple(rows), what, aliases=_ROLE_ALIASES, found=found, ambiguous=ambiguous)


@kg_function("movie", Param("movie_name", OPTIONAL_TEXT), Param("person_name", OPTIONAL_TEXT),
             Param("condition", CONDITIONS, required=False))
def get_movie_person_oscar(ctx: CallContext, movie_name: str | None, person_name: str | None,
                           condition: tuple[Condition, ...] = ()) -> Table:
    """get_movie_person_oscar(movie_name, person_name, condition)[key]: Oscar rows with year (ceremony),
    ceremony, category, name, film, winner; with neither a movie nor a person, give eq(year, ...)."""
    ambiguous = ""
    if movie_name:
        movie, ambiguous = _one_movie(ctx, movie_name)
        owners = [movie]
        what = f"Oscar nominations of the movie {movie_name!r}"
    elif person_name:
        owners = _people(ctx, person_name)
        what = f"Oscar nominations of {person_name!r}"
    else:
        years = _condition_years(condition, ctx)
        if not years:
            raise KGValueError("get_movie_person_oscar() needs a movie, a person or a year condition")
        # the ceremony year may be filed under the film's year: fetch both, the year condition filters
        fetch = sorted({y for year in years for y in (year - 1, year)
                        if OSCAR_DATA_YEARS[0] <= y <= OSCAR_DATA_YEARS[1]})
        owners = [ctx.api.call("movie_get_year_info", str(year)) for year in fetch]
        what = f"Oscar nominations of {', '.join(map(str, years))}"
    awards = [a for owner in owners if isinstance(owner, dict) for a in owner.get("oscar_awards") or []
              if isinstance(a, dict)]
    unique = {tuple(sorted((k, str(v)) for k, v in a.items())): a for a in awards}.values()
    rows = [Row(_oscar_fields(a), _oscar_label) for a in unique]
    return Table(tuple(rows), what, aliases=_OSCAR_ALIASES, equals={"category": _same_category},
                 found=any(isinstance(owner, dict) for owner in owners), ambiguous=ambiguous)


# ---------------------------------------------------------------------- records
def _person_row(person: dict, ctx: CallContext) -> Row:
    awards = [a for a in person.get("oscar_awards") or [] if isinstance(a, dict)]
    fields = {"name": person.get("name"), "id": _id_text(person.get("id")), "birthday": person.get("birthday"),
              "age": _age(person.get("birthday"), ctx),
              "acted_movie_count": len(person.get("acted_movies") or []),
              "directed_movie_count": len(person.get("directed_movies") or []),
              "oscar_nominations": len(awards), "oscar_wins": sum(bool(a.get("winner")) for a in awards)}
    return Row(fields, str(person.get("name")), "name")


def _id_text(value: Any) -> str | None:
    """An id as text, so facts print it as written ("27205", never "27,205")."""
    return None if value is None or isinstance(value, bool) else str(value)


def _as_id(value: Any) -> int | None:
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def _movie_names(movie: dict) -> tuple:
    return (movie.get("title"), movie.get("original_title")) if isinstance(movie, dict) else ()


def _movie_title(movie: dict) -> str:
    return str(movie.get("title") or movie.get("original_title") or f"movie {movie.get('id')}")


def _movie_fields(movie: dict) -> dict:
    release = movie.get("release_date") or None
    crew = [c for c in movie.get("crew") or [] if isinstance(c, dict)]
    return {
        "title": movie.get("title"), "id": _id_text(movie.get("id")), "original_title": movie.get("original_title"),
        "release_date": release,
        "year": _year(release), "original_language": movie.get("original_language"), "budget": movie.get("budget"),
        "revenue": movie.get("revenue"), "rating": movie.get("rating"), "length": movie.get("length"),
        "genres": [g.get("name") if isinstance(g, dict) else g for g in movie.get("genres") or []],
        "directors": [c.get("name") for c in crew if c.get("job") == "Director"],
    }


def _role_rows(ctx: CallContext, table: str, movie_name: str | None, person_name,
               conditions: tuple[Condition, ...] = ()) -> tuple[list[Row], str, bool, str]:
    """Rows of the CAST or CREW join: a movie's entries (narrowed to the named people), or a person's movies
    (acted in for cast, directed for crew); with the noun phrase, whether the movie/people were found, and
    which same-title films the movie was guessed among ("" = none)."""
    if movie_name:
        movie, ambiguous = _one_movie(ctx, movie_name, conditions)
        rows = [_role_row(movie, entry, table) for entry in (movie or {}).get(table) or []]
        return _only_people(ctx, rows, person_name), f"{table} members of " + (
            _movie_title(movie) if movie else repr(movie_name)), movie is not None, ambiguous
    if not person_name:
        raise KGValueError(f"get_movie_person_{table}() needs a movie or a person")
    wanted = [person_name] if isinstance(person_name, str) else list(person_name)
    rows, names = _movies_of_people(ctx, person_name, "acted_movies" if table == "cast" else "directed_movies", table)
    who = " and ".join(names) or repr(person_name)
    what = f"movies with {who} in the cast" if table == "cast" else f"movies directed by {who}"
    return rows, what, len(names) == len(wanted), ""


def _role_row(movie: dict, entry: dict, table: str) -> Row:
    title = _movie_title(movie)
    fields = {"movie_name": title, "year": _year(movie.get("release_date")),
              "release_date": movie.get("release_date"), "name": entry.get("name")}
    if table == "cast":
        fields.update(character=entry.get("character"), gender=_GENDER_CODES.get(entry.get("gender")),
                      order=entry.get("order"))
        return Row(fields, f"{entry.get('name')} in {title}", "name")
    fields["job"] = entry.get("job")
    return Row(fields, f"the {str(entry.get('job') or 'crew member').lower()} of {title}", "name")


_GENDER_CODES = {1: "female", 2: "male"}


def _oscar_fields(award: dict) -> dict:
    return {"year": award.get("year_ceremony"), "ceremony": award.get("ceremony"), "category": award.get("category"),
            "name": award.get("name"), "film": award.get("film"), "winner": award.get("winner")}


def _oscar_label(fields) -> str:
    role = "winner" if fields.get("winner") in (True, "True", "true") else "nominee"
    ceremony = f" ({_ordinal(fields['ceremony'])} ceremony)" if fields.get("ceremony") else ""
    return f"the {str(fields.get('category') or 'Oscar').lower()} {role} at the {fields.get('year')} Oscars{ceremony}"


# ---------------------------------------------------------------------- lookups
def _one_movie(ctx: CallContext, movie_name: str, conditions: tuple[Condition, ...] = ()) -> tuple[dict | None, str]:
    """The movie meant, and (when films of its title were not told apart) the note saying so."""
    found = ctx.api.call("movie_get_movie_info", movie_name) or []
    clue = _title_clue(ctx, conditions, found)
    picked, note = _settle_title(ctx.matcher.pick(movie_name, found, _movie_names, prefer=clue), found, clue)
    return (picked[0], note[0] if note else "") if picked else (None, "")


def _title_clue(ctx: CallContext, conditions: tuple[Condition, ...], candidates):
    """Which of several same-title films is meant: the year clue (`_year_clue`), else the one whose cast or crew
    holds a person the question names ("the little women with winona ryder"); None without a clue."""
    clue = _year_clue(ctx, conditions)
    if clue is not None:
        return clue
    question = f" {kg_match_key(ctx.question)} "
    if not question.strip() or not isinstance(candidates, (list, tuple)):
        return None

    def named_in_question(movie) -> bool:
        people = [e.get("name") for part in ("cast", "crew") for e in (movie.get(part) or []) if isinstance(e, dict)]
        return any(name and f" {kg_match_key(name)} " in question for name in people)

    movies = [m for m in candidates if isinstance(m, dict)]
    return named_in_question if any(named_in_question(m) for m in movies) else None


def _year_clue(ctx: CallContext, conditions: tuple[Condition, ...]):
    """Which of several same-title films is meant: the one whose release year meets the call's year
    conditions, else one released in a year the question names; None without such a clue."""
    on_year = tuple(c for c in conditions if isinstance(c, Condition) and kg_match_key(c.key) in ("year",
                                                                                                     "release year"))
    if on_year:
        return lambda movie: bool(Table((Row({"year": _year(movie.get("release_date"))}, ""),), "").where(
            on_year, ctx.now).rows)
    years = ctx.question_years()
    if years:
        return lambda movie: _year(movie.get("release_date")) in years
    return None


def _people(ctx: CallContext, person_name: str) -> list[dict]:
    found = ctx.api.call("movie_get_person_info", person_name)
    return ctx.pick(person_name, found, lambda p: (p.get("name"),) if isinstance(p, dict) else ())


def _movies_of_people(ctx: CallContext, person_name, id_field: str, table: str) -> tuple[list[Row], list[str]]:
    """Rows for the movies every named person has in `id_field`, each fetched by id only when read."""
    names = [person_name] if isinstance(person_name, str) else list(person_name)
    people = [found[0] for found in (ctx.matcher.pick(n, ctx.api.call("movie_get_person_info", n) or [],
                                                      lambda p: (p.get("name"),)) for n in names) if found]
    if len(people) < len(names):
        return [], [str(p.get("name")) for p in people]
    others = [_id_set(p.get(id_field)) for p in people[1:]]  # sets: O(n + m), not a list scan per id
    ctx.check_deadline()
    shared = [i for i in _id_list(people[0].get(id_field)) if all(i in ids for ids in others)]
    ctx.check_deadline()
    display = [str(p.get("name")) for p in people]
    rows = [_lazy_role_row(ctx, movie_id, people[0], table, " and ".join(display)) for movie_id in shared]
    return rows, display


def _lazy_role_row(ctx: CallContext, movie_id: int, person: dict, table: str, who: str) -> Row:
    movie = functools.cache(lambda: ctx.api.call("movie_get_movie_info_by_id", movie_id) or {})

    def entry(key: str) -> Any:
        for item in movie().get(table) or []:
            if isinstance(item, dict) and item.get("id") == person.get("id"):
                return item.get(key)
        return None

    loaders = {"movie_name": lambda: movie().get("title"), "year": lambda: _year(movie().get("release_date")),
               "release_date": lambda: movie().get("release_date")}
    if table == "cast":
        loaders.update(character=lambda: entry("character"), order=lambda: entry("order"))
    else:
        loaders["job"] = lambda: entry("job") or "Director"
    fields = LazyRecord({"name": person.get("name")}, loaders)
    if table == "cast":
        return Row(fields, lambda f: f"{who} in {f['movie_name']}", "movie_name")
    return Row(fields, lambda f: f"{f['movie_name']} directed by {who}", "movie_name")


def _id_list(ids: Any) -> list:
    """A person's movie ids in order, without duplicates or unhashable junk."""
    if not isinstance(ids, (list, tuple)):
        return []
    return list(dict.fromkeys(i for i in ids if isinstance(i, (int, str))))


def _id_set(ids: Any) -> set:
    return set(_id_list(ids))


def _only_people(ctx: CallContext, rows: list[Row], person_name) -> list[Row]:
    if not person_name:
        return rows
    names = [person_name] if isinstance(person_name, str) else list(person_name)
    keep = {id(r) for n in names for r in ctx.matcher.pick(n, rows, lambda r: (r.fields.get("name"),), True)}
    return [r for r in rows if id(r) in keep]


def _condition_years(conditions: tuple[Condition, ...], ctx: CallContext) -> list[int]:
    """Ceremony years named by eq/ge/le(year, ...) conditions (at most the last 5 of a range)."""
    low = high = None
    for c in conditions:
        if kg_match_key(c.key) not in ("year", "year ceremony", "ceremony year"):
            continue
        wanted = condition_value(c.value, ctx.now)
        first = _year(getattr(wanted, "start", None)) or (int(wanted) if isinstance(wanted, float) else None)
        last = _year(getattr(wanted, "end", None)) or first
        if first is None:
            continue
        if c.op in ("eq", "ge"):
            low = first if low is None else max(low, first)
        if c.op in ("eq", "le"):
            high = last if high is None else min(high, last)
    if low is None and high is None:
        return []
    high = high if high is not None else min(low + 4, ctx.now.year if ctx.now else low + 4)
    low = low if low is not None else high - 4
    return list(range(max(low, high - 4), high + 1))


# ---------------------------------------------------------------------- equality and small helpers
def _same_category(field: str, wanted: str) -> bool:
    """Oscar categories: "best actor" = "ACTOR IN A LEADING ROLE"; else all wanted words present."""
    have, want = kg_match_key(field), kg_match_key(wanted)
    bare = want.removeprefix("best ")
    canonical = _CATEGORY_ALIASES.get(want) or _CATEGORY_ALIASES.get(bare)
    if canonical is not None:
        return have == canonical or (canonical == "international feature film" and have == "foreign language film")
    return have.removeprefix("best ") == bare or set(bare.split()) <= set(have.split())


def _same_role(field: str, wanted: str) -> bool:
    """A character matches any whole-word part: "batman" = "Bruce Wayne / Batman"."""
    have, want = f" {kg_match_key(field)} ", f" {kg_match_key(wanted)} "
    return want.strip() != "" and (want in have or have in want)


def _same_gender(field: str, wanted: str) -> bool:
    return _GENDERS.get(kg_match_key(field)) == _GENDERS.get(kg_match_key(wanted), "?")


def _year(value: Any) -> int | None:
    if value is None:
        return None
    text = value.isoformat() if hasattr(value, "isoformat") else str(value)
    return int(text[:4]) if text[:4].isdigit() else None


def _age(birthday: Any, ctx: CallContext) -> int | None:
    born = str(birthday or "")
    if ctx.now is None or len(born) < 10 or not born[:4].isdigit():
        return None
    try:
        month, day = int(born[5:7]), int(born[8:10])
    except ValueError:
        return None
    today = ctx.now.date()
    return today.year - int(born[:4]) - ((today.month, today.day) < (month, day))


def _ordinal(number: Any) -> str:
    n = int(number)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
