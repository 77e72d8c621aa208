"""Question templates over the bundled fixture KG: API-generation examples whose answers are known.

    examples = generate(FixtureKG.load(), seed=0)          # every template x entity x phrasing
    splits = split_examples(examples, icl_entities, seed=0) # train / heldout_entities / heldout_templates

The training data is made from the package's own KG, each target checked by executing it, with wordings in
CRAG's own register and a split that holds whole wordings out. One table per domain
(`movie.py`, `music.py`, `finance.py`, `sports.py`, `open.py`) declares each template once: its program, its
trained phrasings, its `unseen` phrasings, whether it is held out whole, and the `fill` function that reads the
KG *sources* (`data/kg_fixture/`, not the API) and yields, per entity, the slot values, the entities named and
the answer the program must produce. `check_answer` compares that answer with what the executor returns, so a
target that parses but asks the wrong question (or a fixture the API reads differently) is caught.

Design decisions:
- Expected answers come from the sources, independently of the mock API and the executor: agreement of the
  two is the evidence that the target is right.
- Entities are lower-cased names as a user types them; they are what the held-out entity split separates.
  Entities that the in-context pool names are never held out (the pool is in every ICL prompt).
- The split is defined in `catalogue.py`'s docstring; `coverage.py` lists the API keys no template asks, and why.
- Relative dates ("yesterday", "last game") carry their own query time; the expected value is resolved
  from it here, independently of `models.kg.language.timeexpr`.
"""
from training.api_templates.base import FIXTURE_DIR, DomainTable, Filling, FixtureKG, Template, crag_register
from training.api_templates.catalogue import (HELDOUT_TEMPLATES, SPLITS, TABLES, UNASKED_FUNCTIONS, cap_per_template,
                                              generate, program_entities, split_examples, templates)
from training.api_templates.checking import (TemplateExample, check_answer, final_answer, read_examples,
                                             write_examples)

__all__ = ["FIXTURE_DIR", "DomainTable", "Filling", "FixtureKG", "Template", "crag_register", "HELDOUT_TEMPLATES",
           "SPLITS", "TABLES", "UNASKED_FUNCTIONS", "cap_per_template", "generate", "program_entities",
           "split_examples", "templates", "TemplateExample", "check_answer", "final_answer", "read_examples",
           "write_examples"]
