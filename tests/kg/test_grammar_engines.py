"""The KG Lark grammars under both structured-output engines vLLM 0.32 can use: xgrammar (its default
backend, which compiles Lark natively via `GrammarCompiler.compile_lark`) and llguidance (its `guidance`
backend). Both CPU wheels are the versions vllm 0.32.0 pins (xgrammar 0.2.8, llguidance 1.7.x).

A byte-level vocabulary (tests/grammar_engines.py) stands in for a model's, so the grammar itself is what is
checked: it compiles, every canonical program of the in-context pool and the API training seed is accepted token
by token and may end there, and rule-breaking programs are rejected.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from models.kg.apis import compile_program, signatures
from models.kg.language.ast import format_program
from models.kg.language.grammar import lark_grammar
from tests.grammar_engines import LLGuidanceEngine, XGrammarEngine
from tests.kg.kg_support import DOMAINS, POOL

SEED_PATH = Path(__file__).resolve().parents[2] / "data" / "kg" / "api_train_seed.jsonl"
SEED = [json.loads(line) for line in SEED_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
GRAMMARS = {d: lark_grammar(signatures(d)) for d in DOMAINS}


@pytest.fixture(scope="module", params=[XGrammarEngine, LLGuidanceEngine], ids=["xgrammar", "llguidance"])
def engine(request):
    return request.param(GRAMMARS)


def _canonical(record) -> str:
    return format_program(compile_program(record["program"], record["domain"]))


def test_vllm_reads_the_grammars_as_lark():
    """vLLM sends a grammar to `compile_lark` unless a line (comments removed) contains an EBNF `::=`."""
    for grammar in GRAMMARS.values():
        lines = (re.sub(r"(#|//).*$", "", line).strip() for line in grammar.split("\n"))
        assert not any("::=" in line for line in lines)


@pytest.mark.parametrize("record", POOL + SEED, ids=lambda r: r.get("id") or r["query"][:40])
def test_every_canonical_program_is_accepted(engine, record):
    assert engine.accepts(record["domain"], _canonical(record)), _canonical(record)


@pytest.mark.parametrize("domain, text", [
    ("movie", 'get_movie(*)["title"]'),                 # * on the first line
    ("movie", 'get_movie("a")\nget_movie_person_cast(*, *)'),
    ("movie", "get_movie(2010)"),                        # wrong argument kind
    ("movie", "get_movie('a')"),                         # not canonical: single quotes
    ("open", 'get_movie("a")'),                          # another domain's function
    ("movie", 'get_movie("a'),                           # unfinished: end-of-sequence not allowed yet
])
def test_rule_breaking_programs_are_rejected(engine, domain, text):
    assert not engine.accepts(domain, text)
