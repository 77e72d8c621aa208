"""Judges: who decides whether a non-exact prediction means the same as a ground truth.

Three judges share one interface, `judge(items) -> list[Judgement]` (batched, in order):
- `RulesJudge`: no LLM. It decides nothing: every item comes back unjudged (score None) and the scorer counts
  it as the official scorer counts a failed judge call, as a hallucination, while the summary reports how
  many such items there were.
- `LocalJudge`: the project's own LLM layer (`make_generator`, any backend and profile) with the V3 judge
  prompt `prompts/judge_v3.txt`.
- `OpenAIJudge`: any OpenAI-compatible chat endpoint (OpenAI itself, or a local vLLM server at
  `--judge-url http://localhost:8001/v1`), temperature 0, `response_format` json_object, retries on
  connection errors, rate limits and 5xx (pauses of 1, 2, 4, ... s, at most 30 s), as the V3 evaluator does,
  through the shared client (`models/llm/openai_client.py`).

Responses are parsed as the V3 evaluator parses them: the LAST `{...}` block, `"score": <digits>` in it,
and only 0 or 1 count; anything else is a failed call (score None), which scores as a hallucination and
is recorded as `judge-error`.
"""
from __future__ import annotations

import logging
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Protocol, Sequence

from models.llm.generator import GenerationRequest
from models.llm.openai_client import OpenAIClient, RetryPolicy, env_key, request_body
from models.llm.prompts import PromptLibrary, PromptTemplate

log = logging.getLogger(__name__)

JUDGE_PROMPT = "judge_v3"
_LAST_BLOCK = re.compile(r"\{[^{}]*\}")
_SCORE = re.compile(r'"score"\s*:\s*(\d+)')
_EXPLANATION = re.compile(r'"explanation"\s*:\s*"((?:[^"\\]|\\.)*)"')
JUDGE_RETRY = RetryPolicy(retries=10, backoff_s=1.0, max_backoff_s=30.0)  # connection errors, 429 and 5xx


@dataclass(frozen=True)
class JudgeItem:
    """One question put to a judge: does `prediction` answer `query` as `ground_truth` does?"""

    query: str
    ground_truth: str
    prediction: str


@dataclass(frozen=True)
class Judgement:
    """A judge's verdict: score 1 (same answer), 0 (not), or None (no verdict: unjudged or failed call)."""

    score: int | None
    explanation: str
    judge: str
    unjudged: bool = False  # True only for RulesJudge: no judge was asked at all


class Judge(Protocol):
    name: str

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgement]:
        """One Judgement per item, in order; never raises for one bad item."""


def parse_judge_response(text: str) -> tuple[int | None, str]:
    """Score and explanation from a judge's reply, the V3 way.

    Returns:
        (score, explanation): score is 0 or 1, or None when the last `{...}` block has no `"score"` or a
        value other than 0/1; the explanation is the block's `"explanation"` or the block itself.
    """
    blocks = _LAST_BLOCK.findall(text or "")
    if not blocks:
        return None, f"no JSON object in the judge reply: {(text or '')[:200]!r}"
    block = blocks[-1]
    match = _SCORE.search(block)
    if match is None:
        return None, f"no score in the judge reply: {block[:200]!r}"
    score = int(match.group(1))
    if score not in (0, 1):
        return None, f"score {score} is neither 0 nor 1: {block[:200]!r}"
    explanation = _EXPLANATION.search(block)
    return score, explanation.group(1) if explanation else block


def judge_messages(template: PromptTemplate, item: JudgeItem) -> tuple[dict, ...]:
    return template.render(query=item.query, ground_truth=item.ground_truth, prediction=item.prediction)


class RulesJudge:
    """No LLM: every non-exact item is reported as unjudged (scored as the official scorer would score a
    failed judge call: a hallucination)."""

    name = "rules"

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgement]:
        return [Judgement(None, "unjudged: no LLM judge (--judge rules)", self.name, unjudged=True) for _ in items]


class LocalJudge:
    """The V3 judge prompt run through the project's own `Generator`.

    Needs an instruction-following model: the CPU profile's SmolLM2-135M answers the question instead of
    grading it (no JSON in 2 of 2 replies, ~45 s per item on 2 busy cores), so every call fails and scores
    as a hallucination. Use it with the g4dn profile's Llama-3-8B, or serve a larger model for `OpenAIJudge`.
    """

    def __init__(self, generator, name: str = "local", prompts: PromptLibrary | None = None,
                 max_new_tokens: int = 128):
        self.generator = generator
        self.name = name
        self.template = (prompts or PromptLibrary()).get(JUDGE_PROMPT)
        self.max_new_tokens = max_new_tokens  # the reply is one short JSON object

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgement]:
        requests = [GenerationRequest(judge_messages(self.template, item), max_new_tokens=self.max_new_tokens)
                    for item in items]
        try:
            replies = self.generator.generate(requests) if requests else []
        except Exception as exc:  # a crashed backend is a failed call for every item, not a crashed evaluation
            log.exception("local judge failed on %d items", len(items))
            replies = [f"generation failed: {exc}"] * len(items)
        return [Judgement(*parse_judge_response(reply), judge=self.name) for reply in replies]


class OpenAIJudge:
    """The V3 judge prompt sent to an OpenAI-compatible `/chat/completions` endpoint."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, prompts: PromptLibrary | None = None,
                 timeout_s: float = 60.0, retries: int = JUDGE_RETRY.retries, workers: int = 8, session=None):
        self.model = model
        self.name = f"openai:{model}"
        self.template = (prompts or PromptLibrary()).get(JUDGE_PROMPT)
        self.workers = workers  # calls are I/O bound; a local vLLM server batches concurrent requests
        self.client = OpenAIClient(base_url, api_key=env_key("OPENAI_API_KEY") if api_key is None else api_key,
                                   timeout_s=timeout_s, retry=replace(JUDGE_RETRY, retries=retries), null_content="",
                                   session=session, pool_size=max(1, workers))
        self.url, self.headers = self.client.url("chat/completions"), self.client.headers

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgement]:
        with ThreadPoolExecutor(max_workers=max(1, self.workers)) as pool:
            return list(pool.map(self._judge_one, items))

    def _judge_one(self, item: JudgeItem) -> Judgement:
        try:
            reply = self._call(judge_messages(self.template, item))
        except Exception as exc:  # after retries: a failed call, scored as a hallucination
            return Judgement(None, f"judge call failed: {type(exc).__name__}: {exc}"[:300], self.name)
        return Judgement(*parse_judge_response(reply), judge=self.name)

    def _call(self, messages: tuple[dict, ...]) -> str:
        """The reply's text; raises the client's error (`ServerCallError`) when the call failed after retries."""
        body = request_body(self.model, messages=messages, temperature=0.0, response_format={"type": "json_object"})
        return self.client.chat(body).text


class CachingJudge:
    """Asks the wrapped judge each (question, ground truth, prediction) once per run: the official scoring and
    the normalized judge's fallback share one LLM judge without paying for a pair twice."""

    def __init__(self, judge: Judge):
        self.inner = judge
        self.name = judge.name
        self.cache: dict[JudgeItem, Judgement] = {}

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgement]:
        new = list(dict.fromkeys(item for item in items if item not in self.cache))
        if new:
            judgements = list(self.inner.judge(new))
            if len(judgements) != len(new):
                raise RuntimeError(f"judge {self.name!r} returned {len(judgements)} verdicts for {len(new)} items")
            self.cache.update(zip(new, judgements))
        return [self.cache[item] for item in items]


def make_judge(kind: str, *, generator=None, url: str | None = None, model: str | None = None) -> Judge:
    """Builds the judge named on the command line.

    Args:
        kind: `rules`, `local` (needs `generator`) or `openai` (needs `url`; `model` defaults to
            gpt-4-0125-preview, the V3 default).

    Raises:
        ValueError: an unknown kind or a missing argument.
    """
    if kind == "rules":
        return RulesJudge()
    if kind == "local":
        if generator is None:
            raise ValueError("the local judge needs a generator")
        return LocalJudge(generator)
    if kind == "openai":
        base = url or os.environ.get("OPENAI_BASE_URL")
        if not base:
            raise ValueError("the openai judge needs --judge-url (or $OPENAI_BASE_URL), e.g. http://localhost:8001/v1")
        return OpenAIJudge(base, model or "gpt-4-0125-preview")
    raise ValueError(f"unknown judge {kind!r}; expected rules, local or openai")
