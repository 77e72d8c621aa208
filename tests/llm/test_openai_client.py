"""The shared OpenAI-compatible client against a fake session (no sockets) and a fake clock: what it sends (URL,
key header, body, timeout), what it retries and how it pauses, the deadline, and what a bad reply becomes."""
from __future__ import annotations

import json

import pytest
import requests

from models.deadline import Deadline
from models.llm.openai_client import Choice, HTTPError, MalformedReply, OpenAIClient, RetriesExhausted, RetryPolicy, \
    make_session, request_body

MESSAGES = ({"role": "user", "content": "hi"},)


class FakeResponse:
    def __init__(self, status=200, payload=None, text=None):
        self.status_code = status
        self.payload = payload
        self.text = text if text is not None else (json.dumps(payload) if payload is not None else "")

    def json(self):
        if self.payload is None:
            return json.loads(self.text)  # raises ValueError for a body that is not JSON
        return self.payload


def chat_reply(content="ok", **choice):
    return FakeResponse(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                           **choice}]})


class FakeSession:
    """Answers posts (and gets) with the scripted outcomes in order; an exception is raised."""

    def __init__(self, *outcomes):
        self.outcomes, self.posts, self.gets = list(outcomes), [], []

    def _next(self):
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def post(self, url, json, headers, timeout):
        self.posts.append({"url": url, "json": json, "headers": headers, "timeout": timeout})
        return self._next()

    def get(self, url, headers, timeout):
        self.gets.append({"url": url, "headers": headers, "timeout": timeout})
        return self._next()


class Clock:
    """A fake monotonic clock; `sleep` advances it and records each pause."""

    def __init__(self):
        self.now, self.pauses = 0.0, []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.pauses.append(seconds)
        self.now += seconds


@pytest.fixture()
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr("models.llm.openai_client.time.sleep", clock.sleep)  # deadlines read `clock`
    return clock


def client(session, **kwargs):
    kwargs.setdefault("retry", RetryPolicy(retries=3, backoff_s=0.5))
    return OpenAIClient("http://127.0.0.1:8001/v1/", session=session, **kwargs)


def test_a_503_is_retried_after_a_pause_and_the_next_reply_is_read(clock):
    session = FakeSession(FakeResponse(503, text="busy"), chat_reply("Canberra"))
    reply = client(session).chat(request_body("m", messages=MESSAGES))
    assert reply.text == "Canberra" and len(session.posts) == 2 and clock.pauses == [0.5]
    assert session.posts[0]["url"] == "http://127.0.0.1:8001/v1/chat/completions"
    assert session.posts[0]["json"] == {"model": "m", "messages": list(MESSAGES)}


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_another_4xx_fails_at_once(clock, status):
    session = FakeSession(FakeResponse(status, text='{"error": "bad"}'), chat_reply())
    with pytest.raises(HTTPError, match=f'HTTP {status}: {{"error": "bad"}}') as caught:
        client(session).chat(request_body("m", messages=MESSAGES))
    assert caught.value.status == status and len(session.posts) == 1 and clock.pauses == []


def test_connection_errors_timeouts_429_and_5xx_are_retried_with_doubling_capped_pauses(clock):
    session = FakeSession(requests.ConnectionError("refused"), requests.Timeout("slow"), FakeResponse(429),
                          FakeResponse(500, text="internal"), FakeResponse(502, text="gateway"))
    policy = RetryPolicy(retries=4, backoff_s=1.0, max_backoff_s=3.0)
    with pytest.raises(RetriesExhausted, match="HTTP 502: gateway") as caught:
        client(session, retry=policy).completions(request_body("m", prompt="p"))
    assert caught.value.attempts == 5 and caught.value.last == "HTTP 502: gateway"
    assert clock.pauses == [1.0, 2.0, 3.0, 3.0]  # none after the last attempt
    assert session.posts[0]["url"] == "http://127.0.0.1:8001/v1/completions"


def test_the_last_connection_error_is_the_reason():
    session = FakeSession(requests.ConnectionError("refused"))
    with pytest.raises(RetriesExhausted, match="ConnectionError: refused"):
        client(session, retry=RetryPolicy(retries=0)).chat(request_body("m", messages=MESSAGES))


def test_a_policy_names_the_statuses_it_retries(clock):
    policy = RetryPolicy(retries=2, backoff_s=1.0, statuses=frozenset({408, 503}))
    session = FakeSession(FakeResponse(408), FakeResponse(501, text="not implemented"))
    with pytest.raises(HTTPError, match="HTTP 501"):
        client(session, retry=policy).chat(request_body("m", messages=MESSAGES))
    assert len(session.posts) == 2


def test_back_off_stops_at_the_deadline(clock):
    """No pause runs past the deadline; an attempt the deadline still leaves time for goes at once; none starts
    after it; each call's timeout is the time left when the timeout is longer."""
    deadline = Deadline(2.5, clock=clock)
    session = FakeSession(*[FakeResponse(503, text="busy")] * 3)
    with pytest.raises(RetriesExhausted, match="HTTP 503: busy"):
        client(session, timeout_s=2.0, retry=RetryPolicy(retries=2, backoff_s=1.0)).chat(
            request_body("m", messages=MESSAGES), deadline=deadline)
    assert clock.pauses == [1.0] and clock.now <= 2.5  # 2 s more would pass the deadline: not slept
    assert [post["timeout"] for post in session.posts] == [2.0, 1.5, 1.5]

    clock.now = 3.0  # past it: nothing is sent
    untouched = FakeSession(chat_reply())
    with pytest.raises(RetriesExhausted, match="not sent: the deadline had passed") as caught:
        client(untouched).chat(request_body("m", messages=MESSAGES), deadline=deadline)
    assert caught.value.last is None and caught.value.attempts == 0 and untouched.posts == []


def test_no_retry_past_the_deadline(clock):
    class SlowSession(FakeSession):
        def post(self, url, json, headers, timeout):
            clock.now += timeout  # every attempt times out after its whole timeout
            return super().post(url, json, headers, timeout)

    session = SlowSession(*[requests.Timeout("read timed out")] * 5)
    deadline = Deadline(10.0, clock=clock)
    with pytest.raises(RetriesExhausted, match="Timeout"):
        client(session, timeout_s=4.0, retry=RetryPolicy(retries=4, backoff_s=1.0)).chat(
            request_body("m", messages=MESSAGES), deadline=deadline)
    assert clock.now == pytest.approx(10.0) and len(session.posts) == 3  # 4 s, a 1 s pause, 4 s, the last 1 s


def test_the_timeout_is_passed_without_a_deadline():
    session = FakeSession(chat_reply())
    client(session, timeout_s=7.5).chat(request_body("m", messages=MESSAGES))
    assert session.posts[0]["timeout"] == 7.5


def test_the_api_key_header():
    session = FakeSession(chat_reply(), chat_reply(), chat_reply())
    client(session, api_key="sk-test").chat(request_body("m", messages=MESSAGES))
    client(session, api_key="").chat(request_body("m", messages=MESSAGES))
    client(session).chat(request_body("m", messages=MESSAGES))
    assert session.posts[0]["headers"] == {"Content-Type": "application/json", "Authorization": "Bearer sk-test"}
    assert session.posts[1]["headers"] == session.posts[2]["headers"] == {"Content-Type": "application/json"}


@pytest.mark.parametrize("response,message", [
    (FakeResponse(200, text="{not json"), r"malformed reply \(not JSON: JSONDecodeError"),
    (FakeResponse(200, {"object": "error"}), r"malformed reply \(no 'choices' list\)"),
    (FakeResponse(200, ["a list"]), r"malformed reply \(no 'choices' list\)"),
    (FakeResponse(200, {"choices": []}), "malformed reply: no completion text"),
    (FakeResponse(200, {"choices": ["text"]}), r"malformed reply \(a choice is not an object\)"),
    (FakeResponse(200, {"choices": [{"text": "completions field"}]}), r"a choice without message.content"),
    (chat_reply(None), "malformed reply: a completion is NoneType, not text"),
    (chat_reply(["parts"]), "malformed reply: a completion is list, not text"),
])
def test_a_malformed_reply_is_a_clear_error_and_is_not_retried(clock, response, message):
    session = FakeSession(response, chat_reply())
    with pytest.raises(MalformedReply, match=message):
        client(session).chat(request_body("m", messages=MESSAGES))
    assert len(session.posts) == 1


def test_a_null_content_stands_for_what_the_caller_says():
    session = FakeSession(chat_reply(None))
    assert client(session, null_content="").chat(request_body("m", messages=MESSAGES)).text == ""


def test_choices_are_read_in_index_order_with_finish_reason_and_logprobs():
    payload = {"choices": [
        {"index": 1, "text": "b", "finish_reason": "length", "logprobs": {"token_logprobs": [-1.0, None, -2]}},
        {"index": 0, "text": "a", "finish_reason": "stop", "logprobs": {"content": [{"logprob": -0.5}]}},
    ]}
    reply = client(FakeSession(FakeResponse(200, payload))).completions(request_body("m", prompt="p"))
    assert reply.choices == (Choice("a", "stop", (), 0), Choice("b", "length", (-1.0, -2.0), 1))
    assert reply.text == "a" and reply.payload == payload

    chat = chat_reply("x", logprobs={"content": [{"token": "x", "logprob": -0.25}]}, finish_reason="stop")
    assert client(FakeSession(chat)).chat(request_body("m", messages=MESSAGES)).choices == (
        Choice("x", "stop", (-0.25,), 0),)


@pytest.mark.parametrize("logprobs", [None, "nope", {"token_logprobs": ["x"]}, {"content": [{"token": "a"}]}])
def test_garbled_logprobs_leave_the_choice_without_them(logprobs):
    response = FakeResponse(200, {"choices": [{"text": "t", "logprobs": logprobs}]})
    assert client(FakeSession(response)).completions(request_body("m", prompt="p")).choices == (Choice("t"),)


def test_a_configuration_error_of_requests_is_not_retried_but_raised(clock):
    session = FakeSession(requests.exceptions.MissingSchema("no scheme"))
    with pytest.raises(requests.exceptions.MissingSchema):
        client(session).chat(request_body("m", messages=MESSAGES))
    assert clock.pauses == []


def test_an_unknown_endpoint_is_refused():
    with pytest.raises(ValueError, match="not one of"):
        client(FakeSession()).create("embeddings", {})


def test_request_body_keeps_the_parameters_given():
    assert request_body("m", messages=MESSAGES, temperature=0.0, max_tokens=7, stop=None, n=None) == {
        "model": "m", "messages": list(MESSAGES), "temperature": 0.0, "max_tokens": 7}
    assert request_body("m", prompt="p", logprobs=1) == {"model": "m", "prompt": "p", "logprobs": 1}
    for wrong in ({}, {"messages": MESSAGES, "prompt": "p"}):
        with pytest.raises(ValueError, match="messages.*or a prompt"):
            request_body("m", **wrong)


def test_models_waits_while_the_server_loads(clock):
    listing = FakeResponse(200, {"data": [{"id": "base", "aliases": ["b"]}, {"id": "lora"}]})
    session = FakeSession(requests.ConnectionError("refused"), FakeResponse(503, text="Loading model"), listing)
    assert client(session, api_key="k").models(wait_s=5.0) == {"base", "b", "lora"}
    assert clock.pauses == [0.5, 0.5] and session.gets[0]["url"] == "http://127.0.0.1:8001/v1/models"
    assert session.gets[0]["headers"]["Authorization"] == "Bearer k" and session.gets[0]["timeout"] == 120.0

    still_loading = FakeSession(FakeResponse(503, text="Loading model"))
    with pytest.raises(RetriesExhausted, match="HTTP 503: Loading model"):
        client(still_loading).models(wait_s=0.0)  # no wait: asked once
    with pytest.raises(HTTPError, match="HTTP 401"):
        client(FakeSession(FakeResponse(401, text="bad key"))).models(wait_s=5.0)
    with pytest.raises(MalformedReply, match="not a model list"):
        client(FakeSession(FakeResponse(200, ["x"]))).models()


def test_the_default_session_pools_every_request_in_flight():
    session = make_session(32)
    assert session.get_adapter("http://x")._pool_maxsize == 32 and make_session(2).get_adapter(
        "https://x")._pool_maxsize == 10


# ---------------------------------------------------------------------- each caller's own policy, over the client
def test_chat_endpoint_policy(clock, monkeypatch):
    """training's ChatEndpoint: 5 retries, pauses 1, 2, 4, ... s (at most 30), 408/409/429/500/502/503/504 retried
    (not 501), a 120 s timeout, the key from $OPENAI_API_KEY, a null content and a failed call both ""."""
    from models.llm.generator import GenerationRequest
    from training.endpoint import ChatEndpoint

    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    request = GenerationRequest(MESSAGES, max_new_tokens=5)
    busy = FakeSession(*[FakeResponse(503, text="busy")] * 6)
    assert ChatEndpoint("http://x/v1", "m", session=busy, workers=1).generate([request]) == [""]
    assert len(busy.posts) == 6 and clock.pauses == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert busy.posts[0]["timeout"] == 120.0 and busy.posts[0]["headers"]["Authorization"] == "Bearer sk-env"
    session = FakeSession(FakeResponse(408), chat_reply(None), FakeResponse(501), FakeResponse(200, text="{x"))
    endpoint = ChatEndpoint("http://x/v1", "m", session=session, workers=1)
    assert endpoint.generate([request, request, request]) == ["", "", ""] and len(session.posts) == 4


def test_openai_judge_policy(clock, monkeypatch):
    """evaluation's OpenAIJudge: 10 retries, pauses 1, 2, 4, ... s (at most 30), 429 and every 5xx retried, a 60 s
    timeout; a failed call and a null content are both unscored."""
    from evaluation.judge import JudgeItem, OpenAIJudge

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    item = JudgeItem("q", "a", "a")
    busy = FakeSession(*[FakeResponse(501, text="busy")] * 11)
    [judgement] = OpenAIJudge("http://x/v1", "m", session=busy, workers=1).judge([item])
    assert judgement.score is None and "HTTP 501: busy" in judgement.explanation
    assert clock.pauses == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0, 30.0, 30.0]
    assert busy.posts[0]["timeout"] == 60.0 and "Authorization" not in busy.posts[0]["headers"]
    [empty] = OpenAIJudge("http://x/v1", "m", session=FakeSession(chat_reply(None)), workers=1).judge([item])
    assert empty.score is None and "no JSON object" in empty.explanation
