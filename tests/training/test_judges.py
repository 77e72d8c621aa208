"""The answer and context checks: rules, the paper's prompts through a generator, retries, and the endpoint."""
import pytest

from training.endpoint import ChatEndpoint
from training.judges import (CheckItem, LLMAnswerCheck, LLMContextCheck, RulesAnswerCheck, RulesContextCheck,
                             make_checks, mentions, parse_accuracy, parse_yes_no)
from tests.stand_ins import ServesAnyAdapter


@pytest.mark.parametrize("prediction,golds,verdict", [
    ("paris", ("paris",), True),  # exact (V3 rule)
    ("Paris.", ("paris",), True),  # whole words after normalising
    ("it is Paris, France", ("paris",), True),
    ("parisian", ("paris",), False),  # not a whole word
    ("i don't know", ("paris",), False),  # V3: a refusal is never right
    ("invalid question", ("invalid question",), True),
    ("invalid question", ("paris",), False),
    ("the close was $182.63", ("182.63",), True),
    ("18263", ("182.63",), False),
    ("released on july 15, 2010", ("2010-07-15", "july 15, 2010"), True),  # an alternative answer
    ("", ("paris",), False),
])
def test_rules_answer_check(prediction, golds, verdict):
    assert RulesAnswerCheck().check([CheckItem("q", golds, prediction)]) == [verdict]


def test_rules_context_check():
    items = [CheckItem("q", ("bong joon ho", "bong joon-ho"), context="<DOC>\nDirected by Bong Joon-ho.\n</DOC>"),
             CheckItem("q", ("4",), context="<DOC>\nthe band has four members, 40 songs\n</DOC>")]
    assert RulesContextCheck().check(items) == [True, False]
    assert mentions("Coldplay: Chris Martin, Jonny Buckland", ["chris martin"])


@pytest.mark.parametrize("reply,verdict", [
    ('{"Accuracy": "True"}', True), ("{'accuracy': false}", False), ('Accuracy: "False"', False),
    ("```json\n{\"Accuracy\": \"TRUE\"}\n```", True), ("I think so", None), ("", None),
])
def test_parse_accuracy(reply, verdict):
    assert parse_accuracy(reply) is verdict


@pytest.mark.parametrize("reply,verdict", [("Yes.", True), ("no", False), ("No, it is not.", False),
                                           ("The answer is yes", True), ("nothing", None), ("", None)])
def test_parse_yes_no(reply, verdict):
    assert parse_yes_no(reply) is verdict


def test_llm_answer_check_asks_only_open_pairs_and_retries(scripted):
    asked = []

    def reply(prompt):  # q2 parses on its second attempt, q4 never does
        asked.append("Question: q2" in prompt)
        return '{"Accuracy": "False"}' if asked.count(True) == 2 and asked[-1] else "garbled"

    generator = scripted(reply)
    items = [CheckItem("q1", ("paris",), "paris"),  # exact: the rules decide
             CheckItem("q2", ("rome",), "it is milan"),  # garbled, then False
             CheckItem("q3", ("lima",), "i don't know"),  # the rules decide
             CheckItem("q4", ("oslo",), "bergen")]  # never parses: no verdict
    verdicts = LLMAnswerCheck(generator, retries=1).check(items)
    assert verdicts == [True, False, False, None]
    prompts = [r.messages[-1]["content"] for r in generator.requests]
    assert len(prompts) == 4  # q2, q4, then both again
    assert 'Ground truth: ["rome"]\nPrediction: it is milan\nAccuracy:' in prompts[0]
    assert "# Task:" in prompts[0] and "Question: q4" in prompts[1]


def test_llm_context_check_renders_p_context(scripted):
    generator = scripted(lambda prompt: "yes" if "rome" in prompt else "no")
    items = [CheckItem("capital?", ("rome",), context="<DOC>\nRome\n</DOC>"), CheckItem("capital?", ("oslo",))]
    assert LLMContextCheck(generator).check(items) == [True, False]
    text = generator.requests[0].messages[-1]["content"]
    assert "We have the following context information:\n<DOC>\nRome\n</DOC>" in text
    assert "The ground truth answer is: rome" in text


def test_a_crashing_generator_gives_no_verdict():
    class Crashing(ServesAnyAdapter):
        def generate(self, requests, *, deadline=None):
            raise RuntimeError("backend died")

    assert LLMContextCheck(Crashing(), retries=1).check([CheckItem("q", ("a",), context="x")]) == [None]


def test_make_checks():
    assert [c.name for c in make_checks("rules")] == ["rules", "rules"]
    with pytest.raises(ValueError, match="need a generator"):
        make_checks("llm")
    with pytest.raises(ValueError, match="unknown judge"):
        make_checks("gpt")


class _Response:
    def __init__(self, status, payload=None, text=""):
        self.status_code, self.payload, self.text = status, payload, text

    def json(self):
        if self.payload is None:
            raise ValueError("no json")
        return self.payload


class _Session:
    def __init__(self, responses):
        self.responses, self.bodies = list(responses), []

    def post(self, url, json, headers, timeout):
        self.bodies.append(json)
        return self.responses.pop(0)


def test_endpoint_retries_server_errors_and_gives_up_on_client_errors(monkeypatch, scripted):
    from models.llm.generator import GenerationRequest

    monkeypatch.setattr("models.llm.openai_client.time.sleep", lambda s: None)
    ok = _Response(200, {"choices": [{"message": {"content": "{\"Accuracy\": \"True\"}"}}]})
    session = _Session([_Response(503, text="busy"), ok, _Response(401, text="bad key")])
    endpoint = ChatEndpoint("http://localhost:8001/v1/", "judge-model", api_key="", retries=2, workers=1,
                            session=session)
    request = GenerationRequest(({"role": "user", "content": "hi"},), max_new_tokens=7, stop=("\n",))
    assert endpoint.generate([request, request]) == ['{"Accuracy": "True"}', ""]
    assert len(session.bodies) == 3  # 503 retried once; 401 not retried
    assert session.bodies[0] == {"model": "judge-model", "messages": [{"role": "user", "content": "hi"}],
                                 "temperature": 0.0, "max_tokens": 7, "stop": ["\n"]}
    assert endpoint.url == "http://localhost:8001/v1/chat/completions"
