"""Builds the submission's images here and runs the CPU one as the grader would (standard library only).

    python3 -m scripts.image build                  # the CPU image (submission/Dockerfile.cpu), tag crag-submission-cpu
    python3 -m scripts.image build --vllm           # ... with vLLM's CPU build (the cpu-vllm profile)
    python3 -m scripts.image build --variant gpu    # the root Dockerfile on a stand-in base (no CUDA here)
    python3 -m scripts.image run                    # the bundled sample in the CPU image (the grader's limits)
    python3 -m scripts.image run --data FILE --task 2 -- --set pipeline.batch_size=8   # after --: local_evaluation.py's
    python3 -m scripts.image exec -- python scripts/preflight.py --help   # any command in the image (--network none)

`make image` builds and runs the bundled sample. From a fresh clone, as root: Debian's docker.io and debootstrap are
installed if missing, a Docker daemon is started on its own socket and data folder if none answers (and stopped by
its process id afterwards), and the base image is made from Debian's archive by debootstrap when no registry serves
it. Behind a proxy or with a package mirror (the recipe): pip in the build uses the host pip's configuration
(`pip config list`) unless told otherwise: --index-url, --extra-index-url, --find-links (URLs or local folders)
and --ca-bundle (the CA bundle TLS is verified against); --debian-mirror for the base. The library, and what each step
does, is submission/image.py. Exit status 0 done, 1 the build or run failed (an out-of-memory container included),
2 something to fix first (the message says what).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from submission.image import (BASE_IMAGE, CONTAINER_OUT, CPU_TAG, DEBIAN_MIRROR, GRADER_CPUS, GRADER_MEMORY,
                              IN_IMAGE_REPO, REPO_ROOT, STATE_DIR, TORCH_INDEX, Daemon, ImageError, PipSources,
                              build_image, ensure_base, ensure_tools, run_container, unreachable_hosts)

GPU_TAG = "crag-submission-gpu-stand-in"


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
    build.add_argument("--base", help=f"the base image to build on (default {BASE_IMAGE}; for --variant gpu a "
                                      "stand-in for the CUDA base)")

    run = sub.add_parser("run", help="run local_evaluation.py in the CPU image as the grader would")
    run.add_argument("--tag", default=CPU_TAG)
    run.add_argument("--data", type=Path, help="an evaluation file on this machine (mounted read-only); "
                                                "default the bundled sample inside the image")
    run.add_argument("--task", default="1", help="local_evaluation.py --task (default 1)")
    run.add_argument("--output-dir", type=Path, default=REPO_ROOT / "outputs" / "image-cpu",
                     help="where the run's files land (default %(default)s)")
    run.add_argument("--cpus", default=GRADER_CPUS)
    run.add_argument("--memory", default=GRADER_MEMORY)
    run.add_argument("extra", nargs="*", help="after --: more local_evaluation.py arguments")

    exec_ = sub.add_parser("exec", help="run a command in an image (--network none)")
    exec_.add_argument("--tag", default=CPU_TAG)
    exec_.add_argument("argv", nargs="+")
    return parser.parse_args(argv)


def build(args: argparse.Namespace, daemon: Daemon) -> int:
    sources = PipSources() if args.no_pip_config else PipSources.from_pip_config()
    sources = sources.merged(PipSources(args.index_url, tuple(args.extra_index_url), tuple(args.find_links),
                                        args.ca_bundle))
    build_args: dict[str, str] = {}
    if args.variant == "cpu":
        dockerfile, tag = REPO_ROOT / "submission" / "Dockerfile.cpu", args.tag or CPU_TAG
        base = args.base or BASE_IMAGE
        ensure_base(daemon, base, args.debian_mirror)
        build_args["BASE"] = base
        torch_index = PipSources(index_url=TORCH_INDEX)
        if unreachable_hosts(torch_index, timeout=5) and (sources.find_links or sources.extra_index_urls):
            # pip would retry the unreachable index for minutes before looking further.
            print(f"{TORCH_INDEX} is unreachable: torch comes from the other pip sources", flush=True)
            build_args["TORCH_INDEX"] = ""
        if args.vllm:
            build_args["VLLM"] = "1"
    else:
        dockerfile, tag = REPO_ROOT / "Dockerfile", args.tag or GPU_TAG
        base = args.base or BASE_IMAGE
        ensure_base(daemon, base, args.debian_mirror)
        # The CUDA base cannot be pulled here: Debian bookworm stands in (glibc 2.36 >= the CUDA base's 2.35; its
        # python3 is 3.11, which the CUDA base's Ubuntu 22.04 lacks), with the base's Python in place of Miniconda
        # (the Dockerfile's PYTHON_FROM). Everything after the base runs as the grader's build would.
        build_args.update(CUDA_BASE=base, PYTHON_FROM="system", PYTHON_PACKAGES="python3 python3-venv python3-dev")
    build_image(daemon, dockerfile, tag, sources, build_args)
    return 0


def run(args: argparse.Namespace, daemon: Daemon) -> int:
    mounts, data = {}, []
    if args.data:
        mounts[args.data.resolve()] = f"/data/{args.data.name}"
        data = ["--data", f"/data/{args.data.name}"]
    command = ["python", "local_evaluation.py", "--task", args.task, *data, "--output-dir", f"{CONTAINER_OUT}/run",
               *args.extra]
    print(f"{args.tag}: {' '.join(command)} (--cpus {args.cpus} --memory {args.memory} --network none)", flush=True)
    result = run_container(daemon, args.tag, command, args.output_dir, args.cpus, args.memory, mounts)
    print(result.summary(args.memory), flush=True)
    summary = args.output_dir / "run" / "summary.json"
    if summary.is_file():  # local_evaluation.py's own per-question latencies (batch time / batch size)
        latency = json.loads(summary.read_text())["latency"]
        print(f"latency: median {latency['median_s']:.1f} s per question, max {latency['max_s']:.1f} s, "
              f"{latency['n_over_budget']} of {latency['n']} over the 30 s budget", flush=True)
    print(f"predictions: {args.output_dir / 'run' / 'predictions.jsonl'}", flush=True)
    return 1 if result.exit_code != 0 or result.failed_for_memory else 0


def exec_(args: argparse.Namespace, daemon: Daemon) -> int:
    return daemon.docker("run", "--rm", "--network", "none", "-w", IN_IMAGE_REPO, args.tag, *args.argv,
                         check=False).returncode


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        ensure_tools(("docker", "dockerd", "debootstrap") if args.command == "build" else ("docker", "dockerd"))
        with Daemon(args.state_dir) as daemon:
            return {"build": build, "run": run, "exec": exec_}[args.command](args, daemon)
    except ImageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
