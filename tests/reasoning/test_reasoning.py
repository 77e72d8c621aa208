"""Reasoning module, knowledge extractor and backup summarizer with a scripted generator."""
from __future__ import annotations

import pytest

from models.deadline import Deadline
from models.llm.prompts import PromptLibrary
from models.reasoning import (BackupConfig, KnowledgeConfig, KnowledgeExtractor, ReasonedAnswer, Reasoner,
                              ReasoningConfig, ReasoningFormatError, References, format_references,
                              parse_reasoning)
from models.reasoning.knowledge import knowledge_note
from tests.stand_ins import ReplyingGenerator, user_text

GOOD = """- Does the question have a false premise? No.
- What is the final answer? The table lists 1997.
False premise: no
Final answer: 1997"""


@pytest.mark.parametrize("output, answer, premise", [
    (GOOD, "1997", False),
    ("...\nFalse premise: yes\nFinal answer: Invalid question", "invalid question", True),
    ("False premise: yes\nFinal answer: Paris", "invalid question", True),
    ("False premise: no\nFinal answer: I don't know, the references say nothing", "i don't know", False),
    ("Final answer: <the answer in as few words as possible>\n...\n**Final answer:** HubSpot", "HubSpot", None),
    ("## Final Answer: \"Christopher Nolan\"", "Christopher Nolan", None),
])
def test_parse_reasoning(output, answer, premise):
    parsed = parse_reasoning(output)
    assert (parsed.answer, parsed.false_premise) == (answer, premise)


@pytest.mark.parametrize("output", ["", "The answer is 1997.", "Final answer:", "Final answer: <your answer>"])
def test_unparsable_outputs(output):
    with pytest.raises(ReasoningFormatError):
        parse_reasoning(output)


def test_references_are_labelled_and_capped():
    refs = References(web=("chunk one", "chunk two " * 50), tables=("| a |\n| --- |\n| 1 |",), kg=("x" * 3000,),
                      calculations=("1 + 1 = 2 (5 of 5 samples agree)",), knowledge_note="Answer: 1997")
    text = format_references(refs, max_kg_chars=100, generator=ReplyingGenerator(None), max_tokens=80)
    assert text.index("## Web references") < text.index("## Table references") < text.index("## Knowledge graph")
    assert "### Calculation 1:\n1 + 1 = 2" in text
    assert "may be wrong)\nAnswer: 1997" in text
    assert "x" * 101 not in text  # KG section capped
    assert text.count("chunk two") < 50  # web section cut to the token budget
    assert format_references(References()) == "## References\nnone\n-----\n"


def test_every_prompt_renders_with_its_slots():
    library = PromptLibrary()
    assert library.get("reasoning").slots == {"references", "query", "query_time"}
    assert library.get("knowledge_extract").slots == {"query", "query_time"}
    assert library.get("backup_summary").slots == {"query", "material"}


def test_reasoner_parses_and_falls_back_to_the_summarizer():
    def reply(request):
        text = user_text(request)
        if text.startswith("Question:"):  # the backup prompt
            return "HubSpot" if "crm" in text else "I'm not sure"
        if "which crm" in text:
            return "- Does the question have a false premise? no\n- What is the final answer? it is... (cut)"
        if "who made it" in text:
            return "nothing useful"
        return GOOD
    generator = ReplyingGenerator(reply)
    reasoner = Reasoner(ReasoningConfig(enabled=True), generator)
    refs = [References(web=("HubSpot is a CRM company",)), References(), References(tables=("| y |",))]
    results = reasoner.answer(["which crm is largest?", "who made it?", "what year?"], ["t"] * 3, refs)
    assert results[0] == ReasonedAnswer("HubSpot", "backup", results[0].output)
    assert results[1].answer == "i don't know" and results[1].source == "backup"
    assert results[2] == ReasonedAnswer("1997", "reasoning", GOOD)
    assert generator.calls == 2  # one reasoning batch, one backup batch


def test_timed_out_reasoning_is_summarized_from_the_references():
    generator = ReplyingGenerator(lambda request: "HubSpot")
    reasoner = Reasoner(ReasoningConfig(enabled=True, backup=BackupConfig(reserve_s=5.0)), generator)
    # 4 s left, 5 s reserved: the reasoning requests cannot start; the summarizer still runs in time.
    results = reasoner.answer(["which crm?"], ["t"], [References(web=("HubSpot is a CRM",))], Deadline(4.0))
    assert results == [ReasonedAnswer("HubSpot", "backup", "")]
    backup_prompt = user_text(generator.requests[-1])
    assert "HubSpot is a CRM" in backup_prompt  # material = the references


def test_without_backup_an_unparsable_output_is_i_dont_know():
    reasoner = Reasoner(ReasoningConfig(enabled=True, backup=BackupConfig(enabled=False)),
                        ReplyingGenerator(lambda request: "rambling"))
    assert reasoner.answer(["q"], ["t"], [References()]) == [ReasonedAnswer("i don't know", "none", "rambling")]


def test_a_failing_backend_never_loses_a_question():
    def broken(request):
        raise RuntimeError("down")
    reasoner = Reasoner(ReasoningConfig(enabled=True), ReplyingGenerator(broken))
    assert [r.answer for r in reasoner.answer(["a", "b"], ["t", "t"], [References(), References()])] == [
        "i don't know", "i don't know"]


@pytest.mark.parametrize("output, note", [
    (GOOD, "Answer: 1997"),
    ("False premise: no\nFinal answer: i don't know", ""),
    ("False premise: yes\nFinal answer: invalid question", "The question may have a false premise (invalid question)."),
    ("no format at all", ""),
])
def test_knowledge_note(output, note):
    assert knowledge_note(output) == note


def test_knowledge_extractor_uses_no_references_and_respects_the_deadline():
    generator = ReplyingGenerator(lambda request: GOOD)
    extractor = KnowledgeExtractor(KnowledgeConfig(enabled=True), generator)
    assert extractor.notes(["when was it founded?"], ["03/01/2024"]) == ["Answer: 1997"]
    assert "Question: when was it founded?" in user_text(generator.requests[0])
    assert "References" not in user_text(generator.requests[0])
    assert extractor.notes(["q"], ["t"], Deadline(0.5)) == [""]  # under min_remaining_s: not started
    assert generator.calls == 1
