"""``wharf feed`` as its own process: it refuses to start without a Redis to read from,
and serves the events that another process's writes append to the Redis stream (here the
test's own API components, over the same SQLite file), with ``/healthz`` and ``/metrics``."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest
from websockets.sync.client import connect

from tests.conftest import World, make_settings
from tests.feed.conftest import recv, ticket
from tests.support import services
from tests.support.processes import redis_fixture
from tests.support.waiting import free_port

pytestmark = pytest.mark.slow
WHARF = [sys.executable, "-m", "wharfd.cli"]
redis_ns = redis_fixture("feed")


def _env(settings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
    env.update(WHARF_DATABASE_URL=settings.database_url,
               WHARF_UNITSTORE_URL=settings.unitstore_url,
               WHARF_DATA_DIR=str(settings.data_dir), PYTHONUNBUFFERED="1", **extra)
    return env


def test_wharf_feed_without_redis_is_a_configuration_error(settings):
    done = subprocess.run([*WHARF, "feed"], env=_env(settings), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert "WHARF_FEED_REDIS_URL" in done.stderr


def test_wharf_feed_serves_the_stream(tmp_path, database_url, unitstore_url, redis_ns):
    services.need(services.redis_error())
    settings = make_settings(tmp_path, database_url, unitstore_url,
                             feed_redis_url=redis_ns.url, broker_namespace=redis_ns.name)
    from storage.db import Database
    from wharfd.runtime import Components
    comps = Components(settings, db=Database(settings.database_url))
    port = free_port()
    log = open(tmp_path / "feed.log", "w+")
    proc = subprocess.Popen(
        [*WHARF, "feed", "--port", str(port)], stdin=subprocess.DEVNULL, stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True,
        env=_env(settings, WHARF_FEED_REDIS_URL=redis_ns.url,
                 WHARF_BROKER_NAMESPACE=redis_ns.name))
    try:
        http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5, trust_env=False)
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "feed.log").read_text()
            try:
                if http.get("/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "wharf feed did not start"
            time.sleep(0.2)
        world = World(comps.api_app(), comps)
        alice = world.user("alice")
        space = alice.personal_space_id
        with connect(f"ws://127.0.0.1:{port}/api/feed?ticket={ticket(alice)}"
                     f"&spaces={space}") as ws:
            assert recv(ws)["type"] == "ready"
            assert alice.post("/api/nodes", json={"space_id": space,
                                                  "name": "A"}).status_code == 201
            event = recv(ws, timeout=10)
            assert (event["type"], event["space_id"]) == ("tree.changed", space)
            metrics = http.get("/metrics").text
            assert 'wharf_feed_connections{transport="ws"} 1.0' in metrics
            assert 'wharf_feed_events_delivered_total{type="tree.changed"} 1.0' in metrics
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        comps.close()
