"""Builds the submission's images here and runs the CPU one as the grader would (standard library only).

    python3 -m scripts.image build                  # the CPU image (submission/Dockerfile.cpu): crag-submission-cpu
    python3 -m scripts.image build --vllm           # ... with vLLM's CPU build (the cpu-vllm profile)
    python3 -m scripts.image build --variant gpu    # the root Dockerfile on a stand-in base (no CUDA here)
    python3 -m scripts.image run                    # the bundled sample in the CPU image (the grader's limits)
    python3 -m scripts.image run --data FILE --task 2 -- --set pipeline.batch_size=8   # after --: local_evaluation's
    python3 -m scripts.image exec -- python scripts/preflight.py --help   # any command in the image (--network none)

`make image` builds and runs the bundled sample; docs/gpu.md "Building the images here" says what each step does
(the tools, our own dockerd, the debootstrap base) and the recipe behind a proxy or mirror: by default pip in the
build uses the host pip's configuration (`pip config list`), else --index-url, --extra-index-url, --find-links and
--ca-bundle. The library is submission/image.py. Exit status 0 done, 1 the build or run failed (an out-of-memory
container included), 2 something to fix first (the message says what).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from submission.image import (CPU_TAG, DEBIAN_MIRROR, GPU_TAG, GRADER_CPUS, GRADER_MEMORY, IN_IMAGE_REPO, REPO_ROOT,
                              STATE_DIR, Daemon, ImageError, PipSources, build_variant, ensure_tools)
from submission.image_run import run_evaluation


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--state-dir", type=Path, default=STATE_DIR,
                        help="our own Docker daemon's socket and data folder (default %(default)s)")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build an image")
    build.add_argument("--variant", choices=("cpu", "gpu"), default="cpu")
    build.add_argument("--tag", help=f"default {CPU_TAG}, or {GPU_TAG} with --variant gpu")
    build.add_argument("--vllm", action="store_true", help="cpu: with vLLM's CPU build (the cpu-vllm profile)")
    build.add_argument("--index-url", help="pip's index (default: pip's configuration, else PyPI)")
    build.add_argument("--extra-index-url", action="append", default=[], help="an extra index, URL or local folder")
    build.add_argument("--find-links", action="append", default=[], help="a wheel folder, URL or local folder")
    build.add_argument("--ca-bundle", help="the CA bundle pip verifies TLS against (a proxy's CA included)")
    build.add_argument("--no-pip-config", action="store_true", help="ignore the host pip's configuration")
    build.add_argument("--debian-mirror", default=DEBIAN_MIRROR, help="the archive debootstrap makes the base from")
    build.add_argument("--base", help="the base image (default debian:bookworm; for --variant gpu the CUDA "
                                      "base's stand-in)")
    run = sub.add_parser("run", help="run local_evaluation.py in the CPU image as the grader would")
    run.add_argument("--tag", default=CPU_TAG)
    run.add_argument("--data", type=Path, help="an evaluation file here (mounted read-only); default the bundled "
                                                "sample inside the image")
    run.add_argument("--task", default="1", help="local_evaluation.py --task (default 1)")
    run.add_argument("--output-dir", type=Path, default=REPO_ROOT / "outputs" / "image-cpu",
                     help="where the run's files land (default %(default)s)")
    run.add_argument("--cpus", default=GRADER_CPUS)
    run.add_argument("--memory", default=GRADER_MEMORY)
    run.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                     help="a variable set in the container, as an ENV line of the Dockerfile would (repeatable)")
    run.add_argument("--shm-size", help="the container's /dev/shm (default Docker's, 64 MiB; vLLM's CPU engine needs "
                                        "400 MiB: models/llm/shared_memory.py)")
    run.add_argument("extra", nargs="*", help="after --: more local_evaluation.py arguments")
    exec_ = sub.add_parser("exec", help="run a command in an image (--network none)")
    exec_.add_argument("--tag", default=CPU_TAG)
    exec_.add_argument("argv", nargs="+")
    return parser.parse_args(argv)


def _settings(pairs: list[str]) -> dict[str, str]:
    bad = [pair for pair in pairs if "=" not in pair or not pair.split("=", 1)[0]]
    if bad:
        raise SystemExit(f"error: --env takes KEY=VALUE, not {bad[0]!r}")
    return dict(pair.split("=", 1) for pair in pairs)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        ensure_tools(("docker", "dockerd", "debootstrap") if args.command == "build" else ("docker", "dockerd"))
        with Daemon(args.state_dir) as daemon:
            if args.command == "build":
                sources = PipSources() if args.no_pip_config else PipSources.from_pip_config()
                sources = sources.merged(PipSources(args.index_url, tuple(args.extra_index_url),
                                                    tuple(args.find_links), args.ca_bundle))
                build_variant(daemon, args.variant, sources, args.tag, args.vllm, args.base, args.debian_mirror)
                return 0
            if args.command == "run":
                return run_evaluation(daemon, args.tag, args.output_dir, args.task, args.data, args.extra,
                                      args.cpus, args.memory, env=_settings(args.env),
                                      shm_size=args.shm_size)
            return daemon.docker("run", "--rm", "--network", "none", "-w", IN_IMAGE_REPO, args.tag, *args.argv,
                                 check=False).returncode
    except ImageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
