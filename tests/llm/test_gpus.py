"""The NVML GPU probe: which binding it uses, what it counts, and that a machine without one answers 0."""
import sys
from types import ModuleType

import pytest

from models.llm.gpus import _visible_limit, gpu_name, visible_gpu_count


def _nvml(name, count=4, fails=False):
    module = ModuleType(name)
    module.calls = []

    def init():
        module.calls.append("init")
        if fails:
            raise RuntimeError("NVML Shared Library Not Found")

    module.nvmlInit = init
    module.nvmlShutdown = lambda: module.calls.append("shutdown")
    module.nvmlDeviceGetCount = lambda: count
    module.nvmlDeviceGetHandleByIndex = lambda index: index
    module.nvmlDeviceGetName = lambda handle: b"Tesla T4"
    return module


@pytest.fixture()
def bindings(monkeypatch):
    """Installs stand-in bindings: `vendored` as vllm.third_party.pynvml, `plain` as pynvml (None: absent)."""
    def install(vendored=None, plain=None):
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        if vendored is None:
            monkeypatch.setitem(sys.modules, "vllm.third_party", None)
        else:
            package = ModuleType("vllm.third_party")
            package.pynvml = vendored
            monkeypatch.setitem(sys.modules, "vllm", ModuleType("vllm"))
            monkeypatch.setitem(sys.modules, "vllm.third_party", package)
            monkeypatch.setitem(sys.modules, "vllm.third_party.pynvml", vendored)
        monkeypatch.setitem(sys.modules, "pynvml", plain)
    return install


def test_vllms_vendored_binding_comes_first_and_is_shut_down(bindings):
    vendored, plain = _nvml("vllm.third_party.pynvml", count=4), _nvml("pynvml", count=2)
    bindings(vendored, plain)
    assert visible_gpu_count() == 4 and vendored.calls == ["init", "shutdown"] and plain.calls == []
    assert gpu_name() == "Tesla T4"


def test_nvidia_ml_py_without_vllm(bindings):
    bindings(None, _nvml("pynvml", count=2))
    assert visible_gpu_count() == 2


def test_no_binding_or_no_driver_is_no_gpu(bindings):
    bindings(None, None)
    assert visible_gpu_count() == 0 and gpu_name() == "unknown"
    bindings(None, _nvml("pynvml", fails=True))
    assert visible_gpu_count() == 0 and gpu_name() == "unknown"


def test_cuda_visible_devices_cuts_the_count_as_cuda_does(bindings, monkeypatch):
    bindings(None, _nvml("pynvml", count=4))
    for value, expected in (("0,1", 2), ("", 0), ("-1", 0), ("2,-1,3", 1), ("GPU-8f3e,GPU-aa01", 2), ("0,1,2,3,4", 4)):
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", value)
        assert visible_gpu_count() == expected, value
    assert _visible_limit(None) is None


def test_the_name_is_the_first_gpu_cuda_shows(bindings, monkeypatch):
    names = {0: b"Tesla T4", 2: b"NVIDIA H100 80GB HBM3"}
    module = _nvml("pynvml")
    module.nvmlDeviceGetName = lambda handle: names.get(handle, b"other")
    bindings(None, module)
    assert gpu_name() == "Tesla T4"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert gpu_name() == "NVIDIA H100 80GB HBM3" and gpu_name(0) == "Tesla T4"
