"""Assistant-only loss masks, context truncation that spares the label, and a tiny real training run on the
CPU model (through scripts/train_lora.py's command line) whose adapter the inference layer loads."""
import json
from dataclasses import replace

import pytest
import torch

from scripts.train_lora import main
from tests.packaged import missing_packaged_model
from training.encoding import IGNORE_INDEX, collate, encode_all, encode_example
from training.train_lora import TrainConfig, compute_dtype, total_steps, train, train_dtype, use_4bit


@pytest.fixture(scope="module")
def cpu_model():
    """(HF folder, tokenizer) of the CPU profile's model (converted once from its GGUF, then cached)."""
    from transformers import AutoTokenizer

    from models.config import load_config
    from models.llm.checkpoint import resolve_checkpoint
    from models.paths import ModelNotFoundError

    config = load_config("cpu")
    try:
        folder = resolve_checkpoint(config.llm.path, config.models_dir, config.llm.cache_dir)
    except ModelNotFoundError as exc:
        missing_packaged_model(f"CPU model not installed: {exc}")
    return folder, AutoTokenizer.from_pretrained(folder)


def chat(context, label="Canberra", question="what is the capital of australia?"):
    return [{"role": "system", "content": "Answer in 50 words or less."},
            {"role": "user", "content": f"Context information is below.\n{context}\nQuestion: {question}\nAnswer:"},
            {"role": "assistant", "content": label}]


def test_loss_only_on_the_assistant_turn(cpu_model):
    _, tokenizer = cpu_model
    example = encode_example(tokenizer, chat("<DOC>\nCanberra is the capital.\n</DOC>"), max_length=512)
    first = example.labels.index(next(t for t in example.labels if t != IGNORE_INDEX))
    assert all(t == IGNORE_INDEX for t in example.labels[:first])
    assert tokenizer.decode(example.input_ids[first:]) == "Canberra<|im_end|>\n"
    assert example.labels[first:] == example.input_ids[first:]
    assert tokenizer.decode(example.input_ids[:first]).endswith("Answer:<|im_end|>\n<|im_start|>assistant\n")
    assert not example.truncated


def test_long_context_is_cut_never_the_label(cpu_model):
    _, tokenizer = cpu_model
    facts = "".join(f"<DOC>\nfact number {i} about somewhere else entirely.\n</DOC>\n" for i in range(60))
    label = "the capital of australia is canberra, not sydney"
    example = encode_example(tokenizer, chat(facts, label), max_length=160)
    assert example.truncated and len(example.input_ids) <= 160
    text = tokenizer.decode(example.input_ids)
    assert text.endswith(label + "<|im_end|>\n")
    assert "</DOC>\n\nQuestion: what is the capital of australia?" in text and "fact number 0 " in text
    assert "fact number 59" not in text
    # a label that leaves no room for the question is dropped, and counted
    examples, dropped = encode_all(tokenizer, [chat("x", "word " * 200), chat("<DOC>\nok\n</DOC>")], max_length=128)
    assert dropped == 1 and len(examples) == 1


def test_collate_pads_right_and_ignores_padding(cpu_model):
    _, tokenizer = cpu_model
    examples, _ = encode_all(tokenizer, [chat("<DOC>\na\n</DOC>"), chat("<DOC>\n" + "b " * 30 + "\n</DOC>")], 512)
    batch = collate(examples, pad_token_id=0)
    short = len(examples[0].input_ids)
    assert batch["input_ids"].shape == batch["labels"].shape == (2, len(examples[1].input_ids))
    assert batch["attention_mask"][0, short:].sum() == 0 and (batch["labels"][0, short:] == IGNORE_INDEX).all()
    assert batch["attention_mask"][1].all()


def test_hyperparameter_defaults_are_db3_table_1():
    c = TrainConfig()
    assert (c.r, c.alpha, c.dropout, c.bias, c.lr, c.warmup_ratio, c.max_grad_norm) == (8, 16, 0.1, "none", 2e-4, 0.1, 0.3)
    assert (c.batch_size, c.grad_accum, c.epochs, c.max_length) == (1, 4, 2.0, 2048)
    assert set(c.target_modules) == {"q_proj", "k_proj", "v_proj", "up_proj", "down_proj", "gate_proj"}
    assert total_steps(20, c) == 10 and total_steps(20, replace(c, max_steps=3)) == 3


def test_qlora_needs_cuda():
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present: this checks the refusal on a machine without one")
    assert use_4bit("auto") is False and use_4bit("off") is False
    with pytest.raises(ValueError, match="needs a CUDA GPU"):
        use_4bit("on")
    with pytest.raises(ValueError, match="auto, on or off"):
        use_4bit("yes")


def test_tiny_training_run_writes_an_adapter_the_inference_layer_loads(cpu_model, tmp_path):
    from models.config import load_config
    from models.llm.generator import GenerationRequest
    from models.llm.hf_backend import HFGenerator

    folder, _ = cpu_model
    data = tmp_path / "sft.jsonl"
    data.write_text("".join(json.dumps({"id": str(i), "messages": chat(f"<DOC>\ncity {i}\n</DOC>", f"city {i}")}) + "\n"
                            for i in range(3)))
    out, snapshots = tmp_path / "adapter", tmp_path / "snapshots"
    result = main(["--data", str(data), "--out", str(out), "--base", str(folder), "--max-steps", "2",
                   "--max-length", "256", "--grad-accum", "1", "--eval-examples", "1", "--profile", "cpu",
                   "--save-every", "2", "--checkpoint-dir", str(snapshots)])
    assert result.steps == 2 and len(result.losses) == 2 and result.n_examples == 3
    assert (snapshots / "adapter_config.json").is_file() and (snapshots / "checkpoint_step.txt").read_text() == "2 of 2\n"
    assert (out / "adapter_config.json").is_file() and (out / "adapter_model.safetensors").is_file()
    log = json.loads((out / "training_log.json").read_text())
    assert [s["step"] for s in log["steps"]] == [1, 2] and log["quantized_4bit"] is False
    assert log["config"]["r"] == 8 and log["eval_loss_before"] > 0 and log["base"] == folder.name
    adapter_config = json.loads((out / "adapter_config.json").read_text())
    assert adapter_config["r"] == 8 and adapter_config["lora_alpha"] == 16
    assert adapter_config["base_model_name_or_path"] == folder.name  # --base given: its name, never a machine path

    llm = replace(load_config("cpu").llm, path=str(folder), adapters={"web_answer": str(out)}, dtype="float32")
    generator = HFGenerator(llm, models_dir=str(tmp_path))
    request = GenerationRequest(tuple(chat("<DOC>\ncity 7\n</DOC>")[:2]), adapter="web_answer", max_new_tokens=4)
    assert isinstance(generator.generate([request])[0], str)


def test_snapshots_need_a_folder(tmp_path):
    with pytest.raises(SystemExit, match="--save-every needs --checkpoint-dir"):
        main(["--data", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "a"), "--save-every", "5"])


def test_training_refuses_data_that_cannot_fit(cpu_model, tmp_path):
    folder, _ = cpu_model
    with pytest.raises(ValueError, match="none of the 1 examples fits"):
        train([chat("x", "long label " * 100)], folder, tmp_path / "a", TrainConfig(max_length=64, max_steps=1))


class _FakeCuda:
    """torch.cuda as a GPU of the given compute capability reports it: emulated bf16 counts unless asked not to."""

    def __init__(self, major: int):
        self.major = major

    def is_available(self):
        return True

    def is_bf16_supported(self, including_emulation: bool = True):
        return self.major >= 8 or including_emulation


def test_t4_trains_in_fp16_not_emulated_bf16():
    assert compute_dtype(_FakeCuda(major=7)) == torch.float16   # T4 (sm75): bf16 only by emulation
    assert compute_dtype(_FakeCuda(major=8)) == torch.bfloat16  # A100 and later: native bf16


class _NoCuda:
    def is_available(self):
        return False


def test_precision_auto_is_compute_dtype_and_a_named_one_is_forced():
    """`auto` keeps the old choice; fp16 is forceable on a bf16 GPU (the T4 path, loss scaler on, checked
    on whatever GPU a check runs); bf16 is refused where it would be emulated, half precision without CUDA."""
    t4, a100 = _FakeCuda(major=7), _FakeCuda(major=8)
    for cuda in (t4, a100, _NoCuda()):
        assert train_dtype("auto", cuda) == compute_dtype(cuda)
    assert train_dtype("fp16", a100) == torch.float16 and train_dtype("bf16", a100) == torch.bfloat16
    assert train_dtype("fp32", t4) == train_dtype("fp32", _NoCuda()) == torch.float32
    with pytest.raises(ValueError, match="native bf16"):
        train_dtype("bf16", t4)
    with pytest.raises(ValueError, match="--precision fp16 needs a CUDA GPU"):
        train_dtype("fp16", _NoCuda())
    with pytest.raises(ValueError, match="auto, fp16, bf16, fp32"):
        train_dtype("int8", a100)
    assert TrainConfig().precision == "auto"


def test_qlora_without_bitsandbytes_says_what_to_do(monkeypatch):
    """On CUDA, `auto` and `on` mean 4 bits: a missing bitsandbytes is named with both ways out, before any
    weight loads (it was a bare ModuleNotFoundError from inside the model loading)."""
    import sys

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setitem(sys.modules, "bitsandbytes", None)  # `import bitsandbytes` raises ImportError
    for qlora in ("auto", "on"):
        with pytest.raises(ModuleNotFoundError, match=r"pip install bitsandbytes.*--qlora off"):
            use_4bit(qlora)
    assert use_4bit("off") is False
