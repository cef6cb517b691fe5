"""The feed over the RabbitMQ stream queue (``tasks.feed_rabbit.RabbitStreamBus``), the bus
the composition root picks when RabbitMQ is the broker: writes of the API's components
reach a feed reading the stream, a cursor resumes from it, and the stream deleted under
the feed (a broker that lost it) degrades to ``resync``, never to a failed write; the
broker closing the bus's connections loses nothing."""
from __future__ import annotations

import pytest
from websockets.sync.client import connect

from tests.conftest import World, make_settings
from tests.feed.conftest import FeedServer, recv, recv_until, ticket
from tests.support import services


@pytest.fixture
def rabbit_components(tmp_path, database_url, unitstore_url):
    services.need(services.rabbitmq_error())
    ns = services.RabbitNamespace("feed")
    settings = make_settings(tmp_path, database_url, unitstore_url,
                             broker_url=ns.url, broker_namespace=ns.name)
    from storage.db import Database
    from tasks.feed_rabbit import RabbitStreamBus
    from wharfd.runtime import Components
    db = Database(settings.database_url, settings.sqlite_busy_timeout_ms)
    comps = Components(settings, db=db)
    assert isinstance(comps.feed_bus, RabbitStreamBus)
    comps.ns = ns
    yield comps
    comps.close()
    assert ns.close() == []


def test_events_through_the_rabbitmq_stream_resume_and_a_lost_stream(rabbit_components):
    import pika

    from api.feed.app import FeedApp
    comps = rabbit_components
    world = World(comps.api_app(), comps)
    feed = FeedServer(FeedApp(comps.settings, comps.db, comps.feed_bus))
    try:
        alice = world.user("alice")
        space = alice.personal_space_id
        with connect(feed.url(f"ticket={ticket(alice)}&spaces={space}")) as ws:
            cursor = recv(ws)["cursor"]
            assert alice.post("/api/nodes", json={"space_id": space,
                                                  "name": "A"}).status_code == 201
            event = recv(ws)
            assert event["type"] == "tree.changed" and event["cursor"] > cursor
        assert f"{comps.ns.name}.feed" in comps.ns.queues()
        assert alice.post("/api/nodes", json={"space_id": space, "name": "B"}).status_code \
            == 201
        with connect(feed.url(f"ticket={ticket(alice)}&spaces={space}&cursor={cursor}")) \
                as ws:
            assert [e["type"] for e in recv_until(ws, "ready")] == \
                ["tree.changed", "tree.changed", "ready"]
            # RabbitMQ closes every connection (a restart, or idle ones it gave up on): the
            # bus reconnects, the event is neither dropped nor missed
            assert comps.ns.close_connections() >= 2  # the publisher's, the follower's
            assert alice.post("/api/nodes", json={"space_id": space,
                                                  "name": "B2"}).status_code == 201
            assert recv(ws, timeout=10)["type"] == "tree.changed"
            # the stream deleted (the broker lost it): writes go on, open connections
            # resync, then events flow again on the stream created anew
            conn = pika.BlockingConnection(pika.URLParameters(comps.ns.url))
            conn.channel().queue_delete(f"{comps.ns.name}.feed")
            conn.close()
            for name in ("C", "D"):
                assert alice.post("/api/nodes", json={"space_id": space,
                                                      "name": name}).status_code == 201
            got = recv_until(ws, "resync", timeout=15)
            assert got[-1]["type"] == "resync"
            assert alice.post("/api/nodes", json={"space_id": space,
                                                  "name": "E"}).status_code == 201
            assert recv_until(ws, "tree.changed", timeout=10)[-1]["space_id"] == space
        assert comps.feed_bus.dropped == 0
    finally:
        feed.stop()
