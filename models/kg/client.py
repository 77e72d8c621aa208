"""Client for the CRAG mock KG API: the 38 POST routes of the official `mock_api/server.py`.

Method names and parameters are the official wrapper's (`apiwrapper/pycragapi.py::CRAG`, including its
`movid_id` typo), so code and prompts written against it carry over. Deliberate differences:
- Methods return the unwrapped `result` (None = not found), not the `{"result": ...}` envelope.
- The base URL comes from `$CRAG_MOCK_API_URL` (the starter kit's variable; the wrapper read `$CRAG_SERVER`),
  default http://localhost:8000.
- One pooled `requests.Session`, a *wall-time* bound on every call, and `retries` extra attempts on
  connection errors only: a read timeout is not retried, because a slow server stays slow and a retry would
  double the wait inside the 30 s per-question budget.
- Wall time, not per read: `requests`' timeout bounds each socket read, so a server trickling one byte
  every few seconds could hold a call forever. Each call runs in a daemon worker thread and the caller
  waits at most `min(timeout_s, deadline left)` (`bounded_by(deadline)` sets the deadline of the calls
  made inside it; the KG pathway passes its stage deadline), then raises `KGClientError` and abandons the
  worker, which ends on its own when the server finishes or a read times out. No call starts after the
  deadline.
- Every failure is one exception, `KGClientError`: refused connection, timeout, any non-200 answer (the
  official server answers a 500 with a plain-text body, e.g. for a movie year outside 1990-2021, and a 422 for
  a malformed argument), a body that is not JSON, or JSON without "result". Callers treat it as "no KG
  evidence" and answer from the web instead.
- Arguments are coerced to the types the server validates: pydantic v2 rejects an int for a str field, so
  `movie_get_year_info(2012)` would otherwise be a 422; numeric strings become ints for int fields. A value
  that cannot be coerced is sent as-is and comes back as a `KGClientError` (422).

`KGClientError` is a `KGError`, the KG pathway's one exception root, so whatever the pipeline does with KG
failures covers the transport too; `status` tells "the server rejected this input" (it answered) from "the
server is unusable" (None: unreachable or timed out).
"""
from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterable

import requests

from models.deadline import Deadline
from models.kg.language.errors import KGError

DEFAULT_URL = "http://localhost:8000"
_RETRY_PAUSE_S = 0.05  # a refused connection is usually a server still starting; pause briefly, then retry


class KGClientError(KGError):
    """The mock API could not give an answer (unreachable, slow, HTTP error, or a malformed body).

    Attributes:
        path: the route that failed, e.g. "/movie/get_year_info".
        status: the HTTP status when the server answered, else None.
    """

    def __init__(self, message: str, path: str, status: int | None = None):
        super().__init__(message)
        self.path = path
        self.status = status


def _text(value: Any) -> Any:
    return value if value is None or isinstance(value, str) else str(value)


def _int(value: Any) -> Any:
    try:
        return int(value)
    except (TypeError, ValueError):
        return value  # the server's 422 becomes a KGClientError naming the route


class MockAPIClient:
    """One client per process is enough; it keeps one HTTP connection pool.

    Args:
        base_url: e.g. "http://localhost:8000"; None = `$CRAG_MOCK_API_URL`, else http://localhost:8000.
        timeout_s: wall-time bound of each call, in seconds (also its connect and per-read timeout).
        retries: extra attempts after a connection error (0 = none).
    """

    def __init__(self, base_url: str | None = None, timeout_s: float = 5.0, retries: int = 1):
        self.base_url = (base_url or os.environ.get("CRAG_MOCK_API_URL") or DEFAULT_URL).rstrip("/")
        self.timeout_s = timeout_s
        self.retries = max(0, retries)
        self.session = requests.Session()
        self.session.headers["accept"] = "application/json"
        self.deadline: Deadline | None = None  # calls never outlive it (see `bounded_by`)

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> "MockAPIClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MockAPIClient({self.base_url!r}, timeout_s={self.timeout_s}, retries={self.retries})"

    @contextmanager
    def bounded_by(self, deadline: Deadline | None):
        """Calls made inside the block end (with a `KGClientError`) by `deadline` at the latest."""
        previous, self.deadline = self.deadline, deadline
        try:
            yield self
        finally:
            self.deadline = previous

    # ------------------------------------------------------------------ transport
    def _wall_time_s(self) -> float:
        """Seconds the next call may take: the timeout, cut to what the deadline leaves."""
        left = self.deadline.remaining() if self.deadline is not None else float("inf")
        return min(self.timeout_s, left)

    def _post_within(self, url: str, body: dict | None, path: str) -> requests.Response:
        """`session.post` (body read in full) in a worker thread the caller waits for at most the wall time."""
        limit = self._wall_time_s()
        if limit <= 0:
            raise KGClientError(f"{path}: not sent, the deadline has passed", path)
        outcome: dict[str, Any] = {}
        finished = threading.Event()

        def call() -> None:
            try:
                response = self.session.post(url, json=body, timeout=self.timeout_s)
                response.content  # the body too: a trickled body is what the wall time is about
                outcome["response"] = response
            except BaseException as error:  # noqa: BLE001 - handed to the caller
                outcome["error"] = error
            finally:
                finished.set()

        threading.Thread(target=call, name=f"kg-call{path}", daemon=True).start()
        if not finished.wait(limit):
            raise KGClientError(f"{path}: no answer within {limit:.2f}s (wall time)", path)
        if "error" in outcome:
            raise outcome["error"]
        return outcome["response"]

    def _post(self, path: str, body: dict | None = None) -> Any:
        """POSTs `body` as JSON and returns the unwrapped result.

        Raises:
            KGClientError: see the module docstring for every case.
        """
        url = self.base_url + path
        for attempt in range(self.retries + 1):
            try:
                response = self._post_within(url, body, path)
                break
            except requests.ConnectionError as error:  # includes ConnectTimeout
                if attempt == self.retries or self._wall_time_s() <= _RETRY_PAUSE_S:
                    raise KGClientError(f"{path}: cannot reach the mock API at {self.base_url} ({error})",
                                        path) from error
                time.sleep(_RETRY_PAUSE_S)
            except requests.Timeout as error:
                raise KGClientError(f"{path}: no answer within {self.timeout_s}s", path) from error
            except requests.RequestException as error:
                raise KGClientError(f"{path}: request failed ({error})", path) from error
        if response.status_code != 200:
            raise KGClientError(f"{path}: HTTP {response.status_code}: {response.text[:200]!r}", path,
                                response.status_code)
        try:
            payload = response.json()
        except ValueError:
            raise KGClientError(f"{path}: the answer is not JSON: {response.text[:200]!r}", path, 200) from None
        if not isinstance(payload, dict) or "result" not in payload:
            raise KGClientError(f"{path}: the answer has no 'result' field: {response.text[:200]!r}", path, 200)
        return payload["result"]

    def _query(self, path: str, value: Any) -> Any:
        return self._post(path, {"query": value})

    # ------------------------------------------------------------------ open
    def open_search_entity_by_name(self, query: str) -> list[str] | None:
        """Up to 10 entity names, best BM25 match first."""
        return self._query("/open/search_entity_by_name", _text(query))

    def open_get_entity(self, entity: str) -> dict | None:
        """`{summary_text, summary_structured, raw_mediawiki}` of an exact entity name."""
        return self._query("/open/get_entity", _text(entity))

    # ------------------------------------------------------------------ movie
    def movie_get_person_info(self, person_name: str) -> list[dict] | None:
        """Up to 10 person records, best BM25 match first."""
        return self._query("/movie/get_person_info", _text(person_name))

    def movie_get_movie_info(self, movie_name: str) -> list[dict] | None:
        """Up to 10 movie records, best BM25 match first."""
        return self._query("/movie/get_movie_info", _text(movie_name))

    def movie_get_year_info(self, year: str | int) -> dict | None:
        """`{movie_list, oscar_awards}` of a year in 1990-2021 (other years: KGClientError, a server 500)."""
        return self._query("/movie/get_year_info", _text(year))

    def movie_get_movie_info_by_id(self, movid_id: int) -> dict | None:
        """A movie record by id (the parameter name is the official wrapper's)."""
        return self._query("/movie/get_movie_info_by_id", _int(movid_id))

    def movie_get_person_info_by_id(self, person_id: int) -> dict | None:
        """A person record by id."""
        return self._query("/movie/get_person_info_by_id", _int(person_id))

    # ------------------------------------------------------------------ finance
    def finance_get_company_name(self, query: str) -> list[str] | None:
        """Up to 10 company names (the exact `Name`s that `finance_get_ticker_by_name` accepts)."""
        return self._query("/finance/get_company_name", _text(query))

    def finance_get_ticker_by_name(self, query: str) -> str | None:
        """The ticker of an exact company name."""
        return self._query("/finance/get_ticker_by_name", _text(query))

    def finance_get_price_history(self, ticker_name: str) -> dict | None:
        """Daily bars: `{"2024-02-27 00:00:00 EST": {Open, High, Low, Close, Volume}}`."""
        return self._query("/finance/get_price_history", _text(ticker_name))

    def finance_get_detailed_price_history(self, ticker_name: str) -> dict | None:
        """1-minute bars of the last 5 trading days, keyed like the daily bars."""
        return self._query("/finance/get_detailed_price_history", _text(ticker_name))

    def finance_get_dividends_history(self, ticker_name: str) -> dict | None:
        """`{"2024-02-14 00:00:00 EST": 0.75}`."""
        return self._query("/finance/get_dividends_history", _text(ticker_name))

    def finance_get_market_capitalization(self, ticker_name: str) -> float | None:
        return self._query("/finance/get_market_capitalization", _text(ticker_name))

    def finance_get_eps(self, ticker_name: str) -> float | None:
        """Forward EPS."""
        return self._query("/finance/get_eps", _text(ticker_name))

    def finance_get_pe_ratio(self, ticker_name: str) -> float | None:
        """Forward P/E."""
        return self._query("/finance/get_pe_ratio", _text(ticker_name))

    def finance_get_info(self, ticker_name: str) -> dict | None:
        """The yfinance-style info dict (symbol, longName, marketCap, forwardPE, dividendRate, ...)."""
        return self._query("/finance/get_info", _text(ticker_name))

    # ------------------------------------------------------------------ music: search and Billboard
    def music_search_artist_entity_by_name(self, artist_name: str) -> list[str] | None:
        return self._query("/music/search_artist_entity_by_name", _text(artist_name))

    def music_search_song_entity_by_name(self, song_name: str) -> list[str] | None:
        return self._query("/music/search_song_entity_by_name", _text(song_name))

    def music_get_billboard_rank_date(self, rank: int, date: str | None = None) -> list | None:
        """`[[songs], [artists]]` at a Hot 100 rank on a date (all dates when None)."""
        return self._post("/music/get_billboard_rank_date", {"rank": _int(rank), "date": _text(date)})

    def music_get_billboard_attributes(self, date: str, attribute: str, song_name: str) -> str | None:
        """rank_last_week, weeks_in_chart, top_position or rank of a song on a chart date."""
        return self._post("/music/get_billboard_attributes",
                          {"date": _text(date), "attribute": _text(attribute), "song_name": _text(song_name)})

    # ------------------------------------------------------------------ music: Grammy
    def music_grammy_get_best_artist_by_year(self, year: int) -> list[str] | None:
        """Best New Artist of a ceremony year (null outside 1957-2019, as officially)."""
        return self._query("/music/grammy_get_best_artist_by_year", _int(year))

    def music_grammy_get_award_count_by_artist(self, artist_name: str) -> int | None:
        return self._query("/music/grammy_get_award_count_by_artist", _text(artist_name))

    def music_grammy_get_award_count_by_song(self, song_name: str) -> int | None:
        return self._query("/music/grammy_get_award_count_by_song", _text(song_name))

    def music_grammy_get_best_song_by_year(self, year: int) -> list[str] | None:
        """Song Of The Year of a ceremony year."""
        return self._query("/music/grammy_get_best_song_by_year", _int(year))

    def music_grammy_get_award_date_by_artist(self, artist_name: str) -> list[int] | None:
        """The years in which an artist won."""
        return self._query("/music/grammy_get_award_date_by_artist", _text(artist_name))

    def music_grammy_get_best_album_by_year(self, year: int) -> list[str] | None:
        """Album Of The Year of a ceremony year."""
        return self._query("/music/grammy_get_best_album_by_year", _int(year))

    def music_grammy_get_all_awarded_artists(self) -> list[str] | None:
        """Every Best New Artist winner (the route takes no body)."""
        return self._post("/music/grammy_get_all_awarded_artists")

    # ------------------------------------------------------------------ music: artists and songs
    def music_get_artist_birth_place(self, artist_name: str) -> str | None:
        """ISO 3166 alpha-2 country code."""
        return self._query("/music/get_artist_birth_place", _text(artist_name))

    def music_get_artist_birth_date(self, artist_name: str) -> str | None:
        return self._query("/music/get_artist_birth_date", _text(artist_name))

    def music_get_members(self, band_name: str) -> list[str] | None:
        return self._query("/music/get_members", _text(band_name))

    def music_get_lifespan(self, artist_name: str) -> list | None:
        """`[begin, end]`, `[None, None]` for an unknown artist."""
        return self._query("/music/get_lifespan", _text(artist_name))

    def music_get_song_author(self, song_name: str) -> str | None:
        return self._query("/music/get_song_author", _text(song_name))

    def music_get_song_release_country(self, song_name: str) -> str | None:
        return self._query("/music/get_song_release_country", _text(song_name))

    def music_get_song_release_date(self, song_name: str) -> str | None:
        return self._query("/music/get_song_release_date", _text(song_name))

    def music_get_artist_all_works(self, artist_name: str) -> list[str] | None:
        return self._query("/music/get_artist_all_works", _text(artist_name))

    # ------------------------------------------------------------------ sports
    def sports_soccer_get_games_on_date(self, date: str, team_name: str | None = None) -> dict | None:
        """`{column: {"('league', 'season', 'team', 'game')": value}}`; date is YYYY-MM-DD, YYYY-MM or YYYY."""
        return self._post("/sports/soccer/get_games_on_date", {"date": _text(date), "team_name": _text(team_name)})

    def sports_nba_get_games_on_date(self, date: str, team_name: str | None = None) -> dict | None:
        """`{column: {"0": value, ...}}` of the `game` table; date is YYYY-MM-DD, YYYY-MM or YYYY."""
        return self._post("/sports/nba/get_games_on_date", {"date": _text(date), "team_name": _text(team_name)})

    def sports_nba_get_play_by_play_data_by_game_ids(self, game_ids: Iterable[str] | str) -> dict | None:
        """Play-by-play rows of the given game ids (e.g. "0022200001")."""
        ids = [game_ids] if isinstance(game_ids, str) else list(game_ids)
        return self._post("/sports/nba/get_play_by_play_data_by_game_ids", {"game_ids": [_text(g) for g in ids]})
