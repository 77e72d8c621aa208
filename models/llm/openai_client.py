"""One client of an OpenAI-compatible HTTP server (`/v1/chat/completions`, `/v1/completions`, `/v1/models`).

Three callers talk to such servers, each through this client and each with its own settings:
- the LLM backend (`models/llm/openai_backend.py`: vLLM serve, llama.cpp's server) under a stage deadline,
- db3's labelling endpoint (`training/endpoint.py`: GPT-4 or a local vLLM server),
- the V3 judge (`evaluation/judge.py`).

The client owns what they share: the session (its connection pool), URL joining, the API-key header, the JSON
body, the retry loop and its back-off, timeouts, the deadline, and reading the reply. What differs between the
callers is a parameter (`RetryPolicy`, `timeout_s`, `null_content`, the key), never a second code path here:
- A call is retried on a connection error or timeout, and on a status in `RetryPolicy.statuses` (429 and every
  5xx unless the caller names its own set); another status of 400 or more fails at once (`HTTPError`: a bad
  request or a wrong key does not get better by asking again).
- The first pause is `RetryPolicy.backoff_s`, doubled after each pause, capped at `max_backoff_s`.
- With a `Deadline`, no call starts after it and each call's timeout is the smaller of `timeout_s` and the time
  left; a pause the deadline has no room for is skipped (the next attempt goes at once, if the deadline
  leaves time for it), so nothing waits past the deadline. Without one, the call never expires.
- The reply must be JSON with a non-empty `choices` list whose every choice holds text (`text` on
  /completions, `message.content` on /chat/completions); anything else is a `MalformedReply` naming what is
  wrong. A null text is a malformed reply unless the caller says what it stands for (`null_content`). A
  choice's `finish_reason` and token log-probabilities are read where present; log-probabilities that are
  absent or garbled leave that choice without them, never failed.

Errors are `ServerCallError`s whose message is the reason, one line: `HTTPError` (a status not retried),
`MalformedReply`, `RetriesExhausted` (connection errors or retried statuses until the retries or the deadline
ran out; `last` is the last attempt's reason, None when the deadline left no time for any). Other
`requests` exceptions (a URL without a scheme, too many redirects) are configuration errors and propagate.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any, Collection

import requests

from models.deadline import Deadline

ENDPOINTS = {"chat": "chat/completions", "completions": "completions"}
RETRY_STATUSES = frozenset({429, *range(500, 600)})
_RETRYABLE = (requests.ConnectionError, requests.Timeout)
_SHOWN = 200  # characters of a reply body quoted in an error


class ServerCallError(Exception):
    """A call to the server that failed for good; the message is the reason."""


class HTTPError(ServerCallError):
    """The server answered a status that is not retried (a 4xx other than the policy's)."""

    def __init__(self, status: int, text: str):
        self.status, self.text = status, text[:_SHOWN]
        super().__init__(f"HTTP {status}: {self.text}")


class MalformedReply(ServerCallError):
    """The server answered, but not with what an OpenAI-compatible server answers."""


class RetriesExhausted(ServerCallError):
    """Every attempt hit a connection error, a timeout or a retried status, until the retries or the deadline ran
    out. `last`: the last attempt's reason; None when the deadline had passed before the first attempt."""

    def __init__(self, last: str | None, attempts: int):
        self.last, self.attempts = last, attempts
        super().__init__(last or "not sent: the deadline had passed")


@dataclass(frozen=True)
class RetryPolicy:
    """How a call is retried: `retries` extra attempts; pauses of `backoff_s`, doubled after each pause, at most
    `max_backoff_s`; the statuses retried (any other of 400 or more fails at once)."""

    retries: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = math.inf
    statuses: Collection[int] = RETRY_STATUSES


@dataclass(frozen=True)
class Choice:
    """One choice of a reply: its text, why generation stopped (`finish_reason`, None when not said), its
    chosen tokens' log-probabilities (() when absent or unreadable) and its `index`."""

    text: str
    finish_reason: str | None = None
    logprobs: tuple[float, ...] = ()
    index: int = 0


@dataclass(frozen=True)
class Reply:
    """A reply's choices, ordered by their index, and the JSON it was read from."""

    choices: tuple[Choice, ...]
    payload: dict

    @property
    def text(self) -> str:
        """The first choice's text."""
        return self.choices[0].text


def env_key(variable: str | None) -> str:
    """The API key held by the environment variable `variable` ("" when it is unset or no variable is named)."""
    return os.environ.get(variable, "") if variable else ""


def make_session(pool_size: int = 10) -> requests.Session:
    """A session whose connection pool holds `pool_size` requests in flight (requests keeps 10 by default)."""
    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_maxsize=max(10, pool_size))
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def request_body(model: str, *, messages=None, prompt: str | None = None, **params: Any) -> dict:
    """The JSON body of one call: `messages` (/chat/completions) or `prompt` (/completions), then every parameter
    that is not None (`max_tokens`, `temperature`, `stop`, `response_format`, `logprobs`, `n`, a dialect's
    grammar field, ...), in the order given."""
    if (messages is None) == (prompt is None):
        raise ValueError("a request body has messages (chat) or a prompt (completions), not both or neither")
    body: dict = {"model": model}
    if messages is not None:
        body["messages"] = list(messages)
    else:
        body["prompt"] = prompt
    body.update((key, value) for key, value in params.items() if value is not None)
    return body


class OpenAIClient:
    """Calls to one OpenAI-compatible server.

    Args:
        base_url: the API root, e.g. `http://localhost:8001/v1` (a trailing "/" is dropped).
        api_key: sent as `Authorization: Bearer <key>`; "" or None sends no such header.
        timeout_s: one HTTP call's timeout (capped by a call's deadline).
        retry: which failures are retried, how often, with which pauses.
        null_content: what a choice whose text is null stands for; None: a malformed reply.
        session: a `requests.Session` (or an object with its `post` and `get`); default `make_session(pool_size)`.
        pool_size: connections kept for the requests in flight at once.
    """

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout_s: float = 120.0,
                 retry: RetryPolicy = RetryPolicy(), null_content: str | None = None, session=None,
                 pool_size: int = 10):
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.retry = retry
        self.null_content = null_content
        self.session = session or make_session(pool_size)
        self.headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {api_key}"} if api_key
                                                               else {})

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    # ------------------------------------------------------------------ completions
    def create(self, endpoint: str, body: dict, *, deadline: Deadline | None = None) -> Reply:
        """Sends `body` to /chat/completions (`endpoint` "chat") or /completions ("completions"), retrying as
        the policy says, and reads the reply.

        Raises:
            ValueError: an unknown endpoint.
            HTTPError: a status that is not retried.
            MalformedReply: a reply that is not a completion.
            RetriesExhausted: connection errors, timeouts or retried statuses until the retries or the deadline
                ran out.
        """
        if endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint {endpoint!r} is not one of {list(ENDPOINTS)}")
        return parse_reply(self._post(ENDPOINTS[endpoint], body, deadline or Deadline(None)), endpoint,
                           self.null_content)

    def chat(self, body: dict, *, deadline: Deadline | None = None) -> Reply:
        return self.create("chat", body, deadline=deadline)

    def completions(self, body: dict, *, deadline: Deadline | None = None) -> Reply:
        return self.create("completions", body, deadline=deadline)

    def _post(self, path: str, body: dict, deadline: Deadline):
        url, policy = self.url(path), self.retry
        pause, last, attempts = policy.backoff_s, None, 0
        for attempt in range(policy.retries + 1):
            left = deadline.remaining()
            if left <= 0:
                break
            attempts += 1
            try:
                response = self.session.post(url, json=body, headers=self.headers, timeout=min(self.timeout_s, left))
            except _RETRYABLE as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                status = response.status_code
                if status in policy.statuses:
                    last = f"HTTP {status}: {_text(response)[:_SHOWN]}"
                elif status >= 400:
                    raise HTTPError(status, _text(response))
                else:
                    return response
            wait = min(pause, policy.max_backoff_s)
            if attempt < policy.retries and deadline.remaining() > wait:
                time.sleep(wait)  # a restarting, overloaded or rate-limiting server needs a pause
                pause *= 2
        raise RetriesExhausted(last, attempts)

    # ------------------------------------------------------------------ models
    def models(self, *, wait_s: float = 0.0, poll_s: float = 0.5) -> set[str]:
        """The model ids (and llama.cpp's aliases) /models lists. A server that refuses connections or answers
        503 while its model loads is asked again every `poll_s` until `wait_s` has passed.

        Raises:
            RetriesExhausted: still refused or 503 after `wait_s`.
            HTTPError: another status of 400 or more.
            MalformedReply: not a model list.
        """
        until = time.monotonic() + wait_s
        attempts = 0
        while True:
            attempts += 1
            try:
                response = self.session.get(self.url("models"), headers=self.headers, timeout=self.timeout_s)
            except _RETRYABLE as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code != 503:
                    if response.status_code >= 400:
                        raise HTTPError(response.status_code, _text(response))
                    return _model_names(response)
                last = f"HTTP 503: {_text(response)[:_SHOWN]}"
            if time.monotonic() >= until:
                raise RetriesExhausted(last, attempts)
            time.sleep(poll_s)


def _text(response) -> str:
    return getattr(response, "text", "") or ""


def _malformed(response, problem: str) -> MalformedReply:
    return MalformedReply(f"malformed reply ({problem}): {_text(response)[:_SHOWN]}")


def _model_names(response) -> set[str]:
    try:
        models = response.json().get("data", [])
        return {m.get("id") for m in models} | {a for m in models for a in (m.get("aliases") or ())}
    except (ValueError, AttributeError, TypeError) as exc:
        raise _malformed(response, f"not a model list: {type(exc).__name__}: {exc}") from None


def parse_reply(response, endpoint: str, null_content: str | None = None) -> Reply:
    """The choices of one completion reply, ordered by index.

    Raises:
        MalformedReply: not JSON, no `choices` list, no choice, or a choice without text.
    """
    try:
        payload = response.json()
    except ValueError as exc:
        raise _malformed(response, f"not JSON: {type(exc).__name__}: {exc}") from None
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list):
        raise _malformed(response, "no 'choices' list")
    if not choices:
        raise MalformedReply("malformed reply: no completion text")
    if not all(isinstance(c, dict) for c in choices):
        raise _malformed(response, "a choice is not an object")
    try:
        choices = sorted(choices, key=lambda c: c.get("index", 0))
    except TypeError:
        raise _malformed(response, "choice indexes that do not compare") from None
    return Reply(tuple(_choice(response, c, endpoint, null_content) for c in choices), payload)


def _choice(response, choice: dict, endpoint: str, null_content: str | None) -> Choice:
    if endpoint == "completions":
        holder, key, field = choice, "text", "text"
    else:
        holder, key, field = choice.get("message"), "content", "message.content"
    if not isinstance(holder, dict) or key not in holder:
        raise _malformed(response, f"a choice without {field}")
    text = holder[key]
    if text is None and null_content is not None:
        text = null_content
    if not isinstance(text, str):
        raise MalformedReply(f"malformed reply: a completion is {type(text).__name__}, not text")
    reason = choice.get("finish_reason")
    index = choice.get("index", 0)
    return Choice(text, reason if isinstance(reason, str) else None, _logprobs(choice, endpoint),
                  index if isinstance(index, int) else 0)


def _logprobs(choice: dict, endpoint: str) -> tuple[float, ...]:
    """The chosen tokens' log-probabilities (completions: `logprobs.token_logprobs`; chat:
    `logprobs.content[].logprob`); () when absent or unreadable."""
    found = choice.get("logprobs")
    try:
        if not found:
            return ()
        if endpoint == "completions":
            values = found["token_logprobs"]
        else:
            values = [token["logprob"] for token in found["content"]]
        return tuple(float(v) for v in values if v is not None)
    except (KeyError, TypeError, ValueError):
        return ()
