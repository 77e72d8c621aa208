"""Facts name their entity and attribute; lists are summarised; the total length is bounded."""
from __future__ import annotations

from models.kg.apis import compile_program
from models.kg.executor import ExecutionResult, StatementResult, Value, execute
from models.kg.language.parser import parse
from models.kg.verbalizer import format_value, verbalize


def facts(fake, text, domain, now=None, **kwargs):
    return verbalize(execute(compile_program(text, domain), fake, now=now), **kwargs)


def test_value_count_average_and_row_facts(fake, now):
    assert facts(fake, 'get_movie("inception")["release_date"]', "movie") == [
        "The release_date of Inception is 2010-07-15."]
    assert facts(fake, 'get_person("coldplay")["members"]', "music") == [
        "The members of Coldplay are Chris Martin, Jonny Buckland, Guy Berryman and Will Champion."]
    assert facts(fake, 'get_person("coldplay")["members"]["len"]', "music") == [
        "The number of members of Coldplay is 4."]
    assert facts(fake, 'get_movie_person_cast(None, "tom hardy")["len"]', "movie") == [
        "The number of movies with Tom Hardy in the cast is 2."]
    assert facts(fake, 'AVG get_stock_price("aapl", "2024-02-22", "2024-02-23")["close"]', "finance", now) == [
        "The average close of daily prices of AAPL for 2024-02-22 to 2024-02-23 is 183.445 (over 2 values)."]
    assert facts(fake, 'get_stock_market_cap("msft")', "finance") == [
        "MSFT: market_cap: 3,060,000,000,000 (about 3.06 trillion)."]  # a field repeating the entity is left out


def test_oscar_and_multi_hop_facts(fake):
    text = ('get_movie_person_oscar(None, None, [eq(year, 2020), eq(category, "best picture"), eq(winner, true)])'
            '["film"]\nget_movie_person_crew(*, None, eq(job, "director"))["name"]')
    assert facts(fake, text, "movie") == [
        "The film of the best picture winner at the 2020 Oscars (92nd ceremony) is Parasite.",
        "The name of the director of Parasite is Bong Joon Ho."]


def test_sorted_results_say_how_they_were_sorted(fake):
    text = 'get_movie_person_cast(None, "leonardo dicaprio")\nsort(ge(year, 2000), -year)["movie_name"]'
    assert facts(fake, text, "movie") == [
        "The movies with Leonardo DiCaprio in the cast were sorted by year (descending), keeping those whose "
        "year is at least 2000, giving:",
        "The movie_name of the movies with Leonardo DiCaprio in the cast, in order: The Revenant; Inception."]


def test_notes_and_empty_results(fake, now):
    assert facts(fake, 'get_stock_price("aapl", "2024-02-24")["close"]', "finance", now) == [
        "The close of AAPL on 2024-02-23 is 182.52.",
        "AAPL has no trading record on 2024-02-24; the nearest earlier trading day, 2024-02-23, is shown."]
    assert facts(fake, 'get_movie("zzzz")["title"]\nget_movie("inception")["length"]', "movie") == [
        "No movie matching 'zzzz' was found.", "The length of Inception is 148."]


def test_a_program_that_found_nothing_gives_no_facts(fake):
    assert facts(fake, 'get_movie("zzzz")["title"]\nget_person("qqqq")', "movie") == []


def test_long_lists_are_summarised_and_the_total_is_bounded():
    statement = parse('get_x("a")["works"]').statements[0]
    values = tuple(Value("Coldplay", "works", f"Song {i}") for i in range(30))
    result = ExecutionResult((StatementResult(statement, "values", what="artist", values=values),), calls=1)
    (fact,) = verbalize(result, max_items=3)
    assert fact == "The works of Coldplay (30 in total) include Song 0, Song 1, Song 2, ..."
    many = tuple(StatementResult(statement, "values", values=(Value(f"E{i}", "k", "v" * 50),)) for i in range(20))
    bounded = verbalize(ExecutionResult(many, calls=1), max_chars=200)
    assert sum(len(f) + 1 for f in bounded) <= 201 and len(bounded) == 3
    (cut,) = verbalize(ExecutionResult(many, calls=1), max_chars=40)
    assert cut == "The k of E0 is vvvvvvvvvvvvvvvvvvvvvv..." and len(cut) == 40


def test_format_value():
    assert format_value(3.0) == "3" and format_value(0.75) == "0.75" and format_value(1 / 3) == "0.3333"
    assert format_value(160000000) == "160,000,000 (about 160 million)"
    assert format_value(True) == "true" and format_value(["a", None, "b"]) == "a and b"
    assert format_value({"x": 1, "y": None}) == "x: 1"
    assert format_value("word " * 200).endswith("...")
