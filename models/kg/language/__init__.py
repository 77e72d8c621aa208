"""The regularized API language: a pure package (no LLM, no HTTP, no torch).

`parse(text, functions)` → `Program` or a `KGError` with position and caret; `PrefixChecker` and
`lark_grammar` give the same language to constrained decoding; `values`/`timeexpr` define how conditions
compare typed values and resolve relative dates.
"""
from models.kg.language.ast import (Call, Condition, Length, ListArg, Literal, Program, SelectKey, Slice, Sort, Star,
                                    Statement, format_program)
from models.kg.language.errors import (KGApiError, KGArityError, KGError, KGLimitError, KGProgramError,
                                       KGSyntaxError, KGTypeError, KGValueError)
from models.kg.language.grammar import lark_grammar
from models.kg.language.parser import IncompleteProgram, parse, parse_prefix
from models.kg.language.prefix import PrefixChecker
from models.kg.language.signature import ArgKind, Param, Signature
from models.kg.language.timeexpr import TimeSpan, resolve_time

__all__ = [
    "ArgKind", "Call", "Condition", "IncompleteProgram", "KGApiError", "KGArityError", "KGError", "KGLimitError",
    "KGProgramError", "KGSyntaxError", "KGTypeError", "KGValueError", "Length", "ListArg", "Literal", "Param",
    "PrefixChecker", "Program", "SelectKey", "Signature", "Slice", "Sort", "Star", "Statement", "TimeSpan",
    "format_program", "lark_grammar", "parse", "parse_prefix", "resolve_time",
]
