"""Judges: the V3 reply parser, the local LLM judge, the OpenAI-compatible judge and the factory."""
import pytest
import requests

from evaluation.judge import JudgeItem, LocalJudge, OpenAIJudge, RulesJudge, make_judge, parse_judge_response
from tests.stand_ins import ServesAnyAdapter

ITEM = JudgeItem("what is the capital of australia?", "canberra", "Canberra, the capital")


@pytest.mark.parametrize("reply,score", [
    ('{"score": 1, "explanation": "same city"}', 1),
    ('{"score":0,"explanation":"no"}', 0),
    ('Thinking... {"score": 0, "explanation": "draft"} final: {"score": 1, "explanation": "final"}', 1),
    ('{"explanation": "it matches", "score": 1}', 1),
])
def test_the_last_json_block_decides(reply, score):
    assert parse_judge_response(reply)[0] == score


def test_explanation_is_read_from_the_block():
    assert parse_judge_response('x {"score": 1, "explanation": "say \\"yes\\""} y') == (1, 'say \\"yes\\"')


@pytest.mark.parametrize("reply", ["", "yes, correct", '{"score": 2, "explanation": "?"}',
                                   '{"score": "1"}', '{"accuracy": true}', '{"score": 1, "explanation": "cut',
                                   '{"score": 1} and then {"note": "no score here"}'])
def test_garbage_is_a_failed_call(reply):
    score, explanation = parse_judge_response(reply)
    assert score is None and explanation


class FakeGenerator(ServesAnyAdapter):
    def __init__(self, replies=None, error=None):
        self.replies, self.error, self.requests = replies, error, []

    def generate(self, requests_, *, deadline=None):
        self.requests.extend(requests_)
        if self.error:
            raise self.error
        return self.replies[: len(requests_)]


def test_local_judge_renders_the_v3_prompt_and_parses_each_reply():
    generator = FakeGenerator(['{"score": 1, "explanation": "ok"}', "garbage"])
    judgements = LocalJudge(generator).judge([ITEM, ITEM])
    assert [(j.score, j.judge) for j in judgements] == [(1, "local"), (None, "local")]
    system, user = generator.requests[0].messages
    assert system["role"] == "system" and '"score"' in system["content"] and "{{" not in system["content"]
    assert user["content"] == ("Question: what is the capital of australia?\n Ground truth: canberra\n"
                               " Prediction: Canberra, the capital")


def test_local_judge_survives_a_crashed_backend():
    judgements = LocalJudge(FakeGenerator(error=RuntimeError("cuda gone"))).judge([ITEM])
    assert judgements[0].score is None and "cuda gone" in judgements[0].explanation


class FakeResponse:
    def __init__(self, status, content=None):
        self.status_code, self.content, self.text = status, content, "body"

    def raise_for_status(self):
        if self.status_code >= 400:
            raise requests.HTTPError(f"HTTP {self.status_code}")

    def json(self):
        return {"choices": [{"message": {"content": self.content}}]}


class FakeSession:
    def __init__(self, outcomes):
        self.outcomes, self.posts = list(outcomes), []

    def post(self, url, json, headers, timeout):
        self.posts.append((url, json, headers))
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def test_openai_judge_retries_connection_errors_and_rate_limits(monkeypatch):
    monkeypatch.setattr("models.llm.openai_client.time.sleep", lambda s: None)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    session = FakeSession([requests.ConnectionError("refused"), FakeResponse(429),
                           FakeResponse(200, '{"score": 1, "explanation": "same"}')])
    judge = OpenAIJudge("http://localhost:8001/v1/", "llama-3-70b", session=session, workers=1)
    [judgement] = judge.judge([ITEM])
    assert (judgement.score, judgement.judge) == (1, "openai:llama-3-70b")
    url, body, headers = session.posts[-1]
    assert url == "http://localhost:8001/v1/chat/completions" and len(session.posts) == 3
    assert body["temperature"] == 0.0 and body["response_format"] == {"type": "json_object"}
    assert body["model"] == "llama-3-70b" and "Authorization" not in headers


def test_openai_judge_gives_up_as_a_failed_call(monkeypatch):
    monkeypatch.setattr("models.llm.openai_client.time.sleep", lambda s: None)
    bad_request = OpenAIJudge("http://x/v1", "m", api_key="k", session=FakeSession([FakeResponse(400)]))
    [judgement] = bad_request.judge([ITEM])
    assert judgement.score is None and "HTTPError" in judgement.explanation
    assert bad_request.headers["Authorization"] == "Bearer k"
    down = OpenAIJudge("http://x/v1", "m", retries=2, session=FakeSession([requests.ConnectionError("down")] * 3))
    assert down.judge([ITEM])[0].score is None


def test_make_judge():
    assert isinstance(make_judge("rules"), RulesJudge)
    assert make_judge("rules").judge([ITEM])[0].unjudged
    assert isinstance(make_judge("local", generator=FakeGenerator([])), LocalJudge)
    assert make_judge("openai", url="http://localhost:8001/v1").name == "openai:gpt-4-0125-preview"
    for kind, kwargs, message in [("local", {}, "needs a generator"), ("gpt", {}, "unknown judge")]:
        with pytest.raises(ValueError, match=message):
            make_judge(kind, **kwargs)


def test_openai_judge_needs_a_url(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="--judge-url"):
        make_judge("openai")
