"""The calibrated answer gate: it recovers known probabilities, answers iff P >= 0.5, never answers where the checks
found nothing to keep, and its fit script writes a gate the verifier loads."""
import json
import math
import random

import pytest

from training.gate.fit import Row, compare_gates, cross_validated, fit, labelled_candidates, reliability
from models.pathways import WEB
from models.types import IDK, INVALID
from models.verify import Candidate, SupportVerifier, VerifierConfig
from models.verify.gate import CalibratedGate, candidate_answer, features
from models.verify.verifier import decide, decide_by_rules, load_gate

CONTEXT = ("Inception is a 2010 science fiction film. It was released in the United States on July 15, 2010. "
           "Christopher Nolan directed it.")


def _synthetic(n, seed, a=-0.5, b=2.0, c=-1.5):
    """Rows whose true P(correct) = sigmoid(a + b*x1 + c*x2) is known."""
    rng = random.Random(seed)
    rows, truth = [], []
    for i in range(n):
        x1, x2 = rng.uniform(-1.5, 1.5), rng.uniform(-1.5, 1.5)
        p = 1 / (1 + math.exp(-(a + b * x1 + c * x2)))
        rows.append(Row("synthetic", f"q{i}", "web", "x", {"x1": x1, "x2": x2}, x1 > 0, int(rng.random() < p)))
        truth.append(p)
    return rows, truth


def test_a_gate_fitted_on_synthetic_features_recovers_their_known_probabilities():
    rows, _ = _synthetic(4000, seed=1)
    gate = fit(rows, c=100.0)
    held_out, truth = _synthetic(1000, seed=2)
    predicted = [gate.probability(r.features) for r in held_out]
    assert sum(abs(p - t) for p, t in zip(predicted, truth)) / len(truth) < 0.03
    assert reliability(predicted, [r.label for r in held_out]).ece < 0.05
    # the standardised coefficients map back to the generating ones
    b = gate.coef[gate.names.index("x1")] / gate.scale[gate.names.index("x1")]
    assert b == pytest.approx(2.0, rel=0.15)


def test_cross_validation_predicts_every_row_out_of_fold_and_is_calibrated():
    rows, truth = _synthetic(1500, seed=3)
    predicted = cross_validated(rows, folds=5, c=100.0)
    assert not any(math.isnan(p) for p in predicted)
    assert reliability(predicted, [r.label for r in rows]).ece < 0.06


def test_reliability_bins_and_ece_by_hand():
    table = reliability([0.05, 0.15, 0.95, 0.95], [0, 1, 1, 0], bins=10)
    assert table.n == 4
    assert table.ece == pytest.approx((abs(0.05 - 0) + abs(0.15 - 1) + 2 * abs(0.95 - 0.5)) / 4)
    assert "ECE 0." in table.lines()[-1]


def test_fit_refuses_data_with_one_label():
    rows, _ = _synthetic(20, seed=4)
    with pytest.raises(ValueError, match="nothing to calibrate"):
        fit([Row(r.run, r.question, r.pathway, r.answer, r.features, r.rules_accepted, 1) for r in rows])


def _gate(intercept, rules_weight=0.0):
    return CalibratedGate(("rules_accepted",), (0.0,), (1.0,), (rules_weight,), intercept)


def _scores(answer, query="who directed inception?"):
    return SupportVerifier(VerifierConfig()).scores(Candidate(query, answer, (CONTEXT,), WEB))


def test_the_gate_answers_iff_p_is_at_least_one_half_and_says_so():
    scores = _scores("Christopher Nolan")
    kept = decide(scores, VerifierConfig(), _gate(0.2))
    assert kept.accepted and kept.answer == "Christopher Nolan"
    assert kept.scores["gate_p"] == pytest.approx(1 / (1 + math.exp(-0.2)), abs=1e-4)
    assert "calibrated gate" in kept.reason and kept.scores["rules"]["accepted"]
    refused = decide(scores, VerifierConfig(), _gate(-0.2))
    assert not refused.accepted and refused.answer == IDK and "< 0.5" in refused.reason


def test_the_gate_may_keep_an_answer_a_threshold_refused():
    scores = _scores("Christopher Nolan")
    config = VerifierConfig(min_similarity=0.99)
    assert not decide_by_rules({**scores, "similarity": 0.5}, config).accepted
    kept = decide({**scores, "similarity": 0.5}, config, _gate(1.0))
    assert kept.accepted and kept.answer == "Christopher Nolan"


@pytest.mark.parametrize("answer", [IDK, INVALID, "Christopher Nolan"])  # the last: no date for "when"
def test_the_gate_never_answers_where_the_checks_found_nothing_to_keep(answer):
    scores = _scores(answer, query="when was inception released?")
    assert candidate_answer(scores) is None
    decision = decide(scores, VerifierConfig(), _gate(50.0))
    assert decision == decide_by_rules(scores, VerifierConfig()) and "gate_p" not in decision.scores


def test_missing_scores_are_indicated_not_read_as_low():
    values = features({"source": "kg-direct", "candidate": "7", "claims": 1}, True)
    assert values["has_similarity"] == 0.0 and values["similarity"] == 0.0
    assert values["has_mean_logprob"] == 0.0 and values["source=kg-direct"] == 1.0
    values = features({"source": "web", "candidate": "7", "claims": 1, "mean_logprob": -0.5, "similarity": 0.7}, False)
    assert values["has_mean_logprob"] == 1.0 and 0.9 < values["mean_logprob"] < 1.0 and values["similarity"] == 0.7


def test_signals_reach_the_scores_and_samples_become_agreement():
    verifier = SupportVerifier(VerifierConfig())
    candidate = Candidate("who directed inception?", "Christopher Nolan", (CONTEXT,), WEB,
                          signals={"mean_logprob": -0.3, "domain": "movie",
                                   "samples": ["christopher nolan", "Nolan", "Christopher Nolan did"]})
    scores = verifier.scores(candidate)
    assert scores["mean_logprob"] == -0.3 and scores["domain"] == "movie" and scores["samples"] == 3
    assert scores["agreement"] == pytest.approx(2 / 3, abs=1e-3)
    assert scores["stated_by"] == 1


def test_a_gate_file_round_trips_and_a_bad_one_names_the_refit_command(tmp_path):
    gate = _gate(0.3, 1.2)
    gate.save(tmp_path / "gate.json")
    assert CalibratedGate.load(tmp_path / "gate.json") == gate
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="fit_gate.py"):
        CalibratedGate.load(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="gate_path"):
        load_gate(VerifierConfig(gate="calibrated"))
    with pytest.raises(ValueError, match="verifier.gate"):
        load_gate(VerifierConfig(gate="maybe"))
    assert load_gate(VerifierConfig(gate="calibrated", gate_path=str(tmp_path / "gate.json"))) == gate


def _run_dir(tmp_path, name, attempts_and_gold):
    run = tmp_path / name
    run.mkdir()
    with (run / "predictions.jsonl").open("w") as out:
        for i, (scores, gold) in enumerate(attempts_and_gold):
            out.write(json.dumps({"interaction_id": f"{name}-{i}", "query": "who directed inception?", "gold": gold,
                                  "alt_ans": [], "trace": {"attempts": [{"pathway": "web",
                                                                         "verifier": {"scores": scores}}]}}) + "\n")
    return run


def test_fit_script_fits_on_saved_runs_and_measures_on_held_out_ones(tmp_path, capsys):
    from scripts.fit_gate import main

    right, wrong = _scores("Christopher Nolan"), {**_scores("Christopher Nolan"), "similarity": 0.1}
    wrong["candidate"] = "Christopher Nolan"
    rows = [(right, "Christopher Nolan")] * 12 + [(wrong, "Steven Spielberg")] * 12
    train = _run_dir(tmp_path, "train", rows)
    labelled = labelled_candidates([train], VerifierConfig())
    assert len(labelled) == 24 and sum(r.label for r in labelled) == 12
    assert main([str(train), "--output", str(tmp_path / "gate.json"), "--folds", "3", "--c", "0.1", "1"]) == 0
    printed = capsys.readouterr().out
    assert "ECE" in printed and "rules" in printed and "calibrated" in printed
    gate = CalibratedGate.load(tmp_path / "gate.json")
    assert gate.metrics["cv_folds"] == 3 and gate.fitted_on["candidates"] == 24
    assert main([str(_run_dir(tmp_path, "heldout", rows[:6] + rows[-6:])), "--gate", str(tmp_path / "gate.json")]) == 0
    assert "held out" in capsys.readouterr().out


def test_a_gate_fitted_without_the_readers_score_never_reads_it(tmp_path, capsys):
    from scripts.fit_gate import main

    right = {**_scores("Christopher Nolan"), "reader": 0.9}
    wrong = {**_scores("Christopher Nolan"), "reader": 0.1}
    train = _run_dir(tmp_path, "train", [(right, "Christopher Nolan")] * 12 + [(wrong, "Steven Spielberg")] * 12)
    assert main([str(train), "--output", str(tmp_path / "with.json"), "--folds", "3", "--c", "1"]) == 0
    assert main([str(train), "--output", str(tmp_path / "without.json"), "--folds", "3", "--c", "1",
                 "--without", "reader"]) == 0
    capsys.readouterr()
    with_reader, without = CalibratedGate.load(tmp_path / "with.json"), CalibratedGate.load(tmp_path / "without.json")
    assert {"reader", "has_reader"} <= set(with_reader.names)
    assert not {"reader", "has_reader"} & set(without.names) and without.fitted_on["without"] == ["reader"]
    assert with_reader.probability(features(right, True)) > 0.5 > with_reader.probability(features(wrong, True))
    rows = labelled_candidates([train], VerifierConfig())
    compared = compare_gates(rows, [0.0] * len(rows))
    assert compared["reader"] == {"n": 24, "right": 12, "wrong": 0, "refused": 12, "score": 0.5}
    assert compared["rules"]["wrong"] == 12 and compared["calibrated"]["right"] == 0
    unread = [Row(r.run, r.question, r.pathway, r.answer, {}, r.rules_accepted, r.label) for r in rows]
    assert "reader" not in compare_gates(unread, [0.0] * len(rows))


@pytest.mark.parametrize("argv, message", [(["--output", "g.json", "--gate", "g.json"], "not both"),
                                           (["--output", "g.json"], "no run dirs"),
                                           (["RUN", "--output", "g.json"], "no predictions.jsonl in ['RUN']")])
def test_fit_script_turns_unusable_arguments_into_usage_errors(argv, message, tmp_path, capsys, monkeypatch):
    from scripts.fit_gate import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_collect_evaluates_each_fit_set_once_under_the_rules_gate(tmp_path, monkeypatch):
    import evaluation.experiments.grid as grid
    import training.gate.refit as gate_refit

    commands = []

    def fake_run(cmd, cwd, stdout, stderr):
        commands.append(cmd)
        out = cmd[cmd.index("--output-dir") + 1]
        (tmp_path / "done").mkdir(exist_ok=True)
        import pathlib
        pathlib.Path(out, "summary.json").write_text("{}")
        return type("Done", (), {"returncode": 0})()

    monkeypatch.setattr(grid.subprocess, "run", fake_run)
    monkeypatch.setattr(gate_refit, "FIT_SUITES", {"a": ("data/a.jsonl", 2), "b": ("data/b.jsonl", 1)})
    runs = gate_refit.collect(tmp_path / "fit", "cpu")
    assert runs == [str(tmp_path / "fit" / "a"), str(tmp_path / "fit" / "b")]
    assert all("verifier.gate=rules" in c and c[c.index("--profile") + 1] == "cpu" for c in commands)
    assert [c[c.index("--task") + 1] for c in commands] == ["2", "1"]
    assert not any("verifier.reader" in " ".join(c) for c in commands)  # no override: the profile's own reader
    gate_refit.collect(tmp_path / "fit", "cpu")  # finished sets are read, not rerun
    assert len(commands) == 2
    gate_refit.collect(tmp_path / "read", "cpu", reader="models/readers/cpu")
    assert all("verifier.reader=models/readers/cpu" in c for c in commands[2:]) and len(commands) == 4


@pytest.mark.parametrize("name, reads_reader", [("cpu", False), ("cpu-reader", True)])
def test_the_shipped_cpu_gates_load_and_were_fitted_only_on_todays_fit_sets(name, reads_reader):
    from pathlib import Path

    from training.gate.fit import FIT_SUITES, stale_gate
    from models.paths import REPO_ROOT

    path = REPO_ROOT / f"models/gates/{name}.json"
    gate = CalibratedGate.load(path)
    runs = [Path(r).name for r in gate.fitted_on["runs"]]
    assert runs and set(runs) <= set(FIT_SUITES)  # never the sample, the dev questions, Task 2/3 samples, kg_unseen
    assert stale_gate(path) is None  # fitted on the fit sets as they are now (their digests)
    assert gate.metrics["cv_ece"] <= 0.10
    assert ("reader" in gate.names) is reads_reader and ("has_reader" in gate.names) is reads_reader
    assert "rules_accepted" in gate.names and 0.0 < gate.probability(features({"source": "kg-direct"}, True)) < 1.0
