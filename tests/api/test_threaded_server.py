"""The tests' threaded HTTP server (``tests.support.threaded_server``), which the browser
and generated-client tests serve the app with."""
from __future__ import annotations

import http.client
import threading
import time

from tests.support.threaded_server import serving_in_thread


def _app(environ, start_response):
    start_response("204 No Content", [])
    return [b""]


def test_a_server_in_a_test_thread_stops_without_a_thread_exception():
    """The tests' threaded server (``tests.support.threaded_server``) stops through its
    own loop: with keep-alive connections open, 60 stops leave no unhandled thread
    exception (closing it from the test's thread made its loop die of EBADF now and
    then: the warning ``test_dashboard_browser.py`` ended with)."""
    died: list[BaseException | None] = []
    previous = threading.excepthook
    threading.excepthook = lambda args: died.append(args.exc_value)
    try:
        for i in range(60):
            with serving_in_thread(_app) as base:
                port = int(base.rsplit(":", 1)[1])
                conns = []
                for _ in range(6):
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    conn.request("GET", "/")
                    conn.getresponse().read()
                    conns.append(conn)
                time.sleep(0.002 * (i % 10))
            for conn in conns:
                conn.close()
    finally:
        threading.excepthook = previous
    assert died == []
