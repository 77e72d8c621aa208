"""API-generation training data (db3 §3.2 "Fine-tuning for API Generation"): format, validation, SFT records.

One JSON object per line:

    {"id": "seed-movie-03", "query": "...", "query_time": "03/01/2024, 10:00:00 PT", "domain": "movie",
     "program": "get_movie(\\"inception\\")[\\"release_date\\"]", "source": "seed", "result": ["..."] | null}

    validate_files(["data/kg/api_train_seed.jsonl"], execute=True, write="FILE")   # every target must compile
    to_sft_file(["data/kg/api_train_seed.jsonl", "outputs/api_boot.jsonl"], "outputs/sft/api.jsonl")

(the command line: scripts/api_data.py validate|to-sft)

Design decisions:
- Every target must compile for its domain with the project's own parser and signatures
  (`models.kg.apis.compile_program`); it is stored in canonical form (`format_program`), the form the
  constrained decoder generates, so the adapter never learns a spelling the grammar would refuse.
  A target that does not compile is an `APIDataError` naming the example, line and the parser's caret.
- `execute` (`--execute`) runs each program through `KGPathway.evidence` against the configured mock API (`kg.api_url`
  or `$CRAG_MOCK_API_URL`) and stores the verbalised facts in `result`: a reviewer sees at a glance which
  targets find nothing.
- SFT records use the exact request the pipeline sends (`KGPathway.api_request`: the domain prompt plus
  in-context examples chosen by similarity) with the program as the assistant turn. An example whose query
  is also in the in-context pool is left out: its own answer would sit in its prompt, teaching the adapter to
  copy instead of to translate.
- The seed (`data/kg/api_train_seed.jsonl`) is hand-written, disjoint from the in-context pool, and covers
  every function of every domain and every operator (ALL, AVG, sort, `*`, eq/neq/ge/le, `[:n]`, `["len"]`,
  None); `tests/training/test_api_data.py` keeps that true. `training/bootstrap_api.py` adds more.
"""
from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from models.kg.apis import compile_program
from models.kg.language import KGError, format_program
from models.types import DOMAINS
from training.contexts import api_request, example_query
from training.sft_data import SFTRecord, read_validated

log = logging.getLogger(__name__)

ADAPTER = "api_generation"
SEED_PATH = "data/kg/api_train_seed.jsonl"


class APIDataError(ValueError):
    """An API-generation example that cannot be used (bad fields, or a target that does not compile)."""


@dataclass(frozen=True)
class APIExample:
    id: str
    query: str
    query_time: str
    domain: str
    program: str  # canonical form; "None" (or "") when the KG cannot help
    source: str = "seed"  # seed | bootstrap:<model> | manual
    result: tuple[str, ...] | None = None  # verbalised facts from executing the program, if it was run

    def to_json(self) -> str:
        row = asdict(self)
        row["result"] = list(self.result) if self.result is not None else None
        return json.dumps(row, ensure_ascii=False)


def validate(raw: dict) -> APIExample:
    """Checks one raw record and returns it with its program in canonical form.

    Raises:
        APIDataError: a missing field, an unknown domain, or a program that does not compile.
    """
    if not isinstance(raw, dict):
        raise APIDataError(f"expected a JSON object, got {type(raw).__name__}")
    fields = {name: raw.get(name) for name in ("id", "query", "query_time", "domain", "program")}
    missing = [name for name, value in fields.items() if not isinstance(value, str) or
               (name in ("id", "query", "domain") and not value.strip())]
    if missing:
        raise APIDataError(f"example {raw.get('id')!r}: missing or non-text field(s) {missing}")
    if fields["domain"] not in DOMAINS:
        raise APIDataError(f"example {fields['id']!r}: unknown domain {fields['domain']!r}; expected one of {DOMAINS}")
    try:
        program = compile_program(fields["program"], fields["domain"])
    except KGError as exc:
        raise APIDataError(f"example {fields['id']!r}: target does not compile for {fields['domain']}:\n{exc}") from exc
    result = raw.get("result")
    return APIExample(id=fields["id"], query=fields["query"].strip(), query_time=fields["query_time"],
                      domain=fields["domain"], program=format_program(program),
                      source=str(raw.get("source") or "seed"),
                      result=tuple(str(r) for r in result) if isinstance(result, list) else None)


def load_api_examples(path: str | Path, strict: bool = True) -> Iterator[APIExample]:
    """Streams the validated examples of a file.

    Args:
        strict: raise on the first bad line (a seed file must be clean); False logs and skips it.

    Raises:
        APIDataError: a bad line, naming file and line, when `strict`.
    """
    return read_validated(path, validate, APIDataError, strict)


def write_api_examples(examples: Iterable[APIExample], path: str | Path) -> int:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for example in examples:
            handle.write(example.to_json() + "\n")
            count += 1
    return count


def _as_crag(example: APIExample) -> dict:
    return {"interaction_id": example.id, "query": example.query, "query_time": example.query_time,
            "domain": example.domain}


def execute_examples(examples: Iterable[APIExample], kg) -> Iterator[APIExample]:
    """Each example with `result` set to the facts its program yields on `kg` (a `KGPathway`)."""
    for example in examples:
        facts = kg.evidence(example_query(_as_crag(example)), example.domain, example.program)
        if not facts and example.program != "None":
            log.warning("%s: the program found nothing: %s", example.id, example.program.replace("\n", " | "))
        yield replace(example, result=tuple(facts))


def to_sft_records(examples: Iterable[APIExample], kg, pool_queries: Iterable[str] = ()) -> Iterator[SFTRecord]:
    """Chat records for the API-generation adapter: the pipeline's request, then the program.

    Args:
        examples: validated examples.
        kg: a `KGPathway` (only `api_request` is used: no API calls).
        pool_queries: queries of the in-context pool; examples asking one of them are left out.
    """
    in_pool = {q.strip().lower() for q in pool_queries}
    for example in examples:
        if example.query.lower() in in_pool:
            log.info("%s left out: its query is an in-context example", example.id)
            continue
        request = api_request(kg, _as_crag(example))
        if request is None:
            continue
        messages = tuple(request.messages) + ({"role": "assistant", "content": example.program},)
        yield SFTRecord(example.id, messages, ADAPTER, example.source,
                        {"domain": example.domain, "query": example.query})


# ---------------------------------------------------------------------------------------------- files
def _kg_pathway(profile: str | None):
    from models.config import load_config
    from models.embedder import Embedder
    from models.kg.pathway import KGPathway

    config = load_config(profile)
    return KGPathway.from_config(config.kg, embedder=Embedder.from_config(config.embedder, config.models_dir))


def load_files(files: Sequence[str | Path]) -> list[APIExample]:
    """Every example of `files` (each target compiled: raises APIDataError otherwise); prints their count by domain."""
    examples = [e for path in files for e in load_api_examples(path)]
    by_domain = {d: sum(e.domain == d for e in examples) for d in DOMAINS}
    print(f"{len(examples)} examples, every target compiles: {by_domain}")
    return examples


def validate_files(files: Sequence[str | Path], execute: bool = False, write: str | Path | None = None,
                   profile: str | None = None) -> list[APIExample]:
    """`load_files`; with `execute`, each program run against the profile's mock API (its facts stored in `result`);
    with `write`, the canonical (and executed) examples written there."""
    examples = load_files(files)
    if execute:
        examples = list(execute_examples(examples, _kg_pathway(profile)))
        print(f"{sum(bool(e.result) for e in examples)} of {len(examples)} programs found facts")
    if write:
        write_api_examples(examples, write)
    return examples


def to_sft_file(files: Sequence[str | Path], out: str | Path, profile: str | None = None) -> list[SFTRecord]:
    """`load_files`, then their SFT records for the api_generation adapter (the profile's requests; examples whose
    query is in the in-context pool left out) written to `out`."""
    examples = load_files(files)
    kg = _kg_pathway(profile)
    records = list(to_sft_records(examples, kg, (e.query for e in kg.pool.examples)))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text("".join(r.to_json() + "\n" for r in records), encoding="utf-8")
    print(f"{len(records)} SFT records written to {out}")
    return records
