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


# ---------------------------------------------------------------------- the lexer's number path
_DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=5000)
_NUMBERS = st.one_of(_DIGITS, st.builds(lambda a, b: f"{a}.{b}", _DIGITS, st.text(alphabet="0123456789",
                                                                                   max_size=50)))
_NUMBER_SLOTS = ("get_movie_by_id({})", 'get_movie("a", ge(year, {}))', 'get_movie("a")[:{}]',
                 'get_movie("a", eq(rating, -{}))', "get_movie_by_id({}")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_NUMBERS, st.sampled_from(_NUMBER_SLOTS))
def test_any_number_in_a_program_compiles_or_raises_kg_error(number, slot):
    text = slot.format(number)
    _check(text, "movie")
    for cut in (len(text) // 2, len(text) - 1):  # cut inside the number, too
        assert isinstance(CHECKERS["movie"].is_valid_prefix(text[:cut]), bool)


def test_a_number_over_python_int_digit_limit_is_a_positioned_syntax_error():
    from models.kg.language.errors import KGSyntaxError

    text = "get_movie_by_id(" + "9" * 5000 + ")"
    with pytest.raises(KGSyntaxError) as caught:
        compile_program(text, "movie")
    assert caught.value.position == len("get_movie_by_id(")
    assert CHECKERS["movie"].is_valid_prefix(text) is False
    assert CHECKERS["movie"].is_valid_prefix("get_movie_by_id(" + "9" * 40) is True


# ---------------------------------------------------------------------- the prefix checker
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_texts, st.sampled_from(DOMAINS))
def test_every_prefix_of_a_valid_prefix_is_valid(text, domain):
    checker = CHECKERS[domain]
    if checker.is_valid_prefix(text):
        for cut in range(len(text)):
            assert checker.is_valid_prefix(text[:cut]), text[:cut]


# ---------------------------------------------------------------------- time expressions
_TIME_WORDS = ["past", "last", "next", "previous", "coming", "this", "recent", "9999", "10000", "1", "0", "99999",
               "day", "days", "week", "weeks", "month", "months", "year", "years", "friday", "today", "yesterday",
               "tomorrow", "latest", "ipo", "-", "/", " ", "9999-12-31", "0001-01-01", "2024-02-30", "12/31/9999",
               "december", "9999", "february", "29,"]
_times = st.one_of(st.lists(st.sampled_from(_TIME_WORDS), max_size=5).map(" ".join),
                   st.text(alphabet=st.sampled_from(list("0123456789-/ abcdefklmnoprstuwy")), max_size=30))
_nows = st.one_of(st.none(), st.datetimes())


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_times, _nows)
def test_any_time_expression_resolves_or_raises_kg_value_error(text, now):
    from models.kg.language.errors import KGValueError
    from models.kg.language.timeexpr import TimeSpan, resolve_time

    try:
        span = resolve_time(text, now)
    except KGValueError:
        return
    assert isinstance(span, TimeSpan)


def test_an_out_of_calendar_time_costs_one_statement_not_the_program(fake, now):
    from models.kg.executor import execute

    program = compile_program('get_stock_price("aapl", "past 9999 years")["close"]\n'
                              'get_stock_price("aapl", "2024-02-27")["close"]', "finance")
    first, second = execute(program, fake, now=now).statements
    assert first.kind == "error" and "outside the calendar" in first.error
    assert [v.value for v in second.values] == [182.63]
