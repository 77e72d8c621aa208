"""A stand-in for `vllm.LLM` and its engine, with the call signatures of the pinned wheel (vllm 0.32.0).

`StandInLLM(model, **engine_args)` has `get_tokenizer()` and `llm_engine`, a `StandInEngine` with the four
methods the backend drives (`v1/engine/llm_engine.py`): `add_request(request_id, prompt, params,
lora_request=...)`, `step()`, `abort_request(ids)` and `has_unfinished_requests()`. It schedules as vLLM's engine
does, as far as time is concerned: every added request runs in the same batch, each `step()` advances every
running request by one token and takes `step_s` (of a fake clock, or slept in real time), and a request
finishes after `tokens(request)` steps (at most its `max_tokens`), its output carrying the id it was added with
and, as vLLM's does, `n` completions (`SamplingParams.n`; sample j > 0 says "<text> #j") with per-token
log-probabilities when `logprobs` was asked.
Requests added while the engine is idle open a new batch (which holds the requests added before the next step);
`calls` lists the batches as the backend sent them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable


@dataclass
class Added:
    request_id: str
    prompt: dict
    params: object
    lora: object
    position: int  # in its batch
    steps_left: int


class StandInEngine:
    """Args:
        step_s: the time one step takes.
        clock: a fake clock (`clock.now` is advanced by `step_s`); None sleeps `step_s` in real time.
        tokens: steps a request needs (default 1), capped by its `max_tokens`.
        text: the completion of a request (default "answer <its position in its batch>").
        reject: requests for which `add_request` raises, as vLLM's validation does for a bad grammar.
    """

    def __init__(self, step_s: float = 0.0, clock=None, tokens: Callable[[Added], int] | None = None,
                 text: Callable[[Added], str] | None = None, reject: Callable[[Added], bool] | None = None):
        self.step_s, self.clock = step_s, clock
        self.tokens = tokens or (lambda added: 1)
        self.text = text or (lambda added: f"answer {added.position}")
        self.reject = reject or (lambda added: False)
        self.running: dict[str, Added] = {}
        self.batches: list[list[Added]] = []
        self.aborted: list[str] = []
        self.steps = 0
        self._opening, self._attempts = False, 0
        self.engine_core = SimpleNamespace(shutdowns=0)  # the engine-core client: `shutdown()` stops its processes
        self.engine_core.shutdown = lambda timeout=None: setattr(self.engine_core, "shutdowns",
                                                                 self.engine_core.shutdowns + 1)

    def add_request(self, request_id, prompt, params, arrival_time=None, lora_request=None, **kwargs):
        if not isinstance(request_id, str):
            raise TypeError(f"request_id must be a string, got {type(request_id)}")
        if request_id in self.running:
            raise ValueError(f"request id {request_id} is already running")
        if not self.running and not self._opening:
            self.batches.append([])
            self._attempts = 0
        self._opening = True  # until the next step: the requests added before it are one batch, rejected or not
        added = Added(request_id, prompt, params, lora_request, self._attempts, 0)
        self._attempts += 1
        if self.reject(added):
            raise ValueError("grammar cannot be compiled")
        cap = _kwargs(params).get("max_tokens", 16)
        added.steps_left = max(1, min(cap, self.tokens(added)))
        self.batches[-1].append(added)
        self.running[request_id] = added
        return f"{request_id}-0123abcd"  # vLLM returns its internal id; outputs carry the one given

    def has_unfinished_requests(self) -> bool:
        return bool(self.running)

    def step(self):
        self._opening = False
        self.steps += 1
        if self.clock is None:
            time.sleep(self.step_s)
        else:
            self.clock.now += self.step_s
        finished = []
        for request_id, added in list(self.running.items()):
            added.steps_left -= 1
            if added.steps_left <= 0:
                del self.running[request_id]
                finished.append(SimpleNamespace(request_id=request_id, finished=True,
                                                outputs=[_completion(self.text(added), added.params, j)
                                                         for j in range(_kwargs(added.params).get("n", 1))]))
        return finished

    def abort_request(self, request_ids, internal: bool = False):
        for request_id in request_ids:
            if self.running.pop(request_id, None) is not None:
                self.aborted.append(request_id)


def _completion(text: str, params, sample: int) -> SimpleNamespace:
    """One `CompletionOutput`: sample j of n says "<text> #j" (j > 0); with `logprobs` asked, one token per word,
    each of log-probability -0.1 * (j + 1), in vLLM's shape (per position: token id -> Logprob)."""
    text = text if sample == 0 else f"{text} #{sample}"
    completion = SimpleNamespace(text=text, finish_reason="stop", token_ids=list(range(len(text.split()))),
                                 logprobs=None)
    if _kwargs(params).get("logprobs") is not None:
        completion.logprobs = [{token: SimpleNamespace(logprob=-0.1 * (sample + 1))} for token in completion.token_ids]
    return completion


def _kwargs(params) -> dict:
    return getattr(params, "kwargs", None) or vars(params)


class StandInLLM:
    """`vllm.LLM(model, **engine_args)`: `get_tokenizer()` and `llm_engine` (a `StandInEngine` built from the
    class attribute `engine_options`)."""

    tokenizer = None
    engine_options: dict = {}

    def __init__(self, model, **engine_args):
        self.model, self.engine_args = model, engine_args
        self.llm_engine = StandInEngine(**self.engine_options)

    def get_tokenizer(self):
        return self.tokenizer

    @property
    def calls(self):
        """The batches the backend sent: prompts, sampling params and LoRA requests of each."""
        return [SimpleNamespace(prompts=[a.prompt for a in batch], params=[a.params for a in batch],
                                loras=[a.lora for a in batch]) for batch in self.llm_engine.batches]


class Recorded:
    """Stands in for SamplingParams / StructuredOutputsParams / GuidedDecodingParams: keeps its kwargs."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs


def stand_in_vllm(llm=StandInLLM, structured: bool = True, guided: bool = False) -> SimpleNamespace:
    """The parts of vllm the backend uses (`import_vllm()`'s namespace) over the stand-ins."""
    return SimpleNamespace(
        LLM=llm, SamplingParams=Recorded, FINAL_ONLY="FINAL_ONLY",
        LoRARequest=lambda name, int_id, path: SimpleNamespace(lora_name=name, lora_int_id=int_id, lora_path=path),
        StructuredOutputsParams=type("StructuredOutputsParams", (Recorded,), {}) if structured else None,
        GuidedDecodingParams=type("GuidedDecodingParams", (Recorded,), {}) if guided else None)
