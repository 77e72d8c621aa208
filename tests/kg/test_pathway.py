"""`KGPathway`: the API-generation request, and evidence that never raises (broken programs, a server that
is down, slow, answers 500 or malformed JSON, a bug in a domain module: all mean "no KG evidence").
"""
from __future__ import annotations

import http.server
import threading
import time
from contextlib import contextmanager

import pytest

from models.kg.apis import signatures
from models.kg.client import MockAPIClient
from models.kg.config import KGConfig
from models.kg.language.prefix import PrefixChecker
from models.kg.pathway import KGPathway, clean_program
from models.llm.constraints import DecodingConstraint
from models.types import Query
from tests.kg.kg_support import BagOfWords

QUERY = Query("id-1", "what is the capital of australia?", "03/01/2024, 10:00:00 PT")


@pytest.fixture
def pathway(fake):
    return KGPathway(KGConfig(api_adapter="api_generation", icl_k=3), fake, embedder=BagOfWords())


def test_api_request_renders_the_domain_prompt_with_similar_examples_as_chat_turns(pathway):
    request = pathway.api_request(QUERY, "open")
    system, first, *examples, last = request.messages
    assert system["role"] == "system" and "Now is 03/01/2024, 10:00:00 PT" in system["content"]
    assert first["role"] == "user" and first["content"].startswith("You are given a general-knowledge query")
    assert first["content"].endswith("\nAPI:")  # the instructions open the first example's turn
    assert [m["role"] for m in examples] == ["assistant", "user", "assistant", "user", "assistant"]
    assert last == {"role": "user", "content": "Query: what is the capital of australia?\n"
                                               "Query time: 03/01/2024, 10:00:00 PT\nAPI:"}
    programs = [m["content"] for m in examples if m["role"] == "assistant"]
    assert 'get_open("new zealand")["capital"]' in programs  # a similar example is among those chosen
    assert request.adapter == "api_generation" and request.max_new_tokens == 96 and "\n\n" in request.stop


def test_an_adapter_prompt_is_the_short_request_without_the_api_description(fake):
    pathway = KGPathway(KGConfig(api_adapter="api_generation", api_prompt="kg_api_adapter", icl_k=0), fake,
                        embedder=BagOfWords())
    request = pathway.api_request(QUERY, "open")
    assert request.messages == (
        {"role": "system", "content": "Write the open API calls for the query."},
        {"role": "user",
         "content": "Query: what is the capital of australia?\nQuery time: 03/01/2024, 10:00:00 PT\nAPI:"})
    assert request.adapter == "api_generation" and request.constraint is not None


def test_an_adapter_prompt_keeps_in_context_examples_as_turns(fake):
    pathway = KGPathway(KGConfig(api_prompt="kg_api_adapter", icl_k=2), fake, embedder=BagOfWords())
    system, *turns = pathway.api_request(QUERY, "open").messages
    assert system["content"] == "Write the open API calls for the query."
    assert [m["role"] for m in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert all(m["content"].startswith("Query: ") for m in turns if m["role"] == "user")
    assert "capital of australia" in turns[-1]["content"]


@pytest.mark.parametrize("name, error", [("kg_api_nonexistent", "not found"),
                                         ("answer_basic", "missing slots|unexpected")])
def test_an_adapter_prompt_that_is_missing_or_has_other_slots_fails_at_start_up(fake, name, error):
    from models.llm.prompts import PromptError

    with pytest.raises(PromptError, match=error):
        KGPathway(KGConfig(api_prompt=name), fake, embedder=BagOfWords())


def test_the_constraint_is_the_domains_language(pathway):
    constraint = pathway.api_request(QUERY, "open").constraint
    assert isinstance(constraint, DecodingConstraint) and constraint.regex is None
    assert constraint.grammar.startswith('start: "None" | line0') and "get_open(" in constraint.grammar
    assert constraint.is_valid_prefix('get_open("aus') and not constraint.is_valid_prefix("get_movie(")
    assert constraint.is_complete('get_open("australia")') and not constraint.is_complete('get_open("a"')
    assert pathway.constraint("open") is constraint  # built once per domain


def test_unconstrained_and_unknown_domains(fake):
    pathway = KGPathway(KGConfig(constrained=False), fake)
    assert pathway.api_request(QUERY, "open").constraint is None
    assert pathway.api_request(QUERY, "weather") is None


def test_evidence_from_a_program(pathway):
    facts = pathway.evidence(QUERY, "open", 'get_open("australia")["capital"]')
    assert facts == ["The capital of Australia is Canberra."]


@pytest.mark.parametrize("generated", [
    '```\nget_open("australia")["capital"]\n```', 'API: get_open("australia")["capital"]',
    ' \nget_open("australia")["capital"]\n'])
def test_wrapped_generations_are_cleaned(pathway, generated):
    assert pathway.evidence(QUERY, "open", generated) == ["The capital of Australia is Canberra."]


@pytest.mark.parametrize("generated", ["", "None", "none\n", 'get_open("australia"', "get_movie('x')", "lorem ipsum",
                                       'get_open("zzzz")["capital"]'])
def test_no_evidence_without_a_usable_program(pathway, generated, caplog):
    assert pathway.evidence(QUERY, "open", generated) == []


def test_a_syntax_error_is_logged_with_its_caret(pathway, caplog):
    caplog.set_level("INFO", logger="models.kg.pathway")
    assert pathway.evidence(QUERY, "open", 'get_open("australia" ["capital"]') == []
    assert "expected ')' or ','" in caplog.text and "^" in caplog.text


def test_a_bug_in_a_domain_module_costs_one_question(pathway, fake, caplog):
    fake.fail["open_search_entity_by_name"] = ZeroDivisionError("bug")
    assert pathway.evidence(QUERY, "open", 'get_open("australia")') == []
    assert "KG pathway failed" in caplog.text


def test_clean_program():
    assert clean_program("```python\nget_x(1)\n```") == "get_x(1)"
    assert clean_program("Answer: None") == "None"
    assert clean_program(None) == ""


# ---------------------------------------------------------------------- a misbehaving HTTP server
class _Handler(http.server.BaseHTTPRequestHandler):
    mode = "500"

    def do_POST(self):  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.mode == "slow":
            time.sleep(1.0)
        status, body = {"500": (500, b"Internal Server Error"), "bad json": (200, b"{not json"),
                        "no result": (200, b'{"answer": 1}'), "slow": (200, b'{"result": null}')}[self.mode]
        self.send_response(status)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # the client hung up on a slow answer, as it should


@contextmanager
def _server(mode):
    handler = type("Handler", (_Handler,), {"mode": mode})
    server = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("mode", ["500", "bad json", "no result", "slow"])
def test_a_misbehaving_server_gives_no_evidence(mode):
    with _server(mode) as url:
        pathway = KGPathway(KGConfig(timeout_s=0.3, retries=0), MockAPIClient(url, timeout_s=0.3, retries=0))
        started = time.monotonic()
        assert pathway.evidence(QUERY, "open", 'get_open("australia")["capital"]') == []
        assert time.monotonic() - started < 2.0


def test_a_server_that_is_down_gives_no_evidence():
    pathway = KGPathway(KGConfig(), MockAPIClient("http://127.0.0.1:9", timeout_s=0.3, retries=0))
    assert pathway.evidence(QUERY, "open", 'get_open("australia")["capital"]') == []


def test_from_config_reads_the_url(monkeypatch):
    monkeypatch.setenv("CRAG_MOCK_API_URL", "http://127.0.0.1:1234")
    assert KGPathway.from_config(KGConfig()).client.base_url == "http://127.0.0.1:1234"
    assert KGPathway.from_config(KGConfig(api_url="http://h:1/")).client.base_url == "http://h:1"
    monkeypatch.delenv("CRAG_MOCK_API_URL")
    assert KGPathway.from_config(KGConfig()).client.base_url == "http://localhost:8000"


def test_prefix_checker_is_fast_enough_for_token_by_token_decoding():
    checker = PrefixChecker(signatures("movie"))
    text = 'get_movie_person_oscar(None, None, [eq(year, 2012), eq(category, "best actor"), eq(winner, true)])["na'
    started = time.perf_counter()
    for _ in range(200):
        assert checker.is_valid_prefix(text)
    assert (time.perf_counter() - started) / 200 < 0.005  # well under a decoding step


# ---------------------------------------------------------------- structured results and direct answers
MOVIE = Query("id-2", "what was the budget of inception?", "03/01/2024, 10:00:00 PT")


@pytest.mark.parametrize("question,program,direct", [
    ("when was inception released?", 'get_movie("inception")["release_date"]', "2010-07-15"),
    ("what was the budget of inception?", 'get_movie("inception")["budget"]', "160,000,000"),
    ("what is the runtime of inception?", 'get_movie("inception")["runtime"]', "148"),
    ("how many movies are called inception?", 'ALL get_movie("inception")["len"]', "2"),
])
def test_a_single_value_or_count_is_the_direct_answer(pathway, question, program, direct):
    evidence = pathway.run(Query("id-2", question, "03/01/2024, 10:00:00 PT"), "movie", program)
    assert evidence.outcome == "executed" and evidence.direct == direct and evidence.facts
    assert evidence.as_trace()["program"] == program


def test_whole_rows_need_the_model_to_combine_them(pathway):
    evidence = pathway.run(MOVIE, "movie", 'get_movie("inception")')
    assert evidence.outcome == "executed" and evidence.facts and evidence.direct == ""


def test_failures_are_outcomes_with_their_error(pathway):
    broken = pathway.run(MOVIE, "movie", 'get_movie("inception"')
    assert broken.outcome == "parse-error" and broken.error and not broken.facts
    assert pathway.run(MOVIE, "movie", "None").outcome == "empty"
    nothing = pathway.run(MOVIE, "movie", 'get_movie("zzzz")["budget"]')
    assert nothing.outcome == "no-data" and nothing.direct == "" and nothing.statements


def test_answer_values_are_formatted_as_gold_answers():
    from datetime import date

    from models.kg.format import format_answer_value

    assert [format_answer_value(v) for v in (182.63, 182.0, 1234567, 2024, 0.75, date(2010, 7, 15), ["a", "b", "c"],
                                             True)] == ["182.63", "182", "1,234,567", "2024", "0.75", "2010-07-15",
                                                        "a, b and c", "yes"]
