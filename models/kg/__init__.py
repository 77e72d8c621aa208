"""The KG pathway (db3 §3, Tasks 2-3): a regularized API language over the CRAG mock API.

    compile_program(text, domain) -> Program        language/ (pure) + apis/ (typed signatures)
    execute(program, client, now=...) -> ExecutionResult
    verbalize(result) -> [facts]
    KGPathway: the pipeline's entry point (API-generation request, evidence)
"""
from models.kg.apis import compile_program, signatures
from models.kg.executor import ExecutionResult, Limits, StatementResult, execute
from models.kg.language import (KGApiError, KGArityError, KGError, KGLimitError, KGSyntaxError, KGTypeError,
                                KGValueError, PrefixChecker, Program, format_program, lark_grammar, parse)
from models.kg.pathway import KGPathway, clean_program
from models.kg.verbalizer import verbalize

__all__ = [
    "ExecutionResult", "KGApiError", "KGArityError", "KGError", "KGLimitError", "KGPathway", "KGSyntaxError",
    "KGTypeError", "KGValueError", "Limits", "PrefixChecker", "Program", "StatementResult", "clean_program",
    "compile_program", "execute", "format_program", "lark_grammar", "parse", "signatures", "verbalize",
]
