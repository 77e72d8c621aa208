"""The transformers + peft backend: the CPU profile's generator, and the fallback where vLLM cannot run.

One base model is loaded once; every adapter of the profile is attached to it once with
`load_adapter(path, adapter_name=name)`. A batch of requests is grouped by (adapter, stop strings) and each
group runs as batched `generate` calls with left padding: `set_adapter(name)` before an adapter's group,
`disable_adapters()` before the base model's. Grouping is what switching adapters per request costs here
(vLLM mixes them inside one engine step); the groups run in the order their first request appears.

Decoding is greedy unless the request (`GenerationRequest.temperature`) or the profile sets a temperature
(then seeded with `llm.seed` per call, so runs repeat); a sampled request with n > 1 draws its n completions in
the same call (`num_return_sequences`, every returned row under the request's own constraint), and a greedy
request with n > 1 gets n copies of its one completion. Temperature and n are part of the group key, so one
`generate` call has one decoding setting. With `logprobs`, the call also returns the raw logits of every step
(`output_logits`), and each completion carries the log-probability of each of its tokens under the model's own
distribution (log-softmax of the raw logits: before any constraint mask, temperature or top-p); without it
nothing extra is kept, and the decoded tokens are the same either way. Requests in one group may ask for
different `max_new_tokens`: the group runs to the largest and each output is cut to its own limit. Stop strings end a row inside `generate` (a stopping criterion
that decodes the generated tail) and are removed from the returned text.

Time: before each group the deadline is checked; a group that cannot start returns "" for its requests
(the caller answers "i don't know"), and a group that starts gets `max_time` = the time left, so one slow
call cannot overrun the batch. A row that `max_time` cut before it finished (no end-of-sequence, no stop
string, under its token limit) also returns "": a half answer is more likely wrong than right. `max_time`
is only checked between decoding steps, and the first step, the prefill of every prompt token, cannot be
cut: on 2 loaded cores four 1,000-token KG prompts took 90 s. So the backend measures its prefill speed
(prompt tokens per second, from the time to the first step of each call, averaged) and starts only the
shortest rows of a group whose predicted prefill fits the time left; the others return "". A request
whose `generate` raises is retried alone and returns "" if it fails again; the others keep theirs.
Prompts that do not fit the window even with their context cut return "" (see `chat.py`). Threads follow torch's defaults (`OMP_NUM_THREADS`), never set here.

Decoding constraints are logits processors, so constrained and free rows share a batch: a constraint with a
Lark grammar gets exact llguidance masks (`grammar_decoding.py`), any other the prefix search
(`prefix_decoding.py`).
"""
from __future__ import annotations

import logging
import math
import time
import warnings
from typing import Sequence

import torch
from transformers import (AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList, StoppingCriteria,
                          StoppingCriteriaList)

from models.deadline import Deadline
from models.isolation import ItemResults, per_item
from models.llm.adapters import AdapterRegistry
from models.llm.chat import ChatBackend, ChatFormatter
from models.llm.checkpoint import resolve_checkpoint
from models.llm.config import LLMConfig
from models.llm.grammar_decoding import GrammarDecoder
from models.llm.prefix_decoding import PrefixConstraintProcessor
from models.llm.errors import AdapterNotFoundError, BackendUnavailableError
from models.llm.generator import Completion, GenerationRequest

log = logging.getLogger(__name__)

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "half": torch.float16,
          "float32": torch.float32, "float": torch.float32}


class HFGenerator(ChatBackend):
    """`Generator` over transformers `generate`, with peft adapters switched per request group."""

    def __init__(self, config: LLMConfig, models_dir: str):
        """Loads the base model, its tokenizer and every configured adapter.

        Args:
            config: the profile's `llm` section.
            models_dir: the profile's models directory.

        Raises:
            ModelNotFoundError: the model path does not exist.
            AdapterNotFoundError: a configured adapter folder is missing.
            BackendUnavailableError: `device` is cuda but no CUDA device is visible.
            ValueError: an unknown dtype.
        """
        if config.dtype not in DTYPES:
            raise ValueError(f"llm.dtype {config.dtype!r} is not one of {sorted(DTYPES)}")
        if config.device.startswith("cuda") and not torch.cuda.is_available():
            raise BackendUnavailableError(
                f"llm.device is {config.device!r} but no CUDA device is visible; "
                f"set llm.device: cpu (or CRAG_PROFILE=cpu)")
        self.config = config
        self.adapters = AdapterRegistry(config.adapters, models_dir)
        self.missing_adapters: dict[str, str] = {}  # a missing folder fails above (the profile is rewritten first)
        folder = resolve_checkpoint(config.path, models_dir, config.cache_dir)
        tokenizer = AutoTokenizer.from_pretrained(folder, padding_side="left")
        if tokenizer.pad_token is None:  # Llama 3 ships none; padding is masked anyway
            tokenizer.pad_token = tokenizer.eos_token
        self.chat = ChatFormatter(tokenizer, config.max_model_len)
        # device_map: accelerate places the layers (Llama-3-8B in fp16 needs more than one 16 GB T4); inputs then
        # go to `model.device`, the first layer's, wherever it was put
        placed = {"device_map": config.device_map} if config.device_map else {}
        self.model = AutoModelForCausalLM.from_pretrained(folder, dtype=DTYPES[config.dtype], **placed)
        if not config.device_map:
            self.model.to(config.device)
        self.model.eval()
        self._attach_adapters()
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        self.eos_token_ids = tuple(eos) if isinstance(eos, (list, tuple)) else (eos,)
        self.grammar_decoder = GrammarDecoder.load(self.tokenizer, self.eos_token_ids)  # None: no llguidance
        self.prefill_tokens_per_s: float | None = None  # measured on every call (None until the first)

    # ------------------------------------------------------------------ Generator protocol
    def generate(self, requests: Sequence[GenerationRequest], *, deadline: Deadline | None = None) -> list[str]:
        """One completion per request, in order ("" where the deadline or the window stopped it).

        Raises:
            UnknownAdapterError: a request names an adapter the profile does not configure (checked
                before anything runs, so no work is wasted).
        """
        deadline = deadline or Deadline(None)
        self.adapters.require(r.adapter for r in requests)
        prompts = self.chat.fit_requests(requests)
        outputs, reasons, completions = [""] * len(requests), {}, {}
        batches = self._batches(requests, prompts)
        for done, indices in enumerate(batches):
            if deadline.expired():
                log.warning("deadline reached: %d requests not generated", sum(map(len, batches[done:])))
                reasons.update((i, "generation not started: the deadline passed") for rest in batches[done:]
                               for i in rest)
                break
            # one failing request (a broken constraint, memory) costs only itself: its group is retried alone,
            # request by request while the deadline allows
            drawn = per_item(lambda group: self._generate_batch([requests[i] for i in group],
                                                                [prompts[i] for i in group], deadline),
                             indices, lambda _: (), f"generation (adapter {requests[indices[0]].adapter!r})",
                             deadline=deadline)
            for i, kept in zip(indices, drawn):
                outputs[i] = kept[0].text if kept else ""
                if kept and requests[i].keeps_completions:
                    completions[i] = kept
            reasons.update((indices[k], reason) for k, reason in drawn.reasons.items())
        return ItemResults(outputs, reasons, completions)

    # ------------------------------------------------------------------ internals
    def _batches(self, requests: Sequence[GenerationRequest], prompts: list[str | None]) -> list[list[int]]:
        """Indices grouped by (adapter, stop, temperature, n), groups in first-appearance order, cut to
        max_batch_size (counted in returned rows: a request drawing n completions is n rows).

        Within a group requests are sorted by prompt length so a batch pads as little as possible.
        """
        groups: dict[tuple, list[int]] = {}
        for i, (request, prompt) in enumerate(zip(requests, prompts)):
            if prompt is not None:
                key = (request.adapter, tuple(request.stop), self._temperature(request), request.draws(self.config.temperature))
                groups.setdefault(key, []).append(i)
        batches = []
        for (_, _, _, rows), indices in groups.items():
            indices.sort(key=lambda i: len(prompts[i]))
            size = max(1, self.config.max_batch_size // rows)
            batches.extend(indices[start:start + size] for start in range(0, len(indices), size))
        return batches

    def _temperature(self, request: GenerationRequest) -> float:
        return request.temperature_under(self.config.temperature)

    def _attach_adapters(self) -> None:
        """Loads every adapter once. transformers reports the *other* adapters' weights as missing on each
        load (it checks every LoRA key of the model), so its report is silenced and this adapter's own
        missing weights are checked here instead."""
        report_logger = logging.getLogger("transformers.integrations.peft")
        level = report_logger.level
        report_logger.setLevel(logging.ERROR)
        try:
            for adapter in self.adapters:
                with warnings.catch_warnings():  # peft: "Already found a peft_config" = several adapters, intended
                    warnings.filterwarnings("ignore", message=".*peft_config.*")
                    info = self.model.load_adapter(str(adapter.path), adapter_name=adapter.name)
                missing = sorted(k for k in getattr(info, "missing_keys", ()) if f".{adapter.name}." in k)
                if missing:
                    raise AdapterNotFoundError(f"LoRA adapter {adapter.name!r} at {adapter.path} does not fit "
                                               f"this base model: {len(missing)} weights missing, e.g. {missing[0]}")
        finally:
            report_logger.setLevel(level)

    def _select_adapter(self, name: str | None) -> None:
        if not len(self.adapters):
            return
        if name is None:
            self.model.disable_adapters()
        else:
            self.model.enable_adapters()
            self.model.set_adapter(name)

    def _rows_that_fit(self, lengths: list[int], deadline: Deadline, copies: int = 1) -> int:
        """How many leading requests (the group is sorted shortest first) can be prefilled in the time left;
        `generate` prefills each prompt once per returned row (`copies`)."""
        remaining = deadline.remaining()
        if self.prefill_tokens_per_s is None or not math.isfinite(remaining):
            return len(lengths)
        rows = 0
        while rows < len(lengths) and \
                (rows + 1) * copies * max(lengths[:rows + 1]) / self.prefill_tokens_per_s <= remaining:
            rows += 1
        return rows

    def _generate_batch(self, requests: list[GenerationRequest], prompts: list[str], deadline: Deadline
                        ) -> list[tuple[Completion, ...]]:
        """Every completion of each request of one group (() where the deadline left it unstarted or cut it)."""
        self._select_adapter(requests[0].adapter)
        copies = requests[0].draws(self.config.temperature)
        encoded = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        lengths = encoded["attention_mask"].sum(dim=1).tolist()
        fit = self._rows_that_fit(lengths, deadline, copies)
        if fit < len(requests):
            log.warning("deadline: %d of %d requests not started (prefill of %d tokens at %.0f tokens/s would "
                        "not end in the %.1f s left)", len(requests) - fit, len(requests), sum(lengths) * copies,
                        self.prefill_tokens_per_s, deadline.remaining())
            head = self._generate_batch(requests[:fit], prompts[:fit], deadline) if fit else []
            return head + [()] * (len(requests) - fit)
        encoded = encoded.to(self.model.device)
        prompt_length = encoded["input_ids"].shape[1]
        kwargs = self._generation_kwargs(requests, prompt_length, deadline, copies)
        first_step = _FirstStepClock()
        kwargs["stopping_criteria"] = StoppingCriteriaList([first_step, *kwargs.get("stopping_criteria", [])])
        started = time.monotonic()
        with torch.inference_mode():
            generated = self.model.generate(**encoded, **kwargs)
        logits = getattr(generated, "logits", None)  # output_logits: one (rows, vocab) tensor per step
        sequences = generated.sequences if kwargs.get("return_dict_in_generate") else generated
        if first_step.at is not None and first_step.at > started:
            rate = prompt_length * len(requests) * copies / (first_step.at - started)
            previous = self.prefill_tokens_per_s
            self.prefill_tokens_per_s = rate if previous is None else (previous + rate) / 2
        out = []
        for k, request in enumerate(requests):
            kept = []
            for row in range(k * copies, (k + 1) * copies):
                new_ids = sequences[row, prompt_length:prompt_length + request.max_new_tokens].tolist()
                text = self.tokenizer.decode(new_ids, skip_special_tokens=True)
                stopped = any(s and s in text for s in request.stop)
                finished = stopped or len(new_ids) >= request.max_new_tokens or any(
                    t in self.eos_token_ids for t in new_ids)
                # a row that `max_time` cut mid-answer ("Canb") would score -1; "" becomes "i don't know" (0)
                text = _cut_at_stop(text, request.stop) if finished else ""
                lps = self._token_logprobs(logits, row, new_ids, text) if request.logprobs and text else ()
                kept.append(Completion(text, lps))
            # a sample `max_time` cut is dropped: fewer samples, never a half one
            out.append(request.returned([c for c in kept if c.text], self.config.temperature))
        return out

    def _token_logprobs(self, logits, row: int, new_ids: list[int], text: str) -> tuple[float, ...]:
        """The model's log-probability of each generated token of `text` (log-softmax of the raw logits at the
        chosen token): tokens up to the end-of-sequence id, and up to where `text` ends (its stop string cut)."""
        if not logits:
            return ()
        ids = []
        for token in new_ids:
            if token in self.eos_token_ids:
                break
            ids.append(token)
        target = len(text.rstrip())
        for m in range(1, len(ids) + 1):  # the fewest tokens that decode to the whole returned text
            if len(self.tokenizer.decode(ids[:m], skip_special_tokens=True).rstrip()) >= target:
                ids = ids[:m]
                break
        return tuple(round(float(torch.log_softmax(logits[step][row].float(), dim=-1)[token]), 5)
                     for step, token in enumerate(ids) if step < len(logits))

    def _generation_kwargs(self, requests: list[GenerationRequest], prompt_length: int, deadline: Deadline,
                           copies: int = 1) -> dict:
        config = self.config
        kwargs = {
            "max_new_tokens": max(1, max(r.max_new_tokens for r in requests)),
            "pad_token_id": self.tokenizer.pad_token_id,
            "eos_token_id": list(self.eos_token_ids),
        }
        temperature = self._temperature(requests[0])
        if temperature > 0:
            torch.manual_seed(config.seed)
            kwargs.update(do_sample=True, temperature=temperature, top_p=config.top_p, num_return_sequences=copies)
        else:  # override sampling defaults a generation_config.json may carry (Llama 3: 0.6 / 0.9)
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if any(r.logprobs for r in requests):
            kwargs.update(output_logits=True, return_dict_in_generate=True)
        if requests[0].stop:
            kwargs["stopping_criteria"] = StoppingCriteriaList(
                [_StopOnText(self.tokenizer, requests[0].stop, prompt_length)])
        remaining = deadline.remaining()
        if math.isfinite(remaining):
            kwargs["max_time"] = max(remaining, 0.001)
        constraints = [r.constraint for r in requests for _ in range(copies)]  # generate repeats each row n times
        processors = self._constraint_processors(constraints, prompt_length, requests[0].stop)
        if processors:
            kwargs["logits_processor"] = LogitsProcessorList(processors)
        return kwargs

    def _constraint_processors(self, constraints: list, prompt_length: int, stop: tuple[str, ...]) -> list:
        """Rows whose constraint has a grammar get exact llguidance masks; other constrained rows (or all,
        without llguidance) get the top-k prefix search. Free rows pass through both untouched."""
        use_grammar = [c is not None and c.grammar is not None and self.grammar_decoder is not None
                       for c in constraints]
        processors = []
        if any(use_grammar):
            grammars = [c.grammar if exact else None for c, exact in zip(constraints, use_grammar)]
            processors.append(self.grammar_decoder.processor(grammars, prompt_length, stop))
        prefix_rows = [None if exact else c for c, exact in zip(constraints, use_grammar)]
        if any(c is not None for c in prefix_rows):
            processors.append(PrefixConstraintProcessor(self.tokenizer, prefix_rows, prompt_length,
                                                        self.eos_token_ids, self.config.constraint_top_k))
        return processors


class _FirstStepClock(StoppingCriteria):
    """Notes when the first decoding step ended (the prefill is most of it); never stops a row."""

    def __init__(self):
        self.at: float | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs) -> torch.BoolTensor:
        if self.at is None:
            self.at = time.monotonic()
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)


class _StopOnText(StoppingCriteria):
    """Ends a row once its generated text contains a stop string.

    transformers' own `stop_strings` precomputes tables over the whole vocabulary on every call (~1-2 s
    for a 49k vocabulary on 2 cores); decoding the few generated tokens per step costs microseconds.
    """

    def __init__(self, tokenizer, stop: Sequence[str], prompt_length: int):
        self.tokenizer, self.stop, self.prompt_length = tokenizer, [s for s in stop if s], prompt_length

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs) -> torch.BoolTensor:
        texts = self.tokenizer.batch_decode(input_ids[:, self.prompt_length:], skip_special_tokens=True)
        return torch.tensor([any(s in text for s in self.stop) for text in texts], device=input_ids.device)


def _cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """`text` up to the earliest stop string (generate keeps the stop string itself in its output)."""
    cut = min((text.find(s) for s in stop if s and s in text), default=-1)
    return text[:cut] if cut >= 0 else text
