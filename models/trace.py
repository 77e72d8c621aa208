"""One answer's trace: what the pipeline did for one question, saved with its prediction record.

The trace is the contract between `models/` and what reads a run back: `evaluation/explain.py`
(`local_evaluation.py --explain ID`), `evaluation/html_report.py` (report.html), the answer gate's fit
(`training/gate/fit.py`, from each attempt's verifier scores) and the latency projection (`llm_calls`). It is
plain JSON data. `Trace` declares every top-level key once, with the module that writes it and what it holds;
`tests/test_trace.py` checks that the writers write and the readers read no other key, and that the traces of a
real run hold only these. A key is present only where its stage ran (`total=False`), except the two lists every
trace starts with (`new_trace`) and the five keys every finished answer gets (`models/run.py`).
"""
from __future__ import annotations

from typing import Any, TypedDict


class LLMCall(TypedDict, total=False):
    """One LLM request (`models/answering/llm_calls.py`)."""

    stage: str  # "answer answer_ctrl", "kg api", "public entity", ...: the stage's prompt
    adapter: str | None  # the LoRA adapter it ran with; None: the base model
    adapter_missing: str  # the adapter the profile names but the backend lacks (the base model stood in)
    batch: int  # requests in the batched call it was part of
    seconds: float  # the batched call's wall time, shared by its requests
    prompt_tokens: int | None
    output_tokens: int | None
    n: int  # sampled requests: completions drawn
    temperature: float | None
    error: str  # why it holds "" (the backend's reason: a failure, a refusal, the deadline)
    retryable: bool  # the failure was the server's and may pass: a resumed run asks the question again


class Trace(TypedDict, total=False):
    """Every top-level key of a trace: its writer, and what it holds."""

    # every trace (QueryState.trace, new_trace)
    llm_calls: list[LLMCall]  # models/answering/llm_calls.py: every LLM request made for the question
    attempts: list[dict[str, Any]]  # models/answering/verify_step.py: each answer candidate and the verifier's
    #                                 decision on it (scores, checks, stop, reason), in the order they were tried
    # every finished answer (models/run.py RunState._final; models/crag_model.py writes `why` alone for an error)
    task: int  # the CRAG task the batch ran as
    domain: str  # the domain the router chose
    source: str  # the name of the pathway the answer came from (models/pathways.py)
    why: str  # why this answer: the verify step's last reason, or why no pathway answered
    stages: dict[str, float]  # stage name -> seconds the batch spent in it (shared by the batch's questions)
    stop: str  # models/run.py: the code of the check that decided the answer (models/verify/decision.py `Stop`);
    #            absent when no candidate was checked
    # where a stage ran for the question
    kg: dict[str, Any]  # models/sources/kg.py: the KG program, its statements, calls, checks, facts and outcome
    sql: dict[str, Any]  # models/sources/sql.py: the SQL statement over the public tables, its rows or error
    public_facts: list[str]  # models/sources/public_data.py: the public-data facts the answer step read
    web: dict[str, Any]  # models/sources/web.py: the extractors per page, sentence groups, extract/chunk seconds
    arm: dict[str, Any]  # models/sources/web.py: ARM's alignment (keywords, n-grams, each object's two scores)
    omni: dict[str, Any]  # models/omni/mode.py: the sources selected and the evidence each returned
    attribute: dict[str, Any]  # models/verify/attribute_policy.py: static/dynamic label, method, policy, action
    knowledge: dict[str, Any]  # models/answering/reasoning.py: the knowledge note and its seconds
    calculator: dict[str, Any]  # models/answering/reasoning.py: the expression, its value and votes, or none
    reasoning: dict[str, Any]  # models/answering/reasoning.py: the reasoning step's source, answer and output


TRACE_KEYS = frozenset(Trace.__annotations__)
LLM_CALL_KEYS = frozenset(LLMCall.__annotations__)
FINISHED_KEYS = ("task", "domain", "source", "why", "stages")  # models/run.py writes them on every answer


def new_trace() -> dict:
    """The trace a question starts with: the two lists its LLM calls and answer attempts are appended to."""
    return {"llm_calls": [], "attempts": []}
