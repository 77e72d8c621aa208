"""db3 §2.4 label rules, table-driven, and the batched builder with stand-in generator, checks and contexts."""
import pytest

from models.llm.prompts import PromptLibrary
from training import labels as L
from training.judges import RulesAnswerCheck, RulesContextCheck

# (answer, alt, question_type, has_context, answer_correct, gold_in_context) -> (label, reason)
RULES = [
    ("paris", [], "simple", True, True, None, "paris", L.JUDGED_CORRECT),
    ("paris", ["paris, france"], "simple", True, False, True, "paris", L.GOLD_IN_CONTEXT),
    ("paris", [], "simple", True, False, False, "i don't know", L.GOLD_NOT_IN_CONTEXT),
    ("invalid question", [], "false_premise", True, None, None, "invalid question", L.FALSE_PREMISE),
    ("invalid question", [], "simple", True, None, None, "invalid question", L.FALSE_PREMISE),
    # the old dev schema: a false premise whose gold answer is a sentence
    ("taylor swift has no rap album", [], "false_premise", True, None, None, "invalid question", L.FALSE_PREMISE),
    ("", [], "simple", True, True, None, None, L.NO_GOLD),
    ("nan", [], "simple", True, True, None, None, L.NO_GOLD),
    ("nan", ["42"], "simple", True, True, None, "42", L.JUDGED_CORRECT),
    ("paris", [], "simple", False, True, None, None, L.EMPTY_CONTEXT),
    ("invalid question", [], "false_premise", False, None, None, None, L.EMPTY_CONTEXT),
    ("paris", [], "simple", True, None, None, None, L.UNJUDGED),
    ("paris", [], "simple", True, False, None, None, L.CONTEXT_UNCHECKED),
    ("Jean Dujardin", [], "simple", True, True, None, "Jean Dujardin", L.JUDGED_CORRECT),  # gold kept as written
]


@pytest.mark.parametrize("answer,alt,qtype,has_context,correct,in_context,label,reason", RULES)
def test_decide_label(make_example, answer, alt, qtype, has_context, correct, in_context, label, reason):
    ex = make_example("x", "q?", answer, alt, question_type=qtype)
    assert L.decide_label(ex, has_context, correct, in_context) == L.LabelDecision(label, reason)


def _builder(generator, contexts, answer_check=None, context_check=None):
    prompts = PromptLibrary()
    return L.LabelBuilder(contexts, generator, answer_check or RulesAnswerCheck(),
                          context_check or RulesContextCheck(), prompts.get("answer_basic"),
                          prompts.get("answer_ctrl"), "web_answer", max_new_tokens=16, word_limit=50)


def test_builder_applies_every_rule_in_one_batch(scripted, fixed_contexts, make_example):
    examples = [
        make_example("right", "capital of france?", "paris"),
        make_example("in-ctx", "capital of italy?", "rome"),
        make_example("not-in-ctx", "aapl close today?", "182.63"),
        make_example("premise", "taylor swift rap album?", "invalid question", question_type="false_premise"),
        make_example("no-ctx", "capital of spain?", "madrid"),
        make_example("no-gold", "capital of peru?", "nan"),
    ]
    contexts = fixed_contexts({
        "capital of france?": "<DOC>\nfrance: paris\n</DOC>\n",
        "capital of italy?": "<DOC>\nItaly's capital is Rome.\n</DOC>\n",
        "aapl close today?": "<DOC>\napple makes phones\n</DOC>\n",
        "taylor swift rap album?": "<DOC>\nswift is a pop singer\n</DOC>\n",
        "capital of peru?": "<DOC>\nlima\n</DOC>\n",
    })
    answers = {"capital of france?": "Paris.", "capital of italy?": "Milan", "aapl close today?": "190"}
    generator = scripted(lambda prompt: next(a for q, a in answers.items() if q in prompt))
    outcomes = _builder(generator, contexts).label_batch(examples)

    got = {o.example_id: (o.decision.label, o.decision.reason) for o in outcomes}
    assert got == {
        "right": ("paris", L.JUDGED_CORRECT),
        "in-ctx": ("rome", L.GOLD_IN_CONTEXT),
        "not-in-ctx": ("i don't know", L.GOLD_NOT_IN_CONTEXT),
        "premise": ("invalid question", L.FALSE_PREMISE),
        "no-ctx": (None, L.EMPTY_CONTEXT),
        "no-gold": (None, L.NO_GOLD),
    }
    # p_basic was asked only where the label depends on it, in one batched call, with the base model
    assert len(generator.requests) == 3 and all(r.adapter is None for r in generator.requests)
    assert all("End your answer with a period." in r.messages[-1]["content"] for r in generator.requests)
    record = outcomes[1].record
    # the record is the inference prompt (answer_ctrl) with the real context, then the label
    assert [m["role"] for m in record.messages] == ["system", "user", "assistant"]
    assert "Italy's capital is Rome." in record.messages[1]["content"]
    assert 'output "i don\'t know"' in record.messages[1]["content"]
    assert record.label == "rome" and record.adapter == "web_answer" and record.reason == L.GOLD_IN_CONTEXT
    assert record.meta["prediction"] == "Milan" and record.meta["answer_correct"] is False
    assert all(o.record is None for o in outcomes if o.decision.label is None)


class _Abstaining:
    """A check that never reaches a verdict (a judge whose calls all fail)."""

    name = "broken"

    def check(self, items):
        return [None] * len(items)


def test_failed_judges_skip_instead_of_guessing(scripted, fixed_contexts, make_example):
    examples = [make_example("a", "q1?", "paris"), make_example("b", "q2?", "rome")]
    contexts = fixed_contexts({"q1?": "<DOC>\nx\n</DOC>\n", "q2?": "<DOC>\ny\n</DOC>\n"})
    generator = scripted(lambda prompt: "Milan")
    unjudged = _builder(generator, contexts, answer_check=_Abstaining()).label_batch(examples)
    assert [(o.decision.label, o.decision.reason) for o in unjudged] == [(None, L.UNJUDGED)] * 2
    unchecked = _builder(generator, contexts, context_check=_Abstaining()).label_batch(examples)
    assert [(o.decision.label, o.decision.reason) for o in unchecked] == [(None, L.CONTEXT_UNCHECKED)] * 2
