"""The `g4dn-hf` profile (models/profiles/g4dn-hf.yaml): g4dn with its LLM on transformers + peft, for a grader whose
driver vLLM's LoRA (or vLLM itself) does not run on.

First its shape: g4dn everywhere but three LLM keys (the backend, accelerate's placement over the four T4s, and
vLLM's latency guard off), in fp16 with g4dn's three adapters. Then the grader's view on CPU: `UserModel` of the
profile built on a tiny random Llama with three random LoRA adapters (as `scripts/gpu_smoke.py --tiny` builds them,
Llama-3-8B's architecture and LoRA targets, noise for outputs), its GPU placement replaced by the CPU's (device
cpu, no device_map, float32: half matmuls are slow or missing on CPU) and its GPU-only embedder and reranker by the
CPU profile's. It starts (the warm-up switching to each adapter once) and answers the bundled sample's first
questions as Task 2, the bundled mock KG API running, each request run under the adapter the pipeline asked for.
"""
from dataclasses import asdict

import pytest

from models.config import REPO_ROOT, load_config

ADAPTERS = ("web_answer", "api_generation", "kg_answer")  # g4dn's, in its order
SAMPLE = REPO_ROOT / "data" / "sample" / "crag_sample.jsonl"
QUESTIONS = 3
# The CPU placement of the LLM, and the CPU profile's embedder and reranker in place of bge (not available without
# weights), with less recall so the test stays quick.
ON_CPU = {"llm.device": "cpu", "llm.device_map": "", "llm.dtype": "float32", "pipeline.task": 2,
          "pipeline.batch_size": QUESTIONS}
LESS_RECALL = {"prefilter_k": 16, "recall_k": 10, "rerank_k": 5, "context_max_tokens": 2000}


def test_g4dn_hf_is_g4dn_on_transformers_over_the_four_gpus():
    import torch

    from models.llm.hf_backend import DTYPES

    g4dn, hf = load_config("g4dn"), load_config("g4dn-hf")
    assert hf.name == "g4dn-hf" and hf.llm.backend == "hf" and hf.llm.device == "cuda"
    assert hf.llm.device_map == "auto" and DTYPES[hf.llm.dtype] is torch.float16  # the T4 has no bf16
    assert list(hf.llm.adapters) == list(ADAPTERS) and hf.llm.adapters == g4dn.llm.adapters
    assert (hf.pipeline.answer_adapter, hf.kg.api_adapter, hf.pipeline.kg_answer_adapter) == ADAPTERS
    base = asdict(g4dn.llm)
    changed = {key for key, value in asdict(hf.llm).items() if value != base[key]}
    assert changed == {"backend", "device_map", "gpu"}, changed
    assert {k: v for k, v in asdict(hf).items() if k not in ("name", "llm")} == \
        {k: v for k, v in asdict(g4dn).items() if k not in ("name", "llm")}


@pytest.fixture(scope="module")
def three_adapters(tiny_llama, tmp_path_factory):
    """Three random LoRA adapters (non-zero B) on the tiny Llama, named as g4dn's."""
    from submission.smoke_checks import make_random_adapter

    root = tmp_path_factory.mktemp("g4dn_hf_adapters")
    return {name: str(make_random_adapter(tiny_llama, root / name, rank=8, seed=seed))
            for seed, name in enumerate(ADAPTERS)}


def _active(model) -> tuple[str, ...] | None:
    """The adapters the peft layers run with now (None: disabled, the base model)."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    layer = next(m for m in model.modules() if isinstance(m, BaseTunerLayer))
    return None if layer.disable_adapters else tuple(layer.active_adapters)


def test_g4dn_hf_answers_the_bundled_sample_on_a_tiny_llama(tiny_llama, three_adapters, minilm_path, monkeypatch):
    import torch

    from evaluation.data import grader_view, iter_batches
    from mock_api.server import running_server
    from models.crag_model import CragModel
    from models.llm.hf_backend import HFGenerator
    from models.user_config import UserModel

    cpu = load_config("cpu")
    config = load_config("g4dn-hf", {**ON_CPU, "llm.path": str(tiny_llama), "llm.adapters": three_adapters,
                                     "embedder": asdict(cpu.embedder), "web": {**asdict(cpu.web), **LESS_RECALL}})
    switched, asked = [], []  # (adapter selected, adapters then active) per generate() group; adapters per call
    select, generate = HFGenerator._select_adapter, HFGenerator.generate

    def spy_select(self, name):
        select(self, name)
        switched.append((name, _active(self.model)))

    def spy_generate(self, requests, **kwargs):
        asked.append([r.adapter for r in requests])
        return generate(self, requests, **kwargs)

    monkeypatch.setattr(HFGenerator, "_select_adapter", spy_select)
    monkeypatch.setattr(HFGenerator, "generate", spy_generate)
    batch = next(iter_batches(SAMPLE, QUESTIONS, limit=QUESTIONS))
    with running_server() as url:
        monkeypatch.setenv("CRAG_MOCK_API_URL", url)
        model = UserModel(config)
        assert isinstance(model, CragModel) and model.get_batch_size() == QUESTIONS
        generator = model.pipeline.generator
        assert isinstance(generator, HFGenerator), type(generator)  # no adapter missing: no base-model stand-in
        assert generator.adapters.names == ADAPTERS and generator.model.dtype == torch.float32
        # start-up: the warm-up asked the base model and each adapter, and each ran under its own adapter
        assert model.warm_up is not None and model.warm_up.adapters == [None, *ADAPTERS]
        assert not model.warm_up.failed, model.warm_up.failed
        warm_up, warm_up_calls = len(switched), len(asked)
        answers = model.batch_generate_answer(grader_view(batch))

    assert len(answers) == QUESTIONS and all(isinstance(a, str) and a for a in answers), answers
    sources = [a.source for a in model.last_answers]
    assert "error" not in sources, [a.trace for a in model.last_answers]  # the pipeline answered each question
    assert {name for name, _ in switched[:warm_up]} == {None, *ADAPTERS}
    # every group ran under the adapter its requests named: set_adapter for one, disable_adapters for the base
    assert all(active == (None if name is None else (name,)) for name, active in switched), switched
    in_batch = {name for call in asked[warm_up_calls:] for name in call}
    assert {"api_generation", "web_answer"} <= in_batch, in_batch  # Task 2: KG programs, then the web answers
    assert in_batch <= {None, *ADAPTERS}
    assert {name for name, _ in switched[warm_up:]} == in_batch  # each adapter asked for was switched to
