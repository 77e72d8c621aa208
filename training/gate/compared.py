"""What the held-out check compares (`training/gate/held_out.py` is the rule): the sets each fitted thing was fitted
or trained on, and the reported sets it answers in, read from the catalogue (`evaluation/sets.py`).

    for owner in FITTED:
        unexplained(owner, fitted_by(owner), runs_in(owner, reported_by_set(dev_file)))
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from evaluation.sets import GATE, RUNS_IN, SETS
from models.jsonl import read_jsonl
from models.paths import REPO_ROOT
from training.gate.held_out import BUNDLED_REPORTED, Question, questions, read_set


def gate_fit_questions() -> dict[str, list[Question]]:
    """Every set `make gate` fits on (`training.gate.fit.FIT_SUITES`), the KG template set generated as
    `training.gate.refit.collect` generates it."""
    from training.gate.fit import FIT_SUITES, GATE_KG_QUESTIONS
    from training.gate.kg_questions import gate_questions

    return {name: questions(name, gate_questions()) if data == GATE_KG_QUESTIONS
            else questions(name, read_jsonl(REPO_ROOT / data, lambda row: row))
            for name, (data, _task) in FIT_SUITES.items()}


def adapter_training_questions() -> dict[str, list[Question]]:
    """The api_generation adapter's training split of the KG templates (before its programs are executed: every
    question it could be trained on), with the templates' expected answers as gold."""
    from training.api_templates import FixtureKG, generate, split_examples
    from training.gate.web_questions import default_protected

    train = split_examples(generate(FixtureKG.load(), seed=0), default_protected(), seed=0)["train"]
    return {"api_templates": questions("api_templates", [{"id": e.id, "query": e.query, "expected": list(e.expected)}
                                                         for e in train])}


def reported_by_set(dev_data: str | Path | None = None) -> dict[str, list[Question]]:
    """Every reported set's questions: the bundled ones, and CRAG's dev questions from `dev_data` when given."""
    from evaluation.data import load_examples

    found = {name: read_set(name) for name in BUNDLED_REPORTED}
    if dev_data is not None:
        found["dev"] = questions("dev", load_examples(str(dev_data)))
    return found


def runs_in(owner: str, reported: Mapping[str, Sequence[Question]]) -> dict[str, Sequence[Question]]:
    """The reported sets `owner` answers in (`evaluation.sets.RUNS_IN`: the KG adapter never runs in Task 1)."""
    return {name: group for name, group in reported.items() if SETS[name].task in RUNS_IN[owner]}


def fitted_by(owner: str) -> dict[str, list[Question]]:
    """What `owner` (`GATE`, `KG_ADAPTER`) is fitted or trained on."""
    return gate_fit_questions() if owner == GATE else adapter_training_questions()
