"""Per-domain regularized API functions, registered with typed signatures (see `registry.py`).

Importing the package registers every domain's functions; `compile_program(text, domain)` parses and
type-checks a program against them, `signatures(domain)` feeds the prefix checker and the grammar.
"""
from models.kg.apis import finance, movie, music, open_domain, sports  # noqa: F401  (registers the functions)
from models.kg.apis.context import BudgetedAPI, CallContext
from models.kg.apis.matching import EntityMatcher
from models.kg.apis.records import LazyRecord, Row, Table, resolve_key
from models.kg.apis.registry import KGFunction, compile_program, functions, kg_function, signatures

__all__ = [
    "BudgetedAPI", "CallContext", "EntityMatcher", "KGFunction", "LazyRecord", "Row", "Table", "compile_program",
    "functions", "kg_function", "resolve_key", "signatures",
]
