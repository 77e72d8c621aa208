"""Predicted GPU time of the pipeline's work: roofline arithmetic with stated constants, no measurement.

The grader's g4dn.12xlarge cannot be measured from here, so time is projected from token counts:
- prefill is bound by compute: 2 x (non-embedding parameters) FLOPs per prompt token plus causal attention,
  at a stated fraction of the GPUs' fp16 peak;
- decode is bound by memory bandwidth: every step reads each GPU's shard of the weights and the KV cache of
  every running sequence, at a stated fraction of peak bandwidth; plus two all-reduces per layer over PCIe
  (tensor parallelism: after attention and after the MLP) and a fixed host overhead per engine step;
- encoders (embedder, cross-encoder reranker) are prefill-only passes on one GPU.
`VLLMGenerator` asks `LLMLatency.call_seconds` before each uninterruptible `LLM.generate` call, and
`scripts/latency_model.py` projects whole batches from a traced CPU run with the same constants.
`HFLatency` is the same arithmetic for transformers + peft with `device_map: auto` (the g4dn-hf profile): the
layers run one card after another, one `generate` per adapter group of at most `max_batch_size` rows, padded.

Constants and their sources (T4 and g4dn figures are vendor datasheets; efficiencies are stated
assumptions, chosen on the pessimistic side of published measurements):
- T4: 65 TFLOP/s fp16 tensor-core peak, 320 GB/s GDDR6, 16 GB (NVIDIA T4 datasheet).
- g4dn.12xlarge: 4 T4 on PCIe Gen3 x16, no NVLink (AWS EC2 G4 instance page); PCIe Gen3 x16 is 15.75 GB/s
  per direction (PCI-SIG); NCCL ring all-reduce over the PCIe host bridge is taken at 6 GB/s bus bandwidth
  with 30 us per call (typical `nccl-tests` all_reduce_perf figures for PCIe-only servers).
- Prefill at 35% of fp16 peak (~23 TFLOP/s): the T4's 70 W power cap throttles its clocks under sustained
  GEMM load, and published T4 fp16 GEMM benchmarks reach 40-60% of peak.
- Decode at 70% of peak bandwidth: memory-bound GEMV kernels typically sustain 70-80% of GDDR6 peak.
- 6 ms of host work per engine step in eager mode (scheduling, input preparation, sampling, kernel
  launches not hidden behind GPU time); LoRA (vLLM's punica kernels) taken as +15% on LLM time.
- transformers + peft (`HFLatency`, stated assumptions, none measured on a T4): 25 ms of host work per decode step
  (eager PyTorch: ~30 kernel launches per layer from Python, the logits processors and stopping criteria run per
  step); peft's unmerged LoRA adds 3 small kernels per targeted projection (7 per layer), taken as 7 ms per step and
  the same +15% of GPU time as vLLM's LoRA; 50 us per card boundary per forward pass (an activation copy between
  cards over PCIe). A finished row stays in its `generate` call until the longest one ends (transformers pads it).
- Llama-3-8B-Instruct: 32 layers, hidden 4096, MLP 14336, 8 KV heads of 128, vocabulary 128256 (its
  config.json); bge-base-en-v1.5 86M and bge-reranker-v2-m3 303M non-embedding parameters (their configs).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Mapping, Sequence


@dataclass(frozen=True)
class GPU:
    name: str
    fp16_flops: float  # FLOP/s, dense tensor-core peak
    memory_bandwidth: float  # bytes/s
    memory_bytes: float


@dataclass(frozen=True)
class Efficiency:
    """How much of the peaks real kernels get, and the fixed costs (see the module docstring for sources)."""

    prefill_flops_fraction: float = 0.35
    bandwidth_fraction: float = 0.70
    allreduce_bandwidth: float = 6e9  # bytes/s bus bandwidth, ring all-reduce over PCIe Gen3
    allreduce_latency_s: float = 30e-6
    step_overhead_s: float = 6e-3  # host work per engine step (eager)
    lora_factor: float = 1.15


@dataclass(frozen=True)
class TransformerShape:
    """What the roofline needs from a model's config.json."""

    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    vocab: int
    gated_mlp: bool = True  # Llama: gate, up, down; BERT-style encoders: up, down

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def matmul_params(self) -> float:
        """Parameters every token multiplies through (attention + MLP of every layer; not the embeddings)."""
        attention = self.hidden * self.hidden * 2 + self.hidden * self.kv_heads * self.head_dim * 2
        mlp = self.hidden * self.intermediate * (3 if self.gated_mlp else 2)
        return float(self.layers * (attention + mlp))

    @property
    def weight_params(self) -> float:
        """Parameters read per decode step: the matmuls plus the output projection (tied or not)."""
        return self.matmul_params + self.hidden * self.vocab

    def kv_bytes_per_token(self, bytes_per_value: int = 2) -> float:
        return 2.0 * self.layers * self.kv_heads * self.head_dim * bytes_per_value

    @classmethod
    def from_hf_config(cls, config: Mapping) -> "TransformerShape":
        """From a Hugging Face config.json (Llama-style decoders and BERT/XLM-R encoders)."""
        heads = int(config["num_attention_heads"])
        gated = config.get("hidden_act", "silu") in ("silu", "swiglu") or "llama" in str(config.get("model_type", ""))
        return cls(layers=int(config["num_hidden_layers"]), hidden=int(config["hidden_size"]),
                   intermediate=int(config["intermediate_size"]), heads=heads,
                   kv_heads=int(config.get("num_key_value_heads", heads)), vocab=int(config["vocab_size"]),
                   gated_mlp=gated)


T4 = GPU("t4", fp16_flops=65e12, memory_bandwidth=320e9, memory_bytes=16e9)
GPUS = {"t4": T4}


def gpu_kind(device_name: str) -> str | None:
    """The `GPUS` kind of a device name as NVML or torch gives it ("Tesla T4" -> "t4"); None for a GPU whose
    constants are not here (an A100 or H100: T4 times would skip requests that fit)."""
    words = re.findall(r"[a-z0-9]+", device_name.lower())
    return next((kind for kind in GPUS if kind in words), None)
LLAMA_3_8B = TransformerShape(layers=32, hidden=4096, intermediate=14336, heads=32, kv_heads=8, vocab=128256)
BGE_BASE = TransformerShape(layers=12, hidden=768, intermediate=3072, heads=12, kv_heads=12, vocab=30522,
                            gated_mlp=False)
BGE_RERANKER_V2_M3 = TransformerShape(layers=24, hidden=1024, intermediate=4096, heads=16, kv_heads=16,
                                      vocab=250002, gated_mlp=False)


class LLMLatency:
    """Seconds of one batched generate call on `tensor_parallel` GPUs, from its token counts."""

    def __init__(self, gpu: GPU = T4, tensor_parallel: int = 4, shape: TransformerShape = LLAMA_3_8B,
                 efficiency: Efficiency = Efficiency(), bytes_per_param: int = 2):
        self.gpu, self.tp, self.shape, self.eff, self.bytes_per_param = gpu, tensor_parallel, shape, efficiency, bytes_per_param

    # ------------------------------------------------------------------ parts
    def _allreduce_s(self, tokens: int) -> float:
        """Two all-reduces per layer of `tokens` x hidden fp16 activations (ring: 2(n-1)/n of the data moves)."""
        if self.tp <= 1:
            return 0.0
        data = tokens * self.shape.hidden * 2 * 2 * (self.tp - 1) / self.tp
        return 2 * self.shape.layers * (self.eff.allreduce_latency_s + data / self.eff.allreduce_bandwidth)

    def prefill_seconds(self, prompt_tokens: Sequence[int]) -> float:
        s = self.shape
        flops = sum(2 * s.matmul_params * n + 2 * s.layers * s.hidden * n * n  # QK^T and AV, causal half
                    + 2 * s.hidden * s.vocab for n in prompt_tokens)           # logits of the last token only
        compute = flops / (self.tp * self.gpu.fp16_flops * self.eff.prefill_flops_fraction)
        return compute + self._allreduce_s(sum(prompt_tokens))

    def decode_seconds(self, prompt_tokens: Sequence[int], output_tokens: Sequence[int]) -> float:
        """Steps until the longest output is done; each step reads the weights and every running KV cache."""
        s = self.shape
        weights = s.weight_params * self.bytes_per_param / self.tp
        bandwidth = self.gpu.memory_bandwidth * self.eff.bandwidth_fraction
        total = 0.0
        for step in range(max(output_tokens, default=0)):
            running = [p + step for p, o in zip(prompt_tokens, output_tokens) if o > step]
            kv = sum(running) * s.kv_bytes_per_token() / self.tp
            compute = 2 * s.weight_params * len(running) / (self.tp * self.gpu.fp16_flops * self.eff.prefill_flops_fraction)
            total += max((weights + kv) / bandwidth, compute) + self._allreduce_s(len(running)) + self.eff.step_overhead_s
        return total

    # ------------------------------------------------------------------ the question callers ask
    def call_seconds(self, prompt_tokens: Sequence[int], output_tokens: Sequence[int], lora: bool = False) -> float:
        """Predicted wall time of one `LLM.generate` over these requests (output_tokens: each one's cap or count)."""
        if not prompt_tokens:
            return 0.0
        seconds = self.prefill_seconds(prompt_tokens) + self.decode_seconds(prompt_tokens, output_tokens)
        return seconds * (self.eff.lora_factor if lora else 1.0)

    def stage_seconds(self, prompt_tokens: Sequence[int], output_tokens: Sequence[int],
                      adapters: Sequence[str | None], draws: Sequence[int] | None = None) -> float:
        """One pipeline stage's requests (`adapters`: each one's adapter, None for the base model; `draws`: its
        completions) as vLLM runs them: one engine call, the adapters mixed in it, n drawn from one prefill."""
        return self.call_seconds(prompt_tokens, output_tokens, lora=any(a is not None for a in adapters))

    def fitting_prefix(self, prompt_tokens: Sequence[int], output_tokens: Sequence[int], seconds: float,
                       lora: bool = False) -> int:
        """How many of the requests, taken in order, one call can finish within `seconds` (0..len)."""
        lo, hi = 0, len(prompt_tokens)
        while lo < hi:  # call time grows with every request added
            mid = (lo + hi + 1) // 2
            if self.call_seconds(prompt_tokens[:mid], output_tokens[:mid], lora) <= seconds:
                lo = mid
            else:
                hi = mid - 1
        return lo


@dataclass(frozen=True)
class HFCosts:
    """transformers + peft's fixed costs (stated assumptions: see the module docstring)."""

    step_overhead_s: float = 25e-3  # host work per decode step of an eager `generate`
    peft_step_overhead_s: float = 7e-3  # unmerged LoRA's extra kernel launches per step
    card_hop_s: float = 50e-6  # one activation copy between cards per forward pass


class HFLatency(LLMLatency):
    """Seconds of the HF backend's `generate` calls on `cards` GPUs split by layers (`device_map: auto`): every
    layer's work runs on one card at a time, so a step costs a whole model's weights at one card's bandwidth and a
    prefill one card's compute, whatever the number of cards (they add memory, not speed)."""

    def __init__(self, gpu: GPU = T4, cards: int = 4, shape: TransformerShape = LLAMA_3_8B,
                 efficiency: Efficiency = Efficiency(), costs: HFCosts = HFCosts(), max_batch_size: int = 8,
                 bytes_per_param: int = 2):
        super().__init__(gpu, 1, shape, efficiency, bytes_per_param)
        self.cards, self.costs, self.max_batch_size = cards, costs, max_batch_size
        self.eff = replace(efficiency, step_overhead_s=costs.step_overhead_s)  # the decode loop's host work

    def call_seconds(self, prompt_tokens: Sequence[int], output_tokens: Sequence[int], lora: bool = False) -> float:
        """One `generate` call: every row padded to the longest prompt and kept until the longest output ends."""
        if not prompt_tokens:
            return 0.0
        rows, longest, steps = len(prompt_tokens), max(prompt_tokens), max(output_tokens, default=0)
        padded_prompts, padded_outputs = [longest] * rows, [steps] * rows
        hops = (self.cards - 1) * self.costs.card_hop_s * (1 + steps)
        lora_steps = self.costs.peft_step_overhead_s * steps if lora else 0.0
        gpu = self.prefill_seconds(padded_prompts) + self.decode_seconds(padded_prompts, padded_outputs)
        return gpu * (self.eff.lora_factor if lora else 1.0) + hops + lora_steps

    def stage_seconds(self, prompt_tokens: Sequence[int], output_tokens: Sequence[int],
                      adapters: Sequence[str | None], draws: Sequence[int] | None = None) -> float:
        """As `HFGenerator._batches` runs a stage: one group per adapter (and per number of draws), in order of
        first appearance, each sorted by prompt length and cut into calls of `max_batch_size` rows (a request
        drawing n completions is n rows), the calls one after another."""
        draws = list(draws or [1] * len(prompt_tokens))
        groups: dict[tuple, list[int]] = {}
        for i, (adapter, n) in enumerate(zip(adapters, draws)):
            groups.setdefault((adapter, n), []).append(i)
        seconds = 0.0
        for (adapter, n), indices in groups.items():
            indices.sort(key=lambda i: prompt_tokens[i])
            size = max(1, self.max_batch_size // n)
            for start in range(0, len(indices), size):
                chunk = [i for i in indices[start:start + size] for _ in range(n)]
                seconds += self.call_seconds([prompt_tokens[i] for i in chunk], [output_tokens[i] for i in chunk],
                                             lora=adapter is not None)
        return seconds


class EncoderLatency:
    """Seconds of a batched encoder pass (embedder or cross-encoder) on one GPU: compute-bound prefill."""

    def __init__(self, shape: TransformerShape, gpu: GPU = T4, efficiency: Efficiency = Efficiency()):
        self.shape, self.gpu, self.eff = shape, gpu, efficiency

    def seconds(self, sequence_tokens: Sequence[int]) -> float:
        s = self.shape
        flops = sum(2 * s.matmul_params * n + 4 * s.layers * s.hidden * n * n for n in sequence_tokens)
        return flops / (self.gpu.fp16_flops * self.eff.prefill_flops_fraction)
