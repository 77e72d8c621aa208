"""Held out by content: no fit set of the answer gate and no training set of the KG adapter shares a question with
a set the catalogue (`evaluation/sets.py`) says is held out from it, by entity and fact in any words
(`training.gate.held_out`); on the sets it says are in-sample, every shared pair is listed one by one with its
reason (`data/gate/in_sample_pairs.json`). The generated fit set (`gate_kg`) is generated here as `make gate`
generates it; the real dev questions are read where $CRAG_DATA holds them (said in a warning where it does not)."""
import json
import re
import warnings

import pytest

from evaluation.sets import FITTED, GATE, KG_ADAPTER, SETS, held_out_sets
from models import crag_data
from models.paths import REPO_ROOT
from tests.packaged import crag_file_if_present
from training.gate.fit import fit_set_digests, stale_gate
from training.gate.compared import fitted_by, reported_by_set, runs_in
from training.gate.held_out import (IN_SAMPLE_FILE, IN_SAMPLE_REASONS, NOT_SAME, allow_list, common_words,
                                    found_pairs, gold_forms, golds_match, in_sample_pairs, pair_key, question,
                                    questions, shared, unexplained)


@pytest.fixture(scope="module")
def reported() -> dict:
    dev = crag_file_if_present(crag_data.DEV_FILE)
    if dev is None:  # stated in the output: a pass here has not compared the real dev questions
        warnings.warn(f"dev set not compared: {crag_data.missing_message(crag_data.DEV_FILE)}")
    return reported_by_set(dev)


@pytest.fixture(scope="module")
def fitted() -> dict:
    return {owner: fitted_by(owner) for owner in FITTED}


@pytest.mark.parametrize("owner", FITTED)
def test_nothing_fitted_shares_a_question_with_a_set_held_out_from_it(owner, reported, fitted):
    found = unexplained(owner, fitted[owner], runs_in(owner, reported))
    assert not found, "\n".join(map(str, found)) + "\n(scripts/check_held_out.py lists them)"


def test_every_allowed_pair_is_still_found_on_a_set_in_sample_for_its_owner(reported, fitted):
    """The allow-list is exactly what the rule finds on the in-sample sets (no stale pair, no pair on a held-out
    set), each pair with its reason; docs/results.md marks those sets in-sample."""
    found = {owner: found_pairs(owner, fitted[owner], runs_in(owner, reported)) for owner in FITTED}
    assert in_sample_pairs() == allow_list(found), f"rewrite with scripts/check_held_out.py --write-in-sample"
    listed = json.loads((REPO_ROOT / IN_SAMPLE_FILE).read_text(encoding="utf-8"))
    assert listed and all(reason in IN_SAMPLE_REASONS.values() for reason in listed.values())
    results = (REPO_ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    marks = results[results.index("<!-- in-sample:start -->"):results.index("<!-- in-sample:end -->")]
    for owner, name in IN_SAMPLE_REASONS:
        assert owner in SETS[name].in_sample_for, (owner, name)
        assert f"`{name}`" in marks and "in-sample" in marks, name


def test_a_pair_on_a_held_out_set_is_never_allowed(reported, fitted):
    pair = shared(reported["sample"], questions("gate_web", [{"id": "leak", "query": "where was the man who "
                                                "founded spacex born", "answer": "pretoria, south africa"}]))
    assert pair and GATE in SETS["sample"].held_out_from
    with pytest.raises(ValueError, match="held out"):
        allow_list({GATE: pair})
    caught = unexplained(GATE, {"gate_web": [pair[0].fit]}, reported)  # caught, whatever the list says
    assert {p.reported.set for p in caught} == {"sample", "task2", "task3"}  # the sample's file, and task3's copy


def test_the_pairs_set_apart_by_hand_are_still_flagged(reported, fitted):
    flagged = {(p.fit.id, p.reported.id) for group in reported.values() for fit in fitted[GATE].values()
               for p in shared(group, fit)}
    assert set(NOT_SAME) <= flagged  # a pair no longer flagged is removed from NOT_SAME


def test_no_shipped_profile_answers_through_a_gate_fitted_on_other_data(tmp_path):
    """A fitted gate records a digest of each fit set (`fitted_on.fit_sets`); a profile that answers through it
    (`verifier.gate: calibrated`) needs it fitted on the fit sets as they are now (`make gate` refits it)."""
    from models.config import load_config

    for profile in sorted((REPO_ROOT / "models" / "profiles").glob("*.yaml")):
        verifier = load_config(profile.stem).verifier
        if verifier.gate == "calibrated":
            assert stale_gate(REPO_ROOT / verifier.gate_path) is None, profile.name
    fitted = {"fitted_on": {"fit_sets": fit_set_digests()}}
    (tmp_path / "now.json").write_text(json.dumps(fitted), encoding="utf-8")
    assert stale_gate(tmp_path / "now.json") is None
    fitted["fitted_on"]["fit_sets"]["gate_web"] = "0" * 64  # fitted on another gate_web
    (tmp_path / "then.json").write_text(json.dumps(fitted), encoding="utf-8")
    assert stale_gate(tmp_path / "then.json").endswith("was fitted on other data for gate_web")
    (tmp_path / "old.json").write_text(json.dumps({"fitted_on": {"runs": []}}), encoding="utf-8")
    assert "records no digest" in stale_gate(tmp_path / "old.json")


# The paraphrase shapes the rule must catch, each of a bundled-sample question (sample ids by prefix): the same
# entity and fact, other words and another spelling of the gold.
PLANTED = [
    ({"id": "frontier", "query": "name the nations that share a frontier with switzerland",
      "answer": "austria, liechtenstein, italy, germany and france"}, "adcf4540"),
    ({"id": "spelt-number", "query": "novak djokovic: number of major singles championships?",
      "answer": "twenty-four"}, "ae2a7a6c"),
    ({"id": "number-in-words", "query": "novak djokovic's grand slam singles title count",
      "answer": "24 grand slam singles titles"}, "ae2a7a6c"),
    ({"id": "gold-holds-gold", "query": "in which city was whoever started spacex born?",
      "answer": "pretoria, transvaal, south africa"}, "83523c48"),
    ({"id": "year", "query": "best new artist at the 2020 grammys?", "answer": "billie eilish"}, "4034d7a7"),
    ({"id": "month", "query": "msft's february 2024 dividend per share", "answer": "$0.75"}, "749f6885"),
    ({"id": "date-in-words", "query": "inception hit theaters on what day", "answer": "it opened on july 15, 2010"},
     "e78a5089"),
    ({"id": "headcount", "query": "what's the headcount of coldplay as a band", "answer": "four"}, "4edcc885"),
]


@pytest.mark.parametrize("planted,sample_id", PLANTED, ids=[p["id"] for p, _ in PLANTED])
@pytest.mark.parametrize("fit_set", ["gate_web", "gate_kg", "kg_wordings"])
def test_a_planted_paraphrase_of_a_sample_question_in_a_fit_set_fails_the_check(planted, sample_id, fit_set,
                                                                                   reported, fitted):
    planted_fit = {**fitted[GATE], fit_set: [*fitted[GATE][fit_set], *questions(fit_set, [planted])]}
    found = unexplained(GATE, planted_fit, reported)
    assert {p.fit.id for p in found} == {planted["id"]}
    assert any(p.reported.set == "sample" and p.reported.id.startswith(sample_id) for p in found)


def test_an_entity_word_the_templates_use_often_still_names_the_entity():
    """"apple", a year and a month are in many KG templates, and still name what a question asks about."""
    assert not {"apple", "2024", "march", "february"} & common_words()
    assert {"price", "grammys", "formation"} <= common_words()  # words of the asking stay common
    reported = questions("kg_unseen", [{"id": "r", "query": "what is apple's market capitalization?",
                                        "answer": "2.8 trillion"}])
    fit = questions("gate_web", [{"id": "f", "query": "apple market cap", "answer": "$2.8 trillion"}])
    assert [p.entity for p in shared(reported, fit)] == [("apple",)]


def test_a_shared_date_with_a_small_count_is_a_coincidence_not_one_fact():
    reported = questions("kg_unseen", [{"id": "r", "query": "how many goals did chelsea concede on feb 4",
                                        "answer": "4"}])
    fit = questions("api_templates", [{"id": "f", "query": "how many assists did the lakers get on feb 4",
                                       "answer": "4"}])
    assert shared(reported, fit) == []


def test_the_adapters_planted_paraphrase_fails_on_a_set_not_in_sample(reported):
    row = {"id": "planted", "query": "who is behind the camera on whiplash", "expected": ["Damien Chazelle"]}
    found = unexplained(KG_ADAPTER, {"api_templates": questions("api_templates", [row])},
                        runs_in(KG_ADAPTER, reported))
    assert [(p.fit.id, p.reported.set) for p in found] == [("planted", "kg_unseen")]
    assert pair_key(KG_ADAPTER, found[0]) == "api_generation api_templates:planted = kg_unseen:" + found[0].reported.id


def test_golds_state_the_same_fact_in_other_forms():
    def q(answer):
        return question("s", {"query": "x", "answer": answer})

    assert golds_match(q("south africa"), q("pretoria, transvaal, south africa")) == ("text", "south africa")
    assert golds_match(q("24"), q("24 grand slam singles titles")) == ("number", 24.0)
    assert golds_match(q("2010-07-15"), q("it opened on july 15, 2010")) == ("date", (2010, 7, 15))
    assert golds_match(q("4"), q("4-4-2")) is None  # a formation states several numbers, not one
    assert golds_match(q("yes"), q("yes, twice")) is None  # too short to be held as a fact
    assert golds_match(q("invalid question"), q("invalid question")) is None


def test_gold_forms_compare_values_not_spellings():
    assert gold_forms("france, germany and italy") == gold_forms("italy, germany, france")
    assert gold_forms("24") == gold_forms("twenty-four") and gold_forms("$0.75") == gold_forms("0.75")
    assert gold_forms("2010-07-15") == gold_forms("july 15, 2010")
    assert gold_forms([24.0]) == gold_forms("24")
    assert not gold_forms("invalid question") and not gold_forms("I don't know")


def test_the_gate_is_measured_on_the_sets_held_out_from_it():
    assert set(held_out_sets(GATE)) == {"sample", "dev", "task2", "task3", "kg_unseen"}


def test_the_command_lists_the_pairs_and_passes_on_the_tree(capsys):
    from scripts.check_held_out import main

    assert main([]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^gate: \d+ shared pairs, 0 not in data/gate/in_sample_pairs.json$", out, re.M), out
    assert re.search(r"^api_generation: \d+ shared pairs, 0 not in ", out, re.M), out
