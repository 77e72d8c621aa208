"""Builds the submission's Docker images and runs them as the grader would, on a machine without an image registry.

Standard library only, so that a fresh clone can build before any virtualenv exists (`make image`). The steps:
- `ensure_tools`: the docker CLI, `dockerd` and `debootstrap`; installed from Debian's archive (`docker.io`,
  `debootstrap`) when missing and we are root, else an error that says how to get them.
- `Daemon`: uses a Docker daemon that answers on its socket; otherwise starts `dockerd` as root on its own socket
  and data folder (`state_dir`), and stops it by its process id afterwards (the last of the calls sharing it does).
  `--bridge=none`: builds use the host's network (`--network host`) and containers run with `--network none`, so
  no bridge is needed.
- `ensure_base`: the base image (`debian:bookworm`) is pulled if a registry answers, else made from Debian's archive
  with `debootstrap --variant=minbase` (the official `debian` images are built from the same archive) and imported
  under the base's name.
- `PipSources`: where pip inside the build finds packages. By default what the host's pip is configured with
  (`pip config list`: index, extra indexes, wheel folders, CA bundle), the recipe for corporate proxies and mirrors.
  Local folders are served read-only on the host's loopback for the length of the build (`LoopbackFiles`), reached
  by the build's `--network host`; the CA bundle is served the same way, so nothing is copied into the repository.
- `run_container` (submission/image_run.py): `docker run --cpus 2 --memory 8g --memory-swap 8g --network none`, the repository where the grader
  puts it (/home/aicrowd), the run's output in a mounted folder; the container's peak memory and OOM kills read from
  its own cgroup before it exits (`CgroupMemory`), so a run that hits the cap fails loudly.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import http.server
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
STATE_DIR = Path(os.environ.get("CRAG_IMAGE_STATE", Path.home() / ".cache" / "crag-image"))
BASE_IMAGE = "debian:bookworm"  # submission/Dockerfile.cpu's ARG BASE
DEBIAN_MIRROR = "http://deb.debian.org/debian"
CPU_TAG = "crag-submission-cpu"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"  # submission/Dockerfile.cpu's ARG TORCH_INDEX
# The grader's CPU mode (the starter kit's hardware-and-system-config page): 4 vCPUs = 2 physical cores, 8 GB.
GRADER_CPUS = "2"
GRADER_MEMORY = "8g"
IN_IMAGE_REPO = "/home/aicrowd"  # where the grader's image holds the repository (the Dockerfiles' WORKDIR)
CONTAINER_OUT = "/out"  # the mounted folder a run writes to


class ImageError(Exception):
    """Something to fix before an image can be built or run; the message says what and how."""


# ------------------------------------------------------------------------------------------ tools
APT_PACKAGES = {"dockerd": "docker.io", "docker": "docker.io", "containerd": "containerd", "debootstrap": "debootstrap"}


def missing_tools(needed: tuple[str, ...] = ("docker", "dockerd", "debootstrap")) -> list[str]:
    """The commands of `needed` that are not on PATH (nor in /usr/sbin, where Debian puts dockerd)."""
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin"
    return [tool for tool in needed if shutil.which(tool, path=path) is None]


def ensure_tools(needed: tuple[str, ...] = ("docker", "dockerd", "debootstrap"), install: bool = True) -> None:
    """Installs Debian's packages for the missing commands when we are root; otherwise says how to get them."""
    missing = missing_tools(needed)
    if not missing:
        return
    packages = sorted({APT_PACKAGES[tool] for tool in missing})
    how = f"apt-get install {' '.join(packages)} (as root; Debian/Ubuntu package names)"
    if not install or os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise ImageError(f"{', '.join(missing)} not found: install {how}")
    print(f"installing {' '.join(packages)} from the system's package archive", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *packages]):
        if subprocess.run(command, env=env).returncode != 0:
            raise ImageError(f"`{' '.join(command)}` failed: install {how} by hand")
    still = missing_tools(needed)
    if still:
        raise ImageError(f"{', '.join(still)} still not found after installing {' '.join(packages)}")


# ------------------------------------------------------------------------------------------ daemon
@dataclass
class Daemon:
    """A Docker daemon to talk to: the one answering on `host`, or one started here.

    `host` None: $DOCKER_HOST if set, else our own socket under `state_dir`. The data folder is `state_dir/data`, so
    images survive between calls. Several calls may share our daemon (a build beside a run): each holds a shared
    lock on `state_dir/users.lock` while it works, and whichever leaves last stops the daemon by the process id in
    its pidfile. A daemon we did not start is never stopped.
    """
    state_dir: Path = STATE_DIR
    host: str | None = None
    started_pid: int | None = field(default=None, init=False)
    _users: object = field(default=None, init=False, repr=False)

    def __post_init__(self):
        self.host = self.host or os.environ.get("DOCKER_HOST") or f"unix://{self.state_dir / 'docker.sock'}"

    @property
    def ours(self) -> bool:
        return self.host == f"unix://{self.state_dir / 'docker.sock'}"

    def env(self) -> dict[str, str]:
        return dict(os.environ, DOCKER_HOST=self.host, DOCKER_BUILDKIT="0")

    def answers(self) -> bool:
        run = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], env=self.env(),
                             capture_output=True, text=True, timeout=30)
        return run.returncode == 0

    def __enter__(self) -> Daemon:
        if self.ours:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            self._users = open(self.state_dir / "users.lock", "w")
            fcntl.flock(self._users, fcntl.LOCK_SH)
        if self.answers():
            return self
        if not self.ours:
            raise ImageError(f"no Docker daemon answers at {self.host}: start it, or unset DOCKER_HOST to let "
                             "this start one of its own")
        if os.geteuid() != 0:
            raise ImageError("no Docker daemon answers and only root can start one: run as root, or start dockerd "
                             "(apt-get install docker.io) and set DOCKER_HOST to its socket")
        ensure_tools(("docker", "dockerd"))
        self.state_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.state_dir / "dockerd.log", "ab")
        # exec-root holds unix sockets (path length limit 108): a short folder under /run.
        exec_root = Path("/run") / f"crag-docker-{abs(hash(str(self.state_dir))) % 10**8}"
        containerd_socket = self._start_containerd(exec_root, log)
        command = ["dockerd", "--bridge=none", "--host", self.host, "--data-root", str(self.state_dir / "data"),
                   "--exec-root", str(exec_root), "--pidfile", str(self.state_dir / "dockerd.pid"),
                   "--containerd", containerd_socket]
        process = subprocess.Popen(command, stdout=log, stderr=log, start_new_session=True)
        self.started_pid = process.pid
        deadline = time.monotonic() + 60
        while not self.answers():
            if process.poll() is not None or time.monotonic() > deadline:
                self._stop()
                tail = (self.state_dir / "dockerd.log").read_text(errors="replace").splitlines()[-5:]
                raise ImageError("dockerd did not start: " + " | ".join(tail))
            time.sleep(0.5)
        print(f"started dockerd (pid {self.started_pid}) on {self.host}", flush=True)
        return self

    def _start_containerd(self, exec_root: Path, log) -> str:
        """Starts containerd for our dockerd (dockerd would start its own) with its GC scheduler's pause threshold
        at 0, which keeps a fixed 1 s interval. containerd 1.6.20 (Debian 12's) divides by the average GC time
        to schedule the next one; where the clock reads a collection as 0 s, that interval is 0 and the scheduler
        spins a whole core (containerd/containerd#5089, fixed in 1.6.31 by #10103), a core the container under
        test would lose."""
        ensure_tools(("containerd",))
        socket_path = exec_root / "containerd.sock"
        config = self.state_dir / "containerd.toml"
        config.write_text("version = 2\n"
                          f'root = "{self.state_dir / "data" / "containerd" / "daemon"}"\n'
                          f'state = "{exec_root / "containerd" / "daemon"}"\n'
                          'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
                          f'[grpc]\n  address = "{socket_path}"\n'
                          '[plugins."io.containerd.gc.v1.scheduler"]\n  pause_threshold = 0.0\n')
        process = subprocess.Popen(["containerd", "--config", str(config)], stdout=log, stderr=log,
                                   start_new_session=True)
        (self.state_dir / "containerd.pid").write_text(str(process.pid))
        deadline = time.monotonic() + 30
        while not socket_path.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                _stop_pid(process.pid, "containerd", str(config))
                tail = (self.state_dir / "dockerd.log").read_text(errors="replace").splitlines()[-5:]
                raise ImageError("containerd did not start: " + " | ".join(tail))
            time.sleep(0.2)
        return str(socket_path)

    def __exit__(self, *exc) -> None:
        if self._users is None:
            return
        fcntl.flock(self._users, fcntl.LOCK_UN)
        try:
            fcntl.flock(self._users, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while another call still uses it
        except BlockingIOError:
            return
        finally:
            self._users.close()
        pidfile = self.state_dir / "dockerd.pid"
        if self.started_pid is None and pidfile.is_file():
            self.started_pid = int(pidfile.read_text().strip() or 0) or None
        self._stop()

    def _stop(self) -> None:
        """Stops our dockerd, then our containerd, each by its process id."""
        if self.started_pid is not None and _stop_pid(self.started_pid, "dockerd", self.host):
            print(f"stopped dockerd (pid {self.started_pid})", flush=True)
        self.started_pid = None
        pidfile = self.state_dir / "containerd.pid"
        if pidfile.is_file():
            pid = int(pidfile.read_text().strip() or 0)
            if pid and _stop_pid(pid, "containerd", str(self.state_dir / "containerd.toml")):
                print(f"stopped containerd (pid {pid})", flush=True)
            pidfile.unlink(missing_ok=True)

    def docker(self, *args: str, check: bool = True, capture: bool = False, **kwargs) -> subprocess.CompletedProcess:
        run = subprocess.run(["docker", *args], env=self.env(), text=True, capture_output=capture, **kwargs)
        if check and run.returncode != 0:
            raise ImageError(f"docker {args[0]} failed (exit {run.returncode})"
                             + (f": {run.stderr.strip()[-800:]}" if capture else ""))
        return run

    def has_image(self, tag: str) -> bool:
        return self.docker("image", "inspect", tag, check=False, capture=True).returncode == 0


def _stop_pid(pid: int, program: str, marker: str) -> bool:
    """Stops process `pid` if it is `program` started with `marker` among its arguments (a stale pidfile's number
    may now be another process); True when it was ours."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if not cmdline or Path(cmdline[0].decode()).name != program or marker.encode() not in cmdline:
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 15)
        for _ in range(120):
            if subprocess.run(["kill", "-0", str(pid)], capture_output=True).returncode != 0:
                break
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            time.sleep(0.25)
    return True


# ------------------------------------------------------------------------------------------ base image
def ensure_base(daemon: Daemon, tag: str = BASE_IMAGE, mirror: str = DEBIAN_MIRROR, suite: str = "bookworm",
                pull: bool = True) -> str:
    """`tag` present in the daemon: already there, pulled, or debootstrapped from `mirror` and imported."""
    if daemon.has_image(tag):
        return "present"
    if pull and daemon.docker("pull", "-q", tag, check=False, capture=True, timeout=120).returncode == 0:
        return "pulled"
    ensure_tools(("debootstrap",))
    if os.geteuid() != 0:
        raise ImageError(f"{tag} cannot be pulled and debootstrap needs root: run as root, or load the image "
                         f"yourself (docker load / docker import) under the name {tag}")
    host = urllib.parse.urlsplit(mirror).hostname or mirror
    with tempfile.TemporaryDirectory(prefix="crag-rootfs-") as root:
        started = time.monotonic()
        run = subprocess.run(["debootstrap", "--variant=minbase", suite, root, mirror], capture_output=True, text=True)
        if run.returncode != 0:
            tail = (run.stdout + run.stderr).strip().splitlines()[-3:]
            raise ImageError(f"debootstrap of {suite} from {mirror} failed ({' | '.join(tail)}): check that {host} "
                             "is reachable, or name a reachable Debian mirror with --debian-mirror URL")
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        daemon.docker("import", "-", tag, stdin=tar.stdout, capture=True)
        tar.wait()
    print(f"{tag}: made from {mirror} by debootstrap --variant=minbase {suite} in "
          f"{time.monotonic() - started:.0f} s", flush=True)
    return "debootstrapped"


# ------------------------------------------------------------------------------------------ pip sources
@dataclass(frozen=True)
class PipSources:
    """Where pip finds packages: an index, extra indexes and wheel folders (URLs or local folders), a CA bundle."""
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    ca_bundle: str | None = None

    @classmethod
    def from_pip_config(cls, python: str = sys.executable) -> PipSources:
        """What the host's pip is configured with (`pip config list`, its files and PIP_* variables)."""
        run = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True)
        values: dict[str, str] = {}
        for line in run.stdout.splitlines():
            key, _, value = line.partition("=")
            values[key.split(".")[-1]] = value.strip().strip("'\"")  # env overrides files: they come last
        split = lambda key: tuple(values.get(key, "").split())  # noqa: E731
        return cls(values.get("index-url"), split("extra-index-url"), split("find-links"), values.get("cert"))

    def merged(self, other: PipSources) -> PipSources:
        """`other`'s values where it has them, else ours (command-line options over pip's configuration)."""
        return PipSources(other.index_url or self.index_url, other.extra_index_urls or self.extra_index_urls,
                          other.find_links or self.find_links, other.ca_bundle or self.ca_bundle)


def _local_path(location: str) -> Path | None:
    """The folder a pip location names on this machine (a path or file:// URL), else None (a remote URL)."""
    if location.startswith("file://"):
        return Path(urllib.parse.unquote(urllib.parse.urlsplit(location).path))
    if "://" in location:
        return None
    return Path(location)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # pip's requests would flood the build log
        pass


class LoopbackFiles:
    """Serves chosen local folders and files read-only over HTTP on 127.0.0.1 while open (port PORT when free).

    Each served thing is a symlink in a temporary folder; `url(path)` is its address, the same for the same calls.
    A local index's pages link to their files by relative URLs that may leave the index folder
    (`../../files/x.whl`), so an index is served with its parent folder (`index_url`).
    """

    # The addresses become build arguments, and Docker's layer cache keys on them: the same port every time (when
    # free) lets a rebuild reuse its pip layers.
    PORT = 8731

    def __init__(self):
        self._root = Path(tempfile.mkdtemp(prefix="crag-loopback-"))
        self._count = 0
        handler = functools.partial(_QuietHandler, directory=str(self._root))
        try:
            self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.PORT), handler)
        except OSError:  # taken (another build): any free port, at the cost of the cache
            self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def url(self, path: Path) -> str:
        if not path.exists():
            raise ImageError(f"{path} does not exist (a pip source or CA bundle named for the build)")
        name = f"s{self._count}{'' if path.is_dir() else '-' + path.name}"
        self._count += 1
        (self._root / name).symlink_to(path.resolve())
        return f"http://127.0.0.1:{self.port}/{name}" + ("/" if path.is_dir() else "")

    def index_url(self, index: Path) -> str:
        return self.url(index.parent) + index.name + "/"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self) -> LoopbackFiles:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def pip_build_args(sources: PipSources, files: LoopbackFiles) -> dict[str, str]:
    """The Dockerfiles' PIP_* build arguments for `sources`, local folders and the CA bundle served by `files`."""
    def index(location: str) -> str:
        local = _local_path(location)
        return files.index_url(local) if local else location

    def links(location: str) -> str:
        local = _local_path(location)
        return files.url(local) if local else location

    args = {"PIP_EXTRA_INDEX_URL": " ".join(index(u) for u in sources.extra_index_urls),
            "PIP_FIND_LINKS": " ".join(links(u) for u in sources.find_links),
            "PIP_TRUSTED_HOST": "127.0.0.1"}
    if sources.index_url:
        args["PIP_INDEX_URL"] = index(sources.index_url)
    if sources.ca_bundle:
        args["PIP_CA_URL"] = files.url(Path(sources.ca_bundle))
    return args


def unreachable_hosts(sources: PipSources, timeout: float = 10.0) -> list[str]:
    """The remote hosts of `sources` (and PyPI when no index is named) that do not accept a TCP connection."""
    urls = [sources.index_url or "https://pypi.org/simple", *sources.extra_index_urls, *sources.find_links]
    hosts = {}
    for url in urls:
        if _local_path(url) is None:
            parts = urllib.parse.urlsplit(url)
            hosts[parts.hostname] = parts.port or (443 if parts.scheme == "https" else 80)
    bad = []
    for host, port in hosts.items():
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except OSError as exc:
            bad.append(f"{host}:{port} ({exc})")
    return bad


# ------------------------------------------------------------------------------------------ build
def build_image(daemon: Daemon, dockerfile: Path, tag: str, sources: PipSources, build_args: dict[str, str],
                context: Path = REPO_ROOT) -> float:
    """`docker build --network host` of `dockerfile` with pip pointed at `sources`; returns the seconds it took.

    Raises:
        ImageError: a package host is unreachable (named, with the fix), or the build failed.
    """
    bad = unreachable_hosts(sources)
    if bad:
        raise ImageError(f"the build cannot reach {', '.join(bad)}: check the network or proxy, or name a "
                         "reachable mirror (--index-url URL, --find-links DIR, --extra-index-url URL, --ca-bundle "
                         "FILE; by default pip's own configuration, `pip config list`)")
    started = time.monotonic()
    with LoopbackFiles() as files:
        args = {**pip_build_args(sources, files), **build_args}
        command = ["build", "--network", "host", "-f", str(dockerfile), "-t", tag,
                   *[a for key, value in args.items() for a in ("--build-arg", f"{key}={value}")], str(context)]
        run = daemon.docker(*command, check=False)
    if run.returncode != 0:
        raise ImageError(f"docker build of {tag} failed (exit {run.returncode}); the step that failed is printed "
                         "above. A pip 'Could not find a version' or a TLS error there means the index or CA "
                         "bundle: see --index-url, --find-links, --ca-bundle")
    seconds = time.monotonic() - started
    print(f"{tag}: built in {seconds:.0f} s", flush=True)
    return seconds


# ------------------------------------------------------------------------------------------ the two images
GPU_TAG = "crag-submission-gpu-stand-in"


def build_variant(daemon: Daemon, variant: str, sources: PipSources, tag: str | None = None, vllm: bool = False,
                  base: str | None = None, mirror: str = DEBIAN_MIRROR) -> str:
    """Builds the CPU image (submission/Dockerfile.cpu) or the GPU one (the root Dockerfile) on a stand-in base;
    returns its tag."""
    base = base or BASE_IMAGE
    ensure_base(daemon, base, mirror)
    if variant == "cpu":
        dockerfile, tag = REPO_ROOT / "submission" / "Dockerfile.cpu", tag or CPU_TAG
        build_args = {"BASE": base, **({"VLLM": "1"} if vllm else {})}
        if unreachable_hosts(PipSources(index_url=TORCH_INDEX), timeout=5) and (
                sources.find_links or sources.extra_index_urls):
            # pip would retry the unreachable index for minutes before looking further.
            print(f"{TORCH_INDEX} is unreachable: torch comes from the other pip sources", flush=True)
            build_args["TORCH_INDEX"] = ""
    else:
        # The CUDA base cannot be pulled here: Debian bookworm stands in (glibc 2.36 >= the CUDA base's 2.35; its
        # python3 is 3.11, which the CUDA base's Ubuntu 22.04 lacks), with the base's Python in place of Miniconda
        # (the Dockerfile's PYTHON_FROM). Everything after the base runs as the grader's build would.
        dockerfile, tag = REPO_ROOT / "Dockerfile", tag or GPU_TAG
        build_args = {"CUDA_BASE": base, "PYTHON_FROM": "system",
                      "PYTHON_PACKAGES": "python3 python3-venv python3-dev"}
    build_image(daemon, dockerfile, tag, sources, build_args)
    return tag
