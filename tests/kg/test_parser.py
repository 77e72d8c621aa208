"""Golden tests of `models/kg/language/parser.py`: every operator, every domain's functions, exact errors.

Programs are checked through their canonical form (`format_program`), which is what the grammar
generates and what the example pool stores; errors are checked as whole messages with the caret line.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from models.kg.apis import compile_program, signatures
from models.kg.language.ast import (Call, Condition, Length, ListArg, Literal, SelectKey, Slice, Sort, Star,
                                    format_program)
from models.kg.language.errors import KGArityError, KGSyntaxError, KGTypeError
from models.kg.language.parser import IncompleteProgram, parse, parse_prefix


def canonical(text, domain=None):
    return format_program(compile_program(text, domain) if domain else parse(text))


# ---------------------------------------------------------------------- structure
def test_a_call_with_conditions_and_selectors():
    program = parse('get_movie_person_oscar(None, None, [eq(year, 2012), eq(category, "best actor"), '
                    'eq(winner, true)])["name"]')
    (statement,) = program.statements
    call = statement.head
    assert isinstance(call, Call) and call.name == "get_movie_person_oscar"
    assert call.args[:2] == (Literal("none", None), Literal("none", None))
    assert call.args[2] == ListArg((Condition("eq", "year", Literal("number", 2012)),
                                    Condition("eq", "category", Literal("string", "best actor")),
                                    Condition("eq", "winner", Literal("bool", True))))
    assert statement.selectors == (SelectKey("name"),)
    assert statement.key == "name"


def test_sort_star_slice_len_all_avg():
    program = parse('ALL get_movie("maze runner")\nsort(neq(year, 2014), -rating)["title"][:2]\n'
                    'get_movie(*)["len"]\nAVG get_x("a")["close"]')
    first, sort, star, avg = program.statements
    assert first.all_matches and not first.average
    assert sort.head == Sort((Condition("neq", "year", Literal("number", 2014)),), "rating", True)
    assert sort.selectors == (SelectKey("title"), Slice(2))
    assert star.head.args == (Star(),) and star.selectors == (Length(),)
    assert avg.average and avg.key == "close"


@pytest.mark.parametrize("text, expected", [
    ("", "None"),
    ("None", "None"),
    ("  none \n\n", "None"),
    ("None\nget_x('a')", 'get_x("a")'),
    ("get_x('a'); get_y(1)[author]", 'get_x("a")\nget_y(1)["author"]'),
    ("all  avg get_x( 'a' ,None )[ 'k' ]", 'ALL AVG get_x("a", None)["k"]'),
    ("get_x(eq(gender, male))", 'get_x(eq(gender, "male"))'),
    ("get_x(EQ(k, TRUE), [Ge('release date', -5), le(d, Null)])",
     'get_x(eq(k, true), [ge("release date", -5), le(d, None)])'),
    ("get_x(['a', \"b\"])", 'get_x(["a", "b"])'),
    ("get_x([])", "get_x([])"),
    ("get_x('a')\nsort(None, +year)", 'get_x("a")\nsort(None, year)'),
    ("get_x('a')\nsort([eq(a, 1), le(b, 2)], 'release date')[len]",
     'get_x("a")\nsort([eq(a, 1), le(b, 2)], "release date")["len"]'),
    ("get_x(2.50, 007)", "get_x(2.50, 007)"),
    ('get_x("a \\" b")', 'get_x("a \\" b")'),
])
def test_lenient_input_prints_canonically(text, expected):
    assert canonical(text) == expected
    assert canonical(expected) == expected  # canonical text is a fixed point


# ---------------------------------------------------------------------- every domain, every function
DOMAIN_PROGRAMS = {
    "movie": ['get_movie("inception", ge(year, 2000))["release_date"]', 'get_person("tom hanks")["birthday"]',
              'get_movie_person_cast(None, ["a", "b"])["movie_name"]', 'get_movie_person_crew("x", None)',
              'get_movie_person_oscar(None, "y", eq(winner, false))["len"]', 'get_movie_by_id(27205)["title"]',
              'get_person_by_id("6193")["name"]'],
    "music": ['get_person("coldplay")["members"]["len"]', 'get_song("yellow")["author"]',
              'get_grammy_person("adele")["grammy_award_count"]', 'get_grammy_song("clocks")',
              "get_grammy_year(2019)", 'get_grammy_year("2019")', 'get_billboard_rank(1, "2024-02-17")["song"]',
              "get_billboard_rank(3)", 'get_billboard_song("lovin on me", "last week")["weeks_in_chart"]',
              'get_grammy_best_new_artists()["len"]'],
    "finance": ['get_stock_price("aapl", "2024-02-27")["close"]', 'get_stock_price("aapl", "2024-01", None)',
                'AVG get_stock_price("aapl", "2024-01-01", "2024-01-31")["close"]',
                'get_stock_dividend("msft", [ge(date, "2024-01-01"), le(date, "2024-03-31")])',
                'get_stock_market_cap("msft")', 'get_stock_pe_ratio("meta")', 'get_stock_eps("goog")',
                'get_stock_info("nvidia")["sector"]', 'get_company_names("apple")["ticker"]',
                'get_stock_minute_prices("aapl", "today")["len"]'],
    "sports": ['get_soccer_on_date("arsenal", "2024-02-04")["score"]', 'get_soccer_on_date(None, "2024-02")',
               'get_soccer_last_game("chelsea")', 'get_soccer_next_game("chelsea")["date"]',
               'get_nba_on_date("lakers", "2022-10")["pts"]', 'get_nba_last_game("heat")["game_id"]',
               'get_nba_play_by_play("0022200002")[:5]'],
    "open": ['get_open("australia")["capital"]', 'ALL get_open("springfield")["len"]'],
}


@pytest.mark.parametrize("domain, text", [(d, t) for d, texts in DOMAIN_PROGRAMS.items() for t in texts])
def test_every_function_compiles_in_its_domain(domain, text):
    assert canonical(text, domain) == text


def test_every_registered_function_has_a_golden_program():
    for domain, texts in DOMAIN_PROGRAMS.items():
        used = {compile_program(t, domain).statements[0].head.name for t in texts}
        assert used == set(signatures(domain)), domain


def test_star_passes_type_checks_where_the_parameter_takes_it():
    program = compile_program('get_open("spacex")["founder"]\nget_open(*)["birth_place"]', "open")
    assert program.domain == "open" and program.statements[1].head.args == (Star(),)


# ---------------------------------------------------------------------- exact errors
ERRORS = [
    (None, 'get_movie("inception" eq(year, 2010))', KGSyntaxError,
     "expected ')' or ',' but found name 'eq' (line 1, column 23)\n"
     'get_movie("inception" eq(year, 2010))\n'
     "                      ^"),
    (None, 'get_x("a")\nget_y(1 2)', KGSyntaxError,
     "expected ')' or ',' but found number 2 (line 2, column 9)\nget_y(1 2)\n        ^"),
    (None, "get_x(inception)", KGSyntaxError,
     "expected an argument but found name 'inception' (quote names: \"...\") (line 1, column 7)\n"
     "get_x(inception)\n      ^"),
    (None, 'get_x("a") get_y("b")', KGSyntaxError,
     "expected a line break or ';' after the statement but found name 'get_y' (line 1, column 12)\n"
     'get_x("a") get_y("b")\n           ^'),
    (None, 'get_x("a"', KGSyntaxError,
     "expected ')' or ',' but found end of input (line 1, column 10)\nget_x(\"a\"\n         ^"),
    (None, '"a"', KGSyntaxError,
     "expected a function call, sort(...) or None but found string \"a\" (line 1, column 1)\n\"a\"\n^"),
    (None, 'get_x("a")[]', KGSyntaxError,
     "expected a key or ':' but found ']' (line 1, column 12)\nget_x(\"a\")[]\n           ^"),
    (None, 'get_x("a")[:1.5]', KGSyntaxError,
     "a slice bound must be a whole number (line 1, column 13)\nget_x(\"a\")[:1.5]\n            ^"),
    (None, 'get_x("a")[""]', KGSyntaxError,
     "a key may not be empty (line 1, column 12)\nget_x(\"a\")[\"\"]\n           ^"),
    (None, "get_x(eq(a 1))", KGSyntaxError,
     "expected ',' but found number 1 (line 1, column 12)\nget_x(eq(a 1))\n           ^"),
    (None, 'sort(None, year)', KGTypeError,
     "sort(...) needs a previous line whose rows it sorts (line 1, column 1)\nsort(None, year)\n^"),
    (None, "get_x(*)", KGTypeError,
     "* stands for the previous line's output, but there is no previous line (line 1, column 7)\n"
     "get_x(*)\n      ^"),
    (None, "get_x(1)\nget_y(*, *)", KGTypeError,
     "only one argument may be * (line 2, column 10)\nget_y(*, *)\n         ^"),
    (None, 'get_x(1)["len"][:2]', KGTypeError,
     'nothing may follow ["len"] (line 1, column 16)\nget_x(1)["len"][:2]\n               ^'),
    (None, 'AVG get_x(1)["len"]', KGTypeError,
     'AVG and ["len"] cannot be combined (line 1, column 1)\nAVG get_x(1)["len"]\n^'),
    (None, "AVG get_x(1)", KGTypeError,
     'AVG needs a key to average, e.g. AVG get_stock_price(...)["close"] (line 1, column 1)\nAVG get_x(1)\n^'),
    (None, "get_x(['a', eq(b, 1)])", KGTypeError,
     "a list must hold only conditions or only strings (line 1, column 13)\nget_x(['a', eq(b, 1)])\n            ^"),
    (None, "get_x(1)\nALL sort(None, a)", KGTypeError,
     "ALL applies to a function that searches for an entity, not to sort(...) (line 2, column 1)\n"
     "ALL sort(None, a)\n^"),
    ("open", 'get_opn("x")', KGTypeError,
     "unknown function 'get_opn'; known functions: get_open (line 1, column 1)\nget_opn(\"x\")\n^"),
    ("open", "get_open()", KGArityError,
     "get_open() is missing argument 'entity' (line 1, column 10)\nget_open()\n         ^"),
    ("open", 'get_open("a", "b")', KGArityError,
     "get_open() takes at most 1 argument (line 1, column 15)\nget_open(\"a\", \"b\")\n              ^"),
    ("movie", "get_movie(2010)", KGTypeError,
     "argument 'movie_name' of get_movie() must be a string or *, got a number (line 1, column 11)\n"
     "get_movie(2010)\n          ^"),
    ("finance", 'get_stock_price("aapl")', KGArityError,
     "get_stock_price() is missing argument 'time' (line 1, column 23)\nget_stock_price(\"aapl\")\n"
     "                      ^"),
    ("music", 'get_person("a", "b")', KGArityError,
     "get_person() takes at most 1 argument (line 1, column 17)\nget_person(\"a\", \"b\")\n                ^"),
]


@pytest.mark.parametrize("domain, text, error, message", ERRORS)
def test_errors_have_exact_messages_and_carets(domain, text, error, message):
    with pytest.raises(error) as caught:
        compile_program(text, domain) if domain else parse(text)
    assert str(caught.value) == message


def test_error_attributes():
    with pytest.raises(KGSyntaxError) as caught:
        parse('get_x("a")\n  get_y(]')
    error = caught.value
    assert (error.line, error.column, error.position) == (2, 9, 19)
    assert error.program == 'get_x("a")\n  get_y(]'


def test_prefix_parse_signals_incomplete_input():
    with pytest.raises(IncompleteProgram):
        parse_prefix('get_x("a", [eq(year, 20')
    assert parse_prefix('get_x("a")').statements  # complete programs parse normally
    with pytest.raises(KGSyntaxError):
        parse_prefix('get_x("a"))')


def test_the_language_package_is_pure():
    code = ("import sys, models.kg.language; "
            "print(sorted(m for m in ('torch', 'requests', 'transformers', 'models.llm') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "[]"
