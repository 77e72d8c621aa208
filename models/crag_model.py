"""`CragModel`: the object the CRAG grader talks to (`models/user_config.py` binds it as `UserModel`).

The contract is stated where a reader of the starter kit looks for it: on the class and on
`batch_generate_answer`.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Dict, List

from models.config import Config, load_config
from models.deadline import Deadline, batch_deadline_s
from models.pathways import ERROR
from models.types import IDK, Answer, Query

log = logging.getLogger(__name__)


def batch_size_of(config: Config) -> int:
    """The batch size a model of this profile asks for (`CragModel.get_batch_size`): the profile's, in [1, 16]."""
    return max(1, min(16, int(config.pipeline.batch_size)))


class CragModel:
    """The submission model: a `Pipeline` behind the grader's batch interface (CRAG KDD Cup 2024).

    - `CragModel()` takes no arguments. The hardware profile comes from `$CRAG_PROFILE` (`cpu` default,
      `g4dn` for the grader's 4x T4); weights load from the models directory, never from the network.
    - `get_batch_size()` says how many queries each `batch_generate_answer` call receives (1 to 16).
    - Scoring is +1 correct, 0 missing, -1 wrong, so when unsure the answer is exactly "i don't know";
      a false premise is answered "invalid question". The grader cuts answers to 75 tokens of its Llama-2
      tokenizer; we trim ourselves so nothing important is lost past the cut.
    - Time: the call is killed after batch_size x 30 s. A deadline of that budget minus a margin turns every
      answer not finished in time into "i don't know".
    - Never raises for a bad item (missing keys, empty or binary pages, huge pages): that item is answered
      "i don't know" and the error is logged.
    - Every string (query, time, id, page name, URL, snippet, HTML) is made safe once, in `Query.from_crag`
      (`safe_text`: lone surrogates, NULs and other control characters out), so no component downstream
      meets text its tokenizer or encoder rejects.
    """

    def __init__(self, config: Config | None = None, pipeline=None):
        """Loads the profile and builds the pipeline (all weights load here, not in the first batch), then, with
        `llm.warm_up` (g4dn), uses every adapter and grammar once so that nothing compiles in a graded batch.

        Args:
            config: a resolved profile; None (the grader) = `load_config()`, i.e. `$CRAG_PROFILE`.
            pipeline: an assembled pipeline (tests pass stand-ins); None = `Pipeline.from_config(config)`.
        """
        self.config = config or load_config()
        if pipeline is None:
            from models.pipeline import Pipeline

            pipeline = Pipeline.from_config(self.config)
        self.pipeline = pipeline
        warm_up = getattr(pipeline, "warm_up", None)  # (a stand-in pipeline of a test may have none)
        self.warm_up = warm_up() if self.config.llm.warm_up and warm_up is not None else None  # logged with its time
        self.last_answers: list[Answer] = []  # the previous batch's answers with sources and traces (for reports)
        self.last_latencies: list[float] = []

    def get_batch_size(self) -> int:
        """How many queries each `batch_generate_answer` call receives: the profile's, clamped to [1, 16]."""
        return batch_size_of(self.config)

    def batch_generate_answer(self, batch: Dict[str, Any]) -> List[str]:
        """Answers one batch of questions, in order, within the batch's time budget.

        Args:
            batch: a dict of equal-length lists: `interaction_id: list[str]`, `query: list[str]`,
                `search_results: list[list[dict]]` (5 pages per query, 50 in Task 3; each with `page_name`,
                `page_url`, `page_snippet`, `page_result` (HTML), `page_last_modified`) and
                `query_time: list[str]` ("02/28/2024, 10:04:54 PT").

        Returns:
            Exactly `len(batch["query"])` answers in the order of the queries; "i don't know" for an item
            that cannot be read, for a failed pathway and for an answer not finished before the deadline.
        """
        started = time.monotonic()
        queries_raw = batch.get("query") if isinstance(batch, dict) else None
        n = len(queries_raw) if isinstance(queries_raw, (list, tuple)) else 0
        p = self.config.pipeline
        deadline = Deadline(batch_deadline_s(n, p.per_question_budget_s, p.deadline_margin_s))
        answers: list[Answer] = [Answer(IDK, ERROR.name, trace={"why": "the pipeline failed for the whole batch (see "
                                                                "the log)"}) for _ in range(n)]
        valid: list[tuple[int, Query]] = []
        for i in range(n):
            try:
                valid.append((i, self._to_query(batch, i)))
            except Exception as exc:
                log.error("item %d rejected: %s", i, exc)
                answers[i] = Answer(IDK, ERROR.name, trace={"why": f"item rejected: {exc}"})
        if valid:
            try:
                produced = self.pipeline.answer([q for _, q in valid], deadline=deadline)
                for (i, _), answer in zip(valid, produced):
                    answers[i] = answer if isinstance(answer.text, str) and answer.text.strip() else \
                        Answer(IDK, ERROR.name, trace={**answer.trace, "why": "the pipeline returned an empty answer"})
            except Exception:
                log.exception("pipeline failed for the whole batch; answering 'i don't know'")
        self.last_answers = answers
        elapsed = time.monotonic() - started
        self.last_latencies = [elapsed / max(n, 1)] * n
        return [a.text for a in answers]

    @staticmethod
    def _to_query(batch: Dict[str, Any], i: int) -> Query:
        """Row `i` of the grader's batch (a dict of equal-length lists) as a `Query` (`Query.from_crag`)."""
        row = {name: values[i] for name, values in batch.items()
               if isinstance(values, (list, tuple)) and i < len(values)}
        try:
            return Query.from_crag(row, default_id=f"item-{i}")
        except ValueError:  # the only one: no usable query text
            raise ValueError(f"query {i} is empty or not a string: {row.get('query')!r}") from None
