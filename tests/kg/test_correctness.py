"""The KG pathway's correctness: entity choice, facts that state their filter, rows kept when the budget runs out, numbers,
plural agreement, empty results as evidence, and the functions the language lacked.

Most cases run against `_Stub`, a client answering only the routes a case needs, so each record shape is
visible in the test that depends on it.
"""
from __future__ import annotations

import pytest

from models.deadline import Deadline
from models.kg.apis import compile_program
from models.kg.apis.matching import EntityMatcher
from models.kg.apis.records import LazyRecord
from models.kg.executor import Limits, execute
from models.kg.format import format_number
from models.kg.verbalizer import is_absence_evidence, verbalize


class _Stub:
    """A client whose methods are given as keyword arguments; it logs every call."""

    def __init__(self, **routes):
        self.routes = routes
        self.calls: list[tuple] = []

    def __getattr__(self, method):
        if method not in self.routes:
            raise AttributeError(method)

        def call(*args):
            self.calls.append((method, *args))
            route = self.routes[method]
            return route(*args) if callable(route) else route

        return call


def facts(client, text, domain, now=None, **kwargs):
    return verbalize(execute(compile_program(text, domain), client, now=now, **kwargs))


# ---------------------------------------------------------------------- entity choice
def test_a_full_name_beats_a_shorter_contained_one():
    matcher = EntityMatcher()
    assert matcher.pick("florida city", ["Florida", "Florida City, Florida"]) == ["Florida City, Florida"]
    assert matcher.pick("kansas city", ["Kansas", "Kansas City, Missouri"]) == ["Kansas City, Missouri"]
    assert matcher.pick("Florida", ["Florida City, Florida", "Florida"]) == ["Florida"]  # exact wins over rank


def test_an_unrelated_contained_name_is_worse_than_none():
    assert EntityMatcher().pick("kansas city", ["Kansas"]) == []
    assert EntityMatcher().pick("florida city", ["Florida"]) == []
    assert EntityMatcher().pick("the beatles band", ["The Beatles"]) == ["The Beatles"]  # generic words only


GLASS_ORCHARDS = [  # search rank: the 2001 film first
    {"id": 1, "title": "The Glass Orchard", "release_date": "2001-05-04", "cast": [], "crew": []},
    {"id": 2, "title": "Glass Orchard", "release_date": "2019-09-13", "cast": [], "crew": []},
    {"id": 3, "title": "Glass Orchard", "release_date": "1994-02-02", "cast": [], "crew": []},
]


def test_near_duplicate_titles_by_exact_title_then_year_never_by_rank():
    client = _Stub(movie_get_movie_info=GLASS_ORCHARDS)
    assert facts(client, 'get_movie("the glass orchard")["year"]', "movie") == [
        "The year of The Glass Orchard is 2001."]
    # exact title; nothing tells the two "Glass Orchard" films apart, and the fact says so
    assert facts(client, 'get_movie("glass orchard")["year"]', "movie") == [
        "The year of Glass Orchard is 2019.",
        "2 movies are titled Glass Orchard (released 2019, 1994); the one released 2019 is shown."]
    assert facts(client, 'get_movie("glass orchard", eq(year, 1994))["year"]', "movie") == [
        "The year of Glass Orchard is 1994."]
    assert facts(client, 'get_movie("glass orchard")["year"]', "movie",
                 question="who directed glass orchard (1994)?") == ["The year of Glass Orchard is 1994."]
    # a year clue reaches across a leading article, but not to a different title
    assert facts(client, 'get_movie("glass orchard")["year"]', "movie",
                 question="glass orchard, the 2001 film") == ["The year of The Glass Orchard is 2001."]


# ---------------------------------------------------------------------- facts state their filter
def _award(category, winner):
    return {"year_ceremony": 2000, "ceremony": 72, "category": category, "name": "X", "film": "F", "winner": winner}


def test_a_count_under_a_condition_names_the_condition():
    person = {"id": 7, "name": "X", "oscar_awards": [_award("DIRECTING", True), _award("WRITING", False),
                                                     _award("BEST PICTURE", False), _award("EDITING", False)]}
    client = _Stub(movie_get_person_info=[person])
    assert facts(client, 'get_movie_person_oscar(None, "X", eq(winner, true))["len"]', "movie") == [
        "The number of Oscar nominations of 'X' whose winner is true is 1."]
    assert facts(client, 'get_movie_person_oscar(None, "X")["len"]', "movie") == [
        "The number of Oscar nominations of 'X' is 4."]


def test_a_count_under_neq_names_the_condition():
    crew = [{"name": f"P{i}", "id": i, "job": job} for i, job in enumerate(
        ["Director", "Producer", "Writer", "Editor", "Composer", "Casting", "Producer", "Sound"])]
    movie = {"id": 9, "title": "Y", "release_date": "2005-01-01", "cast": [], "crew": crew}
    client = _Stub(movie_get_movie_info=[movie])
    assert facts(client, 'get_movie_person_crew("Y", None, neq(job, "Director"))["len"]', "movie") == [
        "The number of crew members of Y whose job is not Director is 7."]
    assert facts(client, 'AVG get_movie_person_crew("Y", None, [ge(year, 2000), le(year, "2010")])["year"]',
                 "movie") == ["The average year of crew members of Y whose year is at least 2000 and year is at "
                              "most 2010 is 2005 (over 8 values)."]


# ---------------------------------------------------------------------- rows kept under the budget
def test_a_key_test_on_a_lazy_record_loads_nothing():
    loaded = []
    record = LazyRecord({"name": "a"}, {"year": lambda: loaded.append("year") or 2000})
    assert "year" in record and "name" in record and "other" not in record
    assert loaded == []
    assert record["year"] == 2000 and loaded == ["year"]


def test_a_statement_cut_by_the_budget_keeps_the_rows_it_checked():
    person = {"id": 1, "name": "Tom Hanks", "acted_movies": [11, 12, 13, 14], "directed_movies": []}
    movies = {11: "2001-01-01", 12: "1990-01-01", 13: "2002-01-01", 14: "2003-01-01"}
    client = _Stub(movie_get_person_info=[person],
                   movie_get_movie_info_by_id=lambda i: {"id": i, "title": f"M{i}", "release_date": movies[i],
                                                         "cast": [{"id": 1, "name": "Tom Hanks"}]})
    program = compile_program('get_movie_person_cast(None, "tom hanks", ge(year, 2000))["movie_name"]', "movie")
    result = execute(program, client, limits=Limits(max_calls=3))  # the search and two movies
    (statement,) = result.statements
    assert result.stopped and [v.value for v in statement.values] == ["M11"]
    assert verbalize(result)[-1] == ("Only 2 of the 4 movies with Tom Hanks in the cast could be checked against "
                                     "the conditions before the work budget ran out.")


def test_a_sort_cut_by_the_budget_keeps_its_rows():
    person = {"id": 1, "name": "Tom Hanks", "acted_movies": [11, 12, 13], "directed_movies": []}
    years = {11: "2001-01-01", 12: "2005-01-01", 13: "1990-01-01"}
    client = _Stub(movie_get_person_info=[person],
                   movie_get_movie_info_by_id=lambda i: {"id": i, "title": f"M{i}", "release_date": years[i]})
    text = 'get_movie_person_cast(None, "tom hanks")\nsort(None, -year)["len"]'
    result = execute(compile_program(text, "movie"), client, limits=Limits(max_calls=3))
    assert result.stopped and result.statements[-1].number == 3


# ---------------------------------------------------------------------- numbers and agreement
def test_numbers_are_written_with_separators_and_sensible_rounding():
    assert format_number(2704359675292.9688) == "2,704,359,675,292.97 (about 2.7 trillion)"
    assert format_number(2704359675292.9688, magnitude=False) == "2,704,359,675,292.97"
    assert format_number(1234.5) == "1,234.5" and format_number(43210) == "43,210"
    assert format_number(2012) == "2012" and format_number(2012.0) == "2012"  # years stay as written
    assert format_number(0.0123456) == "0.01235" and format_number(1 / 3) == "0.3333"
    assert format_number(float("nan")) == "unknown"


def test_plural_keys_take_plural_verbs(fake):
    assert facts(fake, 'get_movie("parasite")["directors"]', "movie") == ["The directors of Parasite are Bong Joon Ho."]
    assert facts(fake, 'get_movie("parasite")["rating"]', "movie") == ["The rating of Parasite is 8.5."]


# ---------------------------------------------------------------------- empty results as evidence
def test_no_dividends_of_a_known_company_is_evidence():
    client = _Stub(finance_get_dividends_history={}, finance_get_company_name=[],
                   finance_get_price_history={"2024-02-27 00:00:00 EST": {"Close": 9.0}})
    result = execute(compile_program('get_stock_dividend("blfn")', "finance"), client)
    assert is_absence_evidence(result)
    assert verbalize(result) == ["No dividends of BLFN were found in the knowledge graph."]


def test_no_game_on_a_date_is_evidence(fake):
    assert facts(fake, 'get_nba_on_date("lakers", "2024-03-01")["pts"]', "sports") == [
        "No NBA games on 2024-03-01 of Los Angeles Lakers were found in the knowledge graph."]


def test_a_filter_that_keeps_nothing_is_stated(fake):
    assert facts(fake, 'get_movie_person_crew("inception", None, eq(job, "Editor"))["name"]', "movie") == [
        "No crew members of Inception whose job is Editor were found in the knowledge graph."]


def test_an_entity_that_was_not_found_is_no_evidence(fake):
    assert facts(fake, 'get_movie("zzzz")["title"]', "movie") == []
    client = _Stub(finance_get_dividends_history={}, finance_get_company_name=[], finance_get_price_history={})
    assert facts(client, 'get_stock_dividend("zzzz")', "finance") == []


def test_an_attribute_the_kg_does_not_record_is_no_evidence(fake):
    assert facts(fake, 'get_movie("parasite")["revenue"]', "movie") == []
    assert facts(fake, 'get_movie("inception")["length"]\nget_movie("parasite")["revenue"]', "movie") == [
        "The length of Inception is 148.",
        "The revenue of the movie matching 'parasite' is not recorded in the knowledge graph."]


def test_a_program_stopped_by_the_budget_is_no_evidence_of_absence(fake):
    result = execute(compile_program('get_movie("inception")\nget_movie("zzzz")', "movie"), fake,
                     limits=Limits(max_calls=1))
    assert not is_absence_evidence(result)


# ---------------------------------------------------------------------- functions the language lacked
def test_movie_and_person_by_id(fake):
    assert facts(fake, 'get_movie_by_id(1)["title"]', "movie") == ["The title is Inception."]
    assert facts(fake, 'get_person_by_id("20")["birthday"]', "movie") == [
        "The birthday of Christopher Nolan is 1970-07-30."]
    assert facts(fake, 'get_movie("inception")["id"]\nget_movie_by_id(*)["length"]', "movie")[-1] == (
        "The length of Inception is 148.")
    assert facts(fake, 'get_movie_by_id(404)', "movie") == []


def test_best_new_artists(fake):
    assert facts(fake, 'get_grammy_best_new_artists()["len"]', "music") == [
        "The number of Best New Artist Grammy artists is 1."]
    assert facts(fake, 'get_grammy_best_new_artists()["name"]', "music") == ["The name is Dua Lipa."]


def test_company_name_search(fake):
    assert facts(fake, 'get_company_names("apple")["ticker"]', "finance") == [
        "The ticker of the company names matching 'apple', in order: AAPL (Apple Inc. Common Stock); "
        "APLE (Apple Hospitality REIT Inc. Common Shares)."]


def test_counts_over_minute_prices(fake, now):
    # 10:04:54 PT is 13:04:54 EST: the 09:30 and 13:04 bars of the day, not the 15:59 one
    assert facts(fake, 'get_stock_minute_prices("aapl", "today")["len"]', "finance", now) == [
        "The number of one-minute prices of AAPL for 2024-02-28 is 2."]
    assert facts(fake, 'AVG get_stock_minute_prices("aapl", "2024-02-28")["close"]', "finance", now) == [
        "The average close of one-minute prices of AAPL for 2024-02-28 is 182.205 (over 2 values)."]
    assert facts(fake, 'get_stock_minute_prices("aapl", "2024-02-28")[:1]["close"]', "finance", now) == [
        "The close of AAPL at 2024-02-28 09:30 EST is 182.51."]


# ---------------------------------------------------------------------- the shared filmography
def test_shared_filmography_of_big_inputs_is_linear_and_respects_the_deadline():
    many = list(range(50_000))
    people = {"a": {"id": 1, "name": "A", "acted_movies": many}, "b": {"id": 2, "name": "B",
                                                                        "acted_movies": many[::-1]}}
    client = _Stub(movie_get_person_info=lambda name: [people[name.lower()]])
    text = 'get_movie_person_cast(None, ["a", "b"])["len"]'
    result = execute(compile_program(text, "movie"), client)
    assert result.statements[0].number == 50_000
    expired = Deadline(0)
    stopped = execute(compile_program(text, "movie"), client, deadline=expired)
    assert stopped.stopped == "the batch deadline has passed" and stopped.statements == ()
