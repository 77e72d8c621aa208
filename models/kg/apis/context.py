"""What an API function gets besides its arguments: a budgeted view of the mock API and the query's context.

`BudgetedAPI` is the only way functions reach the client. It counts calls against
`max_calls_per_question`, checks the batch deadline before each call, caches identical calls within one
program (a `*` fan-out often repeats them), and turns the client's transport failures into `KGApiError`,
so the executor sees one error family whatever the client is (the HTTP client, the in-memory test fake).
A server that answers with an error status (the official server's 500 for a movie year outside 1990-2021,
a 422 for a malformed argument) has rejected one input, not gone away: that call counts as "no result".
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Sequence, TypeVar

from models.deadline import Deadline
from models.kg.apis.matching import EntityMatcher
from models.kg.client import KGClientError
from models.kg.language.errors import KGApiError, KGLimitError, KGValueError
from models.kg.language.timeexpr import TimeSpan, resolve_time

T = TypeVar("T")
_YEAR = re.compile(r"\b((?:19|20)\d\d)\b")
log = logging.getLogger(__name__)


class BudgetedAPI:
    """Args:
        client: an object with the official wrapper's method names (see `models.kg.client`).
        max_calls: API calls allowed for one program.
        deadline: optional batch deadline; no call starts after it.
    """

    def __init__(self, client, max_calls: int, deadline: Deadline | None = None):
        self.client = client
        self.max_calls = max_calls
        self.deadline = deadline
        self.calls = 0
        self._cache: dict[tuple, Any] = {}

    def call(self, method: str, *args) -> Any:
        """`client.<method>(*args)`'s result (None = not found).

        Raises:
            KGLimitError: the call budget or the deadline is spent.
            KGApiError: the client failed.
        """
        key = (method, *(tuple(a) if isinstance(a, list) else a for a in args))
        if key in self._cache:
            return self._cache[key]
        if self.calls >= self.max_calls:
            raise KGLimitError(f"the budget of {self.max_calls} API calls is spent")
        if self.deadline is not None and self.deadline.expired():
            raise KGLimitError("the batch deadline has passed")
        self.calls += 1
        try:
            result = getattr(self.client, method)(*args)
        except KGClientError as exc:
            if exc.status is None:  # unreachable or timed out: nothing from this server can be trusted now
                raise KGApiError(f"{method} failed: {exc}") from exc
            log.info("%s%r: the server answered %s; treated as no result", method, args, exc.status)
            result = None  # it answered but rejected this input (the official 500 for a year out of range)
        self._cache[key] = result
        return result


@dataclass
class CallContext:
    """Attributes:
        api: the budgeted client.
        now: the query time (None when the query had none).
        matcher: picks entities among search candidates.
        all_matches: the statement has `ALL`.
        question: the question's text, for clues beyond the program (a year that tells two films of the
            same title apart); "" when unknown.
    """

    api: BudgetedAPI
    now: datetime | None
    matcher: EntityMatcher
    all_matches: bool = False
    question: str = ""

    def pick(self, query: str, candidates: Sequence[T] | None, names=None, prefer=None) -> list[T]:
        """The candidates the program's name refers to (every match with ALL, else the best one)."""
        if not isinstance(candidates, (list, tuple)):
            return []
        return self.matcher.pick(query, candidates, names, all_matches=self.all_matches, prefer=prefer)

    def question_years(self) -> set[int]:
        """Four-digit years (1900-2099) the question names."""
        return {int(y) for y in _YEAR.findall(self.question or "")}

    def check_deadline(self) -> None:
        """Raises KGLimitError once the batch deadline has passed (for local work between API calls)."""
        if self.api.deadline is not None and self.api.deadline.expired():
            raise KGLimitError("the batch deadline has passed")

    def time(self, expression: str) -> TimeSpan:
        """A time expression resolved against the query time (raises KGValueError if unknown)."""
        return resolve_time(expression, self.now)

    def today(self):
        if self.now is None:
            raise KGValueError("this function needs the query time, and the query has none")
        return self.now.date()
