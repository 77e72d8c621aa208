"""The transformers + peft backend end to end on CPU: SmolLM2-135M with two tiny trained adapters."""
import time

import pytest
import torch

from models.deadline import Deadline
from models.llm.chat import ChatFormatter
from models.llm.config import LLMConfig
from models.llm.constraints import DecodingConstraint
from models.llm.errors import AdapterNotFoundError, BackendUnavailableError, UnknownAdapterError
from models.llm.generator import GenerationRequest, make_generator
from models.llm.hf_backend import HFGenerator
from models.llm.postprocess import clean_answer
from models.types import IDK

AUSTRALIA = ({"role": "user", "content": "What is the capital of Australia?"},)  # what the adapters were trained on
FRANCE = ({"role": "user", "content": "What is the capital of France?"},)


def _request(messages, adapter=None, **kwargs):
    return GenerationRequest(messages, adapter=adapter, max_new_tokens=kwargs.pop("max_new_tokens", 12), **kwargs)


@pytest.fixture(scope="module")
def base_only(hf_generator):
    return hf_generator.generate([_request(AUSTRALIA), _request(FRANCE)])


@pytest.fixture(scope="module")
def mixed(hf_generator):
    batch = [_request(AUSTRALIA), _request(AUSTRALIA, "zebra"), _request(FRANCE), _request(AUSTRALIA, "banana")]
    return hf_generator.generate(batch)


def test_each_request_gets_its_own_adapter_inside_one_batch(mixed):
    base_australia, zebra, base_france, banana = mixed
    assert "Canberra" in base_australia and "Paris" in base_france
    assert zebra.startswith("Zebra") and banana.startswith("Banana")


def test_base_model_requests_are_unaffected_by_adapters(base_only, mixed):
    assert [mixed[0], mixed[2]] == base_only


def test_greedy_decoding_is_deterministic(hf_generator, mixed):
    # the zebra group of `mixed` held this one request, so a rerun must match it token for token
    assert hf_generator.generate([_request(AUSTRALIA, "zebra")]) == [mixed[1]]


def test_unknown_adapter_fails_before_any_work(hf_generator, monkeypatch):
    monkeypatch.setattr(hf_generator.model, "generate", pytest.fail)
    with pytest.raises(UnknownAdapterError, match="'web_answer' is not configured.*banana"):
        hf_generator.generate([_request(AUSTRALIA), _request(AUSTRALIA, "web_answer")])


def test_stop_strings_and_per_request_token_limits(hf_generator, tokenizer):
    stopped, short, free = hf_generator.generate([
        _request(AUSTRALIA, stop=("Canberra",)), _request(FRANCE, max_new_tokens=2), _request(AUSTRALIA)])
    assert "Canberra" in free and free.startswith(stopped) and "Canberra" not in stopped
    assert len(tokenizer.encode(short, add_special_tokens=False)) <= 2


def test_constraint_keeps_output_in_the_language_next_to_a_free_request(hf_generator):
    digits = DecodingConstraint(is_valid_prefix=lambda s: s.isdigit() or s == "",
                                is_complete=lambda s: s.isdigit())
    spider = ({"role": "user", "content": "How many legs does a spider have?"},)
    constrained, free = hf_generator.generate([_request(spider, constraint=digits, max_new_tokens=4),
                                               _request(spider, max_new_tokens=4)])
    assert constrained.isdigit() and not free.isdigit()


def test_empty_generation_becomes_i_dont_know(hf_generator):
    nothing = DecodingConstraint(is_valid_prefix=lambda s: s == "", is_complete=lambda s: True)
    [raw] = hf_generator.generate([_request(AUSTRALIA, constraint=nothing)])
    assert raw == "" and clean_answer(raw) == IDK


def test_over_long_context_is_cut_and_a_hopeless_prompt_answers_empty(hf_generator, monkeypatch):
    monkeypatch.setattr(hf_generator, "chat", ChatFormatter(hf_generator.tokenizer, max_model_len=200))
    seen_lengths = []
    real_generate = hf_generator.model.generate

    def recording_generate(**kwargs):
        seen_lengths.append(kwargs["input_ids"].shape[1])
        return real_generate(**kwargs)

    monkeypatch.setattr(hf_generator.model, "generate", recording_generate)
    docs = "".join(f"<DOC>\nCanberra is the capital of Australia (source {i}).\n</DOC>\n" for i in range(40))
    long_context = ({"role": "user", "content": f"Context:\n{docs}\nQuestion: What is the capital of Australia?"},)
    hopeless = ({"role": "user", "content": "<DOC>x</DOC> " + "why " * 400},)
    answer, empty = hf_generator.generate([_request(long_context), _request(hopeless)])
    assert seen_lengths and max(seen_lengths) <= 200 - 12
    assert "Canberra" in answer and empty == ""


class _FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_group_that_cannot_start_before_the_deadline_answers_empty(hf_generator, tokenizer, monkeypatch):
    """A slowed stand-in for `generate` that costs 10 s of a fake clock per call (no real sleeping)."""
    clock, max_times = _FakeClock(), []
    reply = torch.tensor(tokenizer.encode("ok", add_special_tokens=False) + [tokenizer.eos_token_id])

    def slow_generate(input_ids, attention_mask, **kwargs):
        clock.now += 10
        max_times.append(kwargs.get("max_time"))
        return torch.cat([input_ids, reply.repeat(input_ids.shape[0], 1)], dim=1)

    monkeypatch.setattr(hf_generator.model, "generate", slow_generate)
    batch = [_request(AUSTRALIA), _request(AUSTRALIA, "zebra"), _request(FRANCE), _request(AUSTRALIA, "banana")]
    outputs = hf_generator.generate(batch, deadline=Deadline(15, clock=clock))
    # groups run in first-appearance order: base (2 requests), zebra, banana; banana starts after 20 s
    assert outputs == ["ok", "ok", "ok", ""]
    assert max_times == [15, 5]
    assert outputs.reasons == {3: "generation not started: the deadline passed"}


def test_one_by_one_retries_of_a_failed_group_stop_at_the_deadline(hf_generator, tokenizer, monkeypatch):
    """The group of 3 fails as a batch; each retry alone costs 10 s of a fake clock; with 15 s, the first two
    retries start (at 0 s and 10 s), the third would start at 20 s and is not run: "" with its reason."""
    clock = _FakeClock()
    reply = torch.tensor(tokenizer.encode("ok", add_special_tokens=False) + [tokenizer.eos_token_id])

    def fails_as_a_batch(input_ids, attention_mask, **kwargs):
        if input_ids.shape[0] > 1:
            raise RuntimeError("out of memory")
        clock.now += 10
        return torch.cat([input_ids, reply.repeat(input_ids.shape[0], 1)], dim=1)

    monkeypatch.setattr(hf_generator.model, "generate", fails_as_a_batch)
    outputs = hf_generator.generate([_request(AUSTRALIA), _request(FRANCE), _request(AUSTRALIA)],
                                    deadline=Deadline(15, clock=clock))
    assert outputs.count("ok") == 2 and outputs.count("") == 1
    [(skipped, reason)] = outputs.reasons.items()
    assert outputs[skipped] == "" and "not run" in reason and "RuntimeError: out of memory" in reason


def test_expired_deadline_runs_nothing(hf_generator, monkeypatch):
    monkeypatch.setattr(hf_generator.model, "generate", pytest.fail)
    assert hf_generator.generate([_request(AUSTRALIA)] * 2, deadline=Deadline(0)) == ["", ""]


def test_max_time_stops_a_long_generation_and_drops_the_half_answer(hf_generator, monkeypatch):
    story = ({"role": "user", "content": "Write a very long story about a dragon."},)
    lengths, real_generate = [], hf_generator.model.generate

    def measured_generate(**kwargs):
        output = real_generate(**kwargs)
        lengths.append(output.shape[1] - kwargs["input_ids"].shape[1])
        return output

    monkeypatch.setattr(hf_generator.model, "generate", measured_generate)
    monkeypatch.setattr(hf_generator, "prefill_tokens_per_s", None)  # no prefill estimate: the row starts
    started = time.monotonic()
    assert hf_generator.generate([_request(story, max_new_tokens=400)], deadline=Deadline(0.5)) == [""]
    assert time.monotonic() - started < 10  # 400 tokens would take far longer on 2 shared cores
    assert 0 < lengths[0] < 400


def test_a_failing_group_costs_only_its_own_requests(hf_generator, monkeypatch):
    real_select, real_generate, selected = hf_generator._select_adapter, hf_generator.model.generate, []

    def recording_select(name):
        selected.append(name)
        real_select(name)

    def fails_under_zebra(**kwargs):
        if selected[-1] == "zebra":
            raise RuntimeError("out of memory")
        return real_generate(**kwargs)

    monkeypatch.setattr(hf_generator, "_select_adapter", recording_select)
    monkeypatch.setattr(hf_generator.model, "generate", fails_under_zebra)
    base, zebra = hf_generator.generate([_request(AUSTRALIA), _request(AUSTRALIA, "zebra")])
    assert "Canberra" in base and zebra == ""


def test_make_generator_builds_the_hf_backend(model_folder):
    generator = make_generator(LLMConfig(path=str(model_folder)), models_dir="/nonexistent")
    assert isinstance(generator, HFGenerator)
    assert generator.tokenizer is generator.chat.tokenizer
    assert generator.truncate_tokens("The capital of Australia is Canberra.", 3) == "The capital of"


def test_start_up_errors_are_clear(model_folder, tmp_path):
    with pytest.raises(AdapterNotFoundError, match="'web_answer'"):
        HFGenerator(LLMConfig(path=str(model_folder), adapters={"web_answer": "nope"}), str(tmp_path))
    with pytest.raises(ValueError, match="llm.dtype"):
        HFGenerator(LLMConfig(path=str(model_folder), dtype="int3"), str(tmp_path))
    if not torch.cuda.is_available():
        with pytest.raises(BackendUnavailableError, match="llm.device: cpu"):
            HFGenerator(LLMConfig(path=str(model_folder), device="cuda"), str(tmp_path))


def test_a_request_that_fails_inside_a_group_costs_only_itself(hf_generator, monkeypatch):
    real_generate = hf_generator.model.generate

    def fails_on_france(**kwargs):  # the group fails as a whole, and France fails alone too
        rows = [hf_generator.tokenizer.decode(ids) for ids in kwargs["input_ids"]]
        if any("France" in row for row in rows):
            raise RuntimeError("cannot encode this prompt")
        return real_generate(**kwargs)

    monkeypatch.setattr(hf_generator.model, "generate", fails_on_france)
    australia, france = hf_generator.generate([_request(AUSTRALIA), _request(FRANCE)])
    assert "Canberra" in australia and france == ""


def test_a_row_whose_prefill_cannot_end_in_time_is_not_started(hf_generator, monkeypatch):
    monkeypatch.setattr(hf_generator.model, "generate", pytest.fail)
    monkeypatch.setattr(hf_generator, "prefill_tokens_per_s", 10.0)  # as slow as 2 overloaded cores get
    assert hf_generator.generate([_request(AUSTRALIA)], deadline=Deadline(0.5)) == [""]


def test_device_map_lets_accelerate_place_the_model(hf_generator, model_folder, adapter_dirs, monkeypatch):
    """`llm.device_map: auto` (a model one GPU cannot hold, spread over the GPUs): the model is loaded with the
    device map and not moved afterwards; here accelerate has only the CPU, so the outputs are the default load's."""
    import models.llm.hf_backend as backend

    loads = []
    real = backend.AutoModelForCausalLM.from_pretrained
    monkeypatch.setattr(backend.AutoModelForCausalLM, "from_pretrained",
                        lambda *args, **kwargs: loads.append(kwargs) or real(*args, **kwargs))
    placed = HFGenerator(LLMConfig(path=str(model_folder), device_map="auto", adapters=adapter_dirs), "models")
    assert loads[0]["device_map"] == "auto"
    requests = [_request(AUSTRALIA), _request(AUSTRALIA, adapter="zebra")]
    assert placed.generate(requests) == hf_generator.generate(requests)
