"""Predicted GPU time of the pipeline's work: roofline arithmetic per kernel class, with stated constants.

The grader's g4dn.12xlarge cannot be measured from here, so time is projected from token counts, each kernel
class at the speed of the unit that runs it on that GPU:
- GEMMs (the projections, the MLP, the logits) run in cuBLAS, which uses the tensor cores on every GPU here:
  prefill at a stated fraction of the fp16 tensor-core peak; decode bound by reading the weights at a stated
  fraction of peak bandwidth;
- attention runs in the engine's own kernel. vLLM on a GPU below compute capability 8.0 (the T4 is 7.5) picks its
  Triton attention backend, and Triton >= 3.3 compiles `tl.dot` there to FMA instructions, not tensor-core MMA, so
  vLLM's attention runs at a stated fraction of the fp32 FMA peak (`Efficiency.fma_fraction`). transformers runs
  PyTorch's scaled-dot-product attention, whose kernels use the tensor cores on sm75, at the GEMM fraction;
  decode attention is bound by reading the KV cache unless the FMA rate is the slower;
- LoRA: vLLM's shrink/expand kernels are Triton kernels (FMA on the T4), peft's are cuBLAS matmuls; both mostly
  read and write activations, so each is max(its FLOPs at the engine's rate, its bytes at the bandwidth);
- tensor parallelism adds two all-reduces per layer over PCIe (after attention and after the MLP), and every
  engine step a fixed host overhead;
- encoders (embedder, cross-encoder reranker) are prefill-only passes on one GPU.
`VLLMGenerator` asks `LLMLatency.call_seconds` before each uninterruptible `LLM.generate` call, and
`scripts/latency_model.py` projects whole batches from a traced CPU run with the same constants.
`HFLatency` is the same arithmetic for transformers + peft with `device_map: auto` (the g4dn-hf profile): the
layers run one card after another, one `generate` per adapter group of at most `max_batch_size` rows, padded.
`calibrate` replaces the assumed efficiencies and host costs by those `scripts/gpu_bench.py` measured.

Constants and their sources:
- T4: 65 TFLOP/s fp16 tensor-core peak ("mixed precision"), 8.1 TFLOP/s fp32 (CUDA cores, FMA), 320 GB/s GDDR6,
  16 GB, compute capability 7.5 (NVIDIA T4 datasheet; CUDA Programming Guide's compute-capability table).
- Triton on sm75: Triton 3.3 removed tensor-core MMA below compute capability 8.0 and falls back to FMA
  (triton-lang/triton PR #5066, "Deprecate MMAv1; fallback to FMA for computeCapability < 80", merged 2024-11;
  triton-lang/triton-windows #28: "Turing is supported until Triton 3.2, and Triton 3.3 dropped support for it");
  vLLM's maintainers keep the T4 on the Triton attention backend only (vllm-project/vllm #18571, 2025-05: "T4 can
  be supported with the Triton attention backend"). The image pins triton 3.7.1 (torch 2.13's). The FMA path
  accumulates in fp32, hence the fp32 peak.
- `fma_fraction` 0.30 of that peak: a stated assumption, no measurement of Triton's FMA `tl.dot` on a T4 was
  found; `FMA_FRACTION_RANGE` (0.10-0.50) is the band the projection reports. For scale: with tensor cores, Triton's
  matmul on an sm75 card reached about half of cuBLAS (triton-lang/triton #189, an RTX 2080).
- Other GPUs' peaks (only to turn a calibration run's measured speed into a fraction of its peak): NVIDIA's A100,
  H100 and H200 datasheets (dense fp16 tensor, fp32, bandwidth; SXM forms), L4 datasheet.
- g4dn.12xlarge: 4 T4 on PCIe Gen3 x16, no NVLink (AWS EC2 G4 instance page); PCIe Gen3 x16 is 15.75 GB/s
  per direction (PCI-SIG); NCCL ring all-reduce over the PCIe host bridge is taken at 6 GB/s bus bandwidth
  with 30 us per call (typical `nccl-tests` all_reduce_perf figures for PCIe-only servers).
- GEMMs at 35% of the fp16 tensor peak (~23 TFLOP/s): the T4's 70 W power cap throttles its clocks under
  sustained GEMM load, and published T4 fp16 GEMM benchmarks reach 40-60% of peak.
- Memory-bound kernels at 70% of peak bandwidth: GEMV kernels typically sustain 70-80% of GDDR6 peak.
- 6 ms of host work per vLLM engine step in eager mode (scheduling, input preparation, sampling, kernel launches
  not hidden behind GPU time).
- LoRA rank 8 on q, k, v, o, gate, up and down (the g4dn profile's `llm.max_lora_rank`, db3's targets).
- transformers + peft (`HFLatency`, stated assumptions until `scripts/gpu_bench.py` measures them): 25 ms of host
  work per decode step (eager PyTorch: ~30 kernel launches per layer from Python, the logits processors and
  stopping criteria run per step); peft's unmerged LoRA adds 3 small kernels per targeted projection (7 per layer),
  taken as 7 ms per step; 50 us per card boundary per forward pass (an activation copy between cards over PCIe).
  A finished row stays in its `generate` call until the longest one ends (transformers pads it).
- Llama-3-8B-Instruct: 32 layers, hidden 4096, MLP 14336, 8 KV heads of 128, vocabulary 128256 (its
  config.json); bge-base-en-v1.5 86M and bge-reranker-v2-m3 303M non-embedding parameters (their configs).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence


@dataclass(frozen=True)
class GPU:
    name: str
    fp16_flops: float  # FLOP/s, dense fp16 tensor-core peak
    memory_bandwidth: float  # bytes/s
    memory_bytes: float
    fp32_flops: float = 0.0  # FLOP/s, fp32 FMA peak of the CUDA cores
    compute_capability: tuple[int, int] = (0, 0)

    @property
    def triton_on_tensor_cores(self) -> bool:
        """Whether Triton >= 3.3 compiles `tl.dot` to tensor-core MMA here (PR #5066: only from 8.0 on)."""
        return self.compute_capability >= (8, 0)


@dataclass(frozen=True)
class Efficiency:
    """How much of the peaks real kernels get, and the fixed costs (see the module docstring for sources)."""

    prefill_flops_fraction: float = 0.35  # cuBLAS GEMMs, of the fp16 tensor-core peak
    bandwidth_fraction: float = 0.70
    allreduce_bandwidth: float = 6e9  # bytes/s bus bandwidth, ring all-reduce over PCIe Gen3
    allreduce_latency_s: float = 30e-6
    step_overhead_s: float = 6e-3  # host work per engine step (eager)
    fma_fraction: float = 0.30  # Triton's FMA `tl.dot`, of the fp32 FMA peak (below compute capability 8.0)


FMA_FRACTION_RANGE = (0.10, 0.50)  # the band the projection reports around `Efficiency.fma_fraction`
LORA_RANK = 8  # the g4dn profile's llm.max_lora_rank


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

    def attention_flops(self, query_tokens: int, context_tokens: int) -> float:
        """QK^T and AV of `query_tokens` queries over `context_tokens` keys, every layer (2 FLOPs a multiply-add)."""
        return 4.0 * self.layers * self.hidden * query_tokens * context_tokens

    def prefill_attention_flops(self, n: int) -> float:
        """A causal prefill of n tokens: half of the full n x n attention."""
        return self.attention_flops(n, n) / 2

    def _lora_dims(self) -> tuple[int, int, int]:
        """(sum of the LoRA targets' input widths, of their output widths, activation widths read) for q, k, v, o,
        gate, up, down; q/k/v and gate/up read the same input, which vLLM's fused kernels read once."""
        kv = self.kv_heads * self.head_dim
        inputs = 6 * self.hidden + self.intermediate
        outputs = 3 * self.hidden + 2 * kv + 2 * self.intermediate
        reads = 3 * self.hidden + self.intermediate
        return inputs, outputs, reads

    def lora_flops_per_token(self, rank: int = LORA_RANK) -> float:
        inputs, outputs, _ = self._lora_dims()
        return 2.0 * rank * (inputs + outputs) * self.layers

    def lora_bytes_per_token(self, bytes_per_value: int = 2) -> float:
        """Activation traffic of the shrink (reads x) and expand (reads and writes y) kernels, every layer."""
        _, outputs, reads = self._lora_dims()
        return float(bytes_per_value * (reads + 2 * outputs) * self.layers)

    def lora_weight_bytes(self, rank: int = LORA_RANK, bytes_per_value: int = 2) -> float:
        inputs, outputs, _ = self._lora_dims()
        return float(bytes_per_value * rank * (inputs + outputs) * self.layers)

    @classmethod
    def from_hf_config(cls, config: Mapping) -> "TransformerShape":
        """From a Hugging Face config.json (Llama-style decoders and BERT/XLM-R encoders)."""
        heads = int(config["num_attention_heads"])
        gated = config.get("hidden_act", "silu") in ("silu", "swiglu") or "llama" in str(config.get("model_type", ""))
        return cls(layers=int(config["num_hidden_layers"]), hidden=int(config["hidden_size"]),
                   intermediate=int(config["intermediate_size"]), heads=heads,
                   kv_heads=int(config.get("num_key_value_heads", heads)), vocab=int(config["vocab_size"]),
                   gated_mlp=gated)


T4 = GPU("t4", fp16_flops=65e12, memory_bandwidth=320e9, memory_bytes=16e9, fp32_flops=8.1e12,
         compute_capability=(7, 5))
GPUS = {"t4": T4}  # the kinds the latency guard predicts for (`llm.gpu`)
# Peaks of GPUs a calibration run may measure on (datasheets: dense fp16 tensor, fp32, bandwidth): they turn its
# measured speeds into fractions of its own peaks. Not guard kinds: the guard's times are the T4's.
SPEC_SHEETS = {
    "t4": T4,
    "a100": GPU("a100", 312e12, 2.039e12, 80e9, 19.5e12, (8, 0)),
    "h100": GPU("h100", 989e12, 3.35e12, 80e9, 67e12, (9, 0)),
    "h200": GPU("h200", 989e12, 4.8e12, 141e9, 67e12, (9, 0)),
    "l4": GPU("l4", 121e12, 300e9, 24e9, 30.3e12, (8, 9)),
}


def gpu_kind(device_name: str, kinds: Mapping[str, GPU] = GPUS) -> str | None:
    """The kind of a device name as NVML or torch gives it ("Tesla T4" -> "t4"); None for a GPU whose constants
    are not in `kinds` (by default the guard's: an A100 or H100 with T4 times would skip requests that fit)."""
    words = re.findall(r"[a-z0-9]+", device_name.lower())
    return next((kind for kind in kinds if kind in words), None)


LLAMA_3_8B = TransformerShape(layers=32, hidden=4096, intermediate=14336, heads=32, kv_heads=8, vocab=128256)
BGE_BASE = TransformerShape(layers=12, hidden=768, intermediate=3072, heads=12, kv_heads=12, vocab=30522,
                            gated_mlp=False)
BGE_RERANKER_V2_M3 = TransformerShape(layers=24, hidden=1024, intermediate=4096, heads=16, kv_heads=16,
                                      vocab=250002, gated_mlp=False)


class LLMLatency:
    """Seconds of one batched vLLM generate call on `tensor_parallel` GPUs, from its token counts, with vLLM's
    kernels: cuBLAS GEMMs, Triton attention and Triton LoRA (FMA below compute capability 8.0)."""

    triton_kernels = True  # attention and LoRA are Triton kernels (vLLM); False: PyTorch's (transformers + peft)

    def __init__(self, gpu: GPU = T4, tensor_parallel: int = 4, shape: TransformerShape = LLAMA_3_8B,
                 efficiency: Efficiency = Efficiency(), bytes_per_param: int = 2, lora_rank: int = LORA_RANK):
        self.gpu, self.tp, self.shape, self.eff, self.bytes_per_param = gpu, tensor_parallel, shape, efficiency, bytes_per_param
        self.lora_rank = lora_rank

    # ------------------------------------------------------------------ rates
    @property
    def gemm_rate(self) -> float:
        """FLOP/s of cuBLAS's fp16 GEMMs on one GPU."""
        return self.gpu.fp16_flops * self.eff.prefill_flops_fraction

    @property
    def kernel_rate(self) -> float:
        """FLOP/s of the engine's own attention and LoRA kernels on one GPU: Triton's FMA path below compute
        capability 8.0, else tensor cores as cuBLAS."""
        if self.triton_kernels and not self.gpu.triton_on_tensor_cores:
            return self.gpu.fp32_flops * self.eff.fma_fraction
        return self.gemm_rate

    @property
    def bandwidth(self) -> float:
        return self.gpu.memory_bandwidth * self.eff.bandwidth_fraction

    # ------------------------------------------------------------------ parts
    def _allreduce_s(self, tokens: int) -> float:
        """Two all-reduces per layer of `tokens` x hidden fp16 activations (ring: 2(n-1)/n of the data moves)."""
        if self.tp <= 1:
            return 0.0
        data = tokens * self.shape.hidden * 2 * 2 * (self.tp - 1) / self.tp
        return 2 * self.shape.layers * (self.eff.allreduce_latency_s + data / self.eff.allreduce_bandwidth)

    def lora_seconds(self, tokens: int) -> float:
        """One forward pass of `tokens` tokens through the LoRA kernels, split over the GPUs."""
        s = self.shape
        compute = tokens * s.lora_flops_per_token(self.lora_rank) / (self.tp * self.kernel_rate)
        memory = (s.lora_weight_bytes(self.lora_rank) + tokens * s.lora_bytes_per_token()) / (self.tp * self.bandwidth)
        return max(compute, memory)

    def prefill_parts(self, prompt_tokens: Sequence[int]) -> dict[str, float]:
        """Seconds of a prefill by kernel class: GEMMs (cuBLAS), attention (the engine's kernel), all-reduces."""
        s = self.shape
        gemm = sum(2 * s.matmul_params * n + 2 * s.hidden * s.vocab for n in prompt_tokens)  # logits: last token
        attention = sum(s.prefill_attention_flops(n) for n in prompt_tokens)
        return {"gemm": gemm / (self.tp * self.gemm_rate), "attention": attention / (self.tp * self.kernel_rate),
                "allreduce": self._allreduce_s(sum(prompt_tokens))}

    def prefill_seconds(self, prompt_tokens: Sequence[int], lora: bool = False) -> float:
        seconds = sum(self.prefill_parts(prompt_tokens).values())
        return seconds + (self.lora_seconds(sum(prompt_tokens)) if lora and prompt_tokens else 0.0)

    def decode_step_seconds(self, contexts: Sequence[int], lora: bool = False) -> float:
        """One engine step for sequences whose contexts hold `contexts` tokens: the weights read once (or their
        FLOPs, whichever is slower), the KV caches read by the attention kernel (or its FLOPs at the kernel's rate),
        LoRA, the all-reduces and the host's work."""
        s, rows = self.shape, len(contexts)
        weights = max(s.weight_params * self.bytes_per_param / (self.tp * self.bandwidth),
                      2 * s.weight_params * rows / (self.tp * self.gemm_rate))
        attention = max(sum(contexts) * s.kv_bytes_per_token() / (self.tp * self.bandwidth),
                        sum(s.attention_flops(1, c) for c in contexts) / (self.tp * self.kernel_rate))
        return (weights + attention + (self.lora_seconds(rows) if lora else 0.0) + self._allreduce_s(rows)
                + self.eff.step_overhead_s)

    def decode_seconds(self, prompt_tokens: Sequence[int], output_tokens: Sequence[int], lora: bool = False) -> float:
        """Steps until the longest output is done; each step serves the sequences still running."""
        total = 0.0
        for step in range(max(output_tokens, default=0)):
            running = [p + step for p, o in zip(prompt_tokens, output_tokens) if o > step]
            total += self.decode_step_seconds(running, lora)
        return total

    # ------------------------------------------------------------------ the question callers ask
    def call_seconds(self, prompt_tokens: Sequence[int], output_tokens: Sequence[int], lora: bool = False) -> float:
        """Predicted wall time of one `LLM.generate` over these requests (output_tokens: each one's cap or count)."""
        if not prompt_tokens:
            return 0.0
        return self.prefill_seconds(prompt_tokens, lora) + self.decode_seconds(prompt_tokens, output_tokens, lora)

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
    prefill one card's compute, whatever the number of cards (they add memory, not speed). Its attention (PyTorch's
    scaled-dot-product attention) and LoRA (peft's matmuls) run on the tensor cores."""

    triton_kernels = False

    def __init__(self, gpu: GPU = T4, cards: int = 4, shape: TransformerShape = LLAMA_3_8B,
                 efficiency: Efficiency = Efficiency(), costs: HFCosts = HFCosts(), max_batch_size: int = 8,
                 bytes_per_param: int = 2, lora_rank: int = LORA_RANK):
        super().__init__(gpu, 1, shape, efficiency, bytes_per_param, lora_rank)
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
        gpu = self.prefill_seconds(padded_prompts, lora) + self.decode_seconds(padded_prompts, padded_outputs, lora)
        return gpu + hops + lora_steps

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
    """Seconds of a batched encoder pass (embedder or cross-encoder) on one GPU: compute-bound prefill in PyTorch
    (cuBLAS GEMMs and its attention, both on the tensor cores)."""

    def __init__(self, shape: TransformerShape, gpu: GPU = T4, efficiency: Efficiency = Efficiency()):
        self.shape, self.gpu, self.eff = shape, gpu, efficiency

    def seconds(self, sequence_tokens: Sequence[int]) -> float:
        s = self.shape
        flops = sum(2 * s.matmul_params * n + s.attention_flops(n, n) for n in sequence_tokens)
        return flops / (self.gpu.fp16_flops * self.eff.prefill_flops_fraction)


# ---------------------------------------------------------------------- calibration by a measured run
SMALL_MODEL_LAYERS_PER_8B = 32  # the 8B's layers: host work per decode step grows with the layers launched


@dataclass(frozen=True)
class Calibration:
    """What a `scripts/gpu_bench.py` run changes in the T4 projection, and the reason for each change."""

    efficiency: Efficiency
    hf_costs: HFCosts
    notes: tuple[str, ...] = field(default_factory=tuple)


def calibrate(bench: Mapping, efficiency: Efficiency = Efficiency(), hf_costs: HFCosts = HFCosts()) -> Calibration:
    """The T4 projection's constants with what `bench` (the JSON of `scripts/gpu_bench.py`) measured in place of
    the assumed ones:
    - on a GPU whose datasheet peaks are in `SPEC_SHEETS`, the cuBLAS fp16 GEMM and the copy bandwidth as fractions
      of that GPU's own peaks become the T4's `prefill_flops_fraction` and `bandwidth_fraction` (a fraction measured
      on another GPU carries its kernels' efficiency, not the T4's 70 W clock throttling: an upper bound there);
    - Triton's FMA `tl.dot` as a fraction of the fp32 peak becomes `fma_fraction` only when measured below compute
      capability 8.0, where Triton takes that path for fp16 as vLLM's kernels do; elsewhere it is reported, not
      applied;
    - the HF decode step of a model whose GPU work is negligible (host-bound), scaled to the 8B's 32 layers, becomes
      `HFCosts.step_overhead_s`, and its LoRA step's excess `peft_step_overhead_s` (host work: the bench host's CPU,
      not the grader's);
    - vLLM's decode step on the small model, when vLLM was measured, becomes `Efficiency.step_overhead_s`."""
    notes: list[str] = []
    eff, costs = efficiency, hf_costs
    device = bench.get("device") or {}
    kind = gpu_kind(str(device.get("name", "")), SPEC_SHEETS)
    kernels = bench.get("kernels") or {}
    spec = SPEC_SHEETS.get(kind) if kind else None
    where = f"measured on {device.get('name', '?')}"
    if spec is None:
        notes.append(f"{where}: no datasheet peaks for it in SPEC_SHEETS; GEMM and bandwidth fractions stay assumed")
    else:
        gemm = (kernels.get("gemm") or {}).get("tflops")
        if gemm:
            fraction = gemm * 1e12 / spec.fp16_flops
            eff = replace(eff, prefill_flops_fraction=fraction)
            notes.append(f"cuBLAS fp16 GEMM at the 8B's shapes: {gemm:.1f} TFLOP/s = {fraction:.0%} of the "
                         f"{spec.name}'s {spec.fp16_flops / 1e12:.0f} ({where}; applied to the T4, whose 70 W cap it "
                         f"does not include unless it ran on a T4)")
        bandwidth = (kernels.get("bandwidth") or {}).get("gb_s")
        if bandwidth:
            fraction = bandwidth * 1e9 / spec.memory_bandwidth
            eff = replace(eff, bandwidth_fraction=min(fraction, 1.0))
            notes.append(f"copy bandwidth {bandwidth:.0f} GB/s = {fraction:.0%} of the {spec.name}'s "
                         f"{spec.memory_bandwidth / 1e9:.0f} GB/s ({where})")
        fma = (kernels.get("triton_fma") or {}).get("tflops")
        if fma and spec.fp32_flops:
            fraction = fma * 1e12 / spec.fp32_flops
            if not spec.triton_on_tensor_cores:
                eff = replace(eff, fma_fraction=fraction)
                notes.append(f"Triton FMA tl.dot {fma:.2f} TFLOP/s = {fraction:.0%} of the fp32 peak ({where}, "
                             f"below compute capability 8.0: the path vLLM's kernels take there)")
            else:
                notes.append(f"Triton FMA tl.dot (fp32, forced) {fma:.2f} TFLOP/s = {fraction:.0%} of the fp32 peak "
                             f"({where}); not applied: fma_fraction stays the assumed {eff.fma_fraction:.0%} until a "
                             f"GPU below compute capability 8.0 measures it")
    host = (bench.get("engines") or {}).get("hf", {}).get("host_step") or {}
    if host.get("step_s"):
        scale = SMALL_MODEL_LAYERS_PER_8B / host["layers"]
        costs = replace(costs, step_overhead_s=host["step_s"] * scale)
        notes.append(f"HF decode step of the {host['model']} ({host['layers']} layers, batch {host['batch']}): "
                     f"{host['step_s'] * 1e3:.1f} ms, x{scale:.2f} for 32 layers = {costs.step_overhead_s * 1e3:.1f} ms "
                     f"of host work per step (this host's CPU)")
        if host.get("lora_step_s") is not None:
            extra = max(0.0, host["lora_step_s"] - host["step_s"]) * scale
            costs = replace(costs, peft_step_overhead_s=extra)
            notes.append(f"peft's LoRA adds {extra * 1e3:.1f} ms per step at 32 layers")
    vllm = (bench.get("engines") or {}).get("vllm", {}).get("host_step") or {}
    if vllm.get("step_s"):
        scale = SMALL_MODEL_LAYERS_PER_8B / vllm["layers"]
        eff = replace(eff, step_overhead_s=vllm["step_s"] * scale)
        notes.append(f"vLLM decode step of the {vllm['model']}: {vllm['step_s'] * 1e3:.1f} ms, x{scale:.2f} = "
                     f"{eff.step_overhead_s * 1e3:.1f} ms per engine step")
    return Calibration(eff, costs, tuple(notes))
