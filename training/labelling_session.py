"""The labelling model of `make adapters` and what it loads on first use: the profile overrides that put the base model
on vLLM (CUDA or its CPU build), transformers or a server, and the mock API, model, embedder and KG pathway of a
`Session`, released before training needs the GPU."""
from __future__ import annotations

import gc
import importlib.util
import os
from contextlib import ExitStack
from functools import cached_property
from typing import Callable, Mapping

from training.adapter_settings import MakeAdaptersError, Settings

MOCK_API_ENV = "CRAG_MOCK_API_URL"


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


CPU_KV_CACHE_BYTES = 1 << 30  # vLLM on CPU: the labelling engine's KV cache (cpu-vllm's size)


def labelling_overrides(settings: Settings, profile_llm, device: str, vllm_importable: bool | None = None,
                        gpus: int = 0) -> dict:
    """The profile overrides of the labelling model (module docstring); `settings.overrides` win."""
    if vllm_importable is None:
        vllm_importable = importlib.util.find_spec("vllm") is not None
    overrides: dict = {"llm.path": settings.base, "llm.adapters": {}, "kg.api_adapter": None,
                       "llm.device": device, "embedder.device": device, "web.reranker.device": device}
    if settings.server_url:
        if not settings.server_model:
            raise MakeAdaptersError("--server-url needs --server-model (the served name of BASE)")
        overrides |= {"llm.backend": "openai", "llm.server.base_url": settings.server_url,
                      "llm.server.model": settings.server_model, "llm.server.adapter_models": {}}
    elif profile_llm.backend == "vllm" and vllm_importable and device.startswith("cuda"):
        overrides["llm.backend"] = "vllm"
        if gpus:
            overrides["llm.tensor_parallel_size"] = min(profile_llm.tensor_parallel_size, gpus)
    elif profile_llm.backend == "vllm" and vllm_importable:  # vLLM's CPU build (make setup VLLM=1)
        overrides |= {"llm.backend": "vllm", "llm.tensor_parallel_size": 1, "llm.gpu": "",
                      "llm.kv_cache_bytes": CPU_KV_CACHE_BYTES}
    elif profile_llm.backend != "openai":
        overrides["llm.backend"] = "hf"
        if device.startswith("cuda"):
            # Memory arithmetic, not a measurement: the 8B's fp16 weights are 16.1 GB (8.03e9 parameters x 2 bytes),
            # more than a 16 GB T4 holds once its CUDA context is made, so `.to("cuda")` cannot place the base on one
            # card. accelerate's "auto" spreads the layers over every visible GPU (on 4x T4 a quarter of the weights
            # each, the rest of each card for activations and a labelling batch's KV cache); on one larger GPU
            # it puts the whole model there.
            overrides["llm.device_map"] = "auto"
    if device == "cpu":
        overrides |= {"llm.dtype": "float32", "embedder.fp16": False, "web.reranker.fp16": False}
    return overrides | dict(settings.overrides)


class Session:
    """The mock API, the labelling profile, model, embedder and KG pathway: each started on first use (a rerun
    whose data steps are done loads none of them) and released by `close` (before training needs the GPU)."""

    def __init__(self, profile: str, overrides: Mapping, say: Callable[[str], None]):
        self.profile = profile
        self.overrides = dict(overrides)
        self.say = say
        self._stack = ExitStack()

    @cached_property
    def mock_url(self) -> str:
        url = os.environ.get(MOCK_API_ENV)
        if url:
            self.say(f"mock API: {url} (${MOCK_API_ENV})")
            return url
        from mock_api.server import running_server

        url = self._stack.enter_context(running_server())
        self.say(f"mock API: the bundled fixture KG at {url} (no ${MOCK_API_ENV}): kg_answer contexts and the API "
                 "targets are then checked against the bundled KG, not CRAG's; it stops when the data steps end")
        return url

    @cached_property
    def config(self):
        from models.config import load_config

        return load_config(self.profile, self.overrides | {"kg.api_url": self.mock_url})

    @cached_property
    def generator(self):
        from models.llm.generator import make_generator

        self.say(f"loading the labelling model: {self.config.llm.path} ({self.config.llm.backend} backend)")
        return make_generator(self.config.llm, self.config.models_dir)

    @cached_property
    def embedder(self):
        from models.embedder import Embedder

        return Embedder.from_config(self.config.embedder, self.config.models_dir)

    @cached_property
    def kg(self):
        from models.kg.pathway import KGPathway

        return KGPathway.from_config(self.config.kg, embedder=self.embedder)

    def close(self) -> None:
        generator = self.__dict__.pop("generator", None)
        if generator is not None and hasattr(generator, "close"):
            generator.close()  # vllm: stops the engine's processes and frees the GPU
        for name in ("kg", "embedder", "config", "mock_url"):
            self.__dict__.pop(name, None)
        del generator
        self._stack.close()
        gc.collect()
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
