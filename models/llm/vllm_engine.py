"""vLLM's engine driven step by step: a stage stops at its deadline and keeps what finished.

`LLM.generate` adds its requests and then steps the engine until every one has finished (vllm 0.32.0,
`entrypoints/common/offline.py` lines 589-625, `_run_engine`); once started it cannot be stopped, and a stage
whose requests run long overruns the batch, which then scores as all missing. The engine under it is open, in
0.32.0 as in 0.19.1 (the CUDA 12 fallback pin set) with the same signatures:

- `LLMEngine.add_request(request_id, prompt, params, lora_request=...)` (`v1/engine/llm_engine.py` 229-317)
  validates and adds one request: its `SamplingParams` (structured outputs included: `params.verify`, in
  `input_processor.py` 138-175, checks them at once, `sampling_params.py` 1218) and its own `LoRARequest`. The
  id given is the request's external id: outputs carry it (`output_processor.py` 394 and 413), and the engine
  keeps a random-suffixed internal id of its own (`input_processor.py` 354-371), which this never uses.
  A prompt of token ids goes through the renderer that `generate` uses (`input_processor.py` 402-428, the same
  `render_cmpl` as `offline.py` 111-145; 0.32 logs once that this path is deprecated).
- `LLMEngine.step()` (`llm_engine.py` 319-366) runs one scheduler step (a chunk of prefill or one token of
  decode for every running request) and returns the outputs it produced; with `output_kind` FINAL_ONLY, which
  `generate` sets (`offline.py` 568-587) and the backend puts in its `SamplingParams`, a request appears once,
  finished, with its whole text.
- `LLMEngine.abort_request(ids)` (`llm_engine.py` 224-227) takes external ids (`output_processor.py` 552-580
  maps them to the internal ones) and frees their KV cache blocks and LoRA slots.
- `LLMEngine.has_unfinished_requests()` (`llm_engine.py` 203-207).

So `run` adds each request alone (one the engine rejects costs only itself), steps while a request is unfinished
and the deadline leaves time for one more step (as long as the longest step of this call, or of the previous call
before this one has taken any: a call's first step is a prefill, as long as the longest), and then aborts what
is left: finished completions are kept; an aborted request is "" with its reason, and the caller answers
"i don't know". The deadline is overrun by at most one step's misprediction, not by a whole call.

The previous call's longest step is learnt from calls with a deadline only: an unbounded call is the warm-up
(or an offline run), whose steps compile kernels and grammars once (10 s a step on 2 cores), and taken for the
next call it held back every later call with less time left than that, each after 0 steps, so nothing ever
measured a step again. For the same reason a call held back whole halves what it was held back by: a one-off
slow step costs a few calls their answers, never the engine.
"""
from __future__ import annotations

import itertools
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from models.deadline import Deadline
from models.llm.generator import Completion

log = logging.getLogger(__name__)

_FINISHED_NORMALLY = ("stop", "length")  # anything else (vLLM's "abort", "error") holds no usable answer


@dataclass
class EngineRun:
    """What one `run` produced.

    Attributes:
        texts: one completion per request, in order ("" for a rejected, aborted or failed request): its first.
        reasons: request index -> why it holds "" (rejected, aborted at the deadline, finished by an error).
        completions: request index -> every completion of a finished request (n of them when its
            `SamplingParams` asked for n), each with its tokens' log-probabilities when it asked for them.
        steps: engine steps taken.
        longest_step_s: the longest of them.
    """

    texts: list[str]
    reasons: dict[int, str] = field(default_factory=dict)
    completions: dict[int, tuple] = field(default_factory=dict)
    steps: int = 0
    longest_step_s: float = 0.0
    malformed_logprobs: list = field(default_factory=list)  # why each unreadable completion's were left out


class EngineDriver:
    """Adds, steps and aborts requests on `engine`: a `vllm.LLM`'s `llm_engine`, or a stand-in with its four
    methods. `clock` times the steps (tests pass a fake one)."""

    def __init__(self, engine, clock=time.monotonic):
        self.engine, self.clock = engine, clock
        self._ids = itertools.count()
        # The previous bounded call's longest step: without it a call's first step, unmeasured, would start with any
        # time left (3 sampled answers a question, a call after the answers' own, overran their batch so).
        self.previous_longest_step_s = 0.0

    def run(self, prompts: Sequence[dict], params: Sequence[Any], loras: Sequence[Any],
            deadline: Deadline | None = None) -> EngineRun:
        """Generates one completion per prompt (`params[i]`, `loras[i]`: its sampling parameters and LoRA
        request, None = the base model) until all finish or the deadline; never raises for one request."""
        deadline = deadline or Deadline(None)
        result = EngineRun([""] * len(prompts))
        pending: dict[str, int] = {}
        try:
            self._add(prompts, params, loras, pending, result)
            self._step_until_done(pending, deadline, result)
            if result.steps and deadline.remaining() != float("inf"):
                self.previous_longest_step_s = result.longest_step_s
            elif pending and not result.steps:  # held back whole by the previous call's step (module docstring)
                self.previous_longest_step_s /= 2
        except BaseException:  # an engine step failed (or the process is stopping): leave nothing running
            self._abort(pending, result, "aborted: an engine step failed")
            raise
        if result.malformed_logprobs:
            log.warning("%d completions came with log-probabilities that could not be read (%s); they carry none, so "
                        "their mean_logprob is unmeasured", len(result.malformed_logprobs),
                        ", ".join(sorted(set(result.malformed_logprobs))))
        if pending:
            log.warning("deadline: %d of %d requests aborted after %d engine steps; their answers are ''",
                        len(pending), len(prompts), result.steps)
            self._abort(pending, result, f"aborted at the stage deadline after {result.steps} engine steps (vLLM)")
        return result

    def _abort(self, pending: dict[str, int], result: EngineRun, reason: str) -> None:
        """Aborts what is still in the engine, so that nothing of this call runs on into the next one."""
        if not pending:
            return
        for i in pending.values():
            result.reasons.setdefault(i, reason)
        try:
            self.engine.abort_request(list(pending))
        except Exception:
            log.exception("vLLM could not abort %d requests", len(pending))
        pending.clear()

    def _add(self, prompts, params, loras, pending: dict[str, int], result: EngineRun) -> None:
        for i, (prompt, sampling, lora) in enumerate(zip(prompts, params, loras)):
            request_id = f"crag-{next(self._ids)}"
            try:
                self.engine.add_request(request_id, prompt, sampling, lora_request=lora)
            except Exception as exc:  # validation (a bad grammar, a prompt over the window): this request only
                result.reasons[i] = f"vLLM rejected the request: {type(exc).__name__}: {exc}"
                log.warning("request %d rejected by vLLM: %s", i, exc)
                continue
            pending[request_id] = i

    def _step_until_done(self, pending: dict[str, int], deadline: Deadline, result: EngineRun) -> None:
        while pending and self.engine.has_unfinished_requests():
            if deadline.remaining() <= (result.longest_step_s if result.steps else self.previous_longest_step_s):
                return  # the next step would end past the deadline
            started = self.clock()
            outputs = self.engine.step()
            result.steps += 1
            result.longest_step_s = max(result.longest_step_s, self.clock() - started)
            for output in outputs:
                i = pending.get(output.request_id)
                if i is None or not output.finished:
                    continue
                del pending[output.request_id]
                usable = [c for c in (output.outputs or ()) if getattr(c, "finish_reason", "stop") in _FINISHED_NORMALLY]
                if not usable:
                    first = output.outputs[0] if output.outputs else None
                    result.reasons[i] = f"vLLM finished the request with {getattr(first, 'finish_reason', None)!r}"
                    continue
                result.completions[i] = tuple(Completion(c.text, chosen_logprobs(c, result.malformed_logprobs))
                                          for c in usable)
                result.texts[i] = usable[0].text
        if pending:  # the engine says nothing is left, yet these never finished: vLLM lost them
            for request_id, i in list(pending.items()):
                result.reasons[i] = "vLLM reported no unfinished request before this one finished"
                del pending[request_id]


def chosen_logprobs(completion, malformed: list | None = None) -> tuple[float, ...]:
    """The log-probability of each generated token of a vLLM `CompletionOutput` (its `logprobs`: per position a
    mapping token id -> `Logprob`, which holds the chosen token beside the top-k asked for); () when it has none
    or they cannot be read (then the exception's name is appended to `malformed`, for one warning per call)."""
    positions, token_ids = getattr(completion, "logprobs", None), getattr(completion, "token_ids", None)
    if not positions or token_ids is None:
        return ()
    try:
        return tuple(float(positions[k][token].logprob) for k, token in enumerate(token_ids))
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        if malformed is not None:
            malformed.append(type(exc).__name__)
        return ()
