"""Running a model over a data set the way the grader does, with every prediction saved as it is made.

`run_predictions` feeds `batch_generate_answer` only the four grader keys, times each batch, and appends
one record per question to `predictions.jsonl` right after its batch (flushed and fsynced), so a run that
is killed loses at most the batch in flight. Rerunning with the same file resumes: ids already there are
skipped, a half-written last line (the kill landed mid-write) is cut off the file before anything is
appended. One kind of saved answer is asked again (`needs_asking_again`): "i don't know" because an LLM
server went away or timed out (a call the trace marks `retryable`), e.g. a served LLM that was stopped mid-run;
its new record is appended and, read back, the last record of an id is the one that counts.

Record fields: interaction_id, query, query_time, prediction, gold (the answer), alt_ans, domain,
question_type, static_or_dynamic, popularity, split, source and predicted_domain (from the model's
`last_answers`, when it has them), latency_s (batch wall time / batch size), model_latency_s (the model's
own `last_latencies`, when it has them), over_budget (latency_s over the grader's 30 s) and trace (the
answer's `trace`: per-stage seconds, LLM calls, KG program and facts, chunks, raw output, verifier
decision; {} when the model keeps none).
"""
from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from evaluation.data import batched, grader_view
from evaluation.judge import CachingJudge, Judge, RulesJudge
from evaluation.metrics import ScoreItem, Verdict, score_predictions
from evaluation.normalized_judge import NormalizedJudge
from evaluation.report import BUDGET_S
from evaluation.run_dir import one_per_id
from models.types import IDK

log = logging.getLogger(__name__)


class PredictionLog:
    """An append-only JSONL file of prediction records that survives being killed mid-write."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def load(self) -> list[dict]:
        """The records saved so far, one per id (an id's last record, in the order ids first appear), after cutting
        off a half-written tail.

        A line in the middle that does not parse is skipped with a warning (it can only come from editing
        the file by hand); its question is asked again.
        """
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        complete = data.rfind(b"\n") + 1
        if complete < len(data):
            log.warning("%s: dropping a half-written last line (%d bytes)", self.path, len(data) - complete)
            with open(self.path, "r+b") as handle:
                handle.truncate(complete)
        records = []
        for number, line in enumerate(data[:complete].splitlines(), start=1):
            try:
                record = json.loads(line)
                record["interaction_id"]
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("%s:%d unreadable, its question will be asked again: %s", self.path, number, exc)
                continue
            records.append(record)
        return one_per_id(records)

    def append(self, records: Sequence[dict]) -> None:
        """Writes records and forces them to disk before returning."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
            handle.flush()
            os.fsync(handle.fileno())


@dataclass
class RunStats:
    n_resumed: int = 0  # questions already in the file
    n_new: int = 0  # questions answered by this run
    n_duplicates: int = 0  # repeated ids in the data, skipped
    n_asked_again: int = 0  # saved "i don't know"s of a server fault, asked again (counted in n_new too)


def run_predictions(model, examples: Iterable[dict], predictions: PredictionLog, batch_size: int,
                    on_batch: Callable[[list[dict]], None] | None = None) -> RunStats:
    """Asks `model` every example not yet in `predictions`, batch by batch, saving each batch at once.

    Args:
        model: anything with the grader's `batch_generate_answer(batch) -> list[str]`.
        examples: normalised examples (`evaluation.data.load_examples`).
        predictions: the run's prediction file (resumed if it exists).
        batch_size: questions per `batch_generate_answer` call.
        on_batch: called with each batch's new records (progress display).

    Returns:
        How many questions were resumed and how many were answered now.

    Raises:
        ValueError: the model returned a different number of answers than it was asked questions.
        Whatever the model raises: the batches before it are saved, and a rerun resumes after them.
    """
    stats = RunStats()
    for batch in batched(still_to_ask(examples, predictions, stats), batch_size):
        started = time.perf_counter()
        answers = model.batch_generate_answer(grader_view(batch))
        save_batch(predictions, stats, batch, answers, time.perf_counter() - started,
                   getattr(model, "last_answers", None), getattr(model, "last_latencies", None), on_batch)
    return stats


def save_batch(predictions: PredictionLog, stats: RunStats, batch: dict, answers, elapsed_s: float, details=None,
               model_latencies=None, on_batch: Callable[[list[dict]], None] | None = None) -> None:
    """Checks a batch's answers, appends its records to `predictions` at once and counts them (`build_records`
    for `details` and `model_latencies`).

    Raises:
        ValueError: a different number of answers than questions.
    """
    check_answer_count(answers, len(batch["query"]))
    records = build_records(batch, answers, elapsed_s / len(answers), details, model_latencies)
    predictions.append(records)
    stats.n_new += len(records)
    if on_batch is not None:
        on_batch(records)


def needs_asking_again(record: dict) -> bool:
    """Whether a saved answer is "i don't know" only because an LLM server failed it: a call in its trace is
    `retryable` (the server was unreachable, went away or timed out; `models.isolation.ItemResults.retryable`).
    A refused request, a passed deadline or an answer the pipeline chose to withhold stays as saved."""
    trace = record.get("trace") if isinstance(record.get("trace"), dict) else {}
    calls = trace.get("llm_calls") if isinstance(trace.get("llm_calls"), list) else []
    return (str(record.get("prediction", "")).strip().lower() == IDK
            and any(isinstance(call, dict) and call.get("retryable") for call in calls))


def still_to_ask(examples: Iterable[dict], predictions: PredictionLog, stats: RunStats):
    """The examples whose id is not yet saved, or saved as a server fault's "i don't know" (`needs_asking_again`),
    each id once (streamed: the data is never held whole); counts the resumed, asked-again and repeated ones
    into `stats`."""
    saved = predictions.load()
    again = {r["interaction_id"] for r in saved if needs_asking_again(r)}
    done = {r["interaction_id"] for r in saved} - again
    if again:
        log.info("%s: asking %d questions again whose saved answer is a server fault's 'i don't know'",
                 predictions.path, len(again))
    asked: set[str] = set()
    for example in examples:
        interaction_id = example["interaction_id"]
        if interaction_id in done:
            stats.n_resumed += 1
        elif interaction_id in asked:
            stats.n_duplicates += 1  # the same id twice in the data is asked (and saved) once
        else:
            asked.add(interaction_id)
            stats.n_asked_again += interaction_id in again
            yield example


def check_answer_count(answers, n: int) -> None:
    if not isinstance(answers, (list, tuple)) or len(answers) != n:
        raise ValueError(f"the model returned {len(answers) if isinstance(answers, (list, tuple)) else answers!r}"
                         f" answers for {n} questions (the grader rejects this)")


def build_records(batch: dict, answers: Sequence, latency_s: float, details=None, model_latencies=None
                  ) -> list[dict]:
    """One record per question of `batch`; `details` are the model's `last_answers` (objects or dicts with
    source, domain and trace), `model_latencies` its `last_latencies` (both optional)."""
    details = _aligned(details, len(answers))
    model_latencies = _aligned(model_latencies, len(answers))
    records = []
    for i, (answer, gold) in enumerate(zip(answers, batch["gold"])):
        detail = details[i]
        records.append({
            "interaction_id": batch["interaction_id"][i],
            "query": batch["query"][i],
            "query_time": batch["query_time"][i],
            "prediction": answer if isinstance(answer, str) else str(answer),
            "gold": gold["answer"],
            **{key: gold[key] for key in ("alt_ans", "domain", "question_type", "static_or_dynamic", "popularity",
                                          "split")},
            "source": str(_field(detail, "source") or ""),
            "predicted_domain": str(_field(detail, "domain") or ""),
            "latency_s": round(latency_s, 4),
            "model_latency_s": model_latencies[i] if isinstance(model_latencies[i], (int, float)) else None,
            "over_budget": latency_s > BUDGET_S,
            "trace": _plain(_field(detail, "trace") or {}),
        })
    return records


def answer_details(answers) -> list[dict]:
    """The model's `last_answers` as plain data (what a Ray worker sends back to the driver)."""
    return [{"source": _field(a, "source"), "domain": _field(a, "domain"), "trace": _plain(_field(a, "trace") or {})}
            for a in (answers or ())]


def _field(detail, name: str):
    return detail.get(name) if isinstance(detail, dict) else getattr(detail, name, None)


def _plain(value):
    """The trace as JSON data (tuples become lists, anything unknown its str) so one odd value never loses
    a prediction record."""
    return json.loads(json.dumps(value, default=str))


def _aligned(values, n: int) -> list:
    """The model's per-question extras when they match the batch, else n Nones (they are optional)."""
    return list(values) if isinstance(values, (list, tuple)) and len(values) == n else [None] * n


def score_records(records: Sequence[dict], judge, trim) -> list[Verdict]:
    """V3 verdicts for saved prediction records (see `evaluation.metrics`)."""
    items = [ScoreItem(r.get("query", ""), r.get("prediction", ""), r.get("gold", ""), tuple(r.get("alt_ans") or ()))
             for r in records]
    return score_predictions(items, judge, trim)


@dataclass(frozen=True)
class Scorings:
    """The same predictions scored twice: the official V3 way and with the normalized judge."""

    official: list[Verdict]  # exact/invalid rules + the LLM judge (rules only: every other item unjudged)
    normalized: list[Verdict]  # the same rules + the normalized judge, the LLM judge for what it leaves open


def score_official_and_normalized(records: Sequence[dict], llm_judge: Judge | None, trim) -> Scorings:
    """Scores `records` both ways, asking the LLM judge (if any) each pair at most once."""
    llm = CachingJudge(llm_judge) if llm_judge is not None else None
    return Scorings(official=score_records(records, llm or RulesJudge(), trim),
                    normalized=score_records(records, NormalizedJudge(fallback=llm), trim))


def write_verdicts(path: str | Path, records: Sequence[dict], verdicts: Sequence[Verdict],
                   official: Sequence[Verdict] | None = None) -> None:
    """One line per prediction: what was scored, the outcome, and which rule or judge decided it and why;
    with `official`, also the official V3 outcome and who decided that."""
    with open(path, "w", encoding="utf-8") as handle:
        for i, (record, verdict) in enumerate(zip(records, verdicts)):
            line = {
                "interaction_id": record["interaction_id"], "query": record.get("query", ""),
                "scored_prediction": verdict.prediction, "gold": record.get("gold", ""),
                "outcome": verdict.outcome, "decided_by": verdict.decided_by,
                "explanation": verdict.explanation, "matched_ground_truth": verdict.ground_truth,
            }
            if official is not None:
                line |= {"official_outcome": official[i].outcome, "official_decided_by": official[i].decided_by}
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
