"""Stand-ins shared by the evaluation tests."""
import pytest

from evaluation.judge import Judgement


class ScriptedJudge:
    """Says 1 for (prediction, ground truth) pairs in `accept`, fails the call for pairs in `error`, else 0;
    records every batch it was asked."""

    name = "scripted"

    def __init__(self, accept=(), error=()):
        self.accept, self.error = set(accept), set(error)
        self.calls = []

    def judge(self, items):
        self.calls.append(list(items))
        verdicts = []
        for item in items:
            pair = (item.prediction.lower(), item.ground_truth.lower())
            score = None if pair in self.error else int(pair in self.accept)
            verdicts.append(Judgement(score, f"scripted {score}", self.name))
        return verdicts


@pytest.fixture
def scripted_judge():
    return ScriptedJudge
