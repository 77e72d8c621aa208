"""Answer-adapter labels, db3 §2.4: what the fine-tuned model should say for each training question.

    gold is "invalid question" (false premise)           -> invalid question
    answer with p_basic; judge it against the gold (p_check_gt)
        correct                                          -> the gold answer
        wrong: is the gold answer in the context? (p_context)
            yes                                          -> the gold answer
            no                                           -> i don't know

The intuition (paper): answer what the context (or the model's own knowledge, shown by a correct answer)
supports, and say "i don't know" for what lies beyond the system, e.g. real-time prices without a price in
the context.

Design decisions beyond the paper:
- An example is skipped, with its reason recorded, when it cannot give a trustworthy label: no gold answer
  (empty or the literal "nan" of the old dev file), an empty context (the pipeline answers "i don't know"
  without asking the model, so such a prompt never occurs at inference), or a check that gave no verdict
  after its retries (`unjudged`, `context_unchecked`; retried when the build is resumed).
- The gold-answer label is the CRAG `answer` field as written (db3 lowercased it; we do not lowercase
  answers anywhere). A false premise is recognised by its question type as well as by its gold answer,
  because the old dataset schema gives false-premise gold answers as sentences.
- The user message of the training example is rendered with the prompt the adapter sees at inference
  (`pipeline.answer_prompt`), which need not be p_basic: p_basic only produces the prediction that is
  judged, with the base model (no adapter), as in the paper.
- The builder works a batch at a time: one context call, one prediction call, one answer-check call and
  one context-check call per batch, so every backend batches them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

from evaluation.metrics import ground_truths
from models.llm.generator import GenerationRequest, Generator
from models.llm.postprocess import clean_answer
from models.llm.prompts import PromptTemplate
from models.types import IDK, INVALID
from training.judges import AnswerCheck, CheckItem, ContextCheck
from training.sft_data import SFTRecord

# Why a label was chosen (written into each record) ...
FALSE_PREMISE = "false_premise"
JUDGED_CORRECT = "judged_correct"
GOLD_IN_CONTEXT = "gold_in_context"
GOLD_NOT_IN_CONTEXT = "gold_not_in_context"
# ... or why an example was skipped (written into the sidecar file).
NO_GOLD = "no_gold"
EMPTY_CONTEXT = "empty_context"
UNJUDGED = "unjudged"
CONTEXT_UNCHECKED = "context_unchecked"
RETRYABLE = (UNJUDGED, CONTEXT_UNCHECKED)  # a rerun may get a verdict; the others never change

_NO_ANSWER = {"", "nan", "none", "null"}
FALSE_PREMISE_TYPE = "false_premise"


@dataclass(frozen=True)
class LabelDecision:
    """The label for one example (None = skip it) and the reason."""

    label: str | None
    reason: str


def gold_answers(example: dict) -> tuple[str, ...]:
    """`[answer] + alt_ans` without empty, duplicate or "nan" entries."""
    return tuple(t for t in ground_truths(example.get("answer", ""), example.get("alt_ans") or ())
                 if t.strip().lower() not in _NO_ANSWER)


def is_false_premise(example: dict) -> bool:
    if example.get("question_type") == FALSE_PREMISE_TYPE:
        return True
    return any(INVALID in answer.lower() for answer in gold_answers(example))


def decide_label(example: dict, has_context: bool, answer_correct: bool | None = None,
                 gold_in_context: bool | None = None) -> LabelDecision:
    """The label rules (module docstring) for one example, given what the checks said.

    Args:
        example: a normalised CRAG example (`evaluation.data.load_examples`).
        has_context: the prompt has a non-empty context.
        answer_correct: the answer check's verdict on the p_basic prediction (None: none was had).
        gold_in_context: the context check's verdict (only consulted when the answer was wrong).

    Returns:
        The decision; `label` is None for a skipped example.
    """
    golds = gold_answers(example)
    if not golds:
        return LabelDecision(None, NO_GOLD)
    if not has_context:
        return LabelDecision(None, EMPTY_CONTEXT)
    if is_false_premise(example):
        return LabelDecision(INVALID, FALSE_PREMISE)
    if answer_correct is None:
        return LabelDecision(None, UNJUDGED)
    if answer_correct:
        return LabelDecision(golds[0], JUDGED_CORRECT)
    if gold_in_context is None:
        return LabelDecision(None, CONTEXT_UNCHECKED)
    return LabelDecision(golds[0], GOLD_IN_CONTEXT) if gold_in_context else LabelDecision(IDK, GOLD_NOT_IN_CONTEXT)


def needs_prediction(example: dict, context: str) -> bool:
    """Whether the label depends on a p_basic prediction (and so on the checks)."""
    return bool(gold_answers(example)) and bool(context.strip()) and not is_false_premise(example)


class ContextSource(Protocol):
    def contexts(self, examples: Sequence[dict]) -> list[str]:
        """The formatted context string the adapter would see for each example ("" when there is none)."""


@dataclass(frozen=True)
class Outcome:
    """What the builder decided for one example: a record to train on, or a skip with its reason."""

    example_id: str
    decision: LabelDecision
    record: SFTRecord | None
    detail: dict


@dataclass
class LabelBuilder:
    """Runs the label rules over batches of examples with injected context source, generator and checks.

    Attributes:
        source: builds each example's context (web or KG pathway).
        generator: answers with p_basic (base model, no adapter).
        answer_check, context_check: see `training.judges`.
        predict_prompt: p_basic; train_prompt: the adapter's inference prompt (user message of the record).
        adapter: the adapter the records are for (`web_answer`, `kg_answer`), written into each record.
        max_new_tokens, word_limit: as the pipeline answers (`pipeline.answer_max_new_tokens`,
            `pipeline.answer_word_limit`).
    """

    source: ContextSource
    generator: Generator
    answer_check: AnswerCheck
    context_check: ContextCheck
    predict_prompt: PromptTemplate
    train_prompt: PromptTemplate
    adapter: str
    max_new_tokens: int = 64
    word_limit: int = 50

    def label_batch(self, examples: Sequence[dict]) -> list[Outcome]:
        """One `Outcome` per example, in order."""
        contexts = self.source.contexts(examples)
        asked = [i for i, (ex, ctx) in enumerate(zip(examples, contexts)) if needs_prediction(ex, ctx)]
        predictions = self._predict([examples[i] for i in asked], [contexts[i] for i in asked])
        items = {i: CheckItem(examples[i]["query"], gold_answers(examples[i]), p, contexts[i])
                 for i, p in zip(asked, predictions)}
        correct = dict(zip(asked, self.answer_check.check([items[i] for i in asked])))
        wrong = [i for i in asked if correct[i] is False]
        in_context = dict(zip(wrong, self.context_check.check([items[i] for i in wrong])))
        outcomes = []
        for i, (example, context) in enumerate(zip(examples, contexts)):
            decision = decide_label(example, bool(context.strip()), correct.get(i), in_context.get(i))
            detail = {"prediction": items[i].prediction if i in items else None, "answer_correct": correct.get(i),
                      "gold_in_context": in_context.get(i), "answer_check": self.answer_check.name,
                      "context_check": self.context_check.name if i in in_context else None,
                      **{k: example.get(k, "") for k in ("domain", "question_type", "static_or_dynamic")}}
            record = None
            if decision.label is not None:
                messages = self._render(self.train_prompt, example, context) + (
                    {"role": "assistant", "content": decision.label},)
                record = SFTRecord(example["interaction_id"], messages, self.adapter, decision.reason, detail)
            outcomes.append(Outcome(example["interaction_id"], decision, record, detail))
        return outcomes

    def _render(self, template: PromptTemplate, example: dict, context: str) -> tuple[dict, ...]:
        # The same slots the pipeline's answer step fills, so the record is exactly an inference prompt.
        return template.render(context=context, query=example["query"], query_time=example.get("query_time", ""),
                               token_limit=self.word_limit)

    def _predict(self, examples: list[dict], contexts: list[str]) -> list[str]:
        if not examples:
            return []
        requests = [GenerationRequest(self._render(self.predict_prompt, ex, ctx), max_new_tokens=self.max_new_tokens)
                    for ex, ctx in zip(examples, contexts)]
        return [clean_answer(raw) for raw in self.generator.generate(requests)]
