"""A KG server that trickles (one byte every interval, on 127.0.0.1 only) and a KG stage that runs long:
every call ends by its wall-time bound and the stage deadline, and the web still answers every query."""
from __future__ import annotations

import socketserver
import threading
import time
from contextlib import contextmanager

import pytest

from models.deadline import Deadline
from models.kg.client import KGClientError, MockAPIClient
from models.kg.config import KGConfig
from models.kg.pathway import KGPathway
from tests.local_server import serving
from tests.robustness.support import ContextEcho, batch_of, clean_items, make_model, run_batch

PROGRAM = 'get_open("australia")["capital"]'
_LIFETIME_S = 40.0  # a trickling connection closes by itself after this, whatever the client does


@contextmanager
def trickling_server(interval_s: float, part: str = "body"):
    """Answers every request one byte per `interval_s`: the body after prompt headers, or the headers too."""
    stop = threading.Event()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.recv(65536)  # the request: small, one read is enough on loopback
            body = b'{"result": "' + b"x" * 200 + b'"}'
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
            prompt, trickled = (head, body) if part == "body" else (b"", head + body)
            ended = time.monotonic() + _LIFETIME_S
            try:
                self.request.sendall(prompt)
                for byte in trickled:
                    if stop.is_set() or time.monotonic() > ended:
                        return
                    self.request.sendall(bytes([byte]))
                    stop.wait(interval_s)
            except OSError:
                pass  # the client gave up: intended

    with serving(socketserver.ThreadingTCPServer, Handler, on_stop=stop.set) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("part", ["body", "headers"])
def test_a_call_ends_at_its_timeout_not_per_read(part):
    with trickling_server(0.2, part) as url:
        client = MockAPIClient(url, timeout_s=1.0, retries=0)
        started = time.monotonic()
        with pytest.raises(KGClientError, match="wall time") as error:
            client.open_get_entity("australia")
        assert time.monotonic() - started < 1.0 + 0.5 and error.value.status is None


def test_a_call_ends_at_the_deadline_before_its_timeout():
    with trickling_server(0.2) as url:
        client = MockAPIClient(url, timeout_s=5.0, retries=0)
        started = time.monotonic()
        with client.bounded_by(Deadline(0.5)), pytest.raises(KGClientError):
            client.open_get_entity("australia")
        assert time.monotonic() - started < 0.5 + 0.5
        assert client.deadline is None  # the bound ends with its block


def test_no_call_starts_after_the_deadline():
    client = MockAPIClient("http://127.0.0.1:9", timeout_s=5.0, retries=3)
    with client.bounded_by(Deadline(0.0)), pytest.raises(KGClientError, match="deadline has passed"):
        client.open_get_entity("australia")


def _kg_pathway(url, timeout_s=5.0):
    return KGPathway(KGConfig(timeout_s=timeout_s, retries=0), MockAPIClient(url, timeout_s=timeout_s, retries=0))


@pytest.mark.parametrize("interval_s", [0.5, pytest.param(3.0, marks=pytest.mark.slow)])
def test_trickling_kg_batch_stays_in_budget_and_the_web_answers(cpu_embedder, interval_s):
    # the sweep: 1 byte / 3 s held one call 90 s with timeout_s=5; a Task-2 batch took 100 s of 60 s
    per_question = 5.0 if interval_s < 1 else 30.0
    items = clean_items(2)
    without_kg = run_batch("task 2 without KG (control)", make_model(cpu_embedder, task=2, per_question_s=per_question),
                           batch_of(items))
    with trickling_server(interval_s) as url:
        model = make_model(cpu_embedder, generator=ContextEcho(PROGRAM), kg=_kg_pathway(url), task=2,
                           per_question_s=per_question)
        run = run_batch(f"trickling KG server (1 byte / {interval_s} s)", model, batch_of(items))
    assert run.sources == ["web", "web"] and run.answers == without_kg.answers


class _EmptyKG:
    """A mock API that knows nothing (the KG stage's time is all in generation here): every route answers None,
    and its calls are scoped to a deadline as the real client's are (`bounded_by`)."""

    @contextmanager
    def bounded_by(self, deadline):
        yield self

    def __getattr__(self, name):
        return lambda *args: None


def test_a_kg_stage_that_runs_long_is_cut_and_the_web_still_answers(cpu_embedder):
    # the failure this guards against: KG generation took 18-20 s of 20 s, and the web stage was skipped for every
    # question
    items = clean_items(3)
    without_kg = run_batch("task 2 without KG (control)", make_model(cpu_embedder, task=2), batch_of(items))
    slow = ContextEcho(PROGRAM, delay_s=60.0, slow_kind="kg")  # would take the whole batch without a budget
    model = make_model(cpu_embedder, generator=slow, kg=KGPathway(KGConfig(), _EmptyKG()), task=2)
    run = run_batch("KG generation slower than the batch", model, batch_of(items))
    assert run.sources == ["web"] * 3 and run.answers == without_kg.answers
    assert model.pipeline.last_run.stage_seconds["kg"] < 0.6 * run.budget
