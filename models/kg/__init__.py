"""The KG pathway (db3 §3, Tasks 2-3): a regularized API language over the CRAG mock API.

    language/  parse(text, functions) -> Program                  (pure: no LLM, no HTTP, no torch)
    apis/      compile_program(text, domain) -> Program            (typed signatures per domain)
    executor   execute(program, client, now=...) -> ExecutionResult
    verbalizer verbalize(result) -> [facts]
    pathway    KGPathway: the pipeline's entry point (API-generation request, evidence)

Import the module you need (`from models.kg.pathway import KGPathway`). This file imports nothing, so
`import models.kg.language` loads the language alone. The mock API server the client talks to in local
runs is the top-level `mock_api` package, never imported here.
"""
