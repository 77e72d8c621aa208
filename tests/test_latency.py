"""The roofline arithmetic of models/latency.py against figures worked out by hand."""
import pytest

from models.latency import BGE_BASE, BGE_RERANKER_V2_M3, LLAMA_3_8B, T4, EncoderLatency, LLMLatency, TransformerShape

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


def test_prefill_is_compute_bound_and_grows_with_the_prompt():
    model = LLMLatency(T4, tensor_parallel=4)
    flops = 2 * LLAMA_3_8B.matmul_params * 4000 + 2 * 32 * 4096 * 4000 ** 2 + 2 * 4096 * 128256
    compute_s = flops / (4 * 65e12 * 0.35)                                                # ~0.66 s
    # 64 ring all-reduces of 4000 x 4096 fp16 activations over PCIe (nccl-tests bus bandwidth): ~0.53 s
    allreduce_s = 64 * (30e-6 + 4000 * 4096 * 2 * 2 * 3 / 4 / 6e9)
    assert model.prefill_seconds([4000]) == pytest.approx(compute_s + allreduce_s, rel=1e-6)
    assert model.prefill_seconds([4000] * 16) > 15 * model.prefill_seconds([4000])


def test_lora_costs_extra_and_the_fitting_prefix_is_the_longest_that_fits():
    model = LLMLatency()
    prompts, caps = [3000] * 16, [64] * 16
    assert model.call_seconds(prompts, caps, lora=True) == pytest.approx(1.15 * model.call_seconds(prompts, caps))
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
