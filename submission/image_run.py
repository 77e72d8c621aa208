"""Runs a command in an image under the grader's limits and reads back what the container used.

`run_container`: `docker run --cpus 2 --memory 8g --memory-swap 8g --network none`, the run's output in a mounted
folder; the container's peak memory and OOM kills are read from its own cgroup before it exits (`CGROUP_PROBE`), so
a run that hits the cap fails loudly (`ContainerRun.summary`). `run_evaluation`: `local_evaluation.py` that way, the
line scripts/image.py prints. Images are built by submission/image.py.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from submission.image import CONTAINER_OUT, GRADER_CPUS, GRADER_MEMORY, Daemon

# Read from the container's own cgroup (v2: memory.peak and memory.events; v1: memory.max_usage_in_bytes and
# memory.oom_control) after the command, written as JSON beside the run's output.
CGROUP_PROBE = r"""
cg=/sys/fs/cgroup; peak=""; ooms=""
if [ -f $cg/memory.peak ]; then peak=$(cat $cg/memory.peak); ooms=$(awk '$1=="oom_kill"{print $2}' $cg/memory.events)
elif [ -f $cg/memory/memory.max_usage_in_bytes ]; then peak=$(cat $cg/memory/memory.max_usage_in_bytes)
  ooms=$(awk '$1=="oom_kill"{print $2}' $cg/memory/memory.oom_control); fi
printf '{"exit": %s, "peak_bytes": %s, "oom_kills": %s, "seconds": %s}\n' "$rc" "${peak:-null}" "${ooms:-null}" \
  "$(( $(date +%s) - started ))" > OUT/container.json
"""


@dataclass(frozen=True)
class ContainerRun:
    exit_code: int
    peak_bytes: int | None
    oom_kills: int | None
    seconds: float
    oom_killed: bool  # docker's own record: the container's first process was killed for memory

    @property
    def failed_for_memory(self) -> bool:
        return self.oom_killed or bool(self.oom_kills)

    def summary(self, memory: str) -> str:
        peak = f"{self.peak_bytes / 2**30:.2f} GiB" if self.peak_bytes else "unknown"
        line = f"container: exit {self.exit_code}, {self.seconds:.0f} s, peak memory {peak} (cgroup) of {memory}"
        if self.failed_for_memory:
            line += (f"; OUT OF MEMORY: the container hit its {memory} cap ({self.oom_kills or 0} process(es) "
                     "killed by the kernel's OOM killer): the run is incomplete")
        return line


def run_container(daemon: Daemon, tag: str, command: list[str], out_dir: Path, cpus: str = GRADER_CPUS,
                  memory: str = GRADER_MEMORY, mounts: dict[Path, str] | None = None,
                  env: dict[str, str] | None = None, shm_size: str | None = None) -> ContainerRun:
    """Runs `command` in `tag` under the grader's limits (`--network none`), `out_dir` mounted at /out.
    `shm_size`: the container's /dev/shm (Docker's default, 64 MiB, when None: what the grader's `docker run` is
    assumed to give)."""
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(out_dir, 0o777)  # the image's user (uid 1001) writes there
    (out_dir / "container.json").unlink(missing_ok=True)
    script = ("started=$(date +%s); \"$@\"; rc=$?\n" + CGROUP_PROBE.replace("OUT", CONTAINER_OUT) + "exit $rc\n")
    volumes = [f"{out_dir}:{CONTAINER_OUT}"] + [f"{Path(host).resolve()}:{inside}:ro"
                                                for host, inside in (mounts or {}).items()]
    name = f"crag-run-{os.getpid()}-{int(time.time())}"
    args = ["run", "--name", name, "--network", "none", "--cpus", cpus, "--memory", memory, "--memory-swap", memory,
            *[a for v in volumes for a in ("-v", v)], *[a for k, v in (env or {}).items() for a in ("-e", f"{k}={v}")],
            *(["--shm-size", shm_size] if shm_size else []), tag, "bash", "-c", script, "run", *command]
    started = time.monotonic()
    try:
        daemon.docker(*args, check=False)
        state = json.loads(daemon.docker("inspect", "--format", "{{json .State}}", name, capture=True).stdout)
    finally:
        daemon.docker("rm", "-f", name, check=False, capture=True)
    seconds = time.monotonic() - started
    probe = out_dir / "container.json"
    measured = json.loads(probe.read_text()) if probe.exists() else {}
    return ContainerRun(exit_code=measured.get("exit", state.get("ExitCode", -1)),
                        peak_bytes=measured.get("peak_bytes"), oom_kills=measured.get("oom_kills"), seconds=seconds,
                        oom_killed=bool(state.get("OOMKilled")))



def run_evaluation(daemon: Daemon, tag: str, out_dir: Path, task: str = "1", data: Path | None = None,
                   extra: list[str] = (), cpus: str = GRADER_CPUS, memory: str = GRADER_MEMORY,
                   env: dict[str, str] | None = None, shm_size: str | None = None) -> int:
    """`local_evaluation.py` in `tag` under the grader's limits, printing the container's line and the run's
    latency; returns 0, or 1 when the run failed or hit the memory cap. `env`: variables set in the container, as
    an `ENV` line of the Dockerfile would set them (LD_PRELOAD, say)."""
    mounts = {data.resolve(): f"/data/{data.name}"} if data else {}
    command = ["python", "local_evaluation.py", "--task", task, *(["--data", f"/data/{data.name}"] if data else []),
               "--output-dir", f"{CONTAINER_OUT}/run", *extra]
    settings = "".join(f" -e {key}={value}" for key, value in (env or {}).items())
    settings += f" --shm-size {shm_size}" if shm_size else ""
    print(f"{tag}: {' '.join(command)} (--cpus {cpus} --memory {memory} --network none{settings})", flush=True)
    result = run_container(daemon, tag, command, out_dir, cpus, memory, mounts, env=env, shm_size=shm_size)
    print(result.summary(memory), flush=True)
    summary = Path(out_dir) / "run" / "summary.json"
    if summary.is_file():  # local_evaluation.py's own per-question latencies (batch time / batch size)
        latency = json.loads(summary.read_text())["latency"]
        print(f"latency: median {latency['median_s']:.1f} s per question, max {latency['max_s']:.1f} s, "
              f"{latency['n_over_budget']} of {latency['n']} over the 30 s budget", flush=True)
    print(f"predictions: {Path(out_dir) / 'run' / 'predictions.jsonl'}", flush=True)
    return 1 if result.exit_code != 0 or result.failed_for_memory else 0
