"""`CragModel`: the object the CRAG grader talks to.

Contract (CRAG KDD Cup 2024, batch interface):
- `CragModel()` takes no arguments. The hardware profile comes from `$CRAG_PROFILE` (`cpu` default,
  `g4dn` for the grader's 4x T4); weights load from the models directory, never from the network.
- `get_batch_size() -> int` in [1, 16]: how many queries each `batch_generate_answer` call receives.
- `batch_generate_answer(batch) -> list[str]` receives a dict of equal-length lists
  `interaction_id: list[str]`, `query: list[str]`, `search_results: list[list[dict]]`,
  `query_time: list[str]` ("02/28/2024, 10:04:54 PT"), and returns exactly `len(batch["query"])`
  answers in order.
- Scoring is +1 correct, 0 missing, -1 wrong, so when unsure the answer is exactly "i don't know";
  a false premise is answered "invalid question". Answers are cut to 75 tokens of the grader's Llama-2
  tokenizer by the grader; we trim ourselves so nothing important is lost past the cut.
- Time: the call is killed after batch_size x 30 s. A deadline of that budget minus a margin turns every
  answer not finished in time into "i don't know".
- Never raises for a bad item (missing keys, empty or binary pages, huge pages): that item is answered
  "i don't know" and the error is logged.
- Every string (query, time, id, page name, URL, snippet, HTML) is made safe once, here (`safe_text`: lone
  surrogates, NULs and other control characters out), so no component downstream meets text its
  tokenizer or encoder rejects.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Dict, List

from models.config import Config, load_config
from models.deadline import Deadline
from models.text import safe_text
from models.types import IDK, Answer, Query, SearchResult

log = logging.getLogger(__name__)


class CragModel:
    """The submission model: a `Pipeline` behind the grader's batch interface."""

    def __init__(self, config: Config | None = None, pipeline=None):
        self.config = config or load_config()
        if pipeline is None:
            from models.pipeline import Pipeline

            pipeline = Pipeline.from_config(self.config)
        self.pipeline = pipeline
        self.last_answers: list[Answer] = []  # the previous batch's answers with their sources (for reports)
        self.last_latencies: list[float] = []

    def get_batch_size(self) -> int:
        return max(1, min(16, int(self.config.pipeline.batch_size)))

    def batch_generate_answer(self, batch: Dict[str, Any]) -> List[str]:
        started = time.monotonic()
        queries_raw = batch.get("query") if isinstance(batch, dict) else None
        n = len(queries_raw) if isinstance(queries_raw, (list, tuple)) else 0
        p = self.config.pipeline
        deadline = Deadline(max(1.0, max(n, 1) * p.per_question_budget_s - p.deadline_margin_s))
        answers: list[Answer] = [Answer(IDK, "error") for _ in range(n)]
        valid: list[tuple[int, Query]] = []
        for i in range(n):
            try:
                valid.append((i, self._to_query(batch, i)))
            except Exception as exc:
                log.error("item %d rejected: %s", i, exc)
        if valid:
            try:
                produced = self.pipeline.answer([q for _, q in valid], deadline=deadline)
                for (i, _), answer in zip(valid, produced):
                    answers[i] = answer if isinstance(answer.text, str) and answer.text.strip() else Answer(IDK, "error")
            except Exception:
                log.exception("pipeline failed for the whole batch; answering 'i don't know'")
        self.last_answers = answers
        elapsed = time.monotonic() - started
        self.last_latencies = [elapsed / max(n, 1)] * n
        return [a.text for a in answers]

    @staticmethod
    def _to_query(batch: Dict[str, Any], i: int) -> Query:
        def column(name, default):
            values = batch.get(name)
            return values[i] if isinstance(values, (list, tuple)) and i < len(values) else default

        text = column("query", "")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"query {i} is empty or not a string: {text!r}")
        pages = column("search_results", [])
        pages = pages if isinstance(pages, (list, tuple)) else []
        return Query(
            interaction_id=safe_text(column("interaction_id", f"item-{i}")),
            text=safe_text(text).strip(),
            query_time=safe_text(column("query_time", "") or ""),
            search_results=tuple(_safe_page(SearchResult.from_raw(p)) for p in pages),
        )


def _safe_page(page: SearchResult) -> SearchResult:
    """The page with every field through `safe_text` (the fields are already strings)."""
    return SearchResult(**{name: safe_text(getattr(page, name)) for name in SearchResult.__dataclass_fields__})
