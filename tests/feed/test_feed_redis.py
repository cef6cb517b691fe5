"""The feed over the Redis stream (``tasks.feed_bus.RedisStreamBus``): writes of the API's
components reach a feed reading the stream, a cursor resumes from it, and a Redis outage
degrades to ``resync`` once it answers again, never to a failed write."""
from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest
from websockets.sync.client import connect

from tests.conftest import World, make_settings
from tests.feed.conftest import FeedServer, recv, recv_until, ticket
from tests.support import services
from tests.support.faultproxy import FaultProxy
from tests.support.processes import redis_fixture

redis_ns = redis_fixture("feed")


def _redis_at(ns: services.RedisNamespace, port: int) -> str:
    parts = urlsplit(ns.url)
    return parts._replace(netloc=f"127.0.0.1:{port}").geturl()


@pytest.fixture
def redis_components(tmp_path, database_url, unitstore_url, redis_ns):
    services.need(services.redis_error())
    proxy = FaultProxy("127.0.0.1", urlsplit(services.REDIS_URL).port or 6379).start()
    services.allow_redis("127.0.0.1", proxy.port, services.redis_db())
    settings = make_settings(tmp_path, database_url, unitstore_url,
                             feed_redis_url=_redis_at(redis_ns, proxy.port),
                             broker_namespace=redis_ns.name)
    from storage.db import Database
    from tasks.feed_bus import RedisStreamBus
    from wharfd.runtime import Components
    db = Database(settings.database_url, settings.sqlite_busy_timeout_ms)
    comps = Components(settings, db=db)
    assert isinstance(comps.feed_bus, RedisStreamBus)
    comps.proxy = proxy
    yield comps
    comps.close()
    proxy.close()


def test_events_through_the_stream_resume_and_an_outage(redis_components, redis_ns):
    from api.feed.app import FeedApp
    comps = redis_components
    world = World(comps.api_app(), comps)
    feed = FeedServer(FeedApp(comps.settings, comps.db, comps.feed_bus))
    try:
        alice = world.user("alice")
        space = alice.personal_space_id
        # (a cursor of the empty stream, "0-0", is older than any window: it would resync)
        assert alice.post("/api/nodes", json={"space_id": space, "name": "0"}).status_code \
            == 201
        comps.feed_bus.flush()
        with connect(feed.url(f"ticket={ticket(alice)}&spaces={space}")) as ws:
            cursor = recv(ws)["cursor"]
            assert alice.post("/api/nodes", json={"space_id": space,
                                                  "name": "A"}).status_code == 201
            event = recv(ws)
            assert event["type"] == "tree.changed" and event["cursor"] > cursor
        assert redis_ns.client.xlen(f"{redis_ns.name}:feed") >= 1
        assert alice.post("/api/nodes", json={"space_id": space, "name": "B"}).status_code \
            == 201
        with connect(feed.url(f"ticket={ticket(alice)}&spaces={space}&cursor={cursor}")) \
                as ws:
            assert [e["type"] for e in recv_until(ws, "ready")] == \
                ["tree.changed", "tree.changed", "ready"]

            comps.proxy.refuse()  # Redis unreachable: writes go on, the feed retries
            started = time.monotonic()
            assert alice.post("/api/nodes", json={"space_id": space,
                                                  "name": "C"}).status_code == 201
            assert time.monotonic() - started < 2
            time.sleep(1.5)
            comps.proxy.allow()
            assert recv(ws, timeout=15)["type"] == "resync"
            # and events flow again
            assert alice.post("/api/nodes", json={"space_id": space,
                                                  "name": "D"}).status_code == 201
            assert recv_until(ws, "tree.changed", timeout=10)[-1]["space_id"] == space
    finally:
        feed.stop()
