"""A socket server on 127.0.0.1 run in a daemon thread for the length of a `with` block (the scripted servers of
the fault tests: a trickling KG API, an OpenAI-compatible LLM server)."""
from __future__ import annotations

import threading
from contextlib import contextmanager


@contextmanager
def serving(server_class, handler, on_stop=None):
    """Serves `handler` with `server_class(("127.0.0.1", 0), handler)`; yields the port; `on_stop()` runs first
    when the block ends (to release handlers still running), then the server shuts down."""
    server = server_class(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        if on_stop is not None:
            on_stop()
        server.shutdown()
        server.server_close()
