"""The in-context example pool: every program compiles, every operator is taught in it, every domain has at
least 12 examples; selection prefers the query's domain and the most similar examples (placed last).
"""
from __future__ import annotations

import json
import re

import pytest

from models.kg.apis import compile_program, signatures
from models.kg.examples import Example, ExamplePool
from models.kg.language.ast import Length, ListArg, Slice, Sort, Star
from models.types import DOMAINS, parse_query_time
from tests.kg.kg_support import POOL, POOL_PATH, BagOfWords


def test_every_domain_has_at_least_12_examples_with_valid_query_times():
    for domain in DOMAINS:
        assert sum(r["domain"] == domain for r in POOL) >= 12, domain
    assert all(parse_query_time(r["query_time"]) is not None for r in POOL)
    assert len({r["query"] for r in POOL}) == len(POOL)


def test_the_pool_covers_every_operator_and_function():
    seen = set()
    for record in POOL:
        program = compile_program(record["program"], record["domain"])
        if not program.statements:
            seen.add("None")
        for statement in program.statements:
            head = statement.head
            seen |= {"ALL"} if statement.all_matches else set()
            seen |= {"AVG"} if statement.average else set()
            seen |= {type(s).__name__ for s in statement.selectors}
            if isinstance(head, Sort):
                seen.add("sort")
                seen |= {c.op for c in head.conditions}
                continue
            seen.add(f"{record['domain']}.{head.name}")
            seen |= {"*"} if any(isinstance(a, Star) for a in head.args) else set()
            for arg in head.args:
                items = arg.items if isinstance(arg, ListArg) else (arg,)
                seen |= {getattr(item, "op", None) for item in items} - {None}
                seen |= {"list"} if isinstance(arg, ListArg) else set()
    operators = {"ALL", "AVG", "SelectKey", Length.__name__, Slice.__name__, "sort", "*", "eq", "neq", "ge", "le",
                 "list", "None"}
    functions = {f"{d}.{name}" for d in DOMAINS for name in signatures(d)}
    assert operators | functions <= seen, sorted((operators | functions) - seen)


def test_pool_programs_are_stored_in_canonical_form():
    pool = ExamplePool.load(POOL_PATH)
    assert [e.program for e in pool.examples] == [r["program"] for r in POOL]


def test_a_broken_example_fails_at_load_with_its_line(tmp_path):
    path = tmp_path / "pool.jsonl"
    good = json.dumps(POOL[0])
    path.write_text(good + "\n" + json.dumps({**POOL[0], "program": 'get_movie("a"'}) + "\n")
    with pytest.raises(ValueError, match=r"pool.jsonl:2: bad KG example: expected"):
        ExamplePool.load(path)
    path.write_text('{"query": "q"}\n')
    with pytest.raises(ValueError, match="pool.jsonl:1"):
        ExamplePool.load(path)


EXAMPLES = [Example("how many members are in coldplay", "t", "music", "a"),
            Example("who wrote yellow", "t", "music", "b"),
            Example("when was inception released", "t", "movie", "c"),
            Example("grammy best new artist 2019", "t", "music", "d")]


def test_selection_by_similarity_most_similar_last():
    pool = ExamplePool(EXAMPLES, BagOfWords())
    chosen = pool.select("how many members are in radiohead", "music", 2)
    assert [e.program for e in chosen][-1] == "a" and len(chosen) == 2
    assert all(e.domain == "music" for e in chosen)


def test_other_domains_fill_up_and_no_embedder_keeps_the_file_order():
    assert [e.program for e in ExamplePool(EXAMPLES, BagOfWords()).select("when was inception released", "movie",
                                                                          2)][-1] == "c"
    assert [e.program for e in ExamplePool(EXAMPLES).select("anything", "music", 3)] == ["d", "b", "a"]
    assert ExamplePool(EXAMPLES).select("x", "music", 0) == []


def test_a_failing_embedder_falls_back_to_the_pool_order():
    class Broken:
        def encode(self, texts, is_query=True):
            raise RuntimeError("boom")

    assert [e.program for e in ExamplePool(EXAMPLES, Broken()).select("x", "movie", 1)] == ["c"]


@pytest.mark.parametrize("domain", DOMAINS)
def test_each_prompt_teaches_exactly_its_domains_functions(domain):
    text = (POOL_PATH.parents[2] / "prompts" / f"kg_api_{domain}.txt").read_text(encoding="utf-8")
    named = set(re.findall(r"\b(get_[a-z_]+)\(", text))
    assert named == set(signatures(domain)), named ^ set(signatures(domain))


def test_the_pool_never_contains_a_bundled_sample_question():
    """In-context examples that are the evaluation questions themselves would inflate every KG figure."""
    import json

    from models.paths import resolve_repo_path

    pool = {json.loads(line)["query"].lower() for line in resolve_repo_path("data/kg/icl_pool.jsonl").open()}
    for name in ("crag_sample.jsonl", "crag_sample_task3.jsonl"):
        sample = {json.loads(line)["query"].lower() for line in resolve_repo_path(f"data/sample/{name}").open()}
        assert not pool & sample

