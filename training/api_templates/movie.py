"""Movie templates: `get_movie`, `get_person`, the cast / crew / Oscar joins and the id look-ups."""
from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable

from training.api_templates.base import DomainTable, Filling, FixtureKG, Template, low

MOVIE = DomainTable("movie")

# key of a movies.json record: (trained phrasings, unseen phrasings, value)
_ATTRIBUTES = {
    "release_date": (("when was {movie} released", "what's the release date of {movie}",
                      "on what date did the movie {movie} come out", "{movie} release date",
                      "when did {movie} hit theaters"),
                     ("what day did {movie} premiere in cinemas",), lambda m: m["release_date"]),
    "budget": (("what was the budget of {movie}", "how much did it cost to make {movie}",
                "what's the production budget for {movie}", "{movie} budget",
                "how much money was spent making the movie {movie}"),
               ("how expensive was {movie} to produce",), lambda m: m["budget"]),
    "revenue": (("how much money did {movie} make", "what was the box office revenue of {movie}",
                 "how much did {movie} gross", "{movie} box office", "what did {movie} earn worldwide"),
                ("how much did {movie} take in at the box office",), lambda m: m["revenue"]),
    "rating": (("what is the rating of the movie {movie}", "how well is {movie} rated",
                "what's {movie}'s average rating", "{movie} rating", "what score does {movie} have"),
               ("how do viewers rate {movie}",), lambda m: m["rating"]),
    "length": (("how long is the movie {movie}", "what is the running time of {movie} in minutes",
                "what's the runtime of {movie}", "{movie} runtime", "how many minutes long is {movie}"),
               ("what's the duration of the film {movie}",), lambda m: m["length"]),
    "original_language": (("what is the original language of {movie}", "in which language was {movie} made",
                           "what language is {movie} in", "{movie} original language",
                           "what language was {movie} filmed in"),
                          ("what language do they speak in the movie {movie}",), lambda m: m["original_language"]),
}


def titled(kg: FixtureKG) -> list[dict]:
    """The movies a title alone names: films sharing a title (the two "Dune"s) are left out, since a question
    naming only the title has no single expected answer."""
    counts = Counter(low(movie["title"]) for movie in kg.movies)
    return [movie for movie in kg.movies if counts[low(movie["title"])] == 1]


def per_movie(answer: Callable[[FixtureKG, dict], tuple]):
    """A fill over the films a title alone names: `answer(kg, movie)` gives the expected items, () = not asked."""
    def fill(kg: FixtureKG):
        for movie in titled(kg):
            expected = tuple(answer(kg, movie))
            if expected:
                yield Filling({"movie": low(movie["title"])}, (low(movie["title"]),), expected)
    fill.__name__ = answer.__name__
    return fill


def _attribute(key: str) -> Template:
    questions, unseen, value = _ATTRIBUTES[key]
    fill = per_movie(lambda kg, movie: (value(movie),) if value(movie) not in (None, 0, "") else ())
    return Template(f"movie_{key}", "movie", questions, 'get_movie("{movie}")["' + key + '"]', fill, unseen)


for _key in _ATTRIBUTES:
    MOVIE.add(_attribute(_key))


@MOVIE.template('get_movie("{movie}")["year"]',
                "what year did {movie} come out", "in which year was {movie} released", "{movie} release year",
                "what year is the movie {movie} from", "when did {movie} come out, what year",
                unseen=("which year saw the release of {movie}",))
@per_movie
def _movie_year(kg: FixtureKG, movie: dict):
    return (int(movie["release_date"][:4]),)


@MOVIE.template('get_movie("{movie}")["genres"]',
                "what genres is {movie}", "what kind of movie is {movie}", "what's the genre of {movie}",
                "{movie} genre", "what type of film is {movie}",
                unseen=("how would you classify the movie {movie} by genre",))
@per_movie
def _movie_genres(kg: FixtureKG, movie: dict):
    return movie["genres"]


@MOVIE.template('get_movie("{movie}")["title"]',
                "what's the exact title of the movie {movie}", "how is the film {movie} spelled exactly",
                "what's the full title of {movie}",
                unseen=("give me the proper title of {movie}",))
@per_movie
def _movie_title(kg: FixtureKG, movie: dict):
    return (movie["title"],)


@MOVIE.template('get_person("{person}")["birthday"]',
                "when was {person} born", "what is the birthday of {person}", "{person} birthday",
                "what's {person}'s date of birth", "when's {person}'s birthday",
                unseen=("on which day was the actor {person} born",))
def _person_birthday(kg: FixtureKG):
    for name, person in kg.persons.items():
        if person.get("birthday"):
            yield Filling({"person": low(name)}, (low(name),), (person["birthday"],))


def _films_of(kg: FixtureKG, job: str | None) -> dict[str, set[str]]:
    """person -> ids of the movies they acted in (job None) or held `job` on, over every movie."""
    films: dict[str, set[str]] = {}
    for movie in kg.movies:
        people = [a for a, _, _ in movie["cast"]] if job is None else [n for n, j in movie["crew"] if j == job]
        for name in people:
            films.setdefault(name, set()).add(movie["id"])
    return films


def _per_filmed_person(job: str | None, answer: Callable[[FixtureKG, set[str]], Iterable]):
    """A fill over the people the KG knows who acted in (job None) or held `job` on a film: `answer(kg, ids)`
    gives the expected items from the ids of their films."""
    def fill(kg: FixtureKG):
        for name, ids in _films_of(kg, job).items():
            if name in kg.persons:
                yield Filling({"person": low(name)}, (low(name),), tuple(answer(kg, ids)))
    return fill


def _count(kg: FixtureKG, ids: set[str]) -> tuple[int]:
    return (len(ids),)


def _titles(kg: FixtureKG, ids: set[str]) -> list[str]:
    return [m["title"] for m in kg.movies if m["id"] in ids]


MOVIE.template('get_person("{person}")["acted_movie_count"]',
               "how many movies has {person} been in", "number of films {person} acted in",
               "in how many movies did {person} have a role", "{person} number of movies",
               unseen=("how many acting credits does {person} have",),
               name="person_acted_count")(_per_filmed_person(None, _count))


MOVIE.template('get_person("{person}")["directed_movie_count"]',
               "how many movies has {person} directed", "how many films did {person} direct",
               "number of movies directed by {person}", "{person} how many films as director",
               unseen=("how many times has {person} been a director",), heldout=True,
               name="person_directed_count")(_per_filmed_person("Director", _count))


def _per_oscar_person(answer: Callable[[list[dict]], object]):
    """A fill over the people the KG knows who appear in Oscar rows: `answer(rows)` is the expected value."""
    def fill(kg: FixtureKG):
        for name in kg.persons:
            rows = [row for row in kg.oscars if name in row["name"]]
            if rows:
                yield Filling({"person": low(name)}, (low(name),), (answer(rows),))
    return fill


MOVIE.template('get_person("{person}")["oscar_nominations"]',
               "how many oscar nominations does {person} have", "how many times was {person} nominated for an oscar",
               "{person} oscar nominations", "number of academy award nominations for {person}",
               unseen=("how often has {person} been up for an academy award",),
               name="person_oscar_nominations")(_per_oscar_person(len))
MOVIE.template('get_person("{person}")["oscar_wins"]',
               "how many oscars has {person} won", "how many academy awards did {person} win",
               "{person} oscar wins", "what's the number of oscars won by {person}",
               unseen=("how many times did {person} take home an oscar",),
               name="person_oscar_wins")(_per_oscar_person(lambda rows: sum(row["winner"] == "True" for row in rows)))


def directors(movie: dict) -> list[str]:
    return [name for name, job in movie["crew"] if job == "Director"]


@MOVIE.template('get_movie_person_crew("{movie}", None, eq(job, "Director"))["name"]',
                "who directed {movie}", "who is the director of the movie {movie}", "{movie} director",
                "who's the director of {movie}", "who was {movie} directed by",
                unseen=("who was behind the camera for {movie}", "name the filmmaker who directed {movie}"))
@per_movie
def _movie_director(kg: FixtureKG, movie: dict):
    return directors(movie)


@MOVIE.template('get_movie_person_crew("{movie}", None, eq(job, "Original Music Composer"))["name"]',
                "who composed the music for {movie}", "who wrote the score of {movie}", "{movie} composer",
                "who did the soundtrack for {movie}", "who's the composer of the {movie} score",
                unseen=("whose music do you hear in {movie}",), heldout=True)
@per_movie
def _movie_composer(kg: FixtureKG, movie: dict):
    return [name for name, job in movie["crew"] if job == "Original Music Composer"]


@MOVIE.template('get_movie_person_crew("{movie}", "{person}")["job"]',
                "what was {person}'s job on {movie}", "what did {person} do on the movie {movie}",
                "what role did {person} have in the crew of {movie}", "{person} job on {movie}",
                unseen=("in what capacity did {person} work on {movie}",))
def _crew_job(kg: FixtureKG):
    for movie in titled(kg):
        jobs = Counter(name for name, _ in movie["crew"])
        for name, job in movie["crew"]:
            if jobs[name] == 1 and not any(a == name for a, _, _ in movie["cast"]):
                yield Filling({"movie": low(movie["title"]), "person": low(name)}, (low(movie["title"]),), (job,))


MOVIE.template('get_movie_person_crew(None, "{person}")["movie_name"]',
               "what movies has {person} directed", "which films did {person} direct",
               "list the movies directed by {person}", "{person} filmography as director",
               unseen=("what has {person} made as a director",),
               name="directed_movies")(_per_filmed_person("Director", _titles))


@MOVIE.template('get_movie_person_crew("{movie}", None, eq(job, "Director"))["name"]\nget_person(*)["birthday"]',
                "when was the director of {movie} born", "what is the birthday of the person who directed {movie}",
                "the guy who directed {movie}, when was he born", "birthday of {movie}'s director",
                unseen=("when's the birthday of whoever directed {movie}",), heldout=True)
@per_movie
def _director_birthday(kg: FixtureKG, movie: dict):
    named = directors(movie)
    born = kg.persons.get(named[0], {}).get("birthday") if len(named) == 1 else None
    return (born,) if born else ()


@MOVIE.template('get_movie_person_cast("{movie}", None, eq(character, "{character}"))["name"]',
                "who played {character} in {movie}", "which actor played the role of {character} in {movie}",
                "who plays {character} in {movie}", "{character} in {movie} actor", "who was {character} in {movie}",
                unseen=("who portrayed {character} in the movie {movie}",))
def _character_actor(kg: FixtureKG):
    for movie in titled(kg):
        characters = [low(c) for _, c, _ in movie["cast"]]
        for actor, character, _ in movie["cast"]:  # names match by containment: "brand" ~ "professor brand"
            lowered = low(character)
            if character and sum(lowered in other or other in lowered for other in characters) == 1:
                yield Filling({"movie": low(movie["title"]), "character": lowered}, (low(movie["title"]),), (actor,))


@MOVIE.template('get_movie_person_cast("{movie}", "{person}")["character"]',
                "who did {person} play in {movie}", "what character does {person} play in {movie}",
                "{person}'s role in {movie}", "which part did {person} have in {movie}",
                unseen=("what was the name of {person}'s character in {movie}",))
def _actor_character(kg: FixtureKG):
    for movie in titled(kg):
        parts = Counter(a for a, _, _ in movie["cast"])
        for actor, character, _ in movie["cast"]:
            if character and parts[actor] == 1:
                yield Filling({"movie": low(movie["title"]), "person": low(actor)}, (low(movie["title"]),),
                              (character,))


@MOVIE.template('get_movie_person_cast("{movie}", None)["len"]',
                "how many actors are in the cast of {movie}", "how big is the cast of {movie}",
                "how many people were in the cast of {movie}", "{movie} cast size",
                unseen=("how many actors appear in {movie}",), heldout=True)
@per_movie
def _cast_size(kg: FixtureKG, movie: dict):
    return (len(movie["cast"]),) if movie["cast"] else ()


@MOVIE.template('get_movie_person_cast("{movie}", None)["name"]',
                "who's in the cast of {movie}", "who stars in {movie}", "list the actors in {movie}",
                "{movie} cast", "which actors were in {movie}",
                unseen=("who acted in the film {movie}",))
@per_movie
def _cast_names(kg: FixtureKG, movie: dict):
    return dict.fromkeys(a for a, _, _ in movie["cast"])


def _acted_in(kg: FixtureKG) -> dict[str, list[dict]]:
    films: dict[str, list[dict]] = {}
    for movie in titled(kg):
        for actor in dict.fromkeys(a for a, _, _ in movie["cast"]):
            films.setdefault(actor, []).append(movie)
    return films


@MOVIE.template('get_movie_person_cast(None, "{person}")["len"]',
                "how many movies has {person} acted in", "in how many films did {person} appear",
                "how many films has {person} starred in", "count of movies with {person} in the cast",
                unseen=("{person} has appeared in how many movies",))
def _actor_movie_count(kg: FixtureKG):
    every = _films_of(kg, None)  # the API counts every film, same-title ones too
    for actor in _acted_in(kg):
        yield Filling({"person": low(actor)}, (low(actor),), (len(every[actor]),))


def _actor_end_movie(pick: Callable):
    """A fill: each actor's latest (`pick` max) or first (min) film, where two films do not tie for it."""
    def fill(kg: FixtureKG):
        for actor, films in _acted_in(kg).items():
            dates = sorted((m["release_date"] for m in films), reverse=pick is max)
            if len(films) >= 2 and dates[0] != dates[1]:
                end = pick(films, key=lambda m: m["release_date"])
                yield Filling({"person": low(actor)}, (low(actor),), (end["title"],))
    return fill


MOVIE.template('get_movie_person_cast(None, "{person}")\nsort(None, -release_date)["movie_name"][:1]',
               "what is the most recent movie starring {person}", "which film with {person} came out last",
               "what's {person}'s latest movie", "{person} newest film",
               unseen=("what was the last movie {person} was in",), name="actor_latest_movie")(_actor_end_movie(max))
MOVIE.template('get_movie_person_cast(None, "{person}")\nsort(None, release_date)["movie_name"][:1]',
               "what was {person}'s first movie", "which film did {person} debut in",
               "earliest movie starring {person}", "what's the oldest film {person} acted in",
               unseen=("what movie did {person} start their career with",), heldout=True,
               name="actor_first_movie")(_actor_end_movie(min))


@MOVIE.template('ALL get_movie("{movie}")["title"]',
                "list all the movies called {movie}", "which movies are in the {movie} franchise",
                "what are all the {movie} films", "every movie with {movie} in the title",
                unseen=("name each film of the {movie} series",))
def _franchise_titles(kg: FixtureKG):
    for prefix in ("the matrix", "inception", "fight club", "parasite"):
        titles = tuple(m["title"] for m in kg.movies if low(m["title"]).startswith(prefix))
        if len(titles) >= 2:
            yield Filling({"movie": prefix}, (prefix,), titles)


@MOVIE.template('get_movie_by_id({id})["title"]',
                "which movie has the id {id}", "what is the title of the movie with id {id}",
                "movie id {id}", "what film is id {id} in the database",
                unseen=("tell me the name of the movie whose id is {id}",))
def _movie_by_id(kg: FixtureKG):
    for movie in kg.movies[::2]:  # half the movies: id questions are rare
        yield Filling({"id": movie["id"]}, (f"movie id {movie['id']}",), (movie["title"],))


@MOVIE.template('get_person_by_id({id})["name"]',
                "who is the person with id {id}", "what is the name of the person whose id is {id}",
                "person id {id}", "who has the person id {id}",
                unseen=("which actor or crew member is id {id}",))
def _person_by_id(kg: FixtureKG):
    for name, person in list(kg.persons.items())[::6]:  # a sixth of the people: id questions are rare
        yield Filling({"id": person["id"]}, (f"person id {person['id']}",), (name,))


@MOVIE.template('get_movie_person_oscar(None, None, [eq(year, {year}), eq(category, "best picture"), '
                'eq(winner, true)])["film"]',
                "which movie won best picture at the {year} oscars", "what won the oscar for best picture in {year}",
                "{year} best picture winner", "best picture oscar {year}, which film",
                unseen=("what film took home the top prize at the {year} academy awards",))
def _best_picture(kg: FixtureKG):
    for row in kg.oscars:
        if row["category"].lower() == "best picture" and row["winner"] == "True":
            yield Filling({"year": int(row["year_ceremony"])}, (f"oscars {row['year_ceremony']}",), (row["film"],))


@MOVIE.template('get_movie_person_oscar("{movie}", None, eq(winner, true))["category"]',
                "which oscars did {movie} win", "what academy awards did {movie} win",
                "{movie} oscar wins, which categories", "in which categories did {movie} win an oscar",
                unseen=("for what did {movie} get an academy award",))
@per_movie
def _movie_oscar_categories(kg: FixtureKG, movie: dict):
    return [row["category"] for row in kg.oscars if row["film"] == movie["title"] and row["winner"] == "True"]


@MOVIE.template('get_movie_person_oscar("{movie}", None)["len"]',
                "how many oscar nominations did {movie} get", "how many academy award nominations did {movie} receive",
                "{movie} number of oscar nominations", "how many oscars was {movie} nominated for",
                unseen=("how many times was the film {movie} up for an oscar",), heldout=True)
@per_movie
def _movie_oscar_count(kg: FixtureKG, movie: dict):
    rows = [row for row in kg.oscars if row["film"] == movie["title"]]
    return (len(rows),) if rows else ()
