"""The two questions db3 §2.4 asks while building labels: is the answer right, is the gold in the context?

    answer check  (p_check_gt, prompts/check_gt.txt):   does the p_basic prediction match a gold answer?
    context check (p_context, prompts/check_context.txt): is the gold answer mentioned in the context?

Each check takes `CheckItem`s in a batch and returns one verdict per item: True, False, or None when no
verdict could be had (the caller records the example as unjudged and skips it; a guess would be a silent
wrong label). Two kinds of each:
- `rules`: no LLM. The answer check applies the CRAG V3 rules first (exact match, "invalid" on one side,
  "i don't know"; `evaluation.metrics`), then counts a prediction as right when a normalised gold answer
  appears in it as whole words. The context check looks for a normalised gold answer in the context. Both
  err towards "no", and "no" leads to the safe label (`i don't know`), never to a wrong answer label.
  (`evaluation`'s RulesJudge leaves every non-exact pair unjudged, which here would skip almost everything.)
- `llm`: the paper's prompts through any generator: the local model (`make_generator`) or an
  OpenAI-compatible endpoint (`training.endpoint.ChatEndpoint`, GPT-class or a vLLM server). The V3 rules
  still decide the cases they can, so the LLM is only asked about genuinely open pairs. An unparseable
  reply is asked again up to `retries` times (useful with sampling endpoints and flaky servers; a greedy
  local model answers the same way) and then stays None.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence, TypeVar

from evaluation.judge import RulesJudge
from evaluation.metrics import CORRECT, ScoreItem, score_predictions
from models.llm.generator import GenerationRequest
from models.llm.prompts import PromptLibrary
from models.text import judge_words

log = logging.getLogger(__name__)

CHECK_GT_PROMPT = "check_gt"
CONTEXT_PROMPT = "check_context"
_ACCURACY = re.compile(r"[\"']?accuracy[\"']?\s*[:=]\s*[\"']?(true|false)", re.IGNORECASE)
_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
T = TypeVar("T")


@dataclass(frozen=True)
class CheckItem:
    """What both checks look at for one example."""

    query: str
    ground_truths: tuple[str, ...]  # the gold answer first, then its alternatives
    prediction: str = ""
    context: str = ""


class AnswerCheck(Protocol):
    name: str

    def check(self, items: Sequence[CheckItem]) -> list[bool | None]:
        """True: the prediction matches a gold answer; False: it does not; None: no verdict."""


class ContextCheck(Protocol):
    name: str

    def check(self, items: Sequence[CheckItem]) -> list[bool | None]:
        """True: a gold answer is in the context; False: it is not; None: no verdict."""


# ---------------------------------------------------------------------------------------------- rules
def mentions(text: str, phrases: Sequence[str]) -> bool:
    """True when some normalised phrase occurs in the normalised text as whole words."""
    haystack = f" {judge_words(text)} "
    return any((needle := judge_words(p)) and f" {needle} " in haystack for p in phrases)


def v3_rule_verdicts(items: Sequence[CheckItem]) -> list[bool | None]:
    """The verdicts the CRAG V3 rules give without a judge (exact, invalid, i-don't-know); None elsewhere."""
    scored = score_predictions(
        [ScoreItem(i.query, i.prediction, i.ground_truths[0] if i.ground_truths else "", i.ground_truths[1:])
         for i in items], RulesJudge(), trim=lambda text: text)
    return [None if v.unjudged else v.outcome == CORRECT for v in scored]


class RulesAnswerCheck:
    name = "rules"

    def check(self, items: Sequence[CheckItem]) -> list[bool | None]:
        return [rule if rule is not None else mentions(item.prediction, item.ground_truths)
                for item, rule in zip(items, v3_rule_verdicts(items))]


class RulesContextCheck:
    name = "rules"

    def check(self, items: Sequence[CheckItem]) -> list[bool | None]:
        return [mentions(item.context, item.ground_truths) for item in items]


# ---------------------------------------------------------------------------------------------- LLM
def parse_accuracy(reply: str) -> bool | None:
    """`{"Accuracy": "True"}` -> True (lenient about quotes and case); None when there is no verdict."""
    found = _ACCURACY.search(reply or "")
    return None if found is None else found.group(1).lower() == "true"


def parse_yes_no(reply: str) -> bool | None:
    """The first standalone yes/no of a reply; None when it has neither."""
    found = _YES_NO.search(reply or "")
    return None if found is None else found.group(1).lower() == "yes"


def ask_with_retries(generator, messages: Sequence[tuple[dict, ...]], parse: Callable[[str], T | None],
                     retries: int, max_new_tokens: int) -> list[T | None]:
    """Generates one reply per chat and parses it, asking again (batched) for replies that did not parse.

    A generator that raises counts as a failed attempt for the whole batch, not as a crash.
    """
    verdicts: list[T | None] = [None] * len(messages)
    pending = list(range(len(messages)))
    for _ in range(retries + 1):
        if not pending:
            break
        requests = [GenerationRequest(messages[i], max_new_tokens=max_new_tokens) for i in pending]
        try:
            replies = generator.generate(requests)
        except Exception:
            log.exception("check generation failed for %d items", len(pending))
            replies = [""] * len(pending)
        for i, reply in zip(pending, replies):
            verdicts[i] = parse(reply)
        pending = [i for i in pending if verdicts[i] is None]
    if pending:
        log.warning("%d of %d checks gave no verdict after %d attempts", len(pending), len(messages), retries + 1)
    return verdicts


class _PromptCheck:
    """A check that asks one of the paper's prompts through a generator."""

    prompt_name = ""
    max_new_tokens = 8

    def __init__(self, generator, name: str = "llm", retries: int = 2, prompts: PromptLibrary | None = None):
        self.generator = generator
        self.name = name
        self.retries = retries
        self.template = (prompts or PromptLibrary()).get(self.prompt_name)


class LLMAnswerCheck(_PromptCheck):
    """p_check_gt through a generator, after the V3 rules."""

    prompt_name = CHECK_GT_PROMPT
    max_new_tokens = 24  # the reply is one tiny JSON object

    def check(self, items: Sequence[CheckItem]) -> list[bool | None]:
        verdicts = v3_rule_verdicts(items)
        open_ = [i for i, v in enumerate(verdicts) if v is None]
        chats = [self.template.render(query=items[i].query, prediction=items[i].prediction,
                                      ground_truths=json.dumps(list(items[i].ground_truths), ensure_ascii=False))
                 for i in open_]
        for i, verdict in zip(open_, ask_with_retries(self.generator, chats, parse_accuracy, self.retries,
                                                      self.max_new_tokens)):
            verdicts[i] = verdict
        return verdicts


class LLMContextCheck(_PromptCheck):
    """p_context through a generator."""

    prompt_name = CONTEXT_PROMPT
    max_new_tokens = 4

    def check(self, items: Sequence[CheckItem]) -> list[bool | None]:
        chats = [self.template.render(context=item.context, query=item.query,
                                      ground_truth=" or ".join(item.ground_truths)) for item in items]
        return ask_with_retries(self.generator, chats, parse_yes_no, self.retries, self.max_new_tokens)


def make_checks(kind: str, generator=None, retries: int = 2, name: str = "local") -> tuple[AnswerCheck, ContextCheck]:
    """The (answer check, context check) pair named on the command line.

    Args:
        kind: `rules` (no LLM) or `llm` (the paper's prompts through `generator`: the local model or a
            `ChatEndpoint`).
        generator: needed for `llm`.
        retries: extra attempts for replies without a verdict.
        name: who judges, for the records (`local`, or the endpoint's model name).

    Raises:
        ValueError: an unknown kind, or `llm` without a generator.
    """
    if kind == "rules":
        return RulesAnswerCheck(), RulesContextCheck()
    if kind == "llm":
        if generator is None:
            raise ValueError("the llm checks need a generator (the local model or --judge-url)")
        return (LLMAnswerCheck(generator, name=f"llm:{name}", retries=retries),
                LLMContextCheck(generator, name=f"llm:{name}", retries=retries))
    raise ValueError(f"unknown judge {kind!r}; expected rules or llm")
