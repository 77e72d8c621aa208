"""A recorder for the vLLM start-up order, shared by the backend's and gpu_smoke's tests.

Every function of `torch.cuda` (and the two C entry points behind it) is replaced by a recorder, and `vllm` by
a stand-in whose engine records its construction; NVML is reached, as in the image, only through vLLM's vendored
`vllm.third_party.pynvml` (vllm does not depend on nvidia-ml-py). One event log, so a test can tell whether
anything touched CUDA before the engine existed.
"""
from __future__ import annotations

import inspect
import sys
from types import ModuleType, SimpleNamespace

import pytest
import torch

from tests.vllm_stand_in import StandInEngine

# Reads of torch's own flags, which never call into the driver.
FLAG_READS = {"is_initialized", "_is_compiled", "_is_in_bad_fork", "is_built"}
# What a probe returns on a 4-GPU machine, so code that branches on the answer goes on as it would there.
GPU_ANSWERS = {"is_available": True, "device_count": 4, "is_initialized": False, "_is_compiled": True}


@pytest.fixture()
def cuda_events(monkeypatch):
    """The shared log: ("cuda", name) for every torch.cuda call, ("nvml", name), ("engine", model)."""
    log: list[tuple[str, str]] = []

    def recorder(name):
        def record(*args, **kwargs):
            log.append(("cuda", name))
            return GPU_ANSWERS.get(name)
        return record

    for name, value in vars(torch.cuda).items():
        if inspect.isfunction(value) and value.__module__.startswith("torch.cuda") and not name.startswith("__"):
            monkeypatch.setattr(torch.cuda, name, recorder(name))
    for name in ("_cuda_init", "_cuda_getDeviceCount"):  # the entry points is_available()/init() end in
        monkeypatch.setattr(torch._C, name, recorder(f"torch._C.{name}"), raising=False)

    # As in the image: NVML only through vLLM's vendored copy (vllm does not depend on nvidia-ml-py).
    nvml = ModuleType("vllm.third_party.pynvml")
    for name, answer in (("nvmlInit", None), ("nvmlShutdown", None), ("nvmlDeviceGetCount", 4)):
        setattr(nvml, name, lambda *_, _name=name, _answer=answer: log.append(("nvml", _name)) or _answer)
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError

    class Engine:
        def __init__(self, model, **engine_args):
            log.append(("engine", model))
            self.engine_args = engine_args
            self.llm_engine = StandInEngine()

        def get_tokenizer(self):
            return SimpleNamespace()

    vllm = ModuleType("vllm")
    vllm.LLM, vllm.SamplingParams = Engine, SimpleNamespace
    vllm.sampling_params = ModuleType("vllm.sampling_params")
    vllm.sampling_params.StructuredOutputsParams = SimpleNamespace
    vllm.lora = ModuleType("vllm.lora")
    vllm.lora.request = ModuleType("vllm.lora.request")
    vllm.lora.request.LoRARequest = lambda name, int_id, path: SimpleNamespace(lora_name=name)
    vllm.third_party = ModuleType("vllm.third_party")
    vllm.third_party.pynvml = nvml
    for module in (vllm, vllm.sampling_params, vllm.lora, vllm.lora.request, vllm.third_party, nvml):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    return log




def calls_before_engine(log) -> list[str]:
    """The `torch.cuda` calls (other than flag reads) made before the engine was built."""
    kinds = [kind for kind, _ in log]
    assert "engine" in kinds, f"the engine was never built: {log}"
    return [name for kind, name in log[:kinds.index("engine")] if kind == "cuda" and name not in FLAG_READS]
