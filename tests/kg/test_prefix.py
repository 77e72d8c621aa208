"""`PrefixChecker`: every beginning of a valid program is accepted, dead ends are rejected at once."""
from __future__ import annotations

import pytest

from models.kg.apis import compile_program, signatures
from models.kg.language.ast import format_program
from models.kg.language.prefix import PrefixChecker
from tests.kg.kg_support import POOL

MOVIE = PrefixChecker(signatures("movie"))


@pytest.mark.parametrize("record", POOL, ids=lambda r: r["query"][:40])
def test_every_prefix_of_a_pool_program_is_valid(record):
    checker = PrefixChecker(signatures(record["domain"]))
    text = format_program(compile_program(record["program"], record["domain"]))
    assert all(checker.is_valid_prefix(text[:i]) for i in range(len(text) + 1))
    assert checker.is_complete(text)


@pytest.mark.parametrize("text", [
    "", " ", "\n", "N", "Non", "ALL ", "ALL AVG get_mo", "get_movie", "get_movie(", 'get_movie("incep',
    'get_movie("a\\', 'get_movie("a", eq(', 'get_movie("a", [eq(year, 20', 'get_movie("a", [eq(year, 20.',
    'get_movie("a")[', 'get_movie("a")["rel', 'get_movie("a")[:', 'get_movie("a")\nso',
    'get_movie("a")\nsort(None, -', 'get_movie("a")\nget_movie(*', 'get_movie("a", eq(won, tr',
    "get_movie_person_cast(None, None, [", "get_movie_person_oscar(None, None, eq(year, 2012)",
])
def test_valid_prefixes(text):
    assert MOVIE.is_valid_prefix(text)


@pytest.mark.parametrize("text", [
    "get_mvo", "x", "get_movie(12", "get_movie(inception", 'get_movie("a"))', "sort(", "get_movie(*",
    "ALL sort(", 'AVG get_movie("a")["len"', 'get_movie("a")["len"][', "get_movie(None, [eq(a, 1), \"",
    "get_movie(None", 'get_movie("a", eq(year 2', 'get_movie("a") get', "get_movie(@", 'get_movie("a\nb")',
])
def test_dead_ends(text):
    assert not MOVIE.is_valid_prefix(text)


@pytest.mark.parametrize("text, complete", [
    ("", False), ("None", True), ('get_movie("a")', True), ('get_movie("a")[', False), ('AVG get_movie("a")', False),
    ('AVG get_movie("a")["rating"]', True), ('get_movie("a")\n', True), ("get_movie(", False),
])
def test_is_complete(text, complete):
    assert MOVIE.is_complete(text) is complete
