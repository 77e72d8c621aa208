"""The robustness contract and the stand-ins the hostile cases share.

Contract of every case: `batch_generate_answer` raises nothing, returns one non-empty string per
query, in order, and returns inside the grader's budget (batch_size x per_question_budget_s; the model's
own deadline is that minus `deadline_margin_s`, the stated margin). Every batch run through `run_batch` is
recorded, and the suite prints its worst time / budget at the end (conftest.py).
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from models.config import load_config
from models.crag_model import CragModel
from models.pipeline import Pipeline
from models.parts import Parts
from models.web import WebRetriever
from tests.stand_ins import ServesAnyAdapter

PER_QUESTION_S = 5.0  # fast cases: tight enough that each defect of the sweep overran it
MARGIN_S = 1.0

RECORD: list[tuple[str, float, float]] = []  # (case, seconds, budget) of every batch run


@dataclass
class BatchRun:
    answers: list[str]
    sources: list[str]
    seconds: float
    budget: float


class ContextEcho(ServesAnyAdapter):
    """Stands in for the LLM: an answer is a digest of its prompt, so two answers are equal exactly when
    their prompts (question and retrieved context) are; a KG request gets `program`."""

    def __init__(self, program: str = "None", delay_s: float = 0.0, slow_kind: str = ""):
        self.program, self.delay_s, self.slow_kind = program, delay_s, slow_kind

    def generate(self, requests, *, deadline=None):
        out = []
        for request in requests:
            prompt = request.messages[-1]["content"]
            kind = "kg" if prompt.rstrip().endswith("API:") else "answer"
            if kind == self.slow_kind and self.delay_s:  # a slow stage honours its deadline, as the backends do
                left = deadline.remaining() if deadline is not None else self.delay_s
                time.sleep(max(0.0, min(self.delay_s, left)))
                if deadline is not None and deadline.expired():
                    out.append("")  # cut before it finished: the backends return "" too
                    continue
            out.append(self.program if kind == "kg" else "answer " + hashlib.sha1(prompt.encode()).hexdigest()[:12])
        return out

    def count_tokens(self, text):
        return len(text.split())

    def truncate_tokens(self, text, max_tokens):
        return " ".join(text.split()[:max_tokens])


class OpenRouter:
    def route(self, queries, deadline=None):
        return ["open"] * len(queries)


def make_model(embedder, *, generator=None, kg=None, task: int = 1, per_question_s: float = PER_QUESTION_S,
               web=None, **overrides) -> CragModel:
    """The CPU profile's pipeline with the real web pathway (real MiniLM), an LLM stand-in and no public data."""
    config = load_config("cpu", {"pipeline.task": task, "pipeline.per_question_budget_s": per_question_s,
                                 "pipeline.deadline_margin_s": MARGIN_S, "pipeline.use_public_data": [],
                                 **overrides})
    web = web or WebRetriever.from_config(config.web, config.models_dir, embedder=embedder)
    pipeline = Pipeline(Parts(config, generator=generator or ContextEcho(), web=web, router=OpenRouter(), kg=kg))
    return CragModel(config, pipeline=pipeline)


def run_batch(case: str, model: CragModel, batch: dict) -> BatchRun:
    """Runs one batch and asserts the contract; records its time against its budget."""
    n = len(batch["query"])
    budget = n * model.config.pipeline.per_question_budget_s
    started = time.monotonic()
    answers = model.batch_generate_answer(batch)
    seconds = time.monotonic() - started
    RECORD.append((case, seconds, budget))
    assert isinstance(answers, list) and len(answers) == n
    assert all(isinstance(a, str) and a.strip() for a in answers)
    assert seconds <= budget, f"{case}: {seconds:.1f} s for a budget of {budget:.0f} s"
    return BatchRun(answers, [a.source for a in model.last_answers], seconds, budget)


# ---------------------------------------------------------------------------------------------- inputs
COUNTRIES = [("australia", "canberra"), ("france", "paris"), ("japan", "tokyo"), ("canada", "ottawa")]


def page_html(country: str, capital: str, extra: str = "") -> str:
    facts = " ".join(f"<p>{country.title()} fact {i}: the {i}th city of {country} is not {capital}.</p>"
                     for i in range(12))
    return (f"<html><head><title>{country}</title></head><body><h1>{country.title()}</h1>"
            f"<p>The capital of {country.title()} is {capital.title()}.</p>{facts}"
            f"<table><tr><th>Country</th><th>Capital</th></tr><tr><td>{country}</td><td>{capital}</td></tr>"
            f"</table>{extra}</body></html>")


def page(country: str, capital: str, i: int = 0, html: str | None = None, name: str | None = None,
         snippet: str | None = None) -> dict:
    return {"page_name": name if name is not None else f"{country.title()} - page {i}",
            "page_url": f"https://example.org/{country}/{i}",
            "page_snippet": (snippet if snippet is not None
                             else f"The capital of {country.title()} is {capital.title()}."),
            "page_result": html if html is not None else page_html(country, capital, extra=f"<p>Page {i}.</p>"),
            "page_last_modified": ""}


def batch_of(items: list[tuple[str, list[dict]]]) -> dict:
    """A grader batch from (query, pages) pairs."""
    return {"interaction_id": [f"id{i}" for i in range(len(items))], "query": [q for q, _ in items],
            "search_results": [pages for _, pages in items],
            "query_time": ["03/01/2024, 10:00:00 PT"] * len(items)}


def clean_items(n: int = 3, pages_per_query: int = 2) -> list[tuple[str, list[dict]]]:
    return [(f"what is the capital of {country}?", [page(country, capital, i) for i in range(pages_per_query)])
            for country, capital in COUNTRIES[:n]]


def nested_tables(depth: int) -> str:
    return "<table><tr><td>" * depth + "deep cell" + "</td></tr></table>" * depth
