"""Serves a GGUF model over the OpenAI API with llama.cpp's own server (the `xllamacpp` wheel: no compiling).

    python scripts/serve_llamacpp.py --port 8090                       # the packaged SmolLM2-135M, as `smollm2`
    CRAG_LLM_URL=http://127.0.0.1:8090/v1 python local_evaluation.py --profile cpu-server
    kill <the pid this prints>                                          # stop it

The server answers `/v1/models`, `/v1/completions` and `/v1/chat/completions`, and reads a top-level `grammar`
(GBNF) in a request body; its quirks (slots, the served name) are handled in `evaluation/servers/llamacpp_server.py`. It
stops on SIGTERM or SIGINT.
"""
from __future__ import annotations

import argparse
import os
import sys

from evaluation.servers.llamacpp_server import DEFAULT_MODEL, serve_llamacpp


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
    return serve_llamacpp(args.model, args.port, args.host, args.ctx, args.parallel, args.alias, args.threads)


if __name__ == "__main__":
    sys.exit(main())
