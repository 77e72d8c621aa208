"""A local CRAG mock-API server that reads the official `cragkg/` file layout.

    python scripts/serve_mock_api.py --kg-dir DIR --port 8000   # serve a real cragkg/ copy
    python scripts/serve_mock_api.py                             # serve the bundled fixture KG

The same 38 POST routes, bodies and `{"result": ...}` shapes as the AIcrowd/Meta `mock_api/server.py`, with
its lookup rules (BM25 name search, exact case-sensitive lookups, null for unknown keys, a plain-text 500 for
an out-of-range movie year, sports errors as null), so code developed against this server runs unchanged
against the official one. The per-domain modules of `mock_api/` document each rule and the few
deliberate deviations (read-only files, parameterised SQL, deterministic ordering).

Design decisions:
- Everything loads when the app is created, not in a lifespan hook, so a bad KG directory fails in
  `create_app` with a message naming the missing or malformed file instead of inside the server thread.
- No `--kg-dir` (and no $KG_BASE_DIRECTORY) means the fixture KG that `bundled_kg.py` builds from
  `data/kg_fixture/` into `.cache/bundled_kg/`; that is the default for Task 2/3 runs of `local_evaluation.py`,
  which starts the server with `running_server()` when $CRAG_MOCK_API_URL is unset.
- `running_server` binds the socket itself (port 0 = a free port, known before uvicorn starts), runs uvicorn
  in a daemon thread and returns only once `GET /` answers, so callers never race the start-up. `serve` runs it in
  the foreground until interrupted (scripts/serve_mock_api.py).
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Iterator

import requests
import uvicorn
from fastapi import FastAPI

from mock_api import DOMAIN_KGS
from mock_api.bundled_kg import ensure_bundled_kg
from mock_api.routes import add_error_handler, add_routes

log = logging.getLogger(__name__)

ROOT_MESSAGE = {"message": "The CRAG API service is running"}


def create_app(kg_dir: str | os.PathLike | None = None) -> FastAPI:
    """Loads every domain of a KG directory and returns the FastAPI app serving it.

    Args:
        kg_dir: a directory in the official `cragkg/` layout; None = the bundled fixture (built on first use).

    Raises:
        KGDataError: a file is missing or does not have the official shape.
    """
    kg_dir = Path(kg_dir) if kg_dir else ensure_bundled_kg()
    started = time.perf_counter()
    domains = [load(kg_dir) for load in DOMAIN_KGS]
    log.info("mock API: loaded %s in %.2fs", kg_dir, time.perf_counter() - started)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        for domain in domains:  # sqlite handles (finance tables, nba.sqlite) are released on shutdown
            if hasattr(domain, "close"):
                domain.close()

    app = FastAPI(title="CRAG mock API (local)", lifespan=lifespan,
                  description=f"CRAG KDD Cup 2024 mock KG API over {kg_dir}")

    @app.get("/")
    async def root():
        return ROOT_MESSAGE

    add_error_handler(app)
    for domain in domains:
        add_routes(app, domain.routes())
    app.state.kg_dir = kg_dir
    return app


def serve(kg_dir: str | os.PathLike | None = None, host: str = "127.0.0.1", port: int = 8000,
          log_level: str = "info") -> None:
    """Serves a KG (as in `create_app`) with uvicorn in the foreground until interrupted."""
    uvicorn.run(create_app(kg_dir), host=host, port=port, log_level=log_level)


@contextmanager
def running_server(kg_dir: str | os.PathLike | None = None, port: int = 0, host: str = "127.0.0.1",
                   startup_timeout_s: float = 30.0) -> Iterator[str]:
    """Serves a KG in a background thread for the duration of a `with` block.

    Args:
        kg_dir: as in `create_app`.
        port: 0 picks a free port.
        host: the interface to bind.
        startup_timeout_s: how long to wait for `GET /` to answer.

    Returns:
        (yields) the base URL, e.g. "http://127.0.0.1:41234".

    Raises:
        KGDataError: the KG directory cannot be served.
        RuntimeError: the server did not come up in time.
    """
    app = create_app(kg_dir)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="crag-mock-api", daemon=True)
    thread.start()
    base_url = f"http://{host}:{sock.getsockname()[1]}"
    try:
        _wait_until_up(base_url, thread, startup_timeout_s)
        yield base_url
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def _wait_until_up(base_url: str, thread: threading.Thread, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not thread.is_alive():
            raise RuntimeError(f"the mock API server at {base_url} stopped during start-up (see the log above)")
        try:
            if requests.get(base_url + "/", timeout=1.0).status_code == 200:
                return
        except requests.RequestException:
            pass  # not listening yet
        time.sleep(0.05)
    raise RuntimeError(f"the mock API server at {base_url} did not answer within {timeout_s:.0f}s")

