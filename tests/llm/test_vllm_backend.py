"""vLLM request building and engine driving against a stand-in with vLLM's call signatures (tests/vllm_stand_in.py;
real vllm is never imported)."""
import importlib.util
import pytest

from models.deadline import Deadline
from models.llm.config import LLMConfig
from models.llm.constraints import DecodingConstraint
from models.llm.errors import BackendUnavailableError, UnknownAdapterError
from models.llm.generator import GenerationRequest, completions_of, make_generator
from models.llm.vllm_backend import VLLMGenerator, import_vllm
from tests.vllm_stand_in import StandInLLM, stand_in_vllm

USER = ({"role": "user", "content": "What is the capital of Australia?"},)


@pytest.fixture()
def adapters(tmp_path):
    for name in ("web", "api"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "adapter_config.json").write_text("{}")
    return {"web_answer": "web", "api_generation": "api"}


@pytest.fixture()
def build(model_folder, tokenizer, tmp_path, monkeypatch):
    monkeypatch.setattr(StandInLLM, "tokenizer", tokenizer)

    def build(vllm=None, device_name=lambda: "unknown", **config):
        config = LLMConfig(backend="vllm", path=str(model_folder), dtype="half", device="cuda", **config)
        return VLLMGenerator(config, str(tmp_path), vllm=vllm or stand_in_vllm(), gpu_count=lambda: 4,
                             device_name=device_name)

    return build


def test_engine_arguments(build, adapters, model_folder):
    generator = build(adapters=adapters, tensor_parallel_size=4, gpu_memory_utilization=0.7, max_model_len=4096)
    assert generator.llm.model == str(model_folder)
    assert generator.llm.engine_args == dict(
        dtype="half", tensor_parallel_size=4, gpu_memory_utilization=0.7, max_model_len=4096, enforce_eager=False,
        seed=0, enable_lora=True, max_loras=4, max_lora_rank=8)
    assert "enable_lora" not in build().llm.engine_args  # no adapters: no LoRA slots reserved
    assert generator.tokenizer is generator.chat.tokenizer


def test_one_call_with_a_lora_request_per_prompt_and_stable_ids(build, adapters, tokenizer):
    generator = build(adapters=adapters)
    batch = [GenerationRequest(USER), GenerationRequest(USER, adapter="web_answer"),
             GenerationRequest(USER, adapter="api_generation"), GenerationRequest(USER, adapter="web_answer")]
    assert generator.generate(batch) == ["answer 0", "answer 1", "answer 2", "answer 3"]
    generator.generate(batch[1:2])
    first, second = generator.llm.calls
    assert first.loras[0] is None
    assert [(r.lora_name, r.lora_int_id) for r in first.loras[1:]] == [
        ("web_answer", 1), ("api_generation", 2), ("web_answer", 1)]
    assert first.loras[1].lora_path.endswith("/web") and second.loras[0] is first.loras[1]


def test_prompts_are_chat_template_token_ids_without_a_second_bos(build, tokenizer):
    generator = build()
    generator.generate([GenerationRequest(USER)])
    [prompt] = generator.llm.calls[0].prompts
    text = tokenizer.apply_chat_template(list(USER), tokenize=False, add_generation_prompt=True)
    assert prompt == {"prompt_token_ids": tokenizer.encode(text, add_special_tokens=False)}


def test_sampling_params_greedy_and_sampled(build):
    greedy = build().sampling_params(GenerationRequest(USER, max_new_tokens=75, stop=("\n",)))
    assert greedy.kwargs == dict(max_tokens=75, stop=["\n"], output_kind="FINAL_ONLY", temperature=0.0)
    sampled = build(temperature=0.7, top_p=0.9, seed=3).sampling_params(GenerationRequest(USER))
    assert sampled.kwargs == dict(max_tokens=64, stop=None, output_kind="FINAL_ONLY", temperature=0.7, top_p=0.9,
                                  seed=3, n=1)


def test_sampling_params_per_request_temperature_n_and_logprobs(build):
    backend = build(top_p=0.9, seed=3)
    drawn = backend.sampling_params(GenerationRequest(USER, temperature=1.1, n=4, logprobs=True))
    assert drawn.kwargs == dict(max_tokens=64, stop=None, output_kind="FINAL_ONLY", temperature=1.1, top_p=0.9,
                                seed=3, n=4, logprobs=1)
    greedy = backend.sampling_params(GenerationRequest(USER, n=3))  # greedy: asked once, copied
    assert greedy.kwargs["temperature"] == 0.0 and "n" not in greedy.kwargs
    assert build(temperature=0.7).sampling_params(GenerationRequest(USER, temperature=0.0)).kwargs["temperature"] == 0


def test_every_completion_comes_back_with_its_logprobs(build):
    backend = build()
    results = backend.generate([GenerationRequest(USER, temperature=1.0, n=3, logprobs=True),
                                GenerationRequest(USER, n=2), GenerationRequest(USER)])
    drawn = completions_of(results, 0)
    assert [c.text for c in drawn] == ["answer 0", "answer 0 #1", "answer 0 #2"] and results[0] == "answer 0"
    assert drawn[0].token_logprobs == (-0.1, -0.1) and drawn[2].token_logprobs == pytest.approx((-0.3,) * 3)
    assert [c.text for c in completions_of(results, 1)] == ["answer 1", "answer 1"]  # greedy n: copies
    assert 2 not in results.completions and results[2] == "answer 2"  # plain requests keep nothing extra


def test_an_aborted_request_with_n_above_one_holds_nothing(build, monkeypatch):
    from models.deadline import Deadline
    backend = build()
    engine = backend.llm.llm_engine
    monkeypatch.setattr(engine, "tokens", lambda added: 50)
    monkeypatch.setattr(engine, "step_s", 0.05)
    results = backend.generate([GenerationRequest(USER, temperature=1.0, n=4, max_new_tokens=64)],
                               deadline=Deadline(0.3))
    assert results == [""] and not results.completions and "aborted" in results.reasons[0]


def test_constraints_become_structured_outputs(build):
    regex = DecodingConstraint(is_valid_prefix=str.isdigit, regex=r"\d+", grammar="start: DIGITS")
    grammar = DecodingConstraint(is_valid_prefix=str.isdigit, grammar="start: DIGITS")
    current = build()
    params = current.sampling_params(GenerationRequest(USER, constraint=regex))
    assert type(params.kwargs["structured_outputs"]).__name__ == "StructuredOutputsParams"
    assert params.kwargs["structured_outputs"].kwargs == {"regex": r"\d+"}
    assert current.sampling_params(GenerationRequest(USER, constraint=grammar)).kwargs[
        "structured_outputs"].kwargs == {"grammar": "start: DIGITS"}
    older = build(vllm=stand_in_vllm(structured=False, guided=True))
    assert older.sampling_params(GenerationRequest(USER, constraint=regex)).kwargs["guided_decoding"].kwargs == {
        "regex": r"\d+"}
    neither = build(vllm=stand_in_vllm(structured=False, guided=False))
    assert set(neither.sampling_params(GenerationRequest(USER, constraint=regex)).kwargs) == {
        "max_tokens", "stop", "output_kind", "temperature"}
    prefix_only = DecodingConstraint(is_valid_prefix=str.isdigit)
    assert "structured_outputs" not in current.sampling_params(GenerationRequest(USER, constraint=prefix_only)).kwargs


def test_unknown_adapter_and_expired_deadline_run_nothing(build, adapters):
    generator = build(adapters=adapters)
    with pytest.raises(UnknownAdapterError, match="'kg_answer' is not configured"):
        generator.generate([GenerationRequest(USER), GenerationRequest(USER, adapter="kg_answer")])
    assert generator.generate([GenerationRequest(USER)] * 3, deadline=Deadline(0)) == ["", "", ""]
    assert generator.llm.calls == []


def test_prompt_that_cannot_fit_answers_empty_and_the_rest_still_run(build):
    generator = build(max_model_len=128)
    hopeless = ({"role": "user", "content": "<DOC>x</DOC> " + "why " * 300},)
    outputs = generator.generate([GenerationRequest(USER), GenerationRequest(hopeless), GenerationRequest(USER)])
    assert outputs == ["answer 0", "", "answer 1"]
    assert len(generator.llm.calls[0].prompts) == 2


def test_no_cuda_or_no_vllm_is_a_clear_error(model_folder, tmp_path):
    config = LLMConfig(backend="vllm", path=str(model_folder), device="cuda")
    with pytest.raises(BackendUnavailableError, match="needs a CUDA GPU.*CRAG_PROFILE=cpu"):
        VLLMGenerator(config, str(tmp_path), vllm=stand_in_vllm(), gpu_count=lambda: 0)
    four = LLMConfig(backend="vllm", path=str(model_folder), device="cuda", tensor_parallel_size=4)
    with pytest.raises(BackendUnavailableError, match="tensor_parallel_size is 4 but only 2 GPU"):
        VLLMGenerator(four, str(tmp_path), vllm=stand_in_vllm(), gpu_count=lambda: 2)
    if importlib.util.find_spec("vllm") is None:
        with pytest.raises(BackendUnavailableError, match="vllm cannot be imported.*CRAG_PROFILE=cpu"):
            import_vllm()
        with pytest.raises(BackendUnavailableError):
            make_generator(config, str(tmp_path))  # the factory reaches the same clear error


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_requests_whose_predicted_time_overruns_the_deadline_do_not_start(build, model_folder):
    """vLLM calls are uninterruptible: only the leading requests predicted to fit run; the rest return ''."""
    import json

    from models.latency import TransformerShape

    generator = build(gpu="t4", tensor_parallel_size=4)
    shape = TransformerShape.from_hf_config(json.loads((model_folder / "config.json").read_text()))
    assert generator.latency.shape == shape and generator.latency.tp == 4
    requests = [GenerationRequest(USER, max_new_tokens=200) for _ in range(8)]
    length = len(generator.chat.encode(generator.chat.fit_requests(requests[:1])[0]))
    three = generator.latency.call_seconds([length] * 3, [200] * 3)  # each request added costs time
    clock = _Clock()
    outputs = generator.generate(requests, deadline=Deadline(three, clock=clock))
    assert outputs[:3] == ["answer 0", "answer 1", "answer 2"] and outputs[3:] == [""] * 5
    assert len(generator.llm.calls[-1].prompts) == 3
    one = generator.latency.call_seconds([length], [200])
    calls = len(generator.llm.calls)
    assert generator.generate(requests, deadline=Deadline(one * 0.9, clock=clock)) == [""] * 8
    assert len(generator.llm.calls) == calls  # nothing fits: no call at all
    generator.generate(requests, deadline=Deadline(1e6, clock=clock))
    assert len(generator.llm.calls[-1].prompts) == 8
    assert build().latency is None  # no llm.gpu: no prediction, no cut


def test_a_stage_returns_at_its_deadline_with_the_finished_results_kept(build, adapters, monkeypatch):
    """Each engine step takes 1 s of a fake clock and request k needs 3 (k + 1) tokens. With 7.5 s the driver
    steps 7 times (an eighth would end past the deadline), keeps the two that finished and aborts the others,
    which answer "" with the reason; the adapters and the grammar went to the engine with each request."""
    clock = _Clock()
    monkeypatch.setattr(StandInLLM, "engine_options", dict(step_s=1.0, clock=clock,
                                                           tokens=lambda added: 3 * (added.position + 1)))
    generator = build(adapters=adapters)
    generator.driver.clock = clock
    grammar = DecodingConstraint(is_valid_prefix=str.isdigit, grammar="start: DIGITS")
    requests = [GenerationRequest(USER, adapter="web_answer"), GenerationRequest(USER, constraint=grammar),
                GenerationRequest(USER, adapter="api_generation"), GenerationRequest(USER)]
    outputs = generator.generate(requests, deadline=Deadline(7.5, clock=clock))
    engine = generator.llm.llm_engine
    assert outputs == ["answer 0", "answer 1", "", ""]
    assert sorted(outputs.reasons) == [2, 3]
    assert all("aborted at the stage deadline after 7 engine steps" in r for r in outputs.reasons.values())
    assert clock.now == 7.0 and engine.steps == 7 and len(engine.aborted) == 2 and not engine.running
    [batch] = engine.batches
    assert [a.lora and a.lora.lora_name for a in batch] == ["web_answer", None, "api_generation", None]
    assert batch[1].params.kwargs["structured_outputs"].kwargs == {"grammar": "start: DIGITS"}
    assert outputs_of(generator, [GenerationRequest(USER)]) == ["answer 0"]  # nothing was left in the engine


def test_a_call_whose_first_step_would_end_past_the_deadline_does_not_start(build, monkeypatch):
    """A call's first step is unmeasured: the driver takes the previous call's longest step for it, so a second
    call (the sampled answers after the answers) with less time left than that starts nothing, and says so."""
    clock = _Clock()
    monkeypatch.setattr(StandInLLM, "engine_options", dict(step_s=1.0, clock=clock, tokens=lambda added: 2))
    generator = build()
    generator.driver.clock = clock
    assert list(generator.generate([GenerationRequest(USER)], deadline=Deadline(5.0, clock=clock))) == ["answer 0"]
    assert generator.driver.previous_longest_step_s == 1.0 and clock.now == 2.0
    late = generator.generate([GenerationRequest(USER)], deadline=Deadline(0.9, clock=clock))
    assert list(late) == [""] and "after 0 engine steps" in late.reasons[0] and clock.now == 2.0
    assert list(generator.generate([GenerationRequest(USER)], deadline=Deadline(2.5, clock=clock)))[0].startswith(
        "answer")


def test_the_warm_up_does_not_teach_the_guard_and_a_call_held_back_halves_it(build, monkeypatch):
    """An unbounded call (the warm-up, whose steps compile: 10 s each here) leaves the guard as it was; a bounded
    call's 4 s step sets it, and then each call held back whole halves it, so calls start again (before, a warm-up
    step held back every later call with less than 10 s left, each after 0 steps, forever)."""
    clock = _Clock()
    monkeypatch.setattr(StandInLLM, "engine_options", dict(step_s=10.0, clock=clock, tokens=lambda added: 1))
    generator = build()
    generator.driver.clock = clock
    engine = generator.llm.llm_engine
    assert list(generator.generate([GenerationRequest(USER)])) == ["answer 0"]  # the warm-up
    assert generator.driver.previous_longest_step_s == 0.0
    engine.step_s = 4.0
    assert list(generator.generate([GenerationRequest(USER)], deadline=Deadline(5.0, clock=clock))) == ["answer 0"]
    assert generator.driver.previous_longest_step_s == 4.0
    engine.step_s = 1.0
    for guard in (2.0, 1.0):  # held back at 4 s, then at 2 s, each after 0 steps
        late = generator.generate([GenerationRequest(USER)], deadline=Deadline(1.5, clock=clock))
        assert list(late) == [""] and "after 0 engine steps" in late.reasons[0]
        assert generator.driver.previous_longest_step_s == guard
    [answer] = generator.generate([GenerationRequest(USER)], deadline=Deadline(1.5, clock=clock))
    assert answer.startswith("answer") and generator.driver.previous_longest_step_s == 1.0


def outputs_of(generator, requests):
    return list(generator.generate(requests))


def test_without_a_deadline_every_request_runs_to_its_end(build, monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(StandInLLM, "engine_options", dict(step_s=1.0, clock=clock, tokens=lambda added: 50))
    assert outputs_of(build(), [GenerationRequest(USER, max_new_tokens=40)] * 2) == ["answer 0", "answer 1"]
    assert clock.now == 40.0  # capped by max_tokens, as vLLM caps it


def test_a_request_the_engine_rejects_costs_only_itself(build):
    """vLLM validates each request as it is added (a grammar it cannot take): that one is "" with the reason."""
    generator = build()
    generator.llm.llm_engine.reject = lambda added: "structured_outputs" in added.params.kwargs
    grammar = DecodingConstraint(is_valid_prefix=str.isdigit, grammar="start: DIGITS")
    outputs = generator.generate([GenerationRequest(USER), GenerationRequest(USER, constraint=grammar),
                                  GenerationRequest(USER)])
    assert list(outputs) == ["answer 0", "", "answer 2"]
    assert list(outputs.reasons) == [1] and "grammar cannot be compiled" in outputs.reasons[1]


def test_a_failing_step_leaves_nothing_running(build, monkeypatch):
    generator = build()
    engine = generator.llm.llm_engine

    def dead():
        raise RuntimeError("EngineDeadError")

    monkeypatch.setattr(engine, "step", dead)
    with pytest.raises(RuntimeError, match="EngineDeadError"):
        generator.generate([GenerationRequest(USER)] * 2)
    assert not engine.running and len(engine.aborted) == 2


def test_an_unknown_gpu_kind_fails_at_start_up(build):
    with pytest.raises(ValueError, match="llm.gpu"):
        build(gpu="v100")


def test_close_shuts_the_engine_core_down(build):
    generator = build()
    generator.close()
    assert generator.llm.llm_engine.engine_core.shutdowns == 1


def test_unreadable_log_probabilities_are_left_out_with_one_warning(caplog):
    """A completion whose log-probabilities lack the chosen token keeps its text, carries none, and the call logs
    one warning with the count (not one per completion, not silence)."""
    from types import SimpleNamespace

    from models.llm.vllm_engine import EngineDriver

    good = SimpleNamespace(text="a", token_ids=[7], logprobs=[{7: SimpleNamespace(logprob=-0.5)}], finish_reason="stop")
    bad = SimpleNamespace(text="b", token_ids=[8], logprobs=[{9: SimpleNamespace(logprob=-0.1)}], finish_reason="stop")

    class Engine:
        def __init__(self):
            self.added = []

        def add_request(self, request_id, prompt, params, lora_request=None):
            self.added.append(request_id)

        def has_unfinished_requests(self):
            return bool(self.added)

        def step(self):
            ids, self.added = self.added, []
            return [SimpleNamespace(request_id=i, finished=True, outputs=[bad, bad, good]) for i in ids]

        def abort_request(self, ids):
            raise AssertionError("nothing to abort")

    with caplog.at_level("WARNING", logger="models.llm.vllm_engine"):
        run = EngineDriver(Engine()).run([{}], [None], [None])
    assert run.texts == ["b"] and [c.token_logprobs for c in run.completions[0]] == [(), (), (-0.5,)]
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == ["2 completions came with log-probabilities that could not be read (KeyError); they carry "
                        "none, so their mean_logprob is unmeasured"]


@pytest.mark.parametrize("device_name, kind", [("Tesla T4", "t4"), ("NVIDIA T4", "t4")])
def test_gpu_auto_reads_the_device_and_guards_with_its_kind(build, device_name, kind, caplog):
    from models.latency import GPUS

    with caplog.at_level("INFO", logger="models.llm.vllm_backend"):
        generator = build(gpu="auto", tensor_parallel_size=4, device_name=lambda: device_name)
    assert generator.latency.gpu is GPUS[kind] and generator.latency.tp == 4
    assert f"llm.gpu auto: {device_name!r} is {kind}" in caplog.text


@pytest.mark.parametrize("device_name", ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "unknown"])
def test_gpu_auto_on_a_gpu_without_constants_turns_the_guard_off_and_says_so(build, device_name, caplog):
    """T4 constants on a faster GPU would skip requests that fit; with no guard every request starts and the engine
    driver still aborts what is unfinished at the deadline."""
    with caplog.at_level("WARNING", logger="models.llm.vllm_backend"):
        generator = build(gpu="auto", device_name=lambda: device_name)
    assert generator.latency is None
    assert f"llm.gpu auto: {device_name!r} is not one of the GPU kinds" in caplog.text and "guard is off" in caplog.text
    assert generator.generate([GenerationRequest(USER)] * 2) == ["answer 0", "answer 1"]


def test_the_gpu_kind_of_a_device_name():
    from models.latency import gpu_kind

    assert gpu_kind("Tesla T4") == gpu_kind("NVIDIA T4") == "t4"
    assert gpu_kind("NVIDIA RTX A4000") is None and gpu_kind("NVIDIA GeForce RTX 4090") is None
    assert gpu_kind("unknown") is None
