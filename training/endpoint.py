"""A client of any OpenAI-compatible `/chat/completions` endpoint that quacks like a `Generator`.

db3 judged its SFT labels and wrote its first API-generation targets with GPT-4; the same requests go to
OpenAI itself, to a local vLLM server (`vllm serve ... --port 8001` -> `http://localhost:8001/v1`), or to any
compatible service, without a new code path: the label checks and the API bootstrap take a generator and
this class is one.

Only `generate` and the adapter attributes are implemented (it serves no adapter: every request goes to `model`):
the endpoint's tokenizer is unknown here, so nothing that budgets tokens (context formatting) may use this class;
contexts are always built with the local model's tokenizer.
A request that still fails after its retries returns "" (as a `Generator` does for a request it could not
run); callers treat "" as a failed call, never as an answer. HTTP itself (session, key, retries, timeouts, reading
the reply) is the shared client's (`models/llm/openai_client.py`); this class keeps its own retry statuses and
pauses (`RETRY`), and a null content is "".
"""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Sequence

from models.deadline import Deadline
from models.llm.adapters import AdapterNames
from models.llm.generator import GenerationRequest
from models.llm.openai_client import MalformedReply, OpenAIClient, RetriesExhausted, RetryPolicy, ServerCallError, \
    env_key, request_body

log = logging.getLogger(__name__)

# A lost connection, a timeout and these statuses are retried (pauses of 1, 2, 4, ... s, at most 30 s); any other
# status of 400 or more fails at once: a bad request or a wrong key will not get better by asking again.
RETRY = RetryPolicy(retries=5, backoff_s=1.0, max_backoff_s=30.0, statuses=frozenset({408, 409, 429, 500, 502, 503,
                                                                                      504}))


class ChatEndpoint:
    """`generate(requests) -> list[str]` over HTTP, several requests in flight at once."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, temperature: float = 0.0,
                 timeout_s: float = 120.0, retries: int = RETRY.retries, workers: int = 8, session=None):
        """
        Args:
            base_url: e.g. `https://api.openai.com/v1` or `http://localhost:8001/v1`.
            model: the served model's name.
            api_key: bearer token; default `$OPENAI_API_KEY` (a local server needs none).
            retries: extra attempts after a connection error, timeout, 408, 409, 429 or 5xx other than 501 and
                505 (exponential pause).
            workers: requests in flight at once (a vLLM server batches them).
        """
        if not base_url:
            raise ValueError("an endpoint needs a base URL such as http://localhost:8001/v1")
        self.model = model
        self.adapters, self.missing_adapters = AdapterNames(), {}
        self.temperature = temperature
        self.workers = max(1, workers)
        self.client = OpenAIClient(base_url, api_key=env_key("OPENAI_API_KEY") if api_key is None else api_key,
                                   timeout_s=timeout_s, retry=replace(RETRY, retries=retries),
                                   null_content="", session=session, pool_size=self.workers)
        self.url = self.client.url("chat/completions")

    def generate(self, requests_: Sequence[GenerationRequest], *, deadline: Deadline | None = None) -> list[str]:
        """One completion per request, in order; "" where the call failed or the deadline passed."""
        deadline = deadline or Deadline(None)
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(lambda r: self._complete(r, deadline), requests_))

    def _complete(self, request: GenerationRequest, deadline: Deadline) -> str:
        body = request_body(self.model, messages=request.messages, temperature=self.temperature,
                            max_tokens=request.max_new_tokens, stop=list(request.stop) or None)
        try:
            return self.client.chat(body, deadline=deadline).text
        except MalformedReply as exc:
            log.warning("endpoint reply without choices[0].message.content: %s", exc)
        except RetriesExhausted as exc:
            log.warning("endpoint %s: request failed (%s)", self.url, exc.last or "deadline reached")
        except ServerCallError as exc:
            log.warning("endpoint %s: request failed (%s)", self.url, exc)
        return ""
