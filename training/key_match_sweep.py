"""Choosing `kg.key_match_threshold` from template pairs, as scripts/sweep_key_match.py prints it (its docstring
states where the pairs come from and how the threshold is chosen).

`pairs` runs each API-generation template's program against the bundled mock API and pairs the question's attribute
phrase with the key path of its final value (right) and of other fields of the same rows (wrong); `sweep_key_match`
scores every pair with the embedder's key matcher, prints the share of right keys kept and wrong keys caught per
threshold, and the threshold chosen.
"""
from __future__ import annotations

import logging
import random
from collections import Counter

log = logging.getLogger(__name__)


def pairs(per_template: int, profile: str, seed: int = 0) -> tuple[list[tuple[str, str, bool]], object]:
    """(attribute phrase, key path, is the key the question's) for the templates' examples, and the profile's
    embedder that scored them."""
    from mock_api.server import running_server
    from models.config import load_config
    from models.embedder import Embedder
    from models.kg.apis import compile_program
    from models.kg.checks.dates import question_dates
    from models.kg.checks.fit import attribute_phrase, key_path
    from models.kg.checks.program_checks import program_names
    from models.kg.client import MockAPIClient
    from models.kg.executor import execute
    from models.kg.language.ast import Call
    from models.kg.pathway import KGPathway
    from models.types import Query
    from training.api_templates import FixtureKG, cap_per_template, generate

    config = load_config(profile)
    embedder = Embedder.from_config(config.embedder, config.models_dir)
    examples = cap_per_template(generate(FixtureKG.load(), seed=seed), per_template, seed=seed)
    rng = random.Random(seed)
    out = []
    failed: Counter = Counter()  # exception type -> templates' examples the pathway could not run
    with running_server(kg_dir=None, port=0) as url:
        kg = KGPathway(config.kg, MockAPIClient(url), embedder=embedder)
        for example in examples:
            query = Query(example.id, example.query, example.query_time)
            try:
                program = compile_program(example.program, example.domain)
                result = execute(program, kg.client, now=query.time, matcher=kg.matcher, question=query.text)
            except Exception as exc:  # noqa: BLE001 - a template the pathway cannot run gives no pair
                failed[type(exc).__name__] += 1
                continue
            final = [s for s in result.statements if not s.consumed]
            if not final or not final[-1].values or final[-1].table is None or not final[-1].table.rows:
                continue
            last = final[-1]
            head = last.statement.head if isinstance(last.statement.head, Call) else None
            keys = list(dict.fromkeys(v.key for v in last.values))
            dates = [d.written for d in question_dates(query.text, query.time)]
            phrase = attribute_phrase(query.text, program_names(program), dates)
            if not phrase.strip():
                continue
            out.append((phrase, key_path(keys, last.table.aliases, head), True))
            others = [k for k in last.table.rows[0].fields if k not in keys]
            for other in rng.sample(others, min(3, len(others))):
                out.append((phrase, key_path([other], last.table.aliases, head), False))
    if failed:
        log.warning("%d of %d template examples could not be compiled or run against the bundled KG and give no "
                    "pair (%s)", sum(failed.values()), len(examples),
                    ", ".join(f"{name} {n}" for name, n in failed.most_common()))
    return out, embedder


def sweep_key_match(per_template: int = 4, profile: str = "cpu") -> int:
    """Sweeps the threshold on `per_template` examples per template, with `profile`'s embedder, and prints."""
    from models.kg.checks.fit import KeyMatcher

    found, embedder = pairs(per_template, profile)
    matcher = KeyMatcher(embedder)
    scored = [(matcher.score(phrase, path), right) for phrase, path, right in found]
    positives = [s for s, right in scored if right]
    negatives = [s for s, right in scored if not right]
    print(f"{len(positives)} right-key pairs, {len(negatives)} wrong-key pairs "
          f"({sum(s == 1.0 for s in positives)} / {sum(s == 1.0 for s in negatives)} matched lexically)")
    print("| threshold | right keys kept | wrong keys caught | balanced accuracy |\n|---|---|---|---|")
    rows = []
    for step in range(0, 17):
        threshold = round(step * 0.05, 2)
        kept = sum(s >= threshold for s in positives) / len(positives)
        caught = sum(s < threshold for s in negatives) / len(negatives)
        balanced = (kept + caught) / 2
        print(f"| {threshold:.2f} | {kept:.1%} | {caught:.1%} | {balanced:.3f} |")
        rows.append((threshold, balanced))
    top = max(balanced for _, balanced in rows)
    chosen = next((t, b) for t, b in rows if b >= top - 0.01)
    print(f"chosen: kg.key_match_threshold = {chosen[0]:.2f} (balanced accuracy {chosen[1]:.3f}; best {top:.3f})")
    return 0
