"""The catalogue of evaluation sets (`evaluation/sets.py`): every set declared once, and every consumer reads it."""
import json
import re

import pytest

from evaluation import sets as catalogue
from evaluation.data import count_examples
from evaluation.experiments import current_results, grid, modes
from evaluation.sets import FITTED, GATE, KG_ADAPTER, SETS, EvalSet, fit_sets, held_out_sets, reported_sets, sets_table
from models import crag_data
from models.paths import REPO_ROOT
from tests.packaged import crag_file
from training.gate import fit, held_out


@pytest.mark.parametrize("name", list(SETS))
def test_each_set_has_the_size_it_declares(name):
    s = SETS[name]
    if s.generated:
        from training.gate.kg_questions import gate_questions

        assert len(gate_questions()) == s.size
    elif s.crag_file:
        assert count_examples(crag_file(crag_data.crag_name(s.data))) == s.size
    else:
        assert count_examples(REPO_ROOT / s.data) == s.size
    assert f"Task {s.task})" in current_results.ResultSet(s.label, s.size, s.suite()).heading()


def test_every_set_of_the_results_table_is_in_the_catalogue():
    stored = json.loads(current_results.STORE.read_text(encoding="utf-8"))
    for profile, figures in stored.items():
        missing = set(figures.get("sets", {})) - set(reported_sets())
        assert not missing, f"{profile}: sets of {current_results.STORE} not in evaluation/sets.py: {missing}"
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    table = current_results.block_of(readme, "README.md")
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| set ")]
    headings = [re.match(r"\| (.*?) \|", line).group(1) for line in rows]
    assert headings == [current_results.SETS[name].heading() for name in reported_sets()]


def test_the_consumers_read_the_catalogue():
    assert list(current_results.SETS) == list(reported_sets())
    assert grid.SUITES == {name: s.suite() for name, s in held_out_sets(GATE).items()}
    assert modes.SUITES["public"] == SETS["public_sql"].suite()
    assert fit.FIT_SUITES == {name: (s.data, s.task) for name, s in fit_sets(GATE).items()}
    assert set(held_out.BUNDLED_REPORTED) == {name for name, s in reported_sets().items() if not s.crag_file}


def test_every_claim_names_what_is_fitted_and_a_set_is_never_both():
    for s in SETS.values():
        assert set(s.fit_for) <= set(FITTED) and set(s.in_sample_for) <= set(FITTED), s.name
        assert not set(s.held_out_from) & (set(s.in_sample_for) | set(s.fit_for)), s.name
        assert set(s.fit_for) <= set(s.in_sample_for) or not s.reported, s.name  # fitted on and reported: in-sample
    assert KG_ADAPTER not in SETS["sample"].held_out_from + SETS["sample"].in_sample_for  # Task 1: no KG adapter


def test_adding_a_set_is_one_entry(monkeypatch):
    new = EvalSet("new_set", "a new set", "data/sample/crag_sample.jsonl", 2, 20, "the sample again")
    monkeypatch.setitem(SETS, "new_set", new)
    assert "new_set" in reported_sets() and "new_set" in held_out_sets(GATE) and "new_set" in held_out_sets(KG_ADAPTER)
    assert "| `new_set` |" in sets_table()


def test_the_table_of_sets_in_results_md_is_the_catalogues():
    text = current_results.SETS_DOCUMENT.read_text(encoding="utf-8")
    assert current_results.block_of(text, "results.md", current_results.SETS_MARKERS) == catalogue.sets_table()
