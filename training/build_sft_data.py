"""Builds the SFT dataset of an answer adapter from a CRAG file (db3 §2.4; rules in `training/labels.py`).

    summary = label_file(LabelSettings(data="data/sample/crag_sample.jsonl", out="outputs/sft/web_answer.jsonl"))

`LabelSettings` holds what the command line (scripts/build_sft_data.py) sets, under the same names.

Pieces, all from the profile (`profile`, default `$CRAG_PROFILE`): the generator answers with p_basic
and, with `judge="llm"` and no `judge_url`, also judges; the context comes from the web pathway
(`adapter="web_answer"`) or the KG pathway (`adapter="kg_answer"`, needs the mock API: `CRAG_MOCK_API_URL`
or `kg.api_url`). `judge="rules"` needs no LLM (see `training/judges.py` for what it decides and why it
is safe); `judge="llm"` with a `judge_url` sends p_check_gt and p_context to an OpenAI-compatible endpoint.

Output: the chat-format JSONL (`training/sft_data.py`), its `.skipped.jsonl` sidecar, and
`<name>.summary.json` with the label counts by reason, also printed as a table. Rerunning the same command
resumes: ids already labelled (or skipped for good) are not asked again.
"""
from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator

from models.types import IDK, INVALID
from training.labels import RETRYABLE, LabelBuilder
from training.sft_data import SFTWriter, read_jsonl, skipped_path

log = logging.getLogger(__name__)

ADAPTERS = ("web_answer", "kg_answer")


def build(examples: Iterable[dict], builder: LabelBuilder, writer: SFTWriter, batch_size: int = 8) -> Counter:
    """Labels every example not yet done, a batch at a time, appending to `writer` as it goes.

    Returns:
        Counts of this run's outcomes by reason.
    """
    counts: Counter = Counter()
    todo = (e for e in examples if e["interaction_id"] not in writer.done)
    while batch := list(islice(todo, batch_size)):
        for outcome in builder.label_batch(batch):
            counts[outcome.decision.reason] += 1
            if outcome.record is not None:
                writer.write(outcome.record)
            else:
                writer.skip(outcome.example_id, outcome.decision.reason, outcome.detail)
        log.info("labelled %d examples so far: %s", sum(counts.values()), dict(counts))
    return counts


def summarize(path: str | Path) -> dict:
    """Label counts of a whole SFT file (all runs), with the last skip reason of ids never labelled."""
    labelled: dict[str, tuple[str, str]] = {}
    for row in read_jsonl(path):
        messages = row.get("messages") or [{}]
        labelled[str(row.get("id"))] = (_label_kind(messages[-1].get("content", "")), str(row.get("reason")))
    skipped: dict[str, str] = {}
    for row in read_jsonl(skipped_path(path)):
        if str(row.get("id")) not in labelled:
            skipped[str(row.get("id"))] = str(row.get("reason"))
    table = Counter(labelled.values()) + Counter(("(skipped)", reason) for reason in skipped.values())
    return {
        "records": len(labelled),
        "skipped": len(skipped),
        "retryable_skips": sum(reason in RETRYABLE for reason in skipped.values()),
        "by_label_and_reason": [{"label": label, "reason": reason, "count": n}
                                for (label, reason), n in sorted(table.items())],
    }


def _label_kind(label: str) -> str:
    return label if label in (IDK, INVALID) else "gold answer"


def format_summary(summary: dict) -> str:
    rows = [("label", "reason", "count")] + [(r["label"], r["reason"], str(r["count"]))
                                              for r in summary["by_label_and_reason"]]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.append(f"{summary['records']} records, {summary['skipped']} skipped "
                 f"({summary['retryable_skips']} retried on the next run)")
    return "\n".join(lines)


def select_split(examples: Iterable[dict], split: str) -> Iterator[dict]:
    """Examples of one CRAG split (`0` validation, `1` public test) or `all`."""
    if split == "all":
        yield from examples
        return
    wanted = int(split)
    yield from (e for e in examples if e.get("split") == wanted)


# ---------------------------------------------------------------------------------------------- wiring
@dataclass(frozen=True)
class LabelSettings:
    """One labelling run (the command line's arguments, same names and defaults)."""

    data: str  # CRAG file: .jsonl, .jsonl.bz2, Task-3 tar or directory
    out: str  # SFT .jsonl to write (appended; resumable)
    adapter: str = "web_answer"  # whose context and prompt: one of ADAPTERS
    split: str = "all"  # all | 0 | 1
    limit: int | None = None  # first N examples of the split only
    profile: str | None = None  # default $CRAG_PROFILE (cpu)
    judge: str = "rules"  # rules | llm
    judge_url: str | None = None  # OpenAI-compatible base URL for judge llm
    judge_model: str = "gpt-4-0125-preview"
    retries: int = 2  # extra attempts for a judge reply without a verdict
    batch_size: int = 8
    context_max_tokens: int | None = None  # context budget in tokens (None: the profile's web.context_max_tokens)
    predict_prompt: str = "answer_basic"  # p_basic: the prompt that is judged
    train_prompt: str | None = None  # prompt of the records (None: the profile's answer prompt for the adapter)


def make_builder(args: LabelSettings, config, generator=None, embedder=None) -> LabelBuilder:
    """Assembles the label builder for `args` from the profile `config`; `generator` and `embedder`, when given,
    are used instead of loading the profile's (one copy of the model serves several builders)."""
    from models.embedder import Embedder
    from models.llm.generator import make_generator
    from models.llm.prompts import PromptLibrary
    from training.contexts import KGContextSource, WebContextSource
    from training.endpoint import ChatEndpoint
    from training.judges import make_checks

    generator = generator or make_generator(config.llm, config.models_dir)
    embedder = embedder or Embedder.from_config(config.embedder, config.models_dir)
    budget = args.context_max_tokens or config.web.context_max_tokens
    if args.adapter == "kg_answer":
        from models.kg.pathway import KGPathway

        source = KGContextSource(KGPathway.from_config(config.kg, embedder=embedder), generator, budget)
        default_prompt = config.pipeline.kg_answer_prompt
    else:
        from models.web import WebRetriever

        retriever = WebRetriever.from_config(config.web, config.models_dir, embedder=embedder)
        source = WebContextSource(retriever, generator, budget, task=config.pipeline.task)
        default_prompt = config.pipeline.answer_prompt
    judge_generator, judge_name = generator, "local"
    if args.judge == "llm" and args.judge_url:
        judge_generator, judge_name = ChatEndpoint(args.judge_url, args.judge_model), args.judge_model
    answer_check, context_check = make_checks(args.judge, judge_generator, args.retries, judge_name)
    prompts = PromptLibrary()
    return LabelBuilder(source, generator, answer_check, context_check, prompts.get(args.predict_prompt),
                        prompts.get(args.train_prompt or default_prompt), args.adapter,
                        max_new_tokens=config.pipeline.answer_max_new_tokens,
                        word_limit=config.pipeline.answer_word_limit)


def label_file(args: LabelSettings) -> dict:
    """Labels the examples of `args.data` not yet in `args.out` (appended; resumable), writes
    `<name>.summary.json` and prints its table; returns the summary."""
    from models.config import load_config
    from evaluation.data import load_examples

    config = load_config(args.profile)
    builder = make_builder(args, config)
    examples = islice(select_split(load_examples(args.data), args.split), args.limit)
    with SFTWriter(args.out, retry_reasons=RETRYABLE) as writer:
        counts = build(examples, builder, writer, args.batch_size)
    summary = summarize(args.out) | {"this_run": dict(counts), "judge": args.judge, "adapter": args.adapter}
    out = Path(args.out)
    out.with_name(out.name.removesuffix(".jsonl") + ".summary.json").write_text(json.dumps(summary, indent=1))
    print(format_summary(summary))
    return summary
