"""Bootstraps API-generation targets for CRAG questions with a strong model behind an OpenAI-compatible endpoint.

    counts = bootstrap(examples, kg, ChatEndpoint(url, model), model, "outputs/api/bootstrap.jsonl")
    counts = bootstrap_file(data, "outputs/api/bootstrap.jsonl", url, model, split="0")   # as the command line does

(the command line: scripts/bootstrap_api.py)

db3 wrote a first version of its API targets with GPT-4 and the API-generation prompt, then fixed them by
hand. Here the strong model gets exactly the request the pipeline builds (`KGPathway.api_request`: the domain
prompt with the in-context examples most similar to the question) for each question of the split, under its
gold domain. A reply is kept only when, cleaned of code fences (`clean_program`), it compiles for that
domain; it is stored in canonical form with `source: "bootstrap:<model>"`. A reply that does not compile
goes to `<name>.rejected.jsonl` with the parser's message, for the manual pass. With `--execute` each kept
program also runs against the mock API and its facts are stored (`result`). The output is the format of
`training/api_data.py`; rerunning resumes (ids already kept or rejected are not asked again).
"""
from __future__ import annotations

import json
import logging
from dataclasses import replace
from itertools import islice
from pathlib import Path
from typing import Iterable

from models.kg.pathway import clean_program
from training.api_data import APIDataError, APIExample, execute_examples, validate
from training.contexts import api_request
from training.sft_data import read_jsonl

log = logging.getLogger(__name__)


def rejected_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name.removesuffix(".jsonl") + ".rejected.jsonl")


def bootstrap(examples: Iterable[dict], kg, generator, model_name: str, out: str | Path, batch_size: int = 16,
              execute: bool = False) -> dict:
    """Asks `generator` for a program per CRAG example and appends those that compile to `out`.

    Args:
        examples: normalised CRAG examples (with gold `domain`).
        kg: a `KGPathway` (builds the requests; runs programs when `execute`).
        generator: the strong model (`ChatEndpoint`), or any `Generator`.
        model_name: recorded as `source: bootstrap:<model_name>`.
        out: the API-data `.jsonl` (appended).
        execute: run each kept program and store its facts.

    Returns:
        Counts: `kept`, `rejected`, `no_request` (unknown domain) for this run.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {str(r.get("id")) for path in (out, rejected_path(out)) for r in read_jsonl(path)}
    counts = {"kept": 0, "rejected": 0, "no_request": 0}
    todo = (e for e in examples if e["interaction_id"] not in done)
    with open(out, "a", encoding="utf-8") as kept, open(rejected_path(out), "a", encoding="utf-8") as rejected:
        while batch := list(islice(todo, batch_size)):
            asks = [(e, r) for e in batch if (r := api_request(kg, e)) is not None]
            counts["no_request"] += len(batch) - len(asks)
            replies = generator.generate([r for _, r in asks]) if asks else []
            good = []
            for (example, _), reply in zip(asks, replies):
                try:
                    good.append(_as_api_example(example, reply, model_name))
                except APIDataError as exc:
                    counts["rejected"] += 1
                    rejected.write(json.dumps({"id": example["interaction_id"], "query": example["query"],
                                               "domain": example.get("domain"), "reply": reply,
                                               "error": str(exc)}, ensure_ascii=False) + "\n")
            for api_example in (execute_examples(good, kg) if execute else good):
                kept.write(api_example.to_json() + "\n")
                counts["kept"] += 1
            kept.flush()
            rejected.flush()
            log.info("bootstrap so far: %s", counts)
    return counts


def _as_api_example(example: dict, reply: str, model_name: str) -> APIExample:
    """The reply as a validated example; raises APIDataError when it is empty or does not compile."""
    program = clean_program(reply)
    if not program:
        raise APIDataError("empty reply (a failed call, or nothing generated)")
    raw = {"id": example["interaction_id"], "query": example["query"], "query_time": example.get("query_time", ""),
           "domain": example.get("domain", ""), "program": program, "source": f"bootstrap:{model_name}"}
    return replace(validate(raw), result=None)


def bootstrap_file(data: str | Path, out: str | Path, url: str, model: str, split: str = "all",
                   limit: int | None = None, execute: bool = False, profile: str | None = None) -> dict:
    """`bootstrap` of the CRAG file `data` (one split, the first `limit` questions) with the model `model` behind the
    OpenAI-compatible endpoint `url`, the requests the profile's KG pathway builds; prints the counts and returns
    them."""
    from models.config import load_config
    from evaluation.data import load_examples
    from models.embedder import Embedder
    from models.kg.pathway import KGPathway
    from training.build_sft_data import select_split
    from training.endpoint import ChatEndpoint

    config = load_config(profile)
    kg = KGPathway.from_config(config.kg, embedder=Embedder.from_config(config.embedder, config.models_dir))
    examples = islice(select_split(load_examples(data), split), limit)
    counts = bootstrap(examples, kg, ChatEndpoint(url, model), model, out, execute=execute)
    print(f"kept {counts['kept']}, rejected {counts['rejected']} (see {rejected_path(out)}), "
          f"no request {counts['no_request']}")
    return counts
