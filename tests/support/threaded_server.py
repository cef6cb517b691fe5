"""A WSGI app over real HTTP from a thread of the test process (waitress), stopped the way
``wharf serve`` stops: by its own loop (``wharfd.serving.serve_until``), so the sockets
are closed by the thread that polls them. (Closing the server from the test's thread
while its loop thread waited in ``select`` made that thread die of ``OSError: Bad file
descriptor`` now and then: an unhandled thread exception at teardown.)"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from wharfd import serving


@contextmanager
def serving_in_thread(app: Any, *, threads: int = 4) -> Iterator[str]:
    """Serve ``app`` on a free port of 127.0.0.1 until the block ends; its base URL."""
    from waitress import create_server  # type: ignore[import-untyped]
    server = create_server(app, host="127.0.0.1", port=0, threads=threads,
                           ident="wharf-test")
    stop = threading.Event()
    loop = threading.Thread(target=serving.serve_until, args=(server, stop, 5.0),
                            name="wharf-test-server", daemon=True)
    loop.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}"
    finally:
        stop.set()
        try:
            server.trigger.pull_trigger()  # wake the loop now, not at its next 0.2 s poll
        except OSError:
            pass  # the loop saw ``stop`` at its own poll and closed the trigger already
        loop.join(15)
        assert not loop.is_alive(), "the test server did not stop"
