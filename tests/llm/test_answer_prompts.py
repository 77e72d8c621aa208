"""The answer prompts from the db3 paper: exact slots, and the refusal instructions where they belong."""
import pytest

from models.llm.prompts import PromptLibrary

SLOTS = {"context", "query", "query_time", "token_limit"}


@pytest.mark.parametrize("name", ["answer_basic", "answer_ctrl", "answer_confqa", "answer_kg"])
def test_slots_and_rendering(name):
    template = PromptLibrary().get(name)
    assert template.slots == SLOTS
    system, user = template.render(context="<DOC>\nCanberra is the capital.\n</DOC>", query="capital of australia?",
                                   query_time="03/01/2024, 09:00:00 PT", token_limit=50)
    assert system["role"] == "system" and "50 words or less" in system["content"]
    assert "Now is 03/01/2024, 09:00:00 PT" in system["content"]
    assert user["content"].index("<DOC>") < user["content"].index("Question: capital of australia?")
    assert user["content"].rstrip().endswith("Answer:")


def test_only_the_controlled_prompts_ask_for_refusals():
    library = PromptLibrary()
    basic = library.get("answer_basic").user
    assert "invalid question" not in basic and "i don't know" not in basic
    for name in ("answer_ctrl", "answer_confqa", "answer_kg"):
        user = library.get(name).user
        assert '"invalid question"' in user and "\"i don't know\"" in user


def test_the_confqa_prompt_is_the_controlled_prompt_plus_its_one_line():
    """The A/B switch `pipeline.answer_prompt: answer_confqa` changes the answer prompt by ConfQA's line alone."""
    library = PromptLibrary()
    ctrl, confqa = library.get("answer_ctrl"), library.get("answer_confqa")
    assert confqa.system == ctrl.system
    added = [line for line in confqa.user.splitlines() if line not in ctrl.user.splitlines()]
    removed = [line for line in ctrl.user.splitlines() if line not in confqa.user.splitlines()]
    assert added == ["Answer only if you are confident. If you are not sure about the question, output \"i don't know\"."]
    assert removed == ["If you are not sure about the question, output \"i don't know\"."]


def test_the_short_answer_prompt_asks_for_the_span_only_and_allows_both_refusals():
    template = PromptLibrary().get("answer_short")
    assert template.slots == SLOTS
    system, user = template.render(context="<DOC>\nCanberra is the capital.\n</DOC>", query="capital of australia?",
                                   query_time="03/01/2024, 09:00:00 PT", token_limit=10)
    assert "at most 10 words" in system["content"] and "Now is 03/01/2024, 09:00:00 PT" in system["content"]
    assert '"invalid question"' in user["content"] and "\"i don't know\"" in user["content"]
    assert user["content"].rstrip().endswith("Answer:")


def test_the_support_check_prompt():
    template = PromptLibrary().get("check_support")
    assert template.slots == {"context", "query", "answer"}
    assert "yes or no" in template.render(context="c", query="q", answer="a")[-1]["content"]
