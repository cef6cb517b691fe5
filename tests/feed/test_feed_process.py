"""``wharf feed`` as its own process: it refuses to start without a Redis to read from,
and serves the events that another process's writes append to the Redis stream (here the
test's own API components, over the same SQLite file), with ``/healthz`` and ``/metrics``;
a real Redis restart (a private ``redis-server`` this test starts, killed and started
again empty on its port) costs clients a ``resync``, never the process or a write."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time

import httpx
import pytest
from websockets.sync.client import connect

from tests.conftest import World, make_settings
from tests.feed.conftest import recv, recv_until, ticket
from tests.support import services
from tests.support.processes import redis_fixture
from tests.support.sentinel import _wait_port
from tests.support.waiting import free_port, stop

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


def _start_feed(tmp_path, settings, url: str, namespace: str,
                **env: str) -> tuple[subprocess.Popen, int]:
    """``wharf feed`` reading the Redis stream at ``url`` (or, with ``url=""`` and
    ``WHARF_BROKER_URL`` in ``env``, the broker's log)."""
    port = free_port()
    log = open(tmp_path / "feed.log", "a+")
    proc = subprocess.Popen(
        [*WHARF, "feed", "--port", str(port)], stdin=subprocess.DEVNULL, stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True,
        env=_env(settings, WHARF_BROKER_NAMESPACE=namespace,
                 **({"WHARF_FEED_REDIS_URL": url} if url else {}), **env))
    log.close()
    http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5, trust_env=False)
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, (tmp_path / "feed.log").read_text()
        try:
            if http.get("/healthz").status_code == 200:
                return proc, port
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "wharf feed did not start"
        time.sleep(0.2)


@contextlib.contextmanager
def _feed_beside_the_api(tmp_path, settings, url: str, namespace: str):
    """``wharf feed`` (:func:`_start_feed`) beside the test's own API components over the
    same databases, and a signed-in ``alice``: (the feed process, its port, alice)."""
    from storage.db import Database
    from wharfd.runtime import Components
    comps = Components(settings, db=Database(settings.database_url))
    proc, port = _start_feed(tmp_path, settings, url, namespace)
    try:
        yield proc, port, World(comps.api_app(), comps).user("alice")
    finally:
        stop(proc)
        comps.close()


def test_wharf_feed_serves_the_stream(tmp_path, database_url, unitstore_url, redis_ns):
    services.need(services.redis_error())
    settings = make_settings(tmp_path, database_url, unitstore_url,
                             feed_redis_url=redis_ns.url, broker_namespace=redis_ns.name)
    with _feed_beside_the_api(tmp_path, settings, redis_ns.url,
                              redis_ns.name) as (_proc, port, alice):
        http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5, trust_env=False)
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


def test_wharf_feed_stops_on_sigterm_with_an_sse_stream_open(tmp_path, database_url,
                                                              unitstore_url, redis_ns):
    """uvicorn waits for every connection's task before it stops, and an SSE stream never
    ends while its client stays: without a grace, ``wharf feed`` waited for SIGKILL. Now it
    ends the stream (the client resumes elsewhere by Last-Event-ID) and exits."""
    services.need(services.redis_error())
    settings = make_settings(tmp_path, database_url, unitstore_url,
                             feed_redis_url=redis_ns.url, broker_namespace=redis_ns.name)
    with _feed_beside_the_api(tmp_path, settings, redis_ns.url,
                              redis_ns.name) as (proc, port, alice):
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30,
                          trust_env=False) as http, http.stream(
                "GET", f"/api/feed?ticket={ticket(alice)}&spaces={alice.personal_space_id}",
                headers={"Accept": "text/event-stream"}) as stream:
            lines = stream.iter_lines()
            data = next(line for line in lines if line.startswith("data:"))
            assert '"ready"' in data
            t0 = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(httpx.RemoteProtocolError):  # cut after the grace
                list(lines)  # the stream ends
            proc.wait(8)
            elapsed = time.monotonic() - t0
        # uvicorn, having stopped, ends by the signal it was sent
        assert proc.returncode in (0, -signal.SIGTERM), (tmp_path / "feed.log").read_text()
        assert elapsed < 8, f"stopped {elapsed:.1f}s after SIGTERM"


@contextlib.contextmanager
def _private_redis(tmp_path):
    """``start()`` a redis-server on one port (no persistence: a restart comes back empty),
    ``kill()`` it; killed at the end."""
    port = free_port()
    services.allow_redis("127.0.0.1", port)
    procs: list[subprocess.Popen] = []

    def start() -> None:
        log = tmp_path / f"redis-{len(procs)}.log"
        procs.append(subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(tmp_path), "--logfile", str(log)],
            start_new_session=True))
        _wait_port(port, procs[-1], log)

    def kill() -> None:
        procs[-1].send_signal(signal.SIGKILL)
        procs[-1].wait(10)

    start()
    try:
        yield f"redis://127.0.0.1:{port}/0", start, kill
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)


def test_wharf_feed_lives_through_a_redis_restart(tmp_path, database_url, unitstore_url):
    """Redis killed and started again (empty): every write in between succeeds, the feed
    process stays up, its clients get ``resync``, then the events of later writes."""
    if shutil.which("redis-server") is None:
        services.need("redis-server is not installed (a private Redis is restarted)")
    namespace = f"feed-restart-{os.getpid()}"
    with _private_redis(tmp_path) as (url, start_redis, kill_redis):
        settings = make_settings(tmp_path, database_url, unitstore_url, feed_redis_url=url,
                                 broker_namespace=namespace)
        with _feed_beside_the_api(tmp_path, settings, url, namespace) as (proc, port, alice):
            space = alice.personal_space_id
            with connect(f"ws://127.0.0.1:{port}/api/feed?ticket={ticket(alice)}"
                         f"&spaces={space}") as ws:
                assert recv(ws)["type"] == "ready"
                assert alice.post("/api/nodes", json={"space_id": space,
                                                      "name": "before"}).status_code == 201
                assert recv(ws, timeout=10)["type"] == "tree.changed"

                kill_redis()
                for i in range(3):  # Redis is down: the writes do not notice
                    assert alice.post("/api/nodes", json={"space_id": space,
                                                          "name": f"down-{i}"}).status_code == 201
                start_redis()  # empty: the stream and its ids start again

                got = recv_until(ws, "resync", timeout=30)
                assert all(e["type"] in ("tree.changed", "resync") for e in got), got
                assert proc.poll() is None, "the feed process died with Redis"
                # the writes' own connection pools reconnect; the feed follows the new log
                deadline = time.monotonic() + 30
                while True:
                    assert alice.post("/api/nodes", json={
                        "space_id": space, "name": f"after-{time.monotonic()}"}
                    ).status_code == 201
                    try:
                        event = recv(ws, timeout=2)
                    except TimeoutError:
                        assert time.monotonic() < deadline, "no events after the restart"
                        continue
                    if event["type"] == "tree.changed":
                        break
                assert event["space_id"] == space


def test_wharf_feed_on_a_rabbitmq_broker_serves_its_stream_and_resumes_after_a_kill(
        tmp_path, database_url, unitstore_url):
    """``wharf feed`` with RabbitMQ as the broker (no Redis anywhere) reads the broker's
    stream queue: writes of another process reach its clients; killed (-9) and started
    again, a client resuming with its last cursor gets what was written meanwhile."""
    services.need(services.rabbitmq_error())
    ns = services.RabbitNamespace("feedproc")
    settings = make_settings(tmp_path, database_url, unitstore_url, broker_url=ns.url,
                             broker_namespace=ns.name)
    from storage.db import Database
    from tasks.feed_rabbit import RabbitStreamBus
    from wharfd.runtime import Components
    comps = Components(settings, db=Database(settings.database_url))
    assert isinstance(comps.feed_bus, RabbitStreamBus)
    proc, port = _start_feed(tmp_path, settings, "", ns.name, WHARF_BROKER_URL=ns.url)
    try:
        world = World(comps.api_app(), comps)
        alice = world.user("alice")
        space = alice.personal_space_id
        base = f"ws://127.0.0.1:{port}/api/feed?spaces={space}&ticket="
        with connect(base + ticket(alice)) as ws:
            assert recv(ws, timeout=10)["type"] == "ready"
            assert alice.post("/api/nodes", json={"space_id": space,
                                                  "name": "A"}).status_code == 201
            event = recv(ws, timeout=10)
            assert (event["type"], event["space_id"]) == ("tree.changed", space)
            cursor = event["cursor"]
            proc.kill()
            proc.wait(10)
        missed = [alice.post("/api/nodes", json={"space_id": space, "name": f"M{i}"})
                  for i in range(3)]
        assert all(r.status_code == 201 for r in missed)
        comps.feed_bus.flush()
        proc, port = _start_feed(tmp_path, settings, "", ns.name, WHARF_BROKER_URL=ns.url)
        base = f"ws://127.0.0.1:{port}/api/feed?spaces={space}&ticket="
        with connect(f"{base}{ticket(alice)}&cursor={cursor}") as ws:
            got = recv_until(ws, "ready", timeout=10)
        assert [e["type"] for e in got] == ["tree.changed"] * 3 + ["ready"]
        assert len({e["cursor"] for e in got[:3]}) == 3
    finally:
        stop(proc)
        comps.close()
        assert ns.close() == []
