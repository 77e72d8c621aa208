"""API-generation data: targets that do not compile are rejected, the format round-trips, the seed covers every
function and operator, SFT records use the pipeline's request, and the bootstrap keeps only parsing replies."""
import json

import pytest

from models.kg.apis import signatures
from models.kg.language import Call, Condition, Length, ListArg, Slice, Sort, Star, parse
from models.llm.generator import GenerationRequest
from models.paths import resolve_repo_path
from models.types import DOMAINS
from training.api_data import (SEED_PATH, APIDataError, APIExample, execute_examples, load_api_examples,
                               to_sft_records, validate, write_api_examples)
from training.bootstrap_api import bootstrap, rejected_path

GOOD = {"id": "a", "query": "when was inception released?", "query_time": "03/01/2024, 10:00:00 PT",
        "domain": "movie", "program": "get_movie('inception') ['release_date']"}


def test_valid_targets_are_stored_canonically():
    example = validate(GOOD)
    assert example.program == 'get_movie("inception")["release_date"]' and example.source == "seed"
    assert validate(GOOD | {"program": "None"}).program == "None"


@pytest.mark.parametrize("change,message", [
    ({"program": 'get_movie("inception"'}, "does not compile"),  # unclosed call
    ({"program": 'get_stock_price("aapl", "2024-02-27")["close"]'}, "does not compile"),  # finance call in movie
    ({"program": 'get_movie(12)["year"]'}, "does not compile"),  # wrong argument type
    ({"program": "select * from movies"}, "does not compile"),
    ({"domain": "weather"}, "unknown domain"),
    ({"query": " "}, "missing or non-text"),
    ({"program": None}, "missing or non-text"),
])
def test_targets_that_do_not_parse_are_rejected(change, message):
    with pytest.raises(APIDataError, match=message):
        validate(GOOD | change)


def test_round_trip_and_strict_loading(tmp_path):
    examples = [validate(GOOD), validate(GOOD | {"id": "b", "program": "None"})]
    examples[0] = APIExample(**{**examples[0].__dict__, "result": ("the release_date of Inception is 2010-07-15",)})
    path = tmp_path / "api.jsonl"
    assert write_api_examples(examples, path) == 2
    assert list(load_api_examples(path)) == examples
    with open(path, "a") as handle:
        handle.write(json.dumps(GOOD | {"id": "c", "program": "get_movie("}) + "\n")
    with pytest.raises(APIDataError, match=r"api.jsonl:3: example 'c'"):
        list(load_api_examples(path))
    assert [e.id for e in load_api_examples(path, strict=False)] == ["a", "b"]


def _operators(program) -> set[str]:
    found = set()
    for statement in program.statements:
        found |= {"ALL"} if statement.all_matches else set()
        found |= {"AVG"} if statement.average else set()
        found |= {"[:n]" for s in statement.selectors if isinstance(s, Slice)}
        found |= {"len" for s in statement.selectors if isinstance(s, Length)}
        head = statement.head
        conditions = list(head.conditions) if isinstance(head, Sort) else []
        if isinstance(head, Sort):
            found.add("sort")
        if isinstance(head, Call):
            found |= {"*" for a in head.args if isinstance(a, Star)}
            conditions += [a for a in head.args if isinstance(a, Condition)]
            conditions += [i for a in head.args if isinstance(a, ListArg) for i in a.items if isinstance(i, Condition)]
        found |= {c.op for c in conditions}
    return found or {"None"}


def test_seed_covers_every_function_and_operator_and_avoids_the_icl_pool():
    seed = list(load_api_examples(resolve_repo_path(SEED_PATH)))  # strict: every target compiles
    assert len({e.id for e in seed}) == len(seed)
    for domain in DOMAINS:
        programs = [parse(e.program) for e in seed if e.domain == domain]
        used = {s.head.name for p in programs for s in p.statements if isinstance(s.head, Call)}
        assert used == set(signatures(domain)), f"{domain}: functions without a seed example"
        assert "None" in {op for p in programs for op in _operators(p)}, f"{domain}: no None example"
    operators = set().union(*(_operators(parse(e.program)) for e in seed))
    assert operators >= {"ALL", "AVG", "sort", "*", "eq", "neq", "ge", "le", "[:n]", "len", "None"}
    pool = resolve_repo_path("data/kg/icl_pool.jsonl")  # tracked: a missing pool is a broken checkout and fails
    pool_queries = {json.loads(line)["query"] for line in pool.read_text().splitlines() if line.strip()}
    assert not pool_queries & {e.query for e in seed}


class FakeKG:
    """`api_request` renders a one-line prompt; `evidence` answers from a table."""

    def __init__(self, facts=None):
        self.facts = facts or {}

    def api_request(self, query, domain):
        if domain == "open" and "nothing" in query.text:
            return None
        return GenerationRequest(({"role": "system", "content": f"{domain} at {query.query_time}"},
                                  {"role": "user", "content": f"Query: {query.text}\nAPI:"}), adapter="api_generation")

    def evidence(self, query, domain, program_text, deadline=None):
        return self.facts.get(program_text, [])


def test_sft_records_use_the_pipeline_request_and_leave_out_pool_queries():
    examples = [validate(GOOD), validate(GOOD | {"id": "b", "query": "how long is oppenheimer?",
                                                 "program": 'get_movie("oppenheimer")["length"]'})]
    records = list(to_sft_records(examples, FakeKG(), pool_queries=["How long is Oppenheimer?"]))
    assert [r.id for r in records] == ["a"]
    assert records[0].messages == ({"role": "system", "content": "movie at 03/01/2024, 10:00:00 PT"},
                                   {"role": "user", "content": "Query: when was inception released?\nAPI:"},
                                   {"role": "assistant", "content": 'get_movie("inception")["release_date"]'})
    assert records[0].adapter == "api_generation"


def test_execution_stores_the_facts():
    kg = FakeKG({'get_movie("inception")["release_date"]': ["the release_date of Inception is 2010-07-15"]})
    executed = list(execute_examples([validate(GOOD), validate(GOOD | {"id": "n", "program": "None"})], kg))
    assert [e.result for e in executed] == [("the release_date of Inception is 2010-07-15",), ()]


def test_bootstrap_keeps_only_replies_that_compile_and_resumes(tmp_path, scripted, make_example):
    replies = {"inception": '```\nget_movie("inception")["release_date"]\n```', "matrix": "get_movie(the matrix",
               "coldplay": 'API: get_person("coldplay")["members"]["len"]', "oops": ""}
    generator = scripted(lambda prompt: next(v for k, v in replies.items() if k in prompt))
    examples = [make_example("1", "when was inception released?", "x"),
                make_example("2", "is the matrix older?", "x"),
                make_example("3", "how many members has coldplay?", "x", domain="music"),
                make_example("4", "oops?", "x"),
                make_example("5", "nothing here", "x", domain="open")]
    out = tmp_path / "boot.jsonl"
    counts = bootstrap(examples, FakeKG(), generator, "strong-model", out, batch_size=2)
    assert counts == {"kept": 2, "rejected": 2, "no_request": 1}
    kept = list(load_api_examples(out))
    assert [(e.id, e.program, e.source) for e in kept] == [
        ("1", 'get_movie("inception")["release_date"]', "bootstrap:strong-model"),
        ("3", 'get_person("coldplay")["members"]["len"]', "bootstrap:strong-model")]
    rejected = [json.loads(line) for line in rejected_path(out).read_text().splitlines()]
    assert [r["id"] for r in rejected] == ["2", "4"] and "does not compile" in rejected[0]["error"]
    assert bootstrap(examples, FakeKG(), generator, "strong-model", out) == {"kept": 0, "rejected": 0,
                                                                             "no_request": 1}
