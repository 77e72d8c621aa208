"""The catalogue (every domain's table) and the three splits, whose definition is fixed here.

    examples = generate(FixtureKG.load(), seed=0)          # every template x entity x phrasing
    splits = split_examples(examples, icl_entities, seed=0) # train / heldout_entities / heldout_templates

The split, written down:
- `heldout_entities`: trained phrasings of trained templates, about entities never in `train` (a seeded quarter
  of each domain's entities, never one the in-context pool names). An example naming any held-out entity is
  not in `train`.
- `heldout_templates` (new wordings): questions about training entities whose wording was never trained on,
  of two kinds, told apart by `TemplateExample.held`:
  - "phrasing": the `unseen` phrasings every template declares beside its trained ones;
  - "template": every phrasing of the templates declared `heldout=True` (`HELDOUT_TEMPLATES`), some of them
    a whole function's only template (`get_stock_eps`), others a key or a second hop no trained template asks.
- `train`: the rest. The phrasings, the `unseen` ones and the `heldout` flags live in the domain tables
  (`movie.py`, `music.py`, `finance.py`, `sports.py`, `open.py`), one declaration per template, so a change to
  the split is a reviewed change to a table.
"""
from __future__ import annotations

import random
import re
from typing import Iterable, Sequence

from training.api_templates.base import FixtureKG, Template, crag_register
from training.api_templates.checking import TemplateExample
from training.api_templates.finance import FINANCE
from training.api_templates.movie import MOVIE
from training.api_templates.music import MUSIC
from training.api_templates.open import OPEN
from training.api_templates.sports import SPORTS

SPLITS = ("train", "heldout_entities", "heldout_templates")
TABLES = (MOVIE, MUSIC, FINANCE, SPORTS, OPEN)
_QUERY_TIMES = ("02/26/2024, 13:40:55 PT", "03/01/2024, 17:05:10 PT", "03/06/2024, 08:30:41 PT",
                "03/12/2024, 20:12:03 PT", "03/14/2024, 09:14:02 PT")


def templates() -> list[Template]:
    """Every template, domain by domain in declaration order (ids are unique)."""
    out = [template for table in TABLES for template in table.templates]
    ids = [t.id for t in out]
    assert len(ids) == len(set(ids)), "template ids must be unique"
    return out


HELDOUT_TEMPLATES = tuple(t.id for t in templates() if t.heldout)

# Functions no template asks, and why (the test checks every other function of every domain is asked).
UNASKED_FUNCTIONS: dict[str, str] = {}


def generate(kg: FixtureKG, seed: int = 0, catalogue: Sequence[Template] | None = None) -> list[TemplateExample]:
    """Every template filled with every entity it fits, one example per phrasing (trained and unseen), each
    written in CRAG's register (`crag_register`, seeded: the same seed gives the same examples)."""
    rng = random.Random(seed)
    out = []
    for template in catalogue or templates():
        phrasings = [(q, "template" if template.heldout else "") for q in template.questions]
        phrasings += [(q, "template" if template.heldout else "phrasing") for q in template.unseen]
        for n, filling in enumerate(template.fill(kg)):
            program = template.program.format(**filling.slots)
            for p, (question, held) in enumerate(phrasings):
                query_time = filling.query_time or rng.choice(_QUERY_TIMES)
                query = crag_register(question.format(**filling.slots), rng)
                out.append(TemplateExample(f"{template.id}-{n:03d}-{p}", template.id, query, query_time,
                                           template.domain, program, filling.entities, filling.expected, held))
    return out


_QUOTED = re.compile(r'"([^"]+)"')


def program_entities(programs: Iterable[str]) -> set[str]:
    """Lower-cased quoted strings of programs (the names an in-context pool teaches)."""
    return {m.lower() for program in programs for m in _QUOTED.findall(program)}


def split_examples(examples: Sequence[TemplateExample], protected: Iterable[str] = (), seed: int = 0,
                   heldout_fraction: float = 0.25) -> dict[str, list[TemplateExample]]:
    """train / heldout_entities / heldout_templates (the module docstring defines them).

    Args:
        protected: entities never held out (those of the in-context pool).
        heldout_fraction: share of each domain's other entities held out (seeded).
    """
    protected = {p.lower() for p in protected}
    rng = random.Random(seed)
    entities_by_domain: dict[str, list[str]] = {}
    for example in examples:
        for entity in example.entities:
            if entity not in protected and entity not in entities_by_domain.setdefault(example.domain, []):
                entities_by_domain[example.domain].append(entity)
    held_entities = set()
    for domain in sorted(entities_by_domain):
        names = sorted(entities_by_domain[domain])
        rng.shuffle(names)
        held_entities.update(names[:max(1, round(len(names) * heldout_fraction))])
    # a stock named both ways ("meta", "meta platforms") is one entity: a name the pool protects protects the other
    held_entities -= {x for e in examples if protected & set(e.entities) for x in e.entities}
    splits = {name: [] for name in SPLITS}
    for example in examples:
        new_entity = any(e in held_entities for e in example.entities)
        if example.held:
            if not new_entity:
                splits["heldout_templates"].append(example)
        elif new_entity:
            splits["heldout_entities"].append(example)
        else:
            splits["train"].append(example)
    return splits


def cap_per_template(examples: Sequence[TemplateExample], cap: int | None,
                     seed: int = 0) -> list[TemplateExample]:
    """At most `cap` examples of each template (a seeded sample, original order kept), so that the templates
    with many entities (prices: ticker x day) do not crowd out the rare functions in a short training run."""
    if cap is None:
        return list(examples)
    rng = random.Random(seed)
    by_template: dict[str, list[int]] = {}
    for i, example in enumerate(examples):
        by_template.setdefault(example.template, []).append(i)
    keep = {i for indices in by_template.values() for i in (indices if len(indices) <= cap
                                                               else rng.sample(indices, cap))}
    return [e for i, e in enumerate(examples) if i in keep]
