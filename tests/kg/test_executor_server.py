"""The KG pathway against the real local mock server over the fixture KG (HTTP, official shapes).

For the sample questions that the KG can answer (m1, m3, mu1, f1, f2, f3, s1, s2, o1 in the shared table,
plus the multi-hop and comparison ones), a hand-written program must bring back exactly the facts the
answer needs; the questions and query times are read from the shipped sample dataset.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mock_api import bundled_kg
from mock_api import server as mock_server
from models.kg import client as client_module
from models.kg.config import KGConfig
from models.kg.pathway import KGPathway
from models.types import Query

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "crag_sample.jsonl"

# query -> (domain, hand-written program, exact facts)
CASES = {
    "when was the movie inception released?": (
        "movie", 'get_movie("inception")["release_date"]', ["The release_date of Inception is 2010-07-15."]),
    "which movie came out earlier, the matrix or fight club?": (
        "movie", 'get_movie("the matrix")["release_date"]\nget_movie("fight club")["release_date"]',
        ["The release_date of The Matrix is 1999-03-30.", "The release_date of Fight Club is 1999-10-15."]),
    "who won the oscar for best actor in 2012?": (
        "movie", 'get_movie_person_oscar(None, None, [eq(year, 2012), eq(category, "best actor"), '
                 'eq(winner, true)])["name"]',
        ["The name of the actor in a leading role winner at the 2012 Oscars (84th ceremony) is Jean Dujardin."]),
    "who directed the movie that won best picture at the 2020 oscars?": (
        "movie", 'get_movie_person_oscar(None, None, [eq(year, 2020), eq(category, "best picture"), '
                 'eq(winner, true)])["film"]\nget_movie_person_crew(*, None, eq(job, "Director"))["name"]',
        ["The film of the best picture winner at the 2020 Oscars (92nd ceremony) is Parasite.",
         "The name of the director of Parasite is Bong Joon Ho."]),
    "how many members are in the band coldplay?": (
        "music", 'get_person("coldplay")["members"]["len"]\nget_person("coldplay")["members"]',
        ["The number of members of Coldplay is 4.",
         "The members of Coldplay are Chris Martin, Jonny Buckland, Guy Berryman and Will Champion."]),
    "in what year was the song bohemian rhapsody released?": (
        "music", 'get_song("bohemian rhapsody")["release_date"]',
        ["The release_date of Bohemian Rhapsody is 1975-10-31."]),
    "what was the closing price of aapl on 2024-02-27?": (
        "finance", 'get_stock_price("aapl", "2024-02-27")["close"]', ["The close of AAPL on 2024-02-27 is 182.63."]),
    "which company has a larger market cap, msft or aapl?": (
        "finance", 'get_stock_market_cap("msft")["market_cap"]\nget_stock_market_cap("aapl")["market_cap"]',
        ["The market_cap of MSFT is 3,060,000,000,000 (about 3.06 trillion).",
         "The market_cap of AAPL is 2,810,000,000,000 (about 2.81 trillion)."]),
    "how much dividend per share did microsoft pay in february 2024?": (
        "finance", 'get_stock_dividend("microsoft", [ge(date, "2024-02-01"), le(date, "2024-02-29")])["dividend"]',
        ["The dividend of MSFT on 2024-02-14 is 0.75."]),
    "when did apple stop paying dividends in 2023?": (
        "finance", 'get_stock_dividend("apple", [ge(date, "2023-01-01"), le(date, "2023-12-31")])["len"]',
        ["The number of dividends of AAPL (Apple Inc. Common Stock) whose date is at least 2023-01-01 and date is "
         "at most 2023-12-31 is 4."]),
    "how many points did the golden state warriors score on 2022-10-18?": (
        "sports", 'get_nba_on_date("golden state warriors", "2022-10-18")["pts"]',
        ["The pts of Golden State Warriors vs Los Angeles Lakers on 2022-10-18 is 123."]),
    "what was the score of arsenal's match against liverpool on 2024-02-04?": (
        "sports", 'get_soccer_on_date("arsenal", "2024-02-04")["score"]',
        ["The score of Arsenal vs Liverpool on 2024-02-04 is 3-1."]),
    "what is the capital of australia?": (
        "open", 'get_open("australia")["capital"]', ["The capital of Australia is Canberra."]),
    "in which country was the founder of spacex born?": (
        "open", 'get_open("spacex")["founder"]\nget_open(*)["birth_place"]',
        ["The founder of SpaceX is Elon Musk.", "The birth_place of Elon Musk is Pretoria, Transvaal, South Africa."]),
}


@pytest.fixture(scope="module")
def pathway(tmp_path_factory):
    kg_dir = bundled_kg.build(tmp_path_factory.mktemp("cragkg"))
    with mock_server.running_server(kg_dir) as url:
        with client_module.MockAPIClient(url, timeout_s=10.0) as client:
            yield KGPathway(KGConfig(), client)


def _sample_queries() -> dict[str, Query]:
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["query"]: Query(r["interaction_id"], r["query"], r["query_time"]) for r in records}


@pytest.mark.parametrize("question", list(CASES))
def test_sample_question_facts(pathway, question):
    queries = _sample_queries()
    assert question in queries, "the sample dataset no longer has this question"
    domain, program, expected = CASES[question]
    assert pathway.evidence(queries[question], domain, program) == expected


def test_relative_dates_against_the_query_time(pathway):
    query = Query("q", "what was aapl's close yesterday?", "02/28/2024, 10:04:54 PT")
    assert pathway.evidence(query, "finance", 'get_stock_price("aapl", "yesterday")["close"]') == [
        "The close of AAPL on 2024-02-27 is 182.63."]
    saturday = Query("q", "what was aapl's close on february 24, 2024?", "02/28/2024, 10:04:54 PT")
    assert pathway.evidence(saturday, "finance", 'get_stock_price("aapl", "2024-02-24")["close"]') == [
        "The close of AAPL on 2024-02-23 is 182.71.",
        "AAPL has no trading record on 2024-02-24; the nearest earlier trading day, 2024-02-23, is shown."]


def test_hard_negatives_do_not_win(pathway):
    query = Query("q", "how long is inception?", "02/28/2024, 10:04:54 PT")
    assert pathway.evidence(query, "movie", 'get_movie("inception")["length"]') == ["The length of Inception is 148."]
    assert pathway.evidence(query, "music", 'get_song("bohemian rhapsody")["author"]') == [
        "The author of Bohemian Rhapsody is Freddie Mercury."]
    assert pathway.evidence(query, "finance", 'get_stock_dividend("apple", ge(date, "2024-01-01"))["dividend"]') == [
        "The dividend of AAPL on 2024-02-09 is 0.24."]


def test_a_question_the_kg_cannot_answer_gives_no_facts(pathway):
    query = Query("q", "how many nba mvp awards has lionel messi won?", "03/02/2024, 10:41:12 PT")
    assert pathway.evidence(query, "sports", 'get_nba_on_date("lionel messi", "2024")["pts"]') == []


def test_next_game_is_the_first_fixture_not_yet_played(pathway):
    """Unplayed fixtures (no goals; the official frame has NaN there) are what get_soccer_next_game finds."""
    early = Query("q", "who will arsenal play next?", "03/12/2024, 10:00:00 PT")
    assert pathway.evidence(early, "sports", 'get_soccer_next_game("arsenal")["opponent"]') == [
        "The opponent of Arsenal vs Luton Town on 2024-04-03 is Luton Town."]
    later = Query("q", "who will arsenal play next?", "04/05/2024, 10:00:00 PT")
    assert pathway.evidence(later, "sports", 'get_soccer_next_game("arsenal")["opponent"]') == [
        "The opponent of Arsenal vs Brighton on 2024-04-06 is Brighton."]
    # the last game is still the last one played before the question, not a fixture after it
    assert pathway.evidence(early, "sports", 'get_soccer_last_game("arsenal")["opponent"]') == [
        "The opponent of Arsenal vs Brentford on 2024-03-09 is Brentford."]
