"""The KG pathway (db3 §3, Tasks 2-3): a regularized API language over the CRAG mock API.

    compile_program(text, domain) -> Program        language/ (pure) + apis/ (typed signatures)
    execute(program, client, now=...) -> ExecutionResult
    verbalize(result) -> [facts]
    KGPathway: the pipeline's entry point (API-generation request, evidence)

Names are imported on first use (PEP 562), so `import models.kg.language` stays pure: it loads no HTTP
client, no LLM layer and no torch, as the language package promises.
"""
import importlib

_EXPORTS = {
    "KGPathway": "models.kg.pathway", "clean_program": "models.kg.pathway",
    "ExecutionResult": "models.kg.executor", "Limits": "models.kg.executor", "StatementResult": "models.kg.executor",
    "execute": "models.kg.executor", "verbalize": "models.kg.verbalizer",
    "compile_program": "models.kg.apis", "signatures": "models.kg.apis",
    **dict.fromkeys(("KGApiError", "KGArityError", "KGError", "KGLimitError", "KGSyntaxError", "KGTypeError",
                     "KGValueError", "PrefixChecker", "Program", "format_program", "lark_grammar", "parse"),
                    "models.kg.language"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'models.kg' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
