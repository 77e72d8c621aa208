"""The normalized judge as a `Judge`: its own verdicts, the LLM fallback for the rest, failures kept per item."""
from models.eval.answer_match import match_answer
from models.eval.judge import CachingJudge, JudgeItem, Judgement
from models.eval.metrics import ScoreItem, score_predictions
from models.eval.normalized_judge import NormalizedJudge

RIGHT = JudgeItem("what is the capital of australia?", "canberra", "The capital of Australia is Canberra.")
WRONG = JudgeItem("what is the capital of australia?", "canberra", "Sydney")
OPEN = JudgeItem("which film came out earlier?", "the matrix", "The Matrix (2001)")


def test_decides_what_it_can_and_leaves_the_rest_unjudged():
    right, wrong, open_ = NormalizedJudge().judge([RIGHT, WRONG, OPEN])
    assert (right.score, right.judge, right.unjudged) == (1, "normalized", False)
    assert (wrong.score, wrong.judge) == (0, "normalized") and wrong.explanation
    assert open_.score is None and open_.unjudged and open_.explanation.startswith("undecided:")


def test_only_undecided_items_go_to_the_fallback(scripted_judge):
    fallback = scripted_judge(accept=[("the matrix (2001)", "the matrix")])
    judge = NormalizedJudge(fallback=fallback)
    assert judge.name == "normalized+scripted"
    verdicts = judge.judge([RIGHT, OPEN, WRONG])
    assert [(v.score, v.judge) for v in verdicts] == [(1, "normalized"), (1, "scripted"), (0, "normalized")]
    assert fallback.calls == [[OPEN]]


def test_an_exception_on_one_item_makes_only_that_item_unjudged():
    def match(query, gold, prediction):
        if prediction == "Sydney":
            raise ValueError("boom")
        return match_answer(query, gold, prediction)

    right, broken, also_right = NormalizedJudge(match=match).judge([RIGHT, WRONG, RIGHT])
    assert right.score == 1 and also_right.score == 1
    assert broken.score is None and broken.unjudged and "ValueError: boom" in broken.explanation


def test_a_broken_fallback_leaves_its_items_unjudged_and_keeps_the_rest():
    class Broken:
        name = "broken"

        def judge(self, items):
            raise RuntimeError("server gone")

    right, open_ = NormalizedJudge(fallback=Broken()).judge([RIGHT, OPEN])
    assert right.score == 1 and open_.unjudged and "server gone" in open_.explanation


def test_scoring_a_batch_with_a_failing_item_keeps_every_prediction():
    def match(query, gold, prediction):
        if "explode" in prediction:
            raise RuntimeError("bad input")
        return match_answer(query, gold, prediction)

    items = [ScoreItem(RIGHT.query, p, "canberra") for p in ("Canberra.", "explode", "Sydney", "canberra!")]
    verdicts = score_predictions(items, NormalizedJudge(match=match), trim=lambda text: text)
    assert [(v.outcome, v.decided_by) for v in verdicts] == [
        ("correct", "judge:normalized"), ("hallucination", "unjudged"), ("hallucination", "judge:normalized"),
        ("correct", "judge:normalized")]
    assert [v.prediction for v in verdicts] == ["Canberra.", "explode", "Sydney", "canberra!"]


def test_an_undecided_ground_truth_keeps_a_wrong_verdict_from_being_final():
    # gold "3-1" is decided wrong; the alternative cannot be decided: the item is unjudged, not "wrong"
    item = ScoreItem("what was the score?", "Arsenal 3, Liverpool 1", "3-1", ("arsenal won 3-1",))
    verdict = score_predictions([item], NormalizedJudge(), trim=lambda text: text)[0]
    assert verdict.decided_by == "unjudged"


def test_caching_judge_asks_each_pair_once(scripted_judge):
    inner = scripted_judge(accept=[("sydney", "canberra")])
    judge = CachingJudge(inner)
    assert [j.score for j in judge.judge([WRONG, RIGHT, WRONG])] == [1, 0, 1]
    assert [j.score for j in judge.judge([WRONG])] == [1]
    assert inner.calls == [[WRONG, RIGHT]] and isinstance(judge.judge([RIGHT])[0], Judgement)
