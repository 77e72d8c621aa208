"""Property tests: any string parses into a Program or fails with a KGError, never another exception, and
the prefix checker agrees with the parser. 1,000 examples in the default run, 10,000 under `-m slow`.
"""
from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.kg.apis import compile_program, signatures
from models.kg.language.errors import KGError
from models.kg.language.parser import parse
from models.kg.language.prefix import PrefixChecker
from tests.kg.kg_support import DOMAINS, program_texts

CHECKERS = {domain: PrefixChecker(signatures(domain)) for domain in DOMAINS}
KG_SOURCES = Path(__file__).resolve().parents[2] / "models" / "kg"


def _check(text: str, domain: str) -> None:
    try:
        program = compile_program(text, domain)
    except KGError as error:
        assert str(error)  # renders (position and caret) without raising
        compiled = False
    else:
        assert program.domain == domain
        compiled = True
    checker = CHECKERS[domain]
    complete, prefix = checker.is_complete(text), checker.is_valid_prefix(text)
    assert complete == (compiled and bool(text.strip()))
    assert prefix or not complete  # a whole program is also a valid prefix of itself
    try:
        parse(text)  # syntax only, no signatures
    except KGError:
        pass


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_texts, st.sampled_from(DOMAINS))
def test_any_string_compiles_or_raises_kg_error(text, domain):
    _check(text, domain)


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_texts, st.sampled_from(DOMAINS))
def test_any_string_compiles_or_raises_kg_error_10k(text, domain):
    _check(text, domain)


def test_parsing_never_reaches_eval_or_exec(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("model output reached eval/exec")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    for text in ('__import__("os").system("x")', "exec('1')", "eval(1)", 'get_open("a").__class__'):
        with pytest.raises(KGError):
            compile_program(text, "open")
    program = compile_program('get_open("a")["__class__"]', "open")  # a key is only ever a string
    assert program.statements[0].selectors[0].name == "__class__"


def test_the_kg_package_has_no_eval_exec_or_compile_calls():
    offenders = []
    for path in KG_SOURCES.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                    "eval", "exec", "compile", "__import__"):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []
