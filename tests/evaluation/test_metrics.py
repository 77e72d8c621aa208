"""The V3 scoring rules, case by case."""
import pytest

from evaluation.judge import RulesJudge
from evaluation.metrics import METRIC_KEYS, ScoreItem, compute_metrics, count_unjudged, ground_truths, \
    score_predictions
from models.trim import RuleTrimmer


def identity(text):
    return text


def score_one(prediction, answer, alt_ans=(), judge=None, trim=identity):
    item = ScoreItem("q?", prediction, answer, tuple(alt_ans))
    return score_predictions([item], judge or RulesJudge(), trim)[0]


@pytest.mark.parametrize("prediction,answer", [
    ("Canberra", "canberra"), ("  canberra \n", "Canberra "), ("THE EIFFEL TOWER", "the eiffel tower")])
def test_exact_match_ignores_case_and_outer_whitespace(prediction, answer):
    verdict = score_one(prediction, answer)
    assert (verdict.outcome, verdict.decided_by, verdict.exact) == ("correct", "exact", True)


def test_inner_whitespace_and_punctuation_are_not_normalised():
    assert score_one("the  eiffel tower", "the eiffel tower").outcome == "hallucination"
    assert score_one("canberra.", "canberra").decided_by == "unjudged"


def test_alternative_answers_count():
    verdict = score_one("$182.63", "182.63", ["$182.63"])
    assert (verdict.outcome, verdict.ground_truth) == ("correct", "$182.63")


def test_invalid_on_both_sides_is_correct():
    verdict = score_one("Invalid question: she never released one", "invalid question")
    assert (verdict.outcome, verdict.decided_by, verdict.exact) == ("correct", "invalid-rule", False)


def test_invalid_on_one_side_fails_without_asking_the_judge(scripted_judge):
    judge = scripted_judge(accept=[("invalid question", "canberra")])
    assert score_one("invalid question", "canberra", judge=judge).decided_by == "invalid-rule"
    assert score_one("canberra", "invalid question", judge=judge).outcome == "hallucination"
    assert judge.calls == []


def test_one_sided_invalid_fails_only_that_ground_truth(scripted_judge):
    judge = scripted_judge(accept=[("four", "4 members")])
    verdict = score_one("four", "invalid question", ["4 members"], judge=judge)
    assert (verdict.outcome, verdict.decided_by, verdict.ground_truth) == ("correct", "judge:scripted", "4 members")


@pytest.mark.parametrize("prediction", ["I don't know", "I don't know.", "i don't know", "Sorry, I DON'T KNOW it."])
def test_i_dont_know_with_ascii_apostrophe_is_missing(prediction):
    verdict = score_one(prediction, "canberra")
    assert (verdict.outcome, verdict.decided_by) == ("missing", "idk-rule")


@pytest.mark.parametrize("prediction", ["I don’t know", "I do not know", "unknown"])
def test_other_abstentions_are_not_missing(prediction):
    verdict = score_one(prediction, "canberra")
    assert verdict.outcome == "hallucination" and verdict.decided_by == "unjudged"


def test_missing_takes_precedence_over_an_exact_ground_truth():
    assert score_one("i don't know", "i don't know").outcome == "missing"


def test_the_trim_applies_before_every_rule():
    long_idk = "word " * 100 + "I don't know"
    assert score_one(long_idk, "canberra", trim=RuleTrimmer()).outcome == "hallucination"
    assert score_one(long_idk, "canberra").outcome == "missing"  # untrimmed the marker would count
    assert score_one("word " * 100, " ".join(["word"] * 75), trim=RuleTrimmer()).exact


def test_judge_is_asked_ground_truth_by_ground_truth_in_rounds(scripted_judge):
    judge = scripted_judge(accept=[("eiffel", "eiffel tower")])
    items = [ScoreItem("q1", "eiffel", "the eiffel tower", ("eiffel tower",)),
             ScoreItem("q2", "paris", "lyon"),
             ScoreItem("q3", "Canberra", "canberra")]
    verdicts = score_predictions(items, judge, identity)
    assert [v.outcome for v in verdicts] == ["correct", "hallucination", "correct"]
    assert [[(c.query, c.ground_truth) for c in call] for call in judge.calls] == [
        [("q1", "the eiffel tower"), ("q2", "lyon")], [("q1", "eiffel tower")]]
    assert verdicts[1].decided_by == "judge:scripted" and verdicts[1].explanation == "scripted 0"


def test_a_failed_judge_call_is_a_hallucination_recorded_as_such(scripted_judge):
    verdict = score_one("paris", "lyon", judge=scripted_judge(error=[("paris", "lyon")]))
    assert (verdict.outcome, verdict.decided_by) == ("hallucination", "judge-error:scripted")


def test_a_judge_returning_the_wrong_count_is_an_error():
    class Broken:
        name = "broken"

        def judge(self, items):
            return []

    with pytest.raises(RuntimeError, match="0 verdicts for 1"):
        score_one("paris", "lyon", judge=Broken())


def test_ground_truths_are_deduplicated_and_empty_ones_dropped():
    assert ground_truths(" Four ", ["four", "", "4", None]) == ["Four", "4"]
    assert score_one("anything", "", []).decided_by == "no-ground-truth"


def test_metrics_arithmetic_and_unjudged_count():
    verdicts = [score_one("a", "a"), score_one("b", "a", ["b"]), score_one("i don't know", "a"),
                score_one("c", "a"), score_one("invalid question", "invalid question")]
    metrics = compute_metrics(verdicts)
    assert tuple(metrics) == METRIC_KEYS
    assert metrics | {"score": round(metrics["score"], 9)} == {
        "score": 0.4, "accuracy": 0.6, "hallucination": 0.2, "missing": 0.2, "n_miss": 1, "n_correct": 3,
        "n_correct_exact": 3, "n_hallucination": 1, "total": 5}
    assert count_unjudged(verdicts) == 1
    assert compute_metrics([]) == dict.fromkeys(METRIC_KEYS, 0) | {"score": 0.0, "accuracy": 0.0,
                                                                  "hallucination": 0.0, "missing": 0.0}
