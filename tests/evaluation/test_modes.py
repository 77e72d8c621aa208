"""evaluation/experiments/modes.py: both modes' profiles are valid, and answer-in-context recall, gold sources,
selection accuracy and conflicts are read from traces as documented."""
import pytest

from evaluation.experiments import modes
from models.config import load_config, save_config


@pytest.mark.parametrize("name", sorted(modes.MODES))
def test_every_mode_is_a_valid_profile(name, tmp_path):
    config = load_config("cpu", modes.MODES[name])
    save_config(config, tmp_path / "profile.yaml")
    assert load_config(tmp_path / "profile.yaml") == config


def record(rid, gold, attempts=(), engaged=None, items=(), exact=(), conflict="", alt=()):
    omni = {}
    if engaged is not None:
        omni["selection"] = {"engaged": list(engaged)}
    if items or exact or conflict:
        omni["evidence"] = {"items": [{"source": s, "text": t} for s, t in items],
                            "exact": [{"source": s, "value": v} for s, v in exact], "conflict": conflict}
    return {"interaction_id": rid, "gold": gold, "alt_ans": list(alt), "latency_s": 1.0,
            "trace": {"attempts": list(attempts), **({"omni": omni} if omni else {})}}


def attempt(pathway, candidate="", *texts):
    return {"pathway": pathway, "candidate": candidate, "chunks": [{"text": t} for t in texts]}


def test_recall_counts_keys_in_attempt_chunks_and_direct_candidates_only():
    rows = [record("a", "1999", [attempt("web", "1999", "released in 1999.")]),
            record("b", "3", [attempt("sql-direct", "3")]),
            record("c", "4", [attempt("web", "4", "it has 14 members")]),  # the model's answer is not evidence
            record("d", "yes", [attempt("web", "yes", "yes")]),  # no key: not counted
            record("e", "bong joon-ho", [], alt=["bong joon ho"])]  # nothing read
    figures = modes.trace_figures(rows)
    assert (figures.keys, figures.keys_found) == (4, 2)
    assert figures.recall == pytest.approx(0.5)


def test_gold_sources_and_selection_accuracy():
    gold_rows = [record("a", "1999", items=[("kg", "The year is 1999."), ("web", "in 1999")]),
                 record("b", "42", items=[("web", "the answer is 42")]),
                 record("c", "7", exact=[("sql", "7")]),
                 record("d", "nowhere", items=[("web", "nothing")])]
    assert [modes.gold_sources(r) for r in gold_rows] == [{"kg", "web"}, {"web"}, {"sql"}, set()]
    omni_rows = [record("a", "1999", engaged=["web", "kg"]), record("b", "42", engaged=["public_data", "web"]),
                 record("c", "7", engaged=["public_data", "web"]), record("d", "nowhere", engaged=["web"])]
    s = modes.selection(omni_rows, gold_rows)
    assert (s.known, s.top1, s.any) == (3, 1, 2)  # d has no gold source: not counted
    assert (s.structured_known, s.any_structured) == (2, 1)  # a (kg engaged) yes, c (sql not engaged) no


def test_conflicts_count_differing_values_only():
    rows = [record("a", "x", conflict="agreement: sql's value is stated by 2 other item(s)"),
            record("b", "x", conflict="preference: kg first"), record("c", "x", conflict="the sources agree")]
    figures = modes.trace_figures(rows)
    assert figures.conflicts == 2 and sorted(figures.rules) == ["agreement", "preference"]
