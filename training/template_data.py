"""API-generation data from the bundled KG's templates: generated, split, validated by execution, as SFT records.

    kg = kg_pathway("cpu", url)                                   # the profile's KG pathway on a mock API at `url`
    kept, failures = validate(generate(FixtureKG.load()), kg)     # each target run; kept when it gives its answer
    splits = split_for_pool(kept, kg)                             # train / heldout_entities / heldout_templates
    records = sft_records(cap_per_template(splits["train"], 20), kg, extra=read_extra([...]))

The library behind `scripts/make_api_data.py` (`make_api_data`: all three splits, for evaluation) and
`training/make_adapters.py` (`train_examples`: only the sampled training examples are executed, the rest is never
asked of the API).

Design decisions:
- Each target program is scored as `KGPathway.evidence` would run it (`training.api_scoring.score_program`) and
  kept only when it yields the answer read from the KG sources; the failures are returned with their scores so
  a caller can name them (a failing template is a bug in the template or in the KG pathway).
- The in-context pool's entities (`kg.icl_pool`) are never held out, and training examples asking a pool question
  are left out: at inference the pool sits in every in-context prompt, and its own answer would be in its prompt.
- SFT records are `training.api_data.to_sft_records`: the pipeline's own request (the profile's `kg.api_prompt`
  and `kg.icl_k`) with the program as the assistant turn. Hand-written `extra` examples (real CRAG wording) are
  parsed (`training.api_data.validate`), not executed: their entities need not be in the fixture.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Sequence

from models.jsonl import numbered_rows
from training.api_templates import (
    SPLITS, FixtureKG, TemplateExample, cap_per_template, generate, program_entities, split_examples, write_examples,
)


def pathway_from_config(config, url: str, icl_k: int | None = None, api_prompt: str | None = None, embedder=None):
    """The KG pathway of a loaded profile pointed at the mock API at `url`, with the profile's embedder (or
    `embedder`); `icl_k` and `api_prompt` override the number of in-context examples and the request template."""
    from models.embedder import Embedder
    from models.kg.pathway import KGPathway

    embedder = embedder or Embedder.from_config(config.embedder, config.models_dir)
    kg_config = replace(config.kg, api_url=url, icl_k=config.kg.icl_k if icl_k is None else icl_k,
                        api_prompt=config.kg.api_prompt if api_prompt is None else api_prompt)
    return KGPathway.from_config(kg_config, embedder=embedder)


def kg_pathway(profile: str | None, url: str, icl_k: int | None = None, api_prompt: str | None = None):
    """`pathway_from_config` of the profile named `profile` (None: `$CRAG_PROFILE`)."""
    from models.config import load_config

    return pathway_from_config(load_config(profile), url, icl_k, api_prompt)


def validate(examples: Iterable[TemplateExample], kg) -> tuple[list, list]:
    """(kept, failures): examples whose own program gives the expected answer, and `(example, score)` for the rest."""
    from training.api_scoring import score_program

    kept, failures = [], []
    for example in examples:
        score = score_program(kg, example, example.program)
        if score.correct:
            kept.append(example)
        else:
            failures.append((example, score))
    return kept, failures


def pool_queries(kg) -> set[str]:
    return {e.query.strip().lower() for e in kg.pool.examples}


def split_for_pool(examples: Sequence[TemplateExample], kg, seed: int = 0) -> dict[str, list[TemplateExample]]:
    """The three splits, the pool's entities never held out and no pool question in `train`."""
    splits = split_examples(examples, program_entities(e.program for e in kg.pool.examples), seed=seed)
    asked = pool_queries(kg)
    splits["train"] = [e for e in splits["train"] if e.query.lower() not in asked]
    return splits


def train_examples(kg, max_per_template: int | None = None, seed: int = 0,
                   max_templates: int | None = None) -> tuple[list, list]:
    """(kept, failures) of the training split: every template x entity x phrasing generated, split, at most
    `max_per_template` per template (a seeded sample), the first `max_templates` templates only when given, and
    only those executed against the mock API."""
    train = cap_per_template(split_for_pool(generate(FixtureKG.load(), seed=seed), kg, seed)["train"],
                             max_per_template, seed)
    if max_templates is not None:
        names = list(dict.fromkeys(e.template for e in train))[:max_templates]
        train = [e for e in train if e.template in set(names)]
    return validate(train, kg)


def read_extra(paths: Iterable[str | Path]) -> list[dict]:
    """Hand-written examples (one JSON object per line), each with an id naming its file and line."""
    extra = []
    for path in paths:
        for n, row in numbered_rows(path):
            extra.append({**row, "id": f"{Path(path).stem}:{n}", "source": str(path)})
    return extra


def sft_records(examples: Iterable[TemplateExample], kg, extra: Sequence[dict] = ()) -> list:
    """The template examples' SFT records (pool questions left out, as at inference), then `extra`'s, whose
    programs must compile (raises `training.api_data.APIDataError` otherwise) but are not executed."""
    from training.api_data import to_sft_records, validate as validate_api

    api_examples = [validate_api({"id": e.id, "query": e.query, "query_time": e.query_time, "domain": e.domain,
                                  "program": e.program, "source": f"template:{e.template}"}) for e in examples]
    records = list(to_sft_records(api_examples, kg, (e.query for e in kg.pool.examples)))
    records += list(to_sft_records([validate_api(raw) for raw in extra], kg))
    return records


def write_sft(examples: Iterable[TemplateExample], kg, path: Path, extra: Sequence[dict] = ()) -> int:
    """`sft_records` written to `path` (replaced); returns how many."""
    records = sft_records(examples, kg, extra)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("".join(r.to_json() + "\n" for r in records), encoding="utf-8")
    print(f"{len(records)} SFT records written to {path}")
    return len(records)


def make_api_data(out: str | Path, seed: int = 0, profile: str | None = None, sft: bool = False,
                  icl_k: int | None = None, api_prompt: str | None = None, extra: Sequence[str | Path] = (),
                  max_per_template: int | None = None, allow_failures: bool = False) -> int:
    """Generates every template example of the fixture KG, validates each by execution against the bundled mock API
    (started in-process), and writes the three splits to `out/<split>.jsonl`; with `sft`, also
    `out/train.sft.jsonl` (the train split, at most `max_per_template` per template, then the `extra` files'
    hand-written examples; requests with `icl_k` and `api_prompt`, default the profile's). Prints each failure and
    each split's counts. Returns the exit status: 1 when an example failed and not `allow_failures`, else 0."""
    from mock_api.server import running_server

    examples = generate(FixtureKG.load(), seed=seed)
    with running_server() as url:
        kg = kg_pathway(profile, url, icl_k, api_prompt)
        kept, failures = validate(examples, kg)
        for example, score in failures:
            print(f"FAIL {example.id}: {example.program!r} -> {list(score.answer)} {score.error} "
                  f"(expected {list(example.expected)})")
        splits = split_for_pool(kept, kg, seed=seed)
        out = Path(out)
        for name in SPLITS:
            count = write_examples(splits[name], out / f"{name}.jsonl")
            domains = Counter(e.domain for e in splits[name])
            print(f"{name}: {count} examples, {len({e.template for e in splits[name]})} templates, "
                  f"{len({x for e in splits[name] for x in e.entities})} entities {dict(sorted(domains.items()))}")
        if sft:
            write_sft(cap_per_template(splits["train"], max_per_template, seed), kg,
                      out / "train.sft.jsonl", extra=read_extra(extra))
    print(f"{len(kept)} of {len(examples)} target programs give their expected answer")
    return 1 if failures and not allow_failures else 0
