"""ChatFormatter: chat template rendering and fitting prompts into the window (context cut, never the question)."""
import pytest

from models.llm.chat import ChatFormatter
from models.llm.prompts import load_prompt

QUESTION = "what was the closing price of aapl on 2024-02-27?"


def _messages(context: str):
    return load_prompt("answer_ctrl").render(context=context, query=QUESTION,
                                             query_time="02/28/2024, 10:04:54 PT", token_limit=50)


def _docs(n: int) -> str:
    return "".join(f"<DOC>\nchunk {i}: apple stock closed at {180 + i}.12 on a day in february.\n</DOC>\n"
                   for i in range(n))


@pytest.fixture()
def chat(tokenizer):
    return ChatFormatter(tokenizer, max_model_len=400)


def test_render_uses_the_models_chat_template(chat):
    prompt = chat.render([{"role": "user", "content": "hi"}])
    assert prompt.startswith("<|im_start|>") and prompt.endswith("<|im_start|>assistant\n")


def test_short_prompt_is_unchanged(chat):
    messages = _messages(_docs(2))
    assert chat.fit(messages, max_new_tokens=32) == chat.render(messages)


def test_long_context_is_cut_from_its_tail_and_the_question_kept(chat):
    messages = _messages(_docs(40))
    assert chat.count_tokens(chat.render(messages)) > 400
    prompt = chat.fit(messages, max_new_tokens=32)
    assert chat.count_tokens(prompt) <= 400 - 32
    assert f"Question: {QUESTION}" in prompt
    assert "chunk 0:" in prompt and "chunk 39:" not in prompt  # best-ranked chunks come first and stay
    assert prompt.count("<DOC>") >= 1 and prompt.rstrip().endswith("<|im_start|>assistant")
    context = prompt[prompt.index("<DOC>"):prompt.rindex("</DOC>") + len("</DOC>")]
    assert context.endswith("</DOC>")  # the cut block is closed again
    assert "Now is 02/28/2024" in prompt  # instructions untouched


def test_prompt_without_docs_is_cut_in_the_middle(chat):
    long_user = "Instructions first. " + "filler words here " * 200 + "Question: the end?"
    prompt = chat.fit([{"role": "user", "content": long_user}], max_new_tokens=32)
    assert chat.count_tokens(prompt) <= 400 - 32
    assert "Instructions first." in prompt and "Question: the end?" in prompt and " ... " in prompt


def test_question_alone_too_long_gives_none(chat):
    assert chat.fit(_messages("<DOC>\nx\n</DOC>")[:1] + ({"role": "user", "content": "<DOC>x</DOC> " + "why " * 600},),
                    max_new_tokens=32) is None


def test_count_and_truncate_tokens(chat):
    text = "The capital of Australia is Canberra."
    n = chat.count_tokens(text)
    assert n > 3 and chat.count_tokens("") == 0
    assert chat.truncate_tokens(text, n) == text
    cut = chat.truncate_tokens(text, 3)
    assert chat.count_tokens(cut) == 3 and text.startswith(cut)
    assert chat.truncate_tokens(text, 0) == ""
