"""The feed's Redis stream (``tasks.feed_bus.RedisStreamBus``) on the real Redis, in the
suite's DB and a namespace of its own: events appended by one process's bus are read
back by another's with their cursors (what ``wharf feed`` processes do), followed as they
arrive, replayed after a cursor, and a cursor outside the window or from another stream
answers None (the client resyncs); Redis unreachable drops events without raising."""
from __future__ import annotations

import threading
import time

import pytest
import redis

from tasks.feed_bus import RedisStreamBus
from tests.support import services
from wharf.feed.events import Event, EventType

pytestmark = pytest.mark.redis


@pytest.fixture
def ns():
    services.need(services.redis_error())
    namespace = services.RedisNamespace("feedbus")
    yield namespace
    namespace.close()


def bus(ns, retention: float = 300) -> RedisStreamBus:
    return RedisStreamBus(redis.Redis.from_url(services.REDIS_URL), ns.name, retention)


def test_events_written_by_one_bus_are_read_back_by_another(ns):
    writer, reader = bus(ns), bus(ns)
    start = reader.head()
    assert start == "0-0"
    got: list = []

    def follow():
        deadline, cursor = time.monotonic() + 5, start
        while len(got) < 2 and time.monotonic() < deadline:
            new = reader.follow(cursor, 1)
            got.extend(new)
            cursor = new[-1].cursor if new else cursor

    follower = threading.Thread(target=follow)
    follower.start()
    writer.publish([Event(EventType.TREE_CHANGED, space_id="s1", parent_id="p1"),
                    Event(EventType.UNIT_CHANGED, unit_id="u1", revision=7)])
    writer.flush()
    follower.join(6)
    assert [(e.type, e.space_id, e.unit_id, e.revision) for e in got] == [
        (EventType.TREE_CHANGED, "s1", None, None), (EventType.UNIT_CHANGED, None, "u1", 7)]
    assert got[0].cursor < got[1].cursor == reader.head()
    assert [e.unit_id for e in reader.since(got[0].cursor)] == ["u1"]
    assert reader.since(got[1].cursor) == []
    assert [e.unit_id for e in reader.since("0-0")] == [None, "u1"]  # nothing trimmed yet
    # the window moves past the first event (what XADD's MINID does as time passes)
    reader.client.xtrim(reader.key, minid=got[1].cursor, approximate=False)
    assert reader.since("0-0") is None  # an event after it is gone: resync
    assert reader.since(got[0].cursor) is None  # its own entry is gone: it cannot tell
    assert reader.since(got[1].cursor) == []  # still there: nothing after it is gone
    future = f"{int(time.time() * 1000) + 60_000}-0"
    assert reader.since(future) is None  # not this stream's (Redis lost it)
    writer.close()
    reader.close()


def test_redis_unreachable_drops_events_without_raising():
    down = RedisStreamBus(redis.Redis.from_url(services.UNREACHABLE_REDIS_URL,
                                               socket_connect_timeout=0.2), "x", 300)
    down.publish([Event(EventType.TREE_CHANGED, space_id="s")])  # returns at once
    down.flush()
    assert down.dropped == 1
