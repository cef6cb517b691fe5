"""The embedded ``wharf serve`` answers the feed on its own port (the API's): a WebSocket
and an SSE stream to ``/api/feed`` on ``WHARF_PORT``, while the API answers as before,
also on a connection that asked the API first."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.support.processes import ProcessApi
from tests.support.waiting import free_port, stop

pytestmark = pytest.mark.slow

WHARF = [sys.executable, "-m", "wharfd.cli"]


@pytest.fixture
def serve(tmp_path: Path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
    env.update(WHARF_DATA_DIR=str(tmp_path / "data"), WHARF_PORT=str(port),
               WHARF_ARGON2_TIME_COST="1", WHARF_ARGON2_MEMORY_COST="8",
               WHARF_ARGON2_PARALLELISM="1", PYTHONUNBUFFERED="1")
    log = open(tmp_path / "serve.log", "w+")
    proc = subprocess.Popen([*WHARF, "serve"], env=env, cwd=tmp_path,
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    api = ProcessApi(port)
    api.proc = proc  # type: ignore[attr-defined]
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, (tmp_path / "serve.log").read_text()
        try:
            if api.get("/healthz", timeout=1).status_code == 200:
                break
        except OSError:
            pass
        assert time.monotonic() < deadline, "wharf serve did not start"
        time.sleep(0.2)
    yield api
    stop(proc)
    log.close()


def _ticket(api: ProcessApi) -> str:
    r = api.post("/api/feed-tickets")
    assert r.status_code == 201, r.text
    return str(r.json()["ticket"])


def test_websocket_and_sse_on_the_api_port(serve: ProcessApi):
    personal = serve.login("alice")
    url = f"ws://127.0.0.1:{serve.port}/api/feed?ticket={_ticket(serve)}&spaces={personal}"
    with connect(url) as ws:
        assert json.loads(ws.recv(timeout=5))["type"] == "ready"
        r = serve.post("/api/nodes", json={"space_id": personal, "name": "Projects"})
        assert r.status_code == 201, r.text
        event = json.loads(ws.recv(timeout=5))
        assert (event["type"], event["space_id"]) == ("tree.changed", personal)
        # the API still answers on the same port meanwhile
        assert serve.get("/api/me").status_code == 200

    # SSE over a connection that first asked the API (keep-alive): handed over too
    with httpx.Client(base_url=f"http://127.0.0.1:{serve.port}", timeout=10,
                      trust_env=False, cookies=dict(serve.http.cookies)) as client:
        r = client.post("/api/feed-tickets")
        assert r.status_code == 201
        with client.stream("GET", f"/api/feed?ticket={r.json()['ticket']}&spaces={personal}",
                           headers={"Accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.iter_lines()
            data = next(line for line in lines if line.startswith("data:"))
            assert json.loads(data[5:])["type"] == "ready"
            assert serve.post("/api/nodes", json={"space_id": personal,
                                                  "name": "More"}).status_code == 201
            data = next(line for line in lines if line.startswith("data:"))
            assert json.loads(data[5:])["type"] == "tree.changed"
    r = serve.get("/api/feed", headers={"Accept": "text/event-stream"})
    assert r.status_code == 401 and r.json()["code"] == "invalid_ticket"


#: How long ``wharf serve`` may take to stop on SIGTERM with feed clients connected: the
#: feed's grace for its connections (``wharfd.feed_serving.SHUTDOWN_GRACE``) plus the
#: API's and the in-process worker's own shutdown (about 2.5 s on this machine).
STOP_BOUND = 8.0


def test_sigterm_ends_open_feed_connections_and_the_server_stops_promptly(serve: ProcessApi):
    """A feed connection never ends by itself, so on SIGTERM the server ends them after a
    short grace (a WebSocket closed, an SSE stream ended: the clients resume by cursor
    elsewhere) instead of waiting on them. Before, ``wharf serve`` waited 10 s for an
    open SSE stream's next ping, then exited with the feed's thread still running."""
    personal = serve.login("alice")
    proc: subprocess.Popen = serve.proc  # type: ignore[attr-defined]
    url = f"ws://127.0.0.1:{serve.port}/api/feed?ticket={_ticket(serve)}&spaces={personal}"
    with connect(url) as ws, httpx.Client(
            base_url=f"http://127.0.0.1:{serve.port}", timeout=30, trust_env=False,
            cookies=dict(serve.http.cookies)) as client:
        assert json.loads(ws.recv(timeout=5))["type"] == "ready"
        r = client.post("/api/feed-tickets")
        assert r.status_code == 201
        with client.stream("GET", f"/api/feed?ticket={r.json()['ticket']}&spaces={personal}",
                           headers={"Accept": "text/event-stream"}) as stream:
            lines = stream.iter_lines()
            data = next(line for line in lines if line.startswith("data:"))
            assert json.loads(data[5:])["type"] == "ready"
            t0 = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(httpx.RemoteProtocolError):  # cut after the grace
                rest = list(lines)  # the stream ends instead of waiting for a ping
                assert not [line for line in rest if line.startswith("data:")], rest
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=STOP_BOUND)
        proc.wait(STOP_BOUND)
        elapsed = time.monotonic() - t0
    assert proc.returncode == 0
    assert elapsed < STOP_BOUND, f"stopped {elapsed:.1f}s after SIGTERM"
