"""The per-domain function table, filled by the `@kg_function` decorator (after jmespath's `functions.py`).

A domain module declares each regularized function once:

    @kg_function("movie", Param("movie_name", TEXT), Param("condition", CONDITIONS, required=False),
                 searches=True)
    def get_movie(ctx, movie_name, condition=()): ...

and that single declaration is what the parser type-checks programs against, what the decoding grammar is
generated from, and what the executor dispatches to. Implementations receive a `CallContext` and plain
Python arguments (str, int/float, None, a tuple of `Condition`s, a tuple of strings) and return a `Table`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping

from models.kg.apis.records import Table
from models.kg.language.ast import Program
from models.kg.language.errors import KGValueError
from models.kg.language.parser import parse
from models.kg.language.signature import Param, Signature
from models.types import DOMAINS


@dataclass(frozen=True)
class KGFunction:
    domain: str
    signature: Signature
    implementation: Callable[..., Table]


_REGISTRY: dict[str, dict[str, KGFunction]] = {domain: {} for domain in DOMAINS}


def kg_function(domain: str, *params: Param, searches: bool = False):
    """Registers the decorated function under its own name for `domain`; its docstring's first line is
    the summary shown in prompts."""
    if domain not in _REGISTRY:
        raise ValueError(f"unknown domain {domain!r}; expected one of {DOMAINS}")

    def register(implementation: Callable[..., Table]) -> Callable[..., Table]:
        name = implementation.__name__
        if name in _REGISTRY[domain]:
            raise ValueError(f"{domain} function {name!r} registered twice")
        summary = (implementation.__doc__ or "").strip().split("\n")[0]
        signature = Signature(name, tuple(params), searches, summary)
        _REGISTRY[domain][name] = KGFunction(domain, signature, implementation)
        return implementation

    return register


def functions(domain: str) -> Mapping[str, KGFunction]:
    """The functions of a domain, by name.

    Raises:
        KGValueError: an unknown domain.
    """
    if domain not in _REGISTRY:
        raise KGValueError(f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    return _REGISTRY[domain]


def signatures(domain: str) -> dict[str, Signature]:
    """The signatures of a domain's functions, by name (what the parser and the grammar need)."""
    return {name: f.signature for name, f in functions(domain).items()}


def compile_program(text: str, domain: str) -> Program:
    """Parses and type-checks a program against a domain's functions.

    Args:
        text: the generated program.
        domain: finance | music | movie | sports | open.

    Returns:
        The `Program`, with `domain` set.

    Raises:
        KGError: a syntax, arity or type error (with position and caret), or an unknown domain.
    """
    return replace(parse(text, signatures(domain)), domain=domain)
