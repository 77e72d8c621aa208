"""The roofline arithmetic of models/latency.py against figures worked out by hand."""
from dataclasses import replace

import pytest

from models.latency import (BGE_BASE, BGE_RERANKER_V2_M3, LLAMA_3_8B, T4, Efficiency, EncoderLatency, HFLatency,
                            LLMLatency, TransformerShape, calibrate)

LLAMA_3_8B_CONFIG = {"model_type": "llama", "hidden_act": "silu", "num_hidden_layers": 32, "hidden_size": 4096,
                     "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
                     "vocab_size": 128256}


def test_shapes_match_the_published_parameter_counts():
    assert TransformerShape.from_hf_config(LLAMA_3_8B_CONFIG) == LLAMA_3_8B
    # 8.03 B parameters = matmuls + input embedding + untied output projection
    assert LLAMA_3_8B.matmul_params + 2 * 4096 * 128256 == pytest.approx(8.03e9, rel=0.005)
    assert BGE_BASE.matmul_params == pytest.approx(85e6, rel=0.01)            # 110 M minus 23 M of embeddings
    assert BGE_RERANKER_V2_M3.matmul_params == pytest.approx(302e6, rel=0.01)  # 568 M minus 256 M of embeddings
    assert LLAMA_3_8B.kv_bytes_per_token() == 2 * 32 * 8 * 128 * 2


def test_one_decode_step_reads_a_quarter_of_the_weights_per_gpu():
    model = LLMLatency(T4, tensor_parallel=4)
    weights_s = LLAMA_3_8B.weight_params * 2 / 4 / (320e9 * 0.70)                      # ~16.9 ms
    allreduce_s = 2 * 32 * (30e-6 + 1 * 4096 * 2 * 2 * 3 / 4 / 6e9)
    kv_s = 10 * LLAMA_3_8B.kv_bytes_per_token() / 4 / (320e9 * 0.70)
    assert model.decode_seconds([10], [1]) == pytest.approx(weights_s + kv_s + allreduce_s + 6e-3, rel=1e-6)
    assert model.decode_seconds([10], [0]) == 0


def test_vllm_prefill_attention_runs_at_tritons_fma_speed_on_the_t4():
    """GEMMs at the tensor-core fraction; attention (Triton, FMA below compute capability 8.0) at the fp32 peak's."""
    model = LLMLatency(T4, tensor_parallel=4)
    gemm_s = (2 * LLAMA_3_8B.matmul_params * 4000 + 2 * 4096 * 128256) / (4 * 65e12 * 0.35)   # ~0.63 s
    attention_s = 2 * 32 * 4096 * 4000 ** 2 / (4 * 8.1e12 * 0.30)                            # ~0.43 s
    # 64 ring all-reduces of 4000 x 4096 fp16 activations over PCIe (nccl-tests bus bandwidth): ~0.53 s
    allreduce_s = 64 * (30e-6 + 4000 * 4096 * 2 * 2 * 3 / 4 / 6e9)
    assert model.prefill_parts([4000]) == pytest.approx({"gemm": gemm_s, "attention": attention_s,
                                                         "allreduce": allreduce_s}, rel=1e-6)
    assert model.prefill_seconds([4000]) == pytest.approx(gemm_s + attention_s + allreduce_s, rel=1e-6)
    assert model.prefill_seconds([4000] * 16) > 15 * model.prefill_seconds([4000])
    # on a GPU where Triton uses the tensor cores, attention runs at the GEMM rate
    ampere = replace(T4, compute_capability=(8, 0))
    assert LLMLatency(ampere, 4).prefill_parts([4000])["attention"] == pytest.approx(
        2 * 32 * 4096 * 4000 ** 2 / (4 * 65e12 * 0.35), rel=1e-6)
    # transformers' attention (PyTorch SDPA) is on the tensor cores even on the T4
    assert HFLatency(T4).prefill_parts([4000])["attention"] == pytest.approx(
        2 * 32 * 4096 * 4000 ** 2 / (65e12 * 0.35), rel=1e-6)


def test_decode_attention_is_the_slower_of_reading_the_kv_cache_and_its_fma_flops():
    slow = Efficiency(fma_fraction=0.01)
    contexts = [4000] * 16
    kv_read_s = 16 * 4000 * LLAMA_3_8B.kv_bytes_per_token() / (4 * 320e9 * 0.70)             # ~9.4 ms
    fma_s = 16 * 4 * 32 * 4096 * 4000 / (4 * 8.1e12 * 0.01)                                   # ~104 ms
    base = LLMLatency(T4, 4).decode_step_seconds([0] * 16)
    assert LLMLatency(T4, 4).decode_step_seconds(contexts) - base == pytest.approx(kv_read_s, rel=1e-6)
    assert LLMLatency(T4, 4, efficiency=slow).decode_step_seconds(contexts) - base == pytest.approx(fma_s, rel=1e-6)


def test_lora_is_its_kernels_traffic_or_flops_and_the_fitting_prefix_is_the_longest_that_fits():
    shape = LLAMA_3_8B
    # rank 8 on q, k, v, o, gate, up, down: inputs 6 x 4096 + 14336, outputs 3 x 4096 + 2 x 1024 + 2 x 14336
    assert shape.lora_flops_per_token(8) == 2 * 8 * (38912 + 43008) * 32
    assert shape.lora_bytes_per_token() == 2 * (3 * 4096 + 14336 + 2 * 43008) * 32
    model = LLMLatency()
    memory_s = (shape.lora_weight_bytes(8) + 4000 * shape.lora_bytes_per_token()) / (4 * 320e9 * 0.70)
    compute_s = 4000 * shape.lora_flops_per_token(8) / (4 * 8.1e12 * 0.30)
    assert model.lora_seconds(4000) == pytest.approx(max(memory_s, compute_s))
    prompts, caps = [3000] * 16, [64] * 16
    extra = model.call_seconds(prompts, caps, lora=True) - model.call_seconds(prompts, caps)
    steps = sum(model.lora_seconds(16) for _ in range(64))
    assert extra == pytest.approx(model.lora_seconds(16 * 3000) + steps)
    five = model.call_seconds(prompts[:5], caps[:5])
    assert model.fitting_prefix(prompts, caps, five) == 5
    assert model.fitting_prefix(prompts, caps, five - 1e-6) == 4
    assert model.fitting_prefix(prompts, caps, 1e9) == 16 and model.fitting_prefix(prompts, caps, 0) == 0
    assert model.call_seconds([], []) == 0


def test_encoder_pass():
    seconds = EncoderLatency(BGE_BASE).seconds([64] * 1000)
    assert seconds == pytest.approx((2 * BGE_BASE.matmul_params * 64 + 4 * 12 * 768 * 64 ** 2) * 1000 / (65e12 * 0.35))


def test_hf_splits_layers_over_the_cards_so_more_cards_add_memory_not_speed():
    from models.latency import HFLatency

    prompts, outputs = [900] * 8, [64] * 8
    two, four = HFLatency(cards=2), HFLatency(cards=4)
    assert four.call_seconds(prompts, outputs) >= two.call_seconds(prompts, outputs)  # only the hops differ
    assert four.call_seconds(prompts, outputs) - two.call_seconds(prompts, outputs) < 0.01
    vllm = LLMLatency(T4, tensor_parallel=4)
    assert four.call_seconds(prompts, outputs) > 2 * vllm.call_seconds(prompts, outputs)


def test_hf_runs_a_stage_as_the_backend_batches_it():
    """One generate per adapter group, cut to max_batch_size rows (n draws are n rows), padded to the longest."""
    from models.latency import HFLatency

    hf = HFLatency(max_batch_size=8)
    one_call = hf.call_seconds([900] * 8, [64] * 8, lora=True)
    assert hf.stage_seconds([900] * 16, [64] * 16, ["a"] * 16) == pytest.approx(2 * one_call)
    mixed = hf.stage_seconds([900] * 16, [64] * 16, ["a", None] * 8)
    assert mixed == pytest.approx(one_call + hf.call_seconds([900] * 8, [64] * 8))
    assert hf.stage_seconds([900] * 4, [64] * 4, ["a"] * 4, draws=[2] * 4) == pytest.approx(one_call)
    # padding: sorted by prompt length before cutting, so the long prompts share a call
    lengths = [200] * 8 + [4000] * 8
    assert hf.stage_seconds(lengths[::-1], [64] * 16, ["a"] * 16) == pytest.approx(
        hf.call_seconds([200] * 8, [64] * 8, lora=True) + hf.call_seconds([4000] * 8, [64] * 8, lora=True))
    assert hf.call_seconds([200, 4000], [64, 64]) == pytest.approx(hf.call_seconds([4000, 4000], [64, 64]))


def test_vllm_runs_a_stage_as_one_engine_call_with_lora_when_any_request_has_an_adapter():
    vllm = LLMLatency()
    assert vllm.stage_seconds([900] * 16, [64] * 16, ["a"] + [None] * 15) == pytest.approx(
        vllm.call_seconds([900] * 16, [64] * 16, lora=True))
    assert vllm.stage_seconds([900] * 16, [64] * 16, [None] * 16) == pytest.approx(
        vllm.call_seconds([900] * 16, [64] * 16))


BENCH = {"device": {"name": "NVIDIA H200", "compute_capability": [9, 0]},
         "kernels": {"gemm": {"tflops": 692.3}, "bandwidth": {"gb_s": 3840.0}, "triton_fma": {"tflops": 20.1}},
         "engines": {"hf": {"host_step": {"model": "smollm2-135m", "layers": 30, "batch": 8, "step_s": 0.015,
                                          "lora_step_s": 0.024}},
                     "vllm": {"skipped": "vllm is not importable"}}}


def test_a_calibration_run_replaces_what_it_measured_and_keeps_the_triton_assumption_off_the_t4():
    c = calibrate(BENCH)
    assert c.efficiency.prefill_flops_fraction == pytest.approx(692.3 / 989)        # H200 datasheet: 989 dense
    assert c.efficiency.bandwidth_fraction == pytest.approx(3840 / 4800)
    assert c.efficiency.fma_fraction == Efficiency().fma_fraction                   # Hopper: not the T4's path
    assert c.efficiency.step_overhead_s == Efficiency().step_overhead_s             # vLLM not measured
    assert c.hf_costs.step_overhead_s == pytest.approx(0.015 * 32 / 30)
    assert c.hf_costs.peft_step_overhead_s == pytest.approx(0.009 * 32 / 30)
    assert any("not applied" in note for note in c.notes)
    # on a T4 the FMA fraction is the T4's own
    t4 = dict(BENCH, device={"name": "Tesla T4"}, kernels={"triton_fma": {"tflops": 2.43}})
    assert calibrate(t4).efficiency.fma_fraction == pytest.approx(2.43 / 8.1)
    # a GPU without datasheet peaks here changes only the host costs
    other = calibrate(dict(BENCH, device={"name": "Some GPU"}))
    assert other.efficiency == Efficiency() and other.hf_costs.step_overhead_s == pytest.approx(0.016)


def test_a_calibrated_model_is_slower_or_faster_by_what_was_measured():
    c = calibrate(BENCH)
    assumed, measured = HFLatency(T4), HFLatency(T4, efficiency=c.efficiency, costs=c.hf_costs)
    gemm = assumed.prefill_parts([4000])["gemm"]
    assert measured.prefill_parts([4000])["gemm"] == pytest.approx(gemm * 0.35 / (692.3 / 989))
