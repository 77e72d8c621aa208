"""The executor over the in-memory fake API: every domain, every operator, typed conditions, limits, failures.

Results are checked as plain data (values, counts, rows) and call counts, so laziness and budgets are
visible: `["len"]` must not fetch what it counts, and no program may exceed its call budget.
"""
from __future__ import annotations

import pytest

from models.deadline import Deadline
from models.kg.apis import compile_program
from models.kg.client import KGClientError
from models.kg.executor import Limits, execute
from models.kg.language.errors import KGApiError


def run(fake, text, domain, now=None, limits=Limits(), **kwargs):
    return execute(compile_program(text, domain), fake, now=now, limits=limits, **kwargs)


def values(result, index=-1):
    return [v.value for v in result.statements[index].values]


# ---------------------------------------------------------------------- movie
def test_get_movie_key_and_best_match(fake):
    result = run(fake, 'get_movie("inception")["release_date"]', "movie")
    (statement,) = result.statements
    assert statement.kind == "values" and [(v.entity, v.key, v.value) for v in statement.values] == [
        ("Inception", "release_date", "2010-07-15")]
    assert result.calls == 1 and result.stopped == ""


def test_len_counts_results_never_the_runtime(fake):
    assert run(fake, 'get_movie("inception")["len"]', "movie").statements[0].number == 1
    assert values(run(fake, 'get_movie("inception")["runtime"]', "movie")) == [148]
    assert run(fake, 'ALL get_movie("inception")["len"]', "movie").statements[0].number == 2


def test_oscar_by_year_with_typed_winner_condition(fake):
    text = ('get_movie_person_oscar(None, None, [eq(year, 2012), eq(category, "best actor"), '
            'eq(winner, {})])["name"]')
    assert values(run(fake, text.format("true"), "movie")) == ["Jean Dujardin"]
    assert values(run(fake, text.format("false"), "movie")) == ["Brad Pitt"]  # db3 read "false" as true
    assert values(run(fake, text.format('"False"'), "movie")) == ["Brad Pitt"]


def test_oscar_year_outside_the_api_range_is_no_result(fake):
    result = run(fake, 'get_movie_person_oscar(None, None, eq(year, 1985))["name"]', "movie")
    assert result.statements[0].kind == "empty" and result.calls == 0  # the official route has 1990-2021 only
    result = run(fake, 'get_movie_person_oscar(None, None, eq(year, 1991))["name"]', "movie")
    assert result.statements[0].kind == "empty"


def test_star_multi_hop(fake):
    result = run(fake, 'get_movie_person_oscar(None, None, [eq(year, 2020), eq(category, "best picture"), '
                       'eq(winner, true)])["film"]\n'
                       'get_movie_person_crew(*, None, eq(job, "director"))["name"]', "movie")
    assert values(result, 0) == ["Parasite"] and values(result, 1) == ["Bong Joon Ho"]


def test_cast_of_a_person_is_lazy_until_read(fake):
    result = run(fake, 'get_movie_person_cast(None, "leonardo dicaprio")["len"]', "movie")
    assert result.statements[0].number == 2
    assert [c[0] for c in fake.calls] == ["movie_get_person_info"]  # no by-id fetches to count
    sorted_titles = run(fake, 'get_movie_person_cast(None, "leonardo dicaprio")\nsort(None, -year)["movie_name"][:1]',
                        "movie")
    assert values(sorted_titles) == ["The Revenant"]
    assert sorted_titles.statements[0].consumed and not sorted_titles.statements[1].consumed


def test_shared_movies_of_a_list_of_people_and_fuzzy_character(fake):
    shared = run(fake, 'get_movie_person_cast(None, ["leonardo dicaprio", "tom hardy"])["movie_name"]', "movie")
    assert sorted(values(shared)) == ["Inception", "The Revenant"]
    joker = run(fake, 'get_movie_person_cast("the dark knight", None, eq(character, "batman"))["name"]', "movie")
    assert values(joker) == ["Christian Bale"]
    actresses = run(fake, 'get_movie_person_cast("inception", None, eq(gender, "actress"))["name"]', "movie")
    assert values(actresses) == ["Marion Cotillard"]


def test_neq_ge_le_and_a_conditioned_sort(fake):
    not_picture = run(fake, 'get_movie_person_oscar("parasite", None, neq(category, "best picture"))', "movie")
    assert not_picture.statements[0].kind == "empty"
    text = 'get_movie_person_crew(None, "christopher nolan", [eq(job, "Director"), ge(year, 2009), le(year, 2011)])'
    assert values(run(fake, text + '["movie_name"]', "movie")) == ["Inception"]
    result = run(fake, 'get_movie_person_crew(None, "christopher nolan")\nsort(le(year, 2008), year)["movie_name"]',
                 "movie")
    assert values(result) == ["The Dark Knight"]


def test_person_age_against_the_query_time(fake, now):
    assert values(run(fake, 'get_person("christopher nolan")["age"]', "movie", now)) == [53]


def test_a_missing_key_falls_back_to_whole_rows(fake):
    statement = run(fake, 'get_movie("inception")["sequel"]', "movie").statements[0]
    assert statement.kind == "rows" and statement.rows[0][0] == "Inception"
    assert statement.rows[0][1]["genres"] == ["Action", "Science Fiction"]
    assert statement.notes == ("No attribute 'sequel' was found, so the whole records are given.",)


def test_all_and_avg(fake):
    result = run(fake, 'ALL AVG get_movie("inception")["rating"]', "movie")
    assert result.statements[0].kind == "average" and result.statements[0].number == pytest.approx(7.7)
    result = run(fake, 'AVG get_movie("inception")["title"]', "movie")
    assert result.statements[0].kind == "empty"
    assert result.statements[0].notes == ("There are no numeric values to average.",)


# ---------------------------------------------------------------------- music
def test_music_members_count_and_lazy_fields(fake):
    result = run(fake, 'get_person("coldplay")["members"]["len"]', "music")
    assert result.statements[0].number == 4
    assert [c[0] for c in fake.calls] == ["music_search_artist_entity_by_name", "music_get_members"]


def test_music_star_fan_out_and_sort(fake):
    result = run(fake, 'get_person("coldplay")["works"]\nget_song(*)\nsort(None, release_date)["name"][:1]', "music")
    assert values(result, 0) == ["Viva la Vida", "Yellow", "Clocks"]
    assert values(result) == ["Yellow"]
    avg = run(fake, 'get_person("coldplay")["members"]\nAVG get_grammy_person(*)["grammy_award_count"]', "music")
    assert avg.statements[1].kind == "average" and avg.statements[1].number == pytest.approx(0.75)


def test_music_grammy_year_billboard_and_lifespan(fake, now):
    assert values(run(fake, 'get_grammy_year(2019)["best_new_artist"]', "music")) == ["Dua Lipa"]
    assert values(run(fake, 'get_grammy_person("coldplay")["grammy_award_years"]', "music")) == [2004, 2009]
    assert values(run(fake, 'get_billboard_rank(1, "2024-02-17")["song"]', "music")) == ["Lovin On Me"]
    weeks = run(fake, 'get_billboard_song("lovin on me", "last week")["weeks_in_chart"]', "music",
                now=now.replace(day=20))  # the week before 2024-02-20 is 12..18 February; its chart date the 17th
    assert values(weeks) == ["14"]
    assert values(run(fake, 'get_person("queen")["lifespan"]', "music")) == ["1970 to present"]


# ---------------------------------------------------------------------- finance
def test_price_on_a_day_by_ticker_and_by_name(fake, now):
    assert values(run(fake, 'get_stock_price("aapl", "2024-02-27")["close"]', "finance", now)) == [182.63]
    assert values(run(fake, 'get_stock_price("apple", "yesterday")["close"]', "finance", now)) == [182.63]
    assert ("finance_get_company_name", "apple") in fake.calls


def test_price_relative_ranges_avg_sort_and_latest(fake, now):
    assert values(run(fake, 'get_stock_price("aapl", "recent friday")["open"]', "finance", now)) == [185.01]
    avg = run(fake, 'AVG get_stock_price("aapl", "2024-02-22", "2024-02-23")["close"]', "finance", now)
    assert avg.statements[0].number == pytest.approx((184.37 + 182.52) / 2)
    high = run(fake, 'get_stock_price("aapl", "this week")\nsort(None, -high)["date"][:1]', "finance", now)
    assert values(high) == ["2024-02-27"]
    latest = run(fake, 'get_stock_price("aapl", "latest")', "finance", now).statements[0]
    assert latest.rows[0][1]["time"] == "13:04 EST" and latest.rows[0][1]["close"] == 181.9
    last_day = run(fake, 'get_stock_price("aapl", "last trading day")["date"]', "finance", now)
    assert values(last_day) == ["2024-02-27"]


def test_price_on_a_day_without_trading_says_so(fake, now):
    statement = run(fake, 'get_stock_price("aapl", "2024-02-24")["close"]', "finance", now).statements[0]
    assert [v.value for v in statement.values] == [182.52]
    assert statement.notes == ("AAPL has no trading record on 2024-02-24; the nearest earlier trading day, "
                               "2024-02-23, is shown.",)
    intraday = run(fake, 'get_stock_price("aapl", "2024-02-29")', "finance", now).statements[0]
    assert intraday.rows[0][1]["open"] == 181.27 and "intraday" in intraday.notes[0]


def test_dividends_metrics_and_info(fake):
    text = 'get_stock_dividend("microsoft", [ge(date, "2024-02-01"), le(date, "2024-02-29")])["dividend"]'
    assert values(run(fake, text, "finance")) == [0.75]
    count = run(fake, 'get_stock_dividend("msft", neq(dividend, 0.68))["len"]', "finance")
    assert count.statements[0].number == 2
    caps = run(fake, 'get_stock_market_cap("msft")["market_cap"]\nget_stock_market_cap("aapl")["market_cap"]',
               "finance")
    assert values(caps, 0) == [3.06e12] and values(caps, 1) == [2.81e12]
    assert values(run(fake, 'get_stock_pe_ratio("aapl")["pe"]', "finance")) == [27.6]
    assert values(run(fake, 'get_stock_eps("aapl")["earnings per share"]', "finance")) == [6.58]
    assert values(run(fake, 'get_stock_info("aapl")["market cap"]', "finance")) == [2.81e12]
    assert run(fake, 'get_stock_eps("zzzzzz")', "finance").statements[0].kind == "empty"


def test_an_unknown_time_expression_fails_only_its_statement(fake, now):
    result = run(fake, 'get_stock_price("aapl", "next blue moon")\nget_stock_market_cap("aapl")', "finance", now)
    assert result.statements[0].kind == "error" and "unknown time expression" in result.statements[0].error
    assert result.statements[1].kind == "rows"


# ---------------------------------------------------------------------- sports
def test_nba_from_the_asked_teams_side(fake, now):
    assert values(run(fake, 'get_nba_on_date("golden state warriors", "2022-10-18")["pts"]', "sports", now)) == [123.0]
    away = run(fake, 'get_nba_on_date("warriors", "2022-10-21")', "sports", now).statements[0].rows[0][1]
    assert (away["venue"], away["result"], away["pts"], away["opponent_pts"], away["score"], away["reb"]) == (
        "away", "win", 130.0, 125.0, "130-125", 47.0)
    wins = run(fake, 'get_nba_on_date("gsw", "2022-10")\nsort(eq(result, "W"), date)["len"]', "sports", now)
    assert wins.statements[1].number == 2


def test_soccer_score_last_and_next_game(fake, now):
    assert values(run(fake, 'get_soccer_on_date("arsenal", "2024-02-04")["score"]', "sports", now)) == ["3-1"]
    assert values(run(fake, 'get_soccer_last_game("arsenal")["opponent"]', "sports", now)) == ["Newcastle Utd"]
    assert values(run(fake, 'get_soccer_next_game("arsenal")["date"]', "sports", now)) == ["2024-03-30"]
    month = run(fake, 'get_soccer_on_date("arsenal", "2024-02")\nsort(neq(result, "win"), date)["len"]', "sports", now)
    assert month.statements[1].number == 0
    all_teams = run(fake, 'get_soccer_on_date(None, "2024-02-04")["team"]', "sports", now)
    assert values(all_teams) == ["Arsenal", "Liverpool"]


def test_play_by_play_through_a_game_id(fake, now):
    result = run(fake, 'get_nba_on_date("warriors", "2022-10-18")["game_id"]\nget_nba_play_by_play(*)[:1]',
                 "sports", now)
    assert result.statements[1].rows[0][1]["homedescription"] == "Jump Ball Looney vs. Davis"


# ---------------------------------------------------------------------- open
def test_open_entity_multi_hop_and_wiki_cleaning(fake):
    result = run(fake, 'get_open("spacex")["founder"]\nget_open(*)["birth_place"]', "open")
    assert values(result, 0) == ["Elon Musk"] and values(result) == ["Pretoria, South Africa"]
    row = run(fake, 'get_open("australia")', "open").statements[0].rows[0][1]
    assert row["capital"] == "Canberra" and "image_flag" not in row


def test_open_all_sort_with_typed_numbers(fake):
    result = run(fake, 'ALL get_open("springfield")\nsort(ge(population, 150000), -population)["name"]', "open")
    assert values(result) == ["Springfield, Missouri"]


# ---------------------------------------------------------------------- limits and failures
def test_the_call_budget_stops_execution_but_keeps_earlier_lines(fake):
    text = 'get_open("australia")["capital"]\nget_open("spacex")["founder"]\nget_open(*)["birth_place"]'
    result = run(fake, text, "open", limits=Limits(max_calls=4))
    assert result.calls == 4 and result.stopped == "the budget of 4 API calls is spent"
    assert values(result, 0) == ["Canberra"] and values(result, 1) == ["Elon Musk"] and len(result.statements) == 2


def test_pathological_programs_stay_bounded(fake):
    chain = "\n".join(['get_open("spacex")["founder"]'] + ['get_open(*)["name"]', 'get_open(*)["founder"]'] * 30)
    result = run(fake, chain, "open", limits=Limits(max_calls=10))
    assert result.calls <= 10 and len(result.statements) == 61  # repeated calls come from the cache
    deep = run(fake, chain.replace('get_open(*)["name"]', 'get_open(*)["summary"]'), "open", limits=Limits(max_calls=3))
    assert deep.calls == 3 and deep.stopped
    wide = run(fake, 'ALL get_open("springfield")\nget_open(*)\nget_open(*)', "open", limits=Limits(max_calls=40,
                                                                                                      max_rows=1))
    assert all(len(s.output) <= 1 for s in wide.statements) and wide.calls <= 40


def test_max_rows_bounds_what_is_listed_not_what_is_counted_averaged_or_sorted(fake, now):
    """The five AAPL days with max_rows 2: the highest close, the mean and the count are over all five."""
    limits = Limits(max_rows=2)
    week = '"2024-02-22", "2024-02-28"'
    closes = [184.37, 182.52, 181.16, 182.63, 181.42]
    listed = run(fake, f'get_stock_price("aapl", {week})["close"]', "finance", now, limits=limits)
    assert values(listed) == closes[:2]
    highest = run(fake, f'get_stock_price("aapl", {week})\nsort(None, -close)["close"][:1]', "finance", now,
                  limits=limits)
    assert values(highest, 1) == [184.37]
    lowest = run(fake, f'get_stock_price("aapl", {week})\nsort(None, close)["close"][:1]', "finance", now,
                 limits=limits)
    assert values(lowest, 1) == [181.16]
    mean = run(fake, f'AVG get_stock_price("aapl", {week})["close"]', "finance", now, limits=limits)
    assert mean.statements[0].number == pytest.approx(sum(closes) / 5)
    count = run(fake, f'get_stock_price("aapl", {week})["close"]["len"]', "finance", now, limits=limits)
    assert count.statements[0].number == 5


def test_identical_calls_are_made_once(fake):
    run(fake, 'get_open("australia")["capital"]\nget_open("australia")["capital"]', "open")
    assert len(fake.calls) == 2


def test_an_unreachable_api_propagates_and_a_rejected_input_is_no_result(fake):
    fake.fail["open_search_entity_by_name"] = KGClientError("refused", "/open/search_entity_by_name")
    with pytest.raises(KGApiError, match="refused"):
        run(fake, 'get_open("australia")', "open")
    fake.fail["open_search_entity_by_name"] = KGClientError("boom", "/open/search_entity_by_name", status=500)
    assert run(fake, 'get_open("australia")', "open").statements[0].kind == "empty"


def test_malformed_api_data_fails_only_its_statement(fake):
    fake.fail["movie_get_movie_info"] = TypeError("unexpected shape")
    result = run(fake, 'get_movie("inception")\nget_person("tom hardy")["birthday"]', "movie")
    assert result.statements[0].kind == "error" and values(result) == ["1977-09-15"]


def test_the_deadline_stops_calls(fake):
    result = run(fake, 'get_open("australia")', "open", deadline=Deadline(0))
    assert result.calls == 0 and result.stopped == "the batch deadline has passed"
