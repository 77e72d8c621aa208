"""The LLM behind an OpenAI-compatible server (`llm.backend: openai`): vLLM serve, llama.cpp's server, others.

Entrants run the full CRAG data against a served model (the 8B behind `vllm serve` on GPUs, or a GGUF behind
llama.cpp on a laptop) instead of loading it in process. This backend is the third `Generator`:
- Adapters are model names, as `vllm serve --enable-lora --lora-modules name=path` serves them:
  `llm.server.adapter_models` maps each LoRA adapter the pipeline names to its served model; `server.model` is
  the base model. At start-up `/v1/models` must list all of them; a missing one is named in the error.
- Prompts: the model's own tokenizer (`llm.path`, as the in-process backends load it) counts and fits them. With
  `server.endpoint: completions` the prompt is rendered here with the model's chat template and sent to
  `/v1/completions`, so the server sees exactly the tokens the in-process backends see; with `chat` the fitted
  messages go to `/v1/chat/completions` and the server applies its own template.
- Grammars go over HTTP in the server's dialect (`server.dialect`), as one GBNF text (`models/llm/gbnf.py`): vLLM
  0.32 reads `structured_outputs: {"grammar": G}` (it accepts the older `guided_grammar` with HTTP 200 and
  ignores it); llama.cpp reads a top-level `grammar` (and ignores `structured_outputs`). A server that ignores the
  grammar anyway is not trusted: the callers parse and check what comes back.
- Sampling and log-probabilities: a request's own temperature (else the profile's) goes in its body; a sampled
  request with n > 1 sends `n` in the body (dialect `vllm`) or, where the server draws one completion per call
  (llama.cpp), n calls with seeds seed, seed+1, ... (a greedy one is sent once and copied n times); `logprobs`
  asks the chosen tokens' log-probabilities (`logprobs: 1` on /completions, read from `token_logprobs`;
  `logprobs: true` on /chat/completions, read from `content[].logprob`). Every choice of the reply is a
  `Completion`; log-probabilities the reply lacks or garbles leave that completion without them, not failed.
- Time and faults: at most `server.concurrency` requests in flight; each call's timeout is the smaller of
  `server.timeout_s` and the stage deadline's time left; connection errors, 429 and 5xx are retried with
  backoff while the deadline leaves time; any other failure (404 unknown model, 400, a malformed reply) is that
  request's "" with the reason (`ItemResults.reasons`, copied into the trace), and the caller answers
  "i don't know". The call returns at the stage deadline whatever the server does: requests still in flight
  then are abandoned (their threads end at their own timeout) and answer "".
- HTTP itself (session, headers, retries and back-off, timeouts, reading the reply) is the shared client's
  (`models/llm/openai_client.py`); this backend builds the bodies in its dialect and turns a failed call into
  its request's reason.
"""
from __future__ import annotations

import logging
import os
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Sequence

import requests

from models.deadline import Deadline
from models.isolation import ItemResults
from models.llm.adapters import AdapterNames
from models.llm.chat import ChatBackend, ChatFormatter
from models.llm.checkpoint import resolve_checkpoint
from models.llm.config import LLMConfig
from models.llm.errors import BackendUnavailableError
from models.llm.generator import Completion, GenerationRequest
from models.llm.openai_client import HTTPError, MalformedReply, OpenAIClient, RetriesExhausted, RetryPolicy, env_key, \
    request_body

log = logging.getLogger(__name__)

URL_ENV = "CRAG_LLM_URL"
DIALECTS = ("vllm", "llamacpp")
ENDPOINTS = ("completions", "chat")


class ServedAdapters(AdapterNames):
    """The adapters the server serves, each mapped to its served model name (`get(name)`)."""

    _configured_in = "llm.server.adapter_models"


class CallFailed(Exception):
    """One request's call failed for good (the message is its trace reason). `retryable`: the server was
    unreachable, went away or timed out, so the same request may be answered later (a resumed run asks it again);
    a status the server answered (a refused request) is not."""

    def __init__(self, reason: str, *, retryable: bool = False):
        super().__init__(reason)
        self.retryable = retryable


class OpenAIGenerator(ChatBackend):
    """`Generator` over an OpenAI-compatible HTTP server."""

    def __init__(self, config: LLMConfig, models_dir: str, *, session: requests.Session | None = None):
        """Loads the tokenizer and checks that the server serves the base model and every mapped adapter.

        Raises:
            ValueError: an unknown dialect or endpoint, or no served base model name.
            BackendUnavailableError: the server cannot be reached, or does not list a configured model.
        """
        server = config.server
        if server.dialect not in DIALECTS:
            raise ValueError(f"llm.server.dialect {server.dialect!r} is not one of {list(DIALECTS)}")
        if server.endpoint not in ENDPOINTS:
            raise ValueError(f"llm.server.endpoint {server.endpoint!r} is not one of {list(ENDPOINTS)}")
        if not server.model:
            raise ValueError("llm.server.model is empty: name the base model as the server serves it")
        from transformers import AutoTokenizer

        self.config, self.server = config, server
        self.base_url = (os.environ.get(URL_ENV) or server.base_url).rstrip("/")
        self.adapters = ServedAdapters(server.adapter_models)  # until the server says which it serves
        self.missing_adapters: dict[str, str] = {}  # the mapped adapters the server does not serve
        self.chat = ChatFormatter(AutoTokenizer.from_pretrained(
            resolve_checkpoint(config.path, models_dir, config.cache_dir)), config.max_model_len)
        self.client = OpenAIClient(self.base_url, api_key=env_key(server.api_key_env), timeout_s=server.timeout_s,
                                   retry=RetryPolicy(retries=server.retries, backoff_s=server.backoff_s),
                                   session=session, pool_size=server.concurrency)
        self._check_models()

    def _check_models(self) -> None:
        """The base model must be served; an adapter the server does not serve is an error with
        `llm.require_adapters`, else it is left out of `adapters` and named in `missing_adapters`, for which
        `make_generator` puts the base model in its place as for a missing folder in process
        (models/llm/stand_in.py), and the start-up log says so."""
        served = self._served_models()
        absent = {name: model for name in self.adapters.names if (model := self.adapters.get(name)) not in served}
        if self.server.model not in served or (absent and self.config.require_adapters):
            missing = ({"llm.server.model": self.server.model} if self.server.model not in served else {}) | {
                f"adapter {name!r}": model for name, model in absent.items()}
            raise BackendUnavailableError(
                f"the LLM server at {self.base_url} does not serve {missing}; it serves {sorted(map(str, served))} "
                "(vllm serve: --served-model-name for the base, --lora-modules name=path for each adapter)")
        self.adapters = ServedAdapters({name: self.adapters.get(name) for name in self.adapters.names
                                        if name not in absent})
        self.missing_adapters = {name: f"the LLM server at {self.base_url} does not serve {model!r}"
                                 for name, model in absent.items()}
        for name, why in self.missing_adapters.items():
            log.warning("LoRA adapter %r: %s, so the base model answers its requests (llm.require_adapters: true "
                        "makes this an error)", name, why)

    def _served_models(self) -> set[str]:
        """The ids (and llama.cpp's aliases) `/v1/models` lists, waiting up to `startup_wait_s` for a server that
        refuses connections or answers 503 while its model loads."""
        try:
            return self.client.models(wait_s=self.server.startup_wait_s)
        except RetriesExhausted as exc:
            raise BackendUnavailableError(
                f"the LLM server at {self.base_url} cannot list its models ({exc}); start it (python "
                f"scripts/serve_llamacpp.py, or vllm serve), or set ${URL_ENV} / llm.server.base_url") from exc
        except (requests.RequestException, HTTPError, MalformedReply) as exc:
            raise BackendUnavailableError(f"the LLM server at {self.base_url} cannot list its models ({exc})"
                                          ) from exc

    # ------------------------------------------------------------------ Generator protocol
    def generate(self, requests_: Sequence[GenerationRequest], *, deadline: Deadline | None = None) -> list[str]:
        """One completion per request, in order; "" with the reason for a request that failed or ran out of time.

        Raises:
            UnknownAdapterError: a request names an adapter the profile does not map.
        """
        self.adapters.require(r.adapter for r in requests_)
        deadline = deadline or Deadline(None)
        outputs, reasons, retryable = [""] * len(requests_), {}, set()
        bodies: dict[tuple[int, int], dict] = {}  # (request, call) -> body: n calls for n samples on llama.cpp
        for i, request in enumerate(requests_):
            try:
                built = self._bodies(request)
            except Exception as exc:  # noqa: BLE001 - e.g. a grammar GBNF cannot express: this request only
                reasons[i] = f"request not built: {type(exc).__name__}: {exc}"
                continue
            if built is None:
                reasons[i] = f"the prompt does not fit max_model_len={self.config.max_model_len}"
            else:
                bodies.update(((i, j), body) for j, body in enumerate(built))
        if not bodies:
            return ItemResults(outputs, reasons)
        drawn: dict[int, dict[int, tuple[Completion, ...]]] = {}
        pool = ThreadPoolExecutor(max_workers=max(1, min(self.server.concurrency, len(bodies))))
        try:
            futures = {pool.submit(self._call, body, deadline): key for key, body in bodies.items()}
            pending = set(futures)
            while pending and deadline.remaining() > 0:
                timeout = None if deadline.remaining() == float("inf") else deadline.remaining()
                done, pending = wait(pending, timeout=timeout, return_when=FIRST_COMPLETED)
                for future in done:
                    i, j = futures[future]
                    try:
                        drawn.setdefault(i, {})[j] = future.result()
                    except CallFailed as exc:
                        if i not in reasons and exc.retryable:
                            retryable.add(i)  # the reason kept is this one: the first of the request's calls
                        reasons.setdefault(i, str(exc))
            for future in pending:
                reasons.setdefault(futures[future][0], "no reply before the stage deadline")
            if pending:
                log.warning("deadline: %d of %d server requests still in flight are answered ''", len(pending),
                            len(requests_))
        finally:
            pool.shutdown(wait=False, cancel_futures=True)  # a call still in flight ends at its own timeout
        completions = {}
        for i, calls in drawn.items():
            request = requests_[i]
            kept = request.returned([c for j in sorted(calls) for c in calls[j]], self.config.temperature)
            if not kept:
                continue
            outputs[i] = kept[0].text
            reasons.pop(i, None)  # some of its calls answered: a sample lost to a fault is only fewer samples
            if request.keeps_completions:
                completions[i] = kept
        return ItemResults(outputs, reasons, completions, retryable)

    # ------------------------------------------------------------------ one request
    def _bodies(self, request: GenerationRequest) -> list[dict] | None:
        """The bodies of one request's calls: one, or one per sample where the dialect draws one completion per
        call (llama.cpp), each with its own seed; None when its prompt cannot fit the window."""
        body = self._body(request)
        if body is None or request.draws(self.config.temperature) == 1:
            return None if body is None else [body]
        if self.server.dialect == "vllm":
            return [body | {"n": request.n}]
        return [body | {"seed": self.config.seed + j} for j in range(request.n)]

    def _body(self, request: GenerationRequest) -> dict | None:
        """The JSON body of one request; None when its prompt cannot fit the window."""
        model = self.server.model if request.adapter is None else self.adapters.get(request.adapter)
        if self.server.endpoint == "completions":
            prompt = self.chat.fit(request.messages, request.max_new_tokens)
            if prompt is None:
                return None
            text = {"prompt": prompt}
        else:
            messages = self.chat.fit_messages(request.messages, request.max_new_tokens)
            if messages is None:
                return None
            text = {"messages": messages}
        temperature = request.temperature_under(self.config.temperature)
        sampling = (dict(temperature=temperature, top_p=self.config.top_p, seed=self.config.seed) if temperature > 0
                    else dict(temperature=0.0))
        logprobs = (1 if self.server.endpoint == "completions" else True) if request.logprobs else None
        return request_body(model, **text, max_tokens=max(1, request.max_new_tokens),
                            stop=list(request.stop) or None, **sampling, logprobs=logprobs,
                            **self._grammar(request.constraint))

    def _grammar(self, constraint) -> dict:
        if constraint is None:
            return {}
        from models.llm.gbnf import constraint_gbnf

        grammar = constraint_gbnf(constraint)
        if grammar is None:
            return {}
        if self.server.dialect == "vllm":
            return {"structured_outputs": {"grammar": grammar}}
        return {"grammar": grammar}

    def _call(self, body: dict, deadline: Deadline) -> tuple[Completion, ...]:
        """Every completion of one body's reply; raises CallFailed with the reason."""
        try:
            reply = self.client.create(self.server.endpoint, body, deadline=deadline)
        except HTTPError as exc:
            raise CallFailed(f"HTTP {exc.status} for model {body['model']!r}: {exc.text}") from None
        except MalformedReply as exc:
            raise CallFailed(str(exc)) from None
        except RetriesExhausted as exc:
            raise CallFailed(f"server call failed after retries: "
                             f"{exc.last or 'not sent: the stage deadline had passed'}",
                             retryable=exc.last is not None) from None
        return tuple(Completion(choice.text, choice.logprobs) for choice in reply.choices)
