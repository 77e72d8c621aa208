"""db3's own surface syntax parses: every program written in the db3 paper (its §3.2 examples and the API
rules of its appendix prompt), verbatim, compiles and normalises to the canonical form, which the decoding
grammar accepts and which parses back to the same program.

The appendix also shows templates with placeholder names (`get_movie(movie_name,condition)[key_name]`,
`sort(condition,sort_key_name)`); they are instantiated with plain values before compiling. The
condition examples of rule 1 are fragments, so they are placed in `get_movie`'s condition slot.
"""
from __future__ import annotations

import pytest

from models.kg.apis import compile_program
from models.kg.executor import execute
from models.kg.language.ast import format_program
from models.kg.language.errors import KGArityError, KGTypeError
from models.kg.verbalizer import verbalize
from tests.kg.test_grammar import accepts

PAPER_PROGRAMS = [  # (verbatim program, its canonical form)
    ('get_movie("greater meaning of water")["release_date"]; get_movie("small town ecstasy")["release_date"]',
     'get_movie("greater meaning of water")["release_date"]\nget_movie("small town ecstasy")["release_date"]'),
    ('get_movie_person_oscar(None, None, [eq(year, 2012), eq(category, "best actor")], eq(winner, "true"))["name"]',
     'get_movie_person_oscar(None, None, [eq(year, 2012), eq(category, "best actor"), eq(winner, "true")])'
     '["name"]'),
    ('get_movie_person_crew(None, "walt becker", eq(job, "Director")); sort(None, -year)["movie_name"]',
     'get_movie_person_crew(None, "walt becker", eq(job, "Director"))\nsort(None, -year)["movie_name"]'),
    ('ALL, ALL get_movie_person_crew("batman","Jack",1997)',
     'get_movie_person_crew("batman", "Jack", eq(year, 1997))'),
]
CONDITION_FRAGMENTS = [  # appendix rule 1, each in get_movie's condition slot
    ("eq(gender,male)", 'eq(gender, "male")'),
    ("ge(revenue,10)", "ge(revenue, 10)"),
    ('[eq(gender,"male"),eq(character,"batman")]', '[eq(gender, "male"), eq(character, "batman")]'),
]
TEMPLATES = [  # §3.2 / appendix templates, verbatim, instantiated by _PLACEHOLDERS
    ("get_person(person_name,condition)[key_name]", 'get_person("a", None)["name"]'),
    ("get_movie(movie_name,condition)[key_name]", 'get_movie("a", None)["name"]'),
    ("get_movie_person_X(movie_name,person_name,condition)[key_name]",
     'get_movie_person_cast("a", "a", None)["name"]'),
]
_PREVIOUS = 'get_movie("a", None)'
OPERATORS = [  # fragments of the rules, verbatim, appended to or after a get line
    (f"{_PREVIOUS}\n" + "sort(condition,sort_key_name)", f"{_PREVIOUS}\nsort(None, year)"),
    (f"{_PREVIOUS}\n" + "sort(condition,-sort_key_name)", f"{_PREVIOUS}\nsort(None, -year)"),
    (_PREVIOUS + '["len"]', _PREVIOUS + '["len"]'),
    ("AVG " + _PREVIOUS + "[key_name]", "AVG " + _PREVIOUS + '["name"]'),
    (_PREVIOUS + "[key_name][:n]", _PREVIOUS + '["name"][:3]'),
]
_PLACEHOLDERS = {"person_name": '"a"', "movie_name": '"a"', "condition": "None", "key_name": "name",
                 "sort_key_name": "year", "get_movie_person_X": "get_movie_person_cast", ":n": ":3"}


def _instantiate(template: str) -> str:
    for placeholder, value in sorted(_PLACEHOLDERS.items(), key=lambda p: -len(p[0])):
        template = template.replace(placeholder, value)
    return template


def _check(text: str, canonical: str) -> None:
    program = compile_program(text, "movie")
    assert format_program(program) == canonical
    assert accepts("movie", canonical)  # the decoding grammar generates exactly the canonical form
    assert compile_program(canonical, "movie") == program


@pytest.mark.parametrize("text, canonical", PAPER_PROGRAMS)
def test_the_papers_programs_parse_to_the_canonical_form(text, canonical):
    _check(text, canonical)


@pytest.mark.parametrize("fragment, canonical", CONDITION_FRAGMENTS)
def test_the_papers_conditions_parse(fragment, canonical):
    _check(f'get_movie("batman", {fragment})', f'get_movie("batman", {canonical})')


@pytest.mark.parametrize("template, canonical", TEMPLATES + OPERATORS)
def test_the_papers_templates_and_operators_parse_once_instantiated(template, canonical):
    _check(_instantiate(template), canonical)


def test_the_best_actor_example_runs_with_its_trailing_condition(fake):
    program = compile_program(PAPER_PROGRAMS[1][0], "movie")
    assert verbalize(execute(program, fake)) == [
        "The name of the actor in a leading role winner at the 2012 Oscars (84th ceremony) is Jean Dujardin."]


def test_all_is_kept_before_searching_functions_and_dropped_before_joins():
    assert compile_program('ALL, ALL get_movie("maze runner")', "movie").statements[0].all_matches
    assert not compile_program('ALL get_movie_person_cast("a", None)', "movie").statements[0].all_matches
    assert format_program(compile_program('ALL get_stock_eps("aapl")', "finance")) == 'get_stock_eps("aapl")'


def test_only_years_become_year_conditions():
    with pytest.raises(KGTypeError, match="got a number"):
        compile_program('get_movie_person_crew("batman", "Jack", 12)', "movie")
    with pytest.raises(KGArityError, match="takes at most 3 arguments"):  # a string after the conditions stays extra
        compile_program('get_movie_person_crew("batman", "Jack", eq(year, 1997), "x")', "movie")
