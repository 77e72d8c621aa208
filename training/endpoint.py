"""A client of any OpenAI-compatible `/chat/completions` endpoint that quacks like a `Generator`.

db3 judged its SFT labels and wrote its first API-generation targets with GPT-4; the same requests go to
OpenAI itself, to a local vLLM server (`vllm serve ... --port 8001` -> `http://localhost:8001/v1`), or to any
compatible service, without a new code path: the label checks and the API bootstrap take a generator and
this class is one.

Only `generate` is implemented: the endpoint's tokenizer is unknown here, so nothing that budgets tokens
(context formatting) may use this class; contexts are always built with the local model's tokenizer.
A request that still fails after its retries returns "" (as a `Generator` does for a request it could not
run); callers treat "" as a failed call, never as an answer.
"""
from __future__ import annotations

import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

import requests

from models.deadline import Deadline
from models.llm.generator import GenerationRequest

log = logging.getLogger(__name__)

_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class ChatEndpoint:
    """`generate(requests) -> list[str]` over HTTP, several requests in flight at once."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, temperature: float = 0.0,
                 timeout_s: float = 120.0, retries: int = 5, workers: int = 8, session=None):
        """
        Args:
            base_url: e.g. `https://api.openai.com/v1` or `http://localhost:8001/v1`.
            model: the served model's name.
            api_key: bearer token; default `$OPENAI_API_KEY` (a local server needs none).
            retries: extra attempts after a connection error, timeout, 429 or 5xx (exponential pause).
            workers: requests in flight at once (a vLLM server batches them).
        """
        if not base_url:
            raise ValueError("an endpoint needs a base URL such as http://localhost:8001/v1")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.retries = retries
        self.workers = max(1, workers)
        self.session = session or requests.Session()
        key = os.environ.get("OPENAI_API_KEY", "") if api_key is None else api_key
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}

    def generate(self, requests_: Sequence[GenerationRequest], *, deadline: Deadline | None = None) -> list[str]:
        """One completion per request, in order; "" where the call failed or the deadline passed."""
        deadline = deadline or Deadline(None)
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(lambda r: self._complete(r, deadline), requests_))

    def _complete(self, request: GenerationRequest, deadline: Deadline) -> str:
        body = {"model": self.model, "messages": list(request.messages), "temperature": self.temperature,
                "max_tokens": request.max_new_tokens}
        if request.stop:
            body["stop"] = list(request.stop)
        problem = "deadline reached"
        for attempt in range(self.retries + 1):
            if deadline.expired():
                break
            try:
                response = self.session.post(self.url, json=body, headers=self.headers, timeout=self.timeout_s)
            except (requests.ConnectionError, requests.Timeout) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    return _content(response)
                problem = f"HTTP {response.status_code}: {response.text[:200]}"
                if response.status_code not in _RETRY_STATUS:
                    break  # a bad request or a wrong key will not get better by asking again
            if attempt < self.retries:
                time.sleep(min(2 ** attempt, 30))
        log.warning("endpoint %s: request failed (%s)", self.url, problem)
        return ""


def _content(response) -> str:
    try:
        return response.json()["choices"][0]["message"]["content"] or ""
    except (ValueError, KeyError, IndexError, TypeError):
        log.warning("endpoint reply without choices[0].message.content: %s", response.text[:200])
        return ""
