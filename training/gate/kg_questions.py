"""Labelled KG questions for fitting the calibrated answer gate (models/verify/gate.py), from the bundled KG.

    rows = gate_questions(per_template=3, seed=0)     # CRAG-format rows (Task 2): query, query_time, domain, answer
    write_rows(rows, "outputs/gate-fit/cpu/gate_questions.jsonl")

The gate needs many answers whose correctness is known, and none from a set its scores are reported on. The KG
question templates (`training/api_templates/`) give them: every template filled with the fixture KG's entities,
each with the answer read from the KG's sources. Per template, up to `per_template` examples (seeded), those in
wordings the CPU profile's KG adapter was not trained on first (`held`: an unseen phrasing or a held-out template),
so the pathway answers them as it answers new questions, with its mistakes. An example that asks a question of a
set the gate is reported on (the bundled and Task-3 samples, kg_unseen: the same entity and gold answer, in any
words, `training.gate.held_out`) is never picked. Examples whose answer is empty or a
list of more than `max_items` items are left out (a long list is not one short answer). The rows carry no pages:
run them as Task 2 (`local_evaluation.py --task 2`, the bundled mock API), and the KG pathway (its values and its
answers over facts) and the public-data facts produce the candidates.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Sequence

from training.api_templates import FixtureKG, TemplateExample, generate


def answer_text(expected: Sequence) -> str:
    """The expected items as one short answer: joined by ", ", whole numbers without ".0"."""
    shown = [str(int(v)) if isinstance(v, float) and v.is_integer() else str(v).strip() for v in expected
             if v is not None]
    return ", ".join(v for v in shown if v)


def pick(examples: Sequence[TemplateExample], per_template: int, seed: int = 0) -> list[TemplateExample]:
    """Up to `per_template` examples of each template, unseen wordings first, each group a seeded sample; the
    examples' own order is kept."""
    rng = random.Random(seed)
    by_template: dict[str, list[int]] = {}
    for i, example in enumerate(examples):
        by_template.setdefault(example.template, []).append(i)
    keep = set()
    for indices in by_template.values():
        held = [i for i in indices if examples[i].held]
        rest = [i for i in indices if not examples[i].held]
        rng.shuffle(held)
        rng.shuffle(rest)
        keep.update((held + rest)[:per_template])
    return [e for i, e in enumerate(examples) if i in keep]


def gate_questions(per_template: int = 3, seed: int = 0, max_items: int = 3, kg: FixtureKG | None = None) -> list[dict]:
    """CRAG-format rows of the picked template examples (see the module docstring), none a question of a set the
    gate is reported on by content (`training.gate.held_out`: the same entity and gold answer, in any words)."""
    from training.gate.held_out import held_out_questions, question, sharing

    examples = [e for e in generate(kg or FixtureKG.load(), seed=seed)
                if e.expected and len(e.expected) <= max_items and answer_text(e.expected)]
    reported = sharing([question("gate_kg", {"id": e.id, "query": e.query, "expected": list(e.expected)})
                        for e in examples], held_out_questions())
    examples = [e for e in examples if e.id not in reported]
    return [{"interaction_id": f"gate-{e.id}", "query": e.query, "query_time": e.query_time, "domain": e.domain,
             "answer": answer_text(e.expected), "alt_ans": [], "search_results": [], "template": e.template,
             "held": e.held} for e in pick(examples, per_template, seed)]


def rows_text(rows: Sequence[dict]) -> str:
    """The JSONL text `write_rows` writes (what the fitted gate's digest of this set is taken of)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def write_rows(rows: Sequence[dict], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rows_text(rows), encoding="utf-8")
    return path
