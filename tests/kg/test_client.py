"""MockAPIClient: the request each of the 38 methods sends, result unwrapping, and every failure mode.

Request shapes are checked against a stand-in session that records calls (no sockets); failure modes run
against a tiny real HTTP server that misbehaves on purpose, and against a port nobody listens on.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from models.kg.client import DEFAULT_URL, KGClientError, MockAPIClient

# method, positional args, route, JSON body the official server expects
REQUESTS = [
    ("open_search_entity_by_name", ("florida",), "/open/search_entity_by_name", {"query": "florida"}),
    ("open_get_entity", ("Florida",), "/open/get_entity", {"query": "Florida"}),
    ("movie_get_person_info", ("nolan",), "/movie/get_person_info", {"query": "nolan"}),
    ("movie_get_movie_info", ("inception",), "/movie/get_movie_info", {"query": "inception"}),
    ("movie_get_year_info", (2012,), "/movie/get_year_info", {"query": "2012"}),
    ("movie_get_movie_info_by_id", ("603",), "/movie/get_movie_info_by_id", {"query": 603}),
    ("movie_get_person_info_by_id", (525,), "/movie/get_person_info_by_id", {"query": 525}),
    ("finance_get_company_name", ("apple",), "/finance/get_company_name", {"query": "apple"}),
    ("finance_get_ticker_by_name", ("Apple Inc. Common Stock",), "/finance/get_ticker_by_name",
     {"query": "Apple Inc. Common Stock"}),
    ("finance_get_price_history", ("AAPL",), "/finance/get_price_history", {"query": "AAPL"}),
    ("finance_get_detailed_price_history", ("AAPL",), "/finance/get_detailed_price_history", {"query": "AAPL"}),
    ("finance_get_dividends_history", ("MSFT",), "/finance/get_dividends_history", {"query": "MSFT"}),
    ("finance_get_market_capitalization", ("MSFT",), "/finance/get_market_capitalization", {"query": "MSFT"}),
    ("finance_get_eps", ("AAPL",), "/finance/get_eps", {"query": "AAPL"}),
    ("finance_get_pe_ratio", ("AAPL",), "/finance/get_pe_ratio", {"query": "AAPL"}),
    ("finance_get_info", ("AAPL",), "/finance/get_info", {"query": "AAPL"}),
    ("music_search_artist_entity_by_name", ("coldplay",), "/music/search_artist_entity_by_name",
     {"query": "coldplay"}),
    ("music_search_song_entity_by_name", ("yellow",), "/music/search_song_entity_by_name", {"query": "yellow"}),
    ("music_get_billboard_rank_date", (1,), "/music/get_billboard_rank_date", {"rank": 1, "date": None}),
    ("music_get_billboard_rank_date", ("2", "2024-03-09"), "/music/get_billboard_rank_date",
     {"rank": 2, "date": "2024-03-09"}),
    ("music_get_billboard_attributes", ("2024-03-09", "weeks_in_chart", "Flowers"),
     "/music/get_billboard_attributes", {"date": "2024-03-09", "attribute": "weeks_in_chart", "song_name": "Flowers"}),
    ("music_grammy_get_best_artist_by_year", ("2019",), "/music/grammy_get_best_artist_by_year", {"query": 2019}),
    ("music_grammy_get_award_count_by_artist", ("Adele",), "/music/grammy_get_award_count_by_artist",
     {"query": "Adele"}),
    ("music_grammy_get_award_count_by_song", ("Hello",), "/music/grammy_get_award_count_by_song", {"query": "Hello"}),
    ("music_grammy_get_best_song_by_year", (2017,), "/music/grammy_get_best_song_by_year", {"query": 2017}),
    ("music_grammy_get_award_date_by_artist", ("Adele",), "/music/grammy_get_award_date_by_artist",
     {"query": "Adele"}),
    ("music_grammy_get_best_album_by_year", (2016,), "/music/grammy_get_best_album_by_year", {"query": 2016}),
    ("music_grammy_get_all_awarded_artists", (), "/music/grammy_get_all_awarded_artists", None),
    ("music_get_artist_birth_place", ("Adele",), "/music/get_artist_birth_place", {"query": "Adele"}),
    ("music_get_artist_birth_date", ("Adele",), "/music/get_artist_birth_date", {"query": "Adele"}),
    ("music_get_members", ("Queen",), "/music/get_members", {"query": "Queen"}),
    ("music_get_lifespan", ("Queen",), "/music/get_lifespan", {"query": "Queen"}),
    ("music_get_song_author", ("Yellow",), "/music/get_song_author", {"query": "Yellow"}),
    ("music_get_song_release_country", ("Yellow",), "/music/get_song_release_country", {"query": "Yellow"}),
    ("music_get_song_release_date", ("Yellow",), "/music/get_song_release_date", {"query": "Yellow"}),
    ("music_get_artist_all_works", ("Queen",), "/music/get_artist_all_works", {"query": "Queen"}),
    ("sports_soccer_get_games_on_date", ("2024-02-04",), "/sports/soccer/get_games_on_date",
     {"date": "2024-02-04", "team_name": None}),
    ("sports_soccer_get_games_on_date", ("2024-02", "Arsenal"), "/sports/soccer/get_games_on_date",
     {"date": "2024-02", "team_name": "Arsenal"}),
    ("sports_nba_get_games_on_date", ("2022-10-18", "Los Angeles Lakers"), "/sports/nba/get_games_on_date",
     {"date": "2022-10-18", "team_name": "Los Angeles Lakers"}),
    ("sports_nba_get_play_by_play_data_by_game_ids", (["0022200002", 22200001],),
     "/sports/nba/get_play_by_play_data_by_game_ids", {"game_ids": ["0022200002", "22200001"]}),
    ("sports_nba_get_play_by_play_data_by_game_ids", ("0022200002",),
     "/sports/nba/get_play_by_play_data_by_game_ids", {"game_ids": ["0022200002"]}),
]


def _response(status: int, body: bytes) -> requests.Response:
    response = requests.Response()
    response.status_code, response._content, response.encoding = status, body, "utf-8"
    return response


class RecordingSession:
    """Stands in for `requests.Session`: records each POST and answers from a queue (default: a result)."""

    def __init__(self, *answers):
        self.calls, self.answers, self.headers = [], list(answers), {}

    def post(self, url, json=None, timeout=None):
        self.calls.append((url, json, timeout))
        answer = self.answers.pop(0) if self.answers else _response(200, b'{"result": ["sentinel"]}')
        if isinstance(answer, Exception):
            raise answer
        return answer

    def close(self):
        pass


def _client(*answers, **kwargs) -> tuple[MockAPIClient, RecordingSession]:
    client = MockAPIClient("http://kg.test:9000/", **kwargs)
    client.session = RecordingSession(*answers)
    return client, client.session


@pytest.mark.parametrize("method, args, path, body", REQUESTS, ids=[f"{r[0]}{len(r[1])}" for r in REQUESTS])
def test_every_route_sends_the_official_request_and_unwraps_result(method, args, path, body):
    client, session = _client(timeout_s=2.5)
    assert getattr(client, method)(*args) == ["sentinel"]
    assert session.calls == [("http://kg.test:9000" + path, body, 2.5)]


def test_request_table_covers_all_38_routes_and_every_public_method():
    methods = {name for name in dir(MockAPIClient) if name.split("_")[0] in {"open", "movie", "finance", "music",
                                                                              "sports"}}
    assert methods == {row[0] for row in REQUESTS}
    assert len({row[2] for row in REQUESTS}) == 38


def test_base_url_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("CRAG_MOCK_API_URL", "http://elsewhere:1234/")
    assert MockAPIClient().base_url == "http://elsewhere:1234"
    monkeypatch.delenv("CRAG_MOCK_API_URL")
    assert MockAPIClient().base_url == DEFAULT_URL
    assert MockAPIClient("http://given:1").base_url == "http://given:1"


def test_null_result_is_none():
    client, _ = _client(_response(200, b'{"result": null}'))
    assert client.open_get_entity("Nowhere") is None


def test_one_retry_after_a_connection_error_then_success():
    client, session = _client(requests.ConnectionError("refused"), _response(200, b'{"result": 3}'))
    assert client.music_grammy_get_award_count_by_artist("Adele") == 3
    assert len(session.calls) == 2


def test_connection_errors_beyond_the_retries_raise():
    client, session = _client(requests.ConnectionError("refused"), requests.ConnectionError("refused"), retries=1)
    with pytest.raises(KGClientError, match="cannot reach") as error:
        client.open_search_entity_by_name("x")
    assert len(session.calls) == 2 and error.value.path == "/open/search_entity_by_name"


def test_read_timeouts_are_not_retried():
    client, session = _client(requests.ReadTimeout("slow"), retries=3)
    with pytest.raises(KGClientError, match="no answer within"):
        client.finance_get_info("AAPL")
    assert len(session.calls) == 1


@pytest.mark.parametrize("status, body, message", [
    (500, b"Internal Server Error", "HTTP 500"),
    (422, b'{"detail": [{"msg": "Input should be a valid string"}]}', "HTTP 422"),
    (200, b"<html>not json</html>", "not JSON"),
    (200, b'{"detail": "no envelope"}', "no 'result'"),
    (200, b'["a", "list"]', "no 'result'"),
])
def test_bad_answers_raise_kg_client_error(status, body, message):
    client, _ = _client(_response(status, body))
    with pytest.raises(KGClientError, match=message) as error:
        client.movie_get_year_info("1980")
    assert error.value.status == status


# ---------------------------------------------------------------------- against real sockets
class _Misbehaving(BaseHTTPRequestHandler):
    """/slow answers after 2 s, /text500 a plain-text 500, /garbage a 200 that is not JSON, anything else a result."""

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"null")
        if self.path.startswith("/open/get_entity") and body == {"query": "slow"}:
            time.sleep(2.0)
        status, payload, kind = 200, json.dumps({"result": body}).encode(), "application/json"
        if body == {"query": "text500"}:
            status, payload, kind = 500, b"Internal Server Error", "text/plain"
        elif body == {"query": "garbage"}:
            payload, kind = b"{not json", "text/html"
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client of the /slow case gave up first, as intended

    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture(scope="module")
def misbehaving_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Misbehaving)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_real_http_round_trip_sends_json_body(misbehaving_url):
    with MockAPIClient(misbehaving_url) as client:
        assert client.sports_nba_get_games_on_date("2022", "Boston Celtics") == {"date": "2022",
                                                                                "team_name": "Boston Celtics"}


def test_slow_server_times_out(misbehaving_url):
    client = MockAPIClient(misbehaving_url, timeout_s=0.3)
    started = time.monotonic()
    with pytest.raises(KGClientError, match="no answer within"):
        client.open_get_entity("slow")
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize("query, message", [("text500", "HTTP 500"), ("garbage", "not JSON")])
def test_real_500_text_body_and_malformed_json(misbehaving_url, query, message):
    with pytest.raises(KGClientError, match=message):
        MockAPIClient(misbehaving_url).open_get_entity(query)


def test_server_down_raises_after_retry():
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = MockAPIClient(f"http://127.0.0.1:{port}", timeout_s=1.0, retries=1)
    with pytest.raises(KGClientError, match="cannot reach") as error:
        client.movie_get_movie_info("inception")
    assert error.value.status is None
