"""The feed served for real: ``api.feed.app.FeedApp`` under uvicorn on a free port, in a
thread of the test process, over the same databases and bus as the test's API app (the
embedded wiring: writes through ``components.db`` publish to ``components.feed_bus``)."""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from api.feed.app import FeedApp
from wharfd.feed_serving import uvicorn_options


class FeedServer:
    def __init__(self, app: FeedApp):
        import uvicorn
        self.app = app
        # wharf feed's own uvicorn options (its shutdown grace included), on a free port
        options = {**uvicorn_options(app.feed.settings), "host": "127.0.0.1", "port": 0,
                   "log_level": "warning", "ws_ping_interval": 5}
        config = uvicorn.Config(app, **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "the feed server did not start"
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]

    def url(self, query: str = "", scheme: str = "ws") -> str:
        return f"{scheme}://127.0.0.1:{self.port}/api/feed" + (f"?{query}" if query else "")

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def make_feed(components, **overrides: Any) -> FeedServer:
    import dataclasses
    settings = dataclasses.replace(components.settings, **overrides)
    return FeedServer(FeedApp(settings, components.db, components.feed_bus))


@pytest.fixture
def feed(components) -> Iterator[FeedServer]:
    server = make_feed(components)
    yield server
    server.stop()


def ticket(client) -> str:
    r = client.post("/api/feed-tickets")
    assert r.status_code == 201, r.text
    return r.json["ticket"]


def recv(ws, timeout: float = 5.0) -> dict:
    return json.loads(ws.recv(timeout=timeout))


def recv_until(ws, kind: str, timeout: float = 5.0) -> list[dict]:
    """Events up to and including the first of ``kind``."""
    out: list[dict] = []
    deadline = time.monotonic() + timeout
    while True:
        out.append(recv(ws, max(0.01, deadline - time.monotonic())))
        if out[-1]["type"] == kind:
            return out


def silent(ws, seconds: float) -> list[dict]:
    """What arrives within ``seconds`` (expected: nothing)."""
    got: list[dict] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            got.append(recv(ws, left))
        except TimeoutError:
            break
    return got
