"""The OpenAI-compatible server backend against a scripted HTTP server on 127.0.0.1: request bodies, start-up
checks, and every fault the issue names (server down, slow past the deadline, 500, malformed JSON, unknown model)
ending as "" with its reason, inside the deadline."""
from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from models.deadline import Deadline
from models.llm.config import LLMConfig, ServerConfig
from models.llm.errors import BackendUnavailableError, UnknownAdapterError
from models.llm.generator import GenerationRequest, make_generator
from models.llm.openai_backend import OpenAIGenerator
from models.llm.stand_in import BaseModelStandIn
from tests.local_server import serving

USER = ({"role": "user", "content": "What is the capital of Australia?"},)


class Script:
    """What the scripted server does: `reply(body, n)` -> (status, text, delay_s) for the n-th completion call."""

    def __init__(self, models=("smollm2", "api-lora"), reply=None):
        self.models = list(models)
        self.reply = reply or (lambda body, n: (200, json.dumps({"choices": [{"text": f"echo {body['model']}"}]}),
                                                0.0))
        self.bodies, self.paths = [], []
        self.in_flight = self.most_in_flight = 0
        self.lock = threading.Lock()


@contextmanager
def scripted_server(script: Script):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status, text):
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._send(200, json.dumps({"object": "list", "data": [{"id": m} for m in script.models]}))

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with script.lock:
                script.bodies.append(body)
                script.paths.append(self.path)
                n = len(script.bodies)
                script.in_flight += 1
                script.most_in_flight = max(script.most_in_flight, script.in_flight)
            try:
                status, text, delay = script.reply(body, n)
                time.sleep(delay)
                self._send(status, text)
            except OSError:
                pass  # the client gave up: intended
            finally:
                with script.lock:
                    script.in_flight -= 1

    with serving(ThreadingHTTPServer, Handler) as port:
        yield f"http://127.0.0.1:{port}/v1"


def _generator(url, require_adapters=False, **server):
    settings = dict(base_url=url, model="smollm2", adapter_models={"api_generation": "api-lora"}, retries=2,
                    backoff_s=0.05, api_key_env="", startup_wait_s=0.5)
    settings.update(server)
    return OpenAIGenerator(LLMConfig(backend="openai", server=ServerConfig(**settings),
                                     require_adapters=require_adapters), "models")


def test_bodies_carry_the_served_names_the_locally_rendered_prompt_and_greedy_limits():
    script = Script()
    with scripted_server(script) as url:
        generator = _generator(url)
        outputs = generator.generate([GenerationRequest(USER, max_new_tokens=12, stop=("\n",)),
                                      GenerationRequest(USER, adapter="api_generation")])
    assert list(outputs) == ["echo smollm2", "echo api-lora"] and outputs.reasons == {}
    base = next(b for b in script.bodies if b["model"] == "smollm2")
    assert base == {"model": "smollm2", "max_tokens": 12, "prompt": generator.chat.render(USER), "stop": ["\n"],
                    "temperature": 0.0}
    assert set(script.paths) == {"/v1/completions"}


def test_the_chat_endpoint_sends_the_fitted_messages():
    script = Script(reply=lambda body, n: (200, json.dumps({"choices": [{"message": {"content": "Canberra"}}]}), 0))
    with scripted_server(script) as url:
        outputs = _generator(url, endpoint="chat").generate([GenerationRequest(USER)])
    assert list(outputs) == ["Canberra"] and script.bodies[0]["messages"] == list(USER)
    assert script.paths == ["/v1/chat/completions"]


def test_start_up_names_what_the_server_does_not_serve_and_a_server_that_is_down(unused_port):
    with scripted_server(Script(models=["other"])) as url:
        with pytest.raises(BackendUnavailableError, match="does not serve.*'smollm2'"):
            _generator(url)
    with scripted_server(Script(models=["smollm2"])) as url:
        with pytest.raises(BackendUnavailableError, match="does not serve.*'api-lora'"):
            _generator(url, require_adapters=True)
    with pytest.raises(BackendUnavailableError, match="cannot list its models.*CRAG_LLM_URL"):
        _generator(f"http://127.0.0.1:{unused_port}/v1")
    with scripted_server(Script()) as url:
        with pytest.raises(UnknownAdapterError, match="'kg_answer' is not configured"):
            _generator(url).generate([GenerationRequest(USER, adapter="kg_answer")])
        assert isinstance(make_generator(LLMConfig(backend="openai", server=ServerConfig(
            base_url=url, model="smollm2", adapter_models={"api_generation": "api-lora"})), "models"),
            OpenAIGenerator)


def test_an_adapter_the_server_does_not_serve_is_answered_by_the_base_model(caplog):
    """Without `llm.require_adapters`, a server started without the adapters (none trained yet) still serves: the
    backend leaves the adapter out and names it in `missing_adapters`, and `make_generator` puts the same stand-in
    as for a missing folder in process in front of it, so the requests naming the adapter go to the base model and
    the trace can say so."""
    script = Script(models=["smollm2"], reply=lambda body, n: (200, json.dumps({"choices": [{"text": body["model"]}]}),
                                                               0))
    with scripted_server(script) as url:
        backend = _generator(url)
        assert backend.adapters.names == () and list(backend.missing_adapters) == ["api_generation"]
        with pytest.raises(UnknownAdapterError):  # the backend itself never sees a name it does not serve
            backend.generate([GenerationRequest(USER, adapter="api_generation")])
        generator = make_generator(LLMConfig(backend="openai", server=ServerConfig(
            base_url=url, model="smollm2", adapter_models={"api_generation": "api-lora"}, api_key_env="")), "models")
        outputs = generator.generate([GenerationRequest(USER, adapter="api_generation"), GenerationRequest(USER)])
    assert isinstance(generator, BaseModelStandIn) and isinstance(generator.inner, OpenAIGenerator)
    assert list(outputs) == ["smollm2", "smollm2"]
    assert list(generator.missing_adapters) == ["api_generation"] and "'api-lora'" in generator.missing_adapters[
        "api_generation"]
    generator.adapters.require(["api_generation"])
    assert generator.adapters.names == ()  # nothing to warm up
    assert any("base model answers its requests" in r.getMessage() for r in caplog.records)


def test_start_up_waits_while_the_model_loads():
    """llama.cpp answers /v1/models with 503 "Loading model" at first: start-up waits for it."""
    script = Script()
    calls = []
    with scripted_server(script) as url:
        import requests

        session = requests.Session()
        real_get = session.get

        def get(*args, **kwargs):
            calls.append(1)
            if len(calls) < 3:
                return type("R", (), {"status_code": 503, "text": "Loading model"})()
            return real_get(*args, **kwargs)

        session.get = get
        settings = ServerConfig(base_url=url, model="smollm2", api_key_env="", startup_wait_s=5.0)
        OpenAIGenerator(LLMConfig(backend="openai", server=settings), "models", session=session)
    assert len(calls) == 3


def test_5xx_is_retried_and_a_lasting_one_is_the_items_reason():
    flaky = Script(reply=lambda body, n: (500, "busy", 0.0) if n <= 2 else
                   (200, json.dumps({"choices": [{"text": "ok"}]}), 0.0))
    with scripted_server(flaky) as url:
        assert list(_generator(url, concurrency=1).generate([GenerationRequest(USER)])) == ["ok"]
    broken = Script(reply=lambda body, n: (500, "internal error", 0.0))
    with scripted_server(broken) as url:
        outputs = _generator(url).generate([GenerationRequest(USER)] * 2)
    assert list(outputs) == ["", ""] and len(broken.bodies) == 2 * 3  # first try and 2 retries each
    assert all("HTTP 500: internal error" in r for r in outputs.reasons.values())
    assert outputs.retryable == {0, 1}  # a server fault that may pass: a resumed run asks these again


def test_a_4xx_and_a_malformed_reply_fail_at_once_and_cost_only_their_item():
    def reply(body, n):
        if body["max_tokens"] == 1:
            return 404, '{"error": "model not found"}', 0.0
        if body["max_tokens"] == 2:
            return 200, "{not json", 0.0
        return 200, json.dumps({"choices": [{"text": "fine"}]}), 0.0

    script = Script(reply=reply)
    with scripted_server(script) as url:
        outputs = _generator(url).generate([GenerationRequest(USER, max_new_tokens=k) for k in (1, 2, 3)])
    assert list(outputs) == ["", "", "fine"] and len(script.bodies) == 3  # no retry of a 404 or a bad reply
    assert "HTTP 404" in outputs.reasons[0] and "malformed reply" in outputs.reasons[1]
    assert not outputs.retryable  # the server answered: asking again gives the same


def test_a_slow_server_costs_nothing_past_the_deadline():
    slow = Script(reply=lambda body, n: (200, json.dumps({"choices": [{"text": "late"}]}), 5.0))
    with scripted_server(slow) as url:
        generator = _generator(url)
        started = time.monotonic()
        outputs = generator.generate([GenerationRequest(USER)] * 3, deadline=Deadline(1.0))
        seconds = time.monotonic() - started
    assert list(outputs) == ["", "", ""] and seconds < 1.5
    assert all(r in ("no reply before the stage deadline",) or "Timeout" in r for r in outputs.reasons.values())


def test_a_server_that_goes_down_after_start_up_answers_empty_inside_the_deadline():
    with scripted_server(Script()) as url:
        generator = _generator(url)
    started = time.monotonic()
    outputs = generator.generate([GenerationRequest(USER)] * 2, deadline=Deadline(2.0))
    assert list(outputs) == ["", ""] and time.monotonic() - started < 2.5
    assert all("ConnectionError" in r for r in outputs.reasons.values())


def test_requests_in_flight_are_bounded_by_the_concurrency():
    script = Script(reply=lambda body, n: (200, json.dumps({"choices": [{"text": "x"}]}), 0.2))
    with scripted_server(script) as url:
        assert list(_generator(url, concurrency=2).generate([GenerationRequest(USER)] * 6)) == ["x"] * 6
    assert script.most_in_flight == 2


@pytest.fixture()
def unused_port():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_request_that_cannot_be_built_costs_only_itself():
    class Unusable:  # a constraint whose grammar cannot be read
        regex = None

        @property
        def grammar(self):
            raise ValueError("no GBNF for this")

    with scripted_server(Script()) as url:
        outputs = _generator(url).generate([GenerationRequest(USER, constraint=Unusable()), GenerationRequest(USER)])
    assert list(outputs) == ["", "echo smollm2"] and "request not built" in outputs.reasons[0]


@pytest.mark.parametrize("dialect", ["vllm", "llamacpp"])
def test_a_grammar_goes_as_gbnf_in_the_servers_dialect(dialect):
    """vLLM 0.32: `structured_outputs.grammar` (it ignores `guided_grammar`); llama.cpp: a top-level `grammar`
    (it ignores `structured_outputs`). The same GBNF text, with its `root ::=` rule, in both."""
    from models.llm.constraints import ListLanguage
    from models.llm.gbnf import constraint_gbnf

    constraint = ListLanguage(["alpha", "beta"], max_items=2, separator=", ").constraint()
    script = Script()
    with scripted_server(script) as url:
        _generator(url, dialect=dialect).generate([GenerationRequest(USER, constraint=constraint)])
    [body] = script.bodies
    gbnf = constraint_gbnf(constraint)
    assert gbnf.startswith("root ::=")
    if dialect == "vllm":
        assert body["structured_outputs"] == {"grammar": gbnf} and "grammar" not in body
    else:
        assert body["grammar"] == gbnf and "structured_outputs" not in body and "guided_grammar" not in body


def test_logprobs_are_asked_and_read_on_both_endpoints():
    from models.llm.generator import completions_of

    def completions_reply(body, n):
        return 200, json.dumps({"choices": [{"text": "Canberra", "logprobs": {"token_logprobs": [-0.25, -0.5]}}]}), 0

    script = Script(reply=completions_reply)
    with scripted_server(script) as url:
        results = _generator(url).generate([GenerationRequest(USER, logprobs=True), GenerationRequest(USER)])
    assert [b.get("logprobs") for b in script.bodies if b.get("logprobs")] == [1]  # the two arrive in either order
    assert completions_of(results, 0)[0].token_logprobs == (-0.25, -0.5) and 1 not in results.completions

    def chat_reply(body, n):
        content = [{"token": "Can", "logprob": -0.1}, {"token": "berra", "logprob": -0.3}]
        return 200, json.dumps({"choices": [{"message": {"content": "Canberra"}, "logprobs": {"content": content}}]}), 0

    script = Script(reply=chat_reply)
    with scripted_server(script) as url:
        results = _generator(url, endpoint="chat").generate([GenerationRequest(USER, logprobs=True)])
    assert script.bodies[0]["logprobs"] is True
    assert completions_of(results, 0)[0].token_logprobs == (-0.1, -0.3)

    script = Script(reply=lambda body, n: (200, json.dumps({"choices": [{"text": "x", "logprobs": {"oops": 1}}]}), 0))
    with scripted_server(script) as url:
        results = _generator(url).generate([GenerationRequest(USER, logprobs=True)])
    assert list(results) == ["x"] and completions_of(results, 0)[0].token_logprobs == ()  # garbled: none, not failed


def test_samples_go_as_n_to_vllm_and_as_seeded_calls_to_llamacpp():
    from models.llm.generator import completions_of

    def n_reply(body, n):
        return 200, json.dumps({"choices": [{"index": k, "text": f"s{k}"} for k in range(body.get("n", 1))]}), 0

    script = Script(reply=n_reply)
    with scripted_server(script) as url:
        results = _generator(url, dialect="vllm").generate([GenerationRequest(USER, temperature=0.8, n=3)])
    assert len(script.bodies) == 1 and script.bodies[0]["n"] == 3 and script.bodies[0]["temperature"] == 0.8
    assert [c.text for c in completions_of(results, 0)] == ["s0", "s1", "s2"]

    script = Script(reply=lambda body, n: (200, json.dumps({"choices": [{"text": f"seed {body['seed']}"}]}), 0))
    with scripted_server(script) as url:
        results = _generator(url, dialect="llamacpp").generate([GenerationRequest(USER, temperature=0.8, n=3)])
    assert sorted(b["seed"] for b in script.bodies) == [0, 1, 2] and all("n" not in b for b in script.bodies)
    assert [c.text for c in completions_of(results, 0)] == ["seed 0", "seed 1", "seed 2"]

    script = Script()
    with scripted_server(script) as url:  # greedy: one call, its completion copied
        results = _generator(url, dialect="llamacpp").generate([GenerationRequest(USER, n=2)])
    assert len(script.bodies) == 1 and [c.text for c in completions_of(results, 0)] == ["echo smollm2"] * 2
