"""The calculator stage: expression extraction, majority vote, per-sample failure isolation, deadline."""
from __future__ import annotations

import itertools

import pytest

from models.calculator.config import CalculatorConfig
from models.calculator.interpreter import Limits
from models.calculator.tool import Calculation, NumericalCalculator, extract_expression, majority
from models.deadline import Deadline
from tests.stand_ins import ReplyingGenerator, user_text


@pytest.mark.parametrize("completion, expression", [
    ("(185.2 - 170) / 170 * 100", "(185.2 - 170) / 170 * 100"),
    ("```python\nmax(3, 4)\n```", "max(3, 4)"),
    ("Expression: 12 * 3 = 36", "12 * 3"),
    ("\n\n  avg(1, 2)\nbecause ...", "avg(1, 2)"),
    ("", ""),
])
def test_extract_expression(completion, expression):
    assert extract_expression(completion) == expression


def test_majority_value_wins_and_rejections_are_kept():
    winner = majority(["1 + 1", "__import__('os')", "4 / 2", "3", ""], Limits())
    assert winner == ("1 + 1", "2", 2, ("unknown name '__import__' (functions: round, abs, min, max, sum, avg, "
                                        "date)",))
    assert majority(["x", "1/0"], Limits()) is None
    assert majority(["1", "2"], Limits())[:3] == ("1", "1", 1)  # tie: the earliest sample


def test_calculate_votes_over_completions_sampled_from_one_prompt_per_question():
    answers = itertools.cycle(["(120 - 100) / 100 * 100", "20", "lambda: 1", "(120-100)/100*100", "x"])
    generator = ReplyingGenerator(lambda request: next(answers))
    calculator = NumericalCalculator(CalculatorConfig(enabled=True, samples=5), generator)
    results = calculator.calculate(["by what percent did the price rise?", "no numbers here"], ["t", "t"],
                                   [["price was 100", "price is 120"], []])
    assert results[0] == Calculation("(120 - 100) / 100 * 100", "20", 3, 5,
                                      ("unknown name 'lambda' (functions: round, abs, min, max, sum, avg, date)",
                                       "unknown name 'x' (functions: round, abs, min, max, sum, avg, date)"))
    assert "3 of 5 samples agree" in results[0].as_reference()
    assert len(generator.requests) == 2 and all(r.n == 5 and r.temperature == 0.7 for r in generator.requests)
    first = user_text(generator.requests[0])
    assert first.index("price was 100") < first.index("price is 120")  # the references in their own order


def test_no_time_or_a_failing_backend_gives_no_calculation():
    generator = ReplyingGenerator(lambda request: "1 + 1")
    calculator = NumericalCalculator(CalculatorConfig(enabled=True, min_remaining_s=5), generator)
    assert calculator.calculate(["q"], ["t"], [["r"]], Deadline(1.0)) == [None]
    assert generator.calls == 0

    def broken(request):
        raise RuntimeError("backend down")
    calculator = NumericalCalculator(CalculatorConfig(enabled=True), ReplyingGenerator(broken))
    assert calculator.calculate(["q", "r"], ["t", "t"], [["a"], ["b"]]) == [None, None]


def test_samples_must_be_positive():
    with pytest.raises(ValueError, match="samples"):
        NumericalCalculator(CalculatorConfig(samples=0), ReplyingGenerator(lambda r: ""))
