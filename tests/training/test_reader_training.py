"""Training the answer reader end to end on a tiny encoder made here (seconds, no packaged model): the loss falls,
the held-out figures are computed, only the adapter is saved, and the saved reader loads for answering."""
import json

import pytest

from models.verify.reader import AnswerReader
from training.reader.examples import ReaderExample
from training.reader.train import ReaderSettings, data_digest, evaluate_reader, f1, stale_reader, train_reader

WORDS = "who directed the film answer zephyrine anselm quarrie odile fenwick is a by not stars in".split()


def tiny_encoder(folder):
    """A 2-layer BERT with a 24-word vocabulary, saved as a model folder with its tokenizer."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir()
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, ":", ".", "?"]) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(vocab))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    import torch

    torch.manual_seed(0)
    BertModel(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def examples(n):
    """Right when the passage names the answer as the director, wrong when it names someone else."""
    out = []
    for i in range(n):
        right = i % 2 == 0
        answer = "anselm quarrie" if i % 4 < 2 else "odile fenwick"
        other = "odile fenwick" if answer == "anselm quarrie" else "anselm quarrie"
        named = answer if right else other
        origin = "traced" if i % 3 == 0 else "stated"
        out.append(ReaderExample(f"q{i}", origin, "who directed the film zephyrine?", answer,
                                 f"zephyrine is a film by {named}.", int(right), "held_out" if i % 5 == 4 else "train"))
    return out


def test_a_tiny_reader_trains_saves_only_its_adapter_and_loads_for_answering(tmp_path):
    base = tiny_encoder(tmp_path / "base")
    out = tmp_path / "reader"
    settings = ReaderSettings(epochs=12, batch_size=8, learning_rate=3e-3, lora_r=4, lora_alpha=8)
    figures = train_reader(examples(40), str(base), tmp_path, out, settings)
    assert len(figures["train_loss"]) == 12 and figures["train_loss"][-1] < figures["train_loss"][0]
    assert figures["train_examples"] == 32 and figures["held_out_examples"] == 8
    assert 0 <= figures["f1"] <= 1 and figures["held_out_loss"] > 0 and figures["ms_per_candidate"] >= 0
    saved = {p.name for p in out.iterdir()}
    assert saved == {"adapter_config.json", "adapter_model.safetensors", "training_log.json"}, saved
    assert json.loads((out / "adapter_config.json").read_text())["base_model_name_or_path"] == str(base)
    assert json.loads((out / "training_log.json").read_text())["figures"] == figures
    reader = AnswerReader.load(out, tmp_path)
    items = [("who directed the film zephyrine?", "anselm quarrie", ("zephyrine is a film by anselm quarrie.",))] * 2
    first = reader.probabilities(items)
    assert first == AnswerReader.load(out, tmp_path).probabilities(items)  # the head and adapter were saved
    assert all(0 < p < 1 for p in first)
    by_origin = figures["by_origin"]
    assert set(by_origin) == {"traced", "stated"} and sum(o["examples"] for o in by_origin.values()) == 8
    for count in ("right", "kept_right", "kept_wrong", "refused_right"):
        assert sum(o[count] for o in by_origin.values()) == figures["held_out_right" if count == "right" else count]
    measured = evaluate_reader(out, examples(40), tmp_path)  # the saved reader, read back: the same figures
    assert measured["by_origin"] == by_origin and measured["held_out_loss"] == pytest.approx(figures["held_out_loss"],
                                                                                               abs=1e-3)
    with pytest.raises(ValueError, match="no held-out"):
        evaluate_reader(out, [e for e in examples(40) if e.split == "train"], tmp_path)


def test_a_reader_is_stale_when_its_examples_changed(tmp_path):
    data, folder = tmp_path / "examples.jsonl", tmp_path / "reader"
    data.write_text("one\n")
    folder.mkdir()
    (folder / "training_log.json").write_text(json.dumps({"data_sha256": data_digest(data)}))
    assert stale_reader(folder, data) is None
    data.write_text("two\n")
    assert "other examples" in stale_reader(folder, data)
    assert "no readable" in stale_reader(tmp_path / "nowhere", data)


def test_training_needs_both_labels(tmp_path):
    only_right = [e for e in examples(8) if e.label == 1]
    with pytest.raises(ValueError, match="right and wrong"):
        train_reader(only_right, str(tmp_path / "nowhere"), tmp_path, tmp_path / "out")


def test_a_folder_without_a_reader_names_make_verifier(tmp_path):
    with pytest.raises(ValueError, match="make verifier"):
        AnswerReader.load(tmp_path, tmp_path)


def test_f1_counts_kept_answers_at_the_break_even_point():
    assert f1([0.9, 0.6, 0.4, 0.2], [1, 0, 1, 0]) == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "kept_right": 1,
                                                      "kept_wrong": 1, "refused_right": 1}
    assert f1([0.1], [1])["f1"] == 0.0
