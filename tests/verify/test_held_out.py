"""Held out by content: no fit set of the answer gate and no training set of the KG adapter shares a
question with a set docs/results.md reports on, by entity and gold answer in any words (`training.gate.held_out`),
except the pairs `IN_SAMPLE` names, which docs/results.md marks in-sample. The generated fit set (`gate_kg`) is
generated here as `make gate` generates it; the real dev questions are read where $CRAG_DATA holds them."""
import pytest

from evaluation.data import load_examples
from training.gate.fit import FIT_SUITES, GATE_KG_QUESTIONS
from training.gate.held_out import (BUNDLED_REPORTED, IN_SAMPLE, NOT_SAME, gold_forms, questions, read_set, shared,
                                 unexplained)
from models import crag_data
from models.jsonl import read_jsonl
from models.paths import REPO_ROOT
from tests.packaged import crag_file_if_present


def _gate_fit_sets() -> dict:
    """Every set `make gate` fits on (`FIT_SUITES`), the KG template set generated as `gate_refit.collect` does."""
    from training.gate.kg_questions import gate_questions

    return {name: questions(name, gate_questions()) if data == GATE_KG_QUESTIONS
            else questions(name, read_jsonl(REPO_ROOT / data, lambda row: row))
            for name, (data, _task) in FIT_SUITES.items()}


def _adapter_training_sets() -> dict:
    """The api_generation adapter's training split of the KG templates (before its programs are executed: every
    question it could be trained on), with the templates' expected answers as gold."""
    from training.api_templates import FixtureKG, generate, split_examples
    from training.gate.web_questions import default_protected

    train = split_examples(generate(FixtureKG.load(), seed=0), default_protected(), seed=0)["train"]
    return {"api_templates": questions("api_templates", [{"id": e.id, "query": e.query, "expected": list(e.expected)}
                                                         for e in train])}


@pytest.fixture(scope="module")
def reported() -> dict:
    sets = {name: read_set(name) for name in BUNDLED_REPORTED}
    dev = crag_file_if_present(crag_data.DEV_FILE)
    if dev is not None:
        sets["dev"] = questions("dev", load_examples(str(dev)))
    else:  # said in the output: a pass here has not compared the real dev questions
        print(f"dev set not compared: {crag_data.missing_message(crag_data.DEV_FILE, crag_data.crag_path(crag_data.DEV_FILE))}")
    return sets


@pytest.fixture(scope="module")
def gate_fit() -> dict:
    return _gate_fit_sets()


def _kg_tasks(reported: dict) -> dict:
    """The reported sets run as Task 2 or 3 (Task 1 never calls the KG adapter; dev is reported as Task 1)."""
    return {name: group for name, group in reported.items()
            if name in BUNDLED_REPORTED and {2, 3} & set(BUNDLED_REPORTED[name][1])}


def test_no_fit_set_of_the_gate_shares_a_question_with_a_reported_set(reported, gate_fit):
    found = unexplained("gate", gate_fit, reported)
    assert not found, "\n".join(map(str, found))


def test_the_kg_adapter_trained_on_no_question_of_a_reported_set_but_those_marked_in_sample(reported):
    found = unexplained("api_generation", _adapter_training_sets(), _kg_tasks(reported))
    assert not found, "\n".join(map(str, found))


def test_the_in_sample_pairs_are_real_and_marked_in_results_md(reported, gate_fit):
    """Each allowed pair still shares questions (else it is stale) and docs/results.md says in-sample beside it."""
    results = (REPO_ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    marks = results[results.index("<!-- in-sample:start -->"):results.index("<!-- in-sample:end -->")]
    training = _adapter_training_sets()
    for (owner, name), _why in IN_SAMPLE.items():
        fitted = gate_fit if owner == "gate" else training
        assert any(shared(reported[name], group) for group in fitted.values()), (owner, name)
        assert f"`{name}`" in marks and "in-sample" in marks, name
    assert "`api_generation`" in marks and "`gate`" in marks


def test_the_pairs_set_apart_by_hand_are_still_flagged(reported, gate_fit):
    flagged = {(p.fit.id, p.reported.id) for group in reported.values() for fit in gate_fit.values()
               for p in shared(group, fit)}
    assert set(NOT_SAME) <= flagged  # a pair no longer flagged is removed from NOT_SAME


# Paraphrases of bundled-sample questions: the same entity, attribute and gold, other words.
PLANTED = [
    {"interaction_id": "planted-1", "query": "name the nations that share a frontier with switzerland",
     "answer": "austria, liechtenstein, italy, germany and france", "alt_ans": []},
    {"interaction_id": "planted-2", "query": "novak djokovic: number of major singles championships?",
     "answer": "twenty-four", "alt_ans": ["24"]},
    {"interaction_id": "planted-3", "query": "on what date did inception come out in cinemas",
     "answer": "july 15, 2010", "alt_ans": []},
    {"interaction_id": "planted-4", "query": "what's the headcount of coldplay as a band", "answer": "four",
     "alt_ans": []},
]


@pytest.mark.parametrize("planted", PLANTED, ids=[p["interaction_id"] for p in PLANTED])
@pytest.mark.parametrize("fit_set", ["gate_web", "gate_kg", "kg_wordings"])
def test_a_planted_paraphrase_of_a_sample_question_in_a_fit_set_fails_the_check(planted, fit_set, reported,
                                                                                   gate_fit):
    planted_fit = {**gate_fit, fit_set: [*gate_fit[fit_set], *questions(fit_set, [planted])]}
    found = unexplained("gate", planted_fit, reported)
    assert {p.fit.id for p in found} == {planted["interaction_id"]} and "sample" in {p.reported.set for p in found}


def test_a_planted_paraphrase_in_the_adapters_training_set_fails_on_a_set_not_marked_in_sample(reported):
    row = {"id": "planted", "query": "who is behind the camera on whiplash", "expected": ["Damien Chazelle"]}
    training = {"api_templates": questions("api_templates", [row])}
    found = unexplained("api_generation", training, _kg_tasks(reported))
    assert [(p.fit.id, p.reported.set) for p in found] == [("planted", "kg_unseen")]


def test_gold_forms_compare_values_not_spellings():
    assert gold_forms("france, germany and italy") == gold_forms("italy, germany, france")
    assert gold_forms("24") == gold_forms("twenty-four") and gold_forms("$0.75") == gold_forms("0.75")
    assert gold_forms("2010-07-15") == gold_forms("july 15, 2010")
    assert gold_forms([24.0]) == gold_forms("24")
    assert not gold_forms("invalid question") and not gold_forms("I don't know")
