"""The feed's shared logs on the real servers, one contract for both: the Redis stream
(``tasks.feed_bus.RedisStreamBus``, in the suite's DB and a namespace of its own) and the
RabbitMQ stream queue (``tasks.feed_rabbit.RabbitStreamBus``, a queue ``<namespace>.feed``
on the suite's vhost). Events appended by one process's bus are read back by another's
with their cursors (what ``wharf feed`` processes do), followed as they arrive, replayed
after a cursor; a cursor whose entry is gone (trimmed, or the log deleted and created
again) or from another log answers None (the client resyncs); a broker that cannot be
reached drops events without raising. Missing servers fail under
``WHARF_TEST_REQUIRE_SERVICES=1`` (``services.need``)."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import redis

from tasks.feed_bus import RedisStreamBus
from tasks.feed_rabbit import RabbitStreamBus
from tests.support import services
from wharf.feed.bus import FeedBus, LogLost, cursor_key
from wharf.feed.events import Event, EventType

pytestmark = pytest.mark.redis


@dataclass
class Log:
    """One log on a real server: new buses on it, and what happens to it from outside."""

    make: Callable[[], FeedBus]
    trim_before: Callable[[str], None] | None  # drop the entries before a cursor's
    recreate: Callable[[], None]  # delete the log; the next append creates it again


def _redis_log() -> Iterator[Log]:
    services.need(services.redis_error())
    ns = services.RedisNamespace("feedbus")
    client = redis.Redis.from_url(services.REDIS_URL)
    key = f"{ns.name}:feed"
    yield Log(lambda: RedisStreamBus(redis.Redis.from_url(services.REDIS_URL), ns.name, 300),
              lambda cursor: client.xtrim(key, minid=cursor, approximate=False),
              lambda: client.delete(key))
    client.close()
    ns.close()


def _rabbit_log() -> Iterator[Log]:
    services.need(services.rabbitmq_error())
    import pika
    ns = services.RabbitNamespace("feedbus")
    conn = pika.BlockingConnection(pika.URLParameters(ns.url))

    # A stream is trimmed by whole segments as they age past x-max-age, not on demand:
    # no trimming here (a trimmed entry is found missing exactly as a deleted one is).
    yield Log(lambda: RabbitStreamBus(ns.url, ns.name, 300), None,
              lambda: conn.channel().queue_delete(f"{ns.name}.feed"))
    conn.close()
    assert ns.close() == []


@pytest.fixture(params=["redis", "rabbitmq"])
def log(request) -> Iterator[Log]:
    yield from (_redis_log() if request.param == "redis" else _rabbit_log())


def _follow(reader: FeedBus, cursor: str, want: int) -> tuple[threading.Thread, list[Event]]:
    got: list[Event] = []

    def run() -> None:
        deadline, at = time.monotonic() + 5, cursor
        while len(got) < want and time.monotonic() < deadline:
            new = reader.follow(at, 1)
            got.extend(new)
            at = new[-1].cursor if new else at

    thread = threading.Thread(target=run)
    thread.start()
    return thread, got


def test_events_written_by_one_bus_are_read_back_by_another(log):
    writer, reader = log.make(), log.make()
    start = reader.head()
    assert start == "0-0"
    assert reader.since("0-0") == []
    follower, got = _follow(reader, start, 2)
    writer.publish([Event(EventType.TREE_CHANGED, space_id="s1", parent_id="p1"),
                    Event(EventType.UNIT_CHANGED, unit_id="u1", revision=7)])
    writer.flush()
    follower.join(6)
    assert [(e.type, e.space_id, e.unit_id, e.revision) for e in got] == [
        (EventType.TREE_CHANGED, "s1", None, None), (EventType.UNIT_CHANGED, None, "u1", 7)]
    assert got[0].cursor < got[1].cursor == reader.head()
    # when each was stored, read from its cursor (the fan-out latency metric's start): now,
    # on both logs (a RabbitMQ cursor's first number is an offset, not a time)
    now_ms = time.time() * 1000
    for event in got:
        assert now_ms - 10_000 < reader.stored_ms(cursor_key(event.cursor)) <= now_ms + 1
    assert [e.unit_id for e in reader.since(got[0].cursor)] == ["u1"]
    assert reader.since(got[1].cursor) == []
    assert [e.unit_id for e in reader.since("0-0")] == [None, "u1"]  # nothing trimmed yet
    assert reader.since("not a cursor") is None
    future = f"{int(time.time() * 1000) + 60_000}-0"
    assert reader.since(future) is None  # not this log's (the server lost it)
    if log.trim_before is not None:
        # the window moves past the first event (what XADD's MINID does as time passes)
        log.trim_before(got[1].cursor)
        assert reader.since("0-0") is None  # an event after it is gone: resync
        assert reader.since(got[0].cursor) is None  # its own entry is gone: it cannot tell
        assert reader.since(got[1].cursor) == []  # still there: nothing after it is gone

    # the log deleted and created again (a server that lost it): old cursors resync, new
    # events flow
    log.recreate()
    writer.publish([Event(EventType.ISSUES_CHANGED, space_id="s2", number=1),
                    Event(EventType.ISSUES_CHANGED, space_id="s2", number=2),
                    Event(EventType.ISSUES_CHANGED, space_id="s2", number=3)])
    writer.flush()
    assert writer.dropped == 0
    head = reader.head()
    assert reader.since(got[0].cursor) is None and reader.since(got[1].cursor) is None
    again = reader.since("0-0")
    assert [e.number for e in again] == [1, 2, 3] and again[-1].cursor == head
    assert [e.number for e in reader.since(again[0].cursor)] == [2, 3]
    assert reader.since(head) == []
    if isinstance(reader, RabbitStreamBus):
        # offsets started again: a follower at an old cursor is told (the dispatcher then
        # resyncs every connection)
        with pytest.raises(LogLost):
            reader.follow(got[1].cursor, 1)
    writer.close()
    reader.close()


@pytest.mark.parametrize("bus", [
    lambda: RedisStreamBus(redis.Redis.from_url(services.UNREACHABLE_REDIS_URL,
                                                socket_connect_timeout=0.2), "x", 300),
    lambda: RabbitStreamBus("amqp://guest:guest@127.0.0.1:1/%2F", "x", 300),
], ids=["redis", "rabbitmq"])
def test_an_unreachable_server_drops_events_without_raising(bus):
    down = bus()
    down.publish([Event(EventType.TREE_CHANGED, space_id="s")])  # returns at once
    down.flush()
    assert down.dropped == 1


def test_the_composition_root_picks_the_log_of_the_broker(settings):
    import dataclasses

    from tasks.feed_bus import feed_bus_for
    from wharf.feed.bus import MemoryBus
    rabbit = dataclasses.replace(settings, broker_url=services.RABBITMQ_URL,
                                 broker_namespace="wharf-x")
    picked = [feed_bus_for(s) for s in (
        rabbit, dataclasses.replace(rabbit, feed_redis_url=services.REDIS_URL),
        dataclasses.replace(settings, broker_url=services.REDIS_URL),
        dataclasses.replace(settings, broker_url="embedded"))]
    assert [type(b) for b in picked] == [RabbitStreamBus, RedisStreamBus, RedisStreamBus,
                                         MemoryBus]
    assert picked[0].queue == "wharf-x.feed"  # (no connection is made until it is used)
    for bus in picked:
        bus.close()
