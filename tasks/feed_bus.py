"""The feed's log as a Redis stream (``<namespace>:feed``): the API and workers append
with one pipelined XADD per batch (trimmed to the retention window by ``MINID``), feed
processes read with XRANGE (a resume) and XREAD BLOCK (following). Cursors are the
stream's ids. Redis unreachable: appends are dropped (counted, the writes unharmed) and
readers see the cursor's window gone, so clients resync."""
from __future__ import annotations

import time
from typing import Any

import redis

from tasks.broker import redis_client
from wharf.feed.bus import FeedBus, MemoryBus, cursor_key, decode, encode
from wharf.feed.events import Event
from wharf.infra.broker_urls import broker_kind
from wharf.infra.settings import Settings

#: Entries read per XRANGE/XREAD.
PAGE = 1000


class RedisStreamBus(FeedBus):
    def __init__(self, client: Any, namespace: str, retention: float):
        super().__init__(retention)
        self.client = client
        self.key = f"{namespace}:feed"

    def append(self, events: list[Event]) -> None:
        minid = f"{int((time.time() - self.retention) * 1000)}-0"
        pipe = self.client.pipeline(transaction=False)
        for event in events:
            pipe.xadd(self.key, {"e": encode(event)}, minid=minid, approximate=True)
        pipe.execute()

    def head(self) -> str:
        last = self.client.xrevrange(self.key, count=1)
        return _text(last[0][0]) if last else "0-0"

    def _events(self, entries: list[Any]) -> list[Event]:
        return [decode(fields[b"e"] if b"e" in fields else fields["e"], _text(eid))
                for eid, fields in entries]

    def since(self, cursor: str) -> list[Event] | None:
        """The events after ``cursor``; None when some after it may be gone, or it is not
        this stream's. The stream is trimmed from its oldest end only, so nothing after
        ``cursor`` is gone exactly when the entry ``cursor`` names is still there (``0-0``,
        a listener's start on an empty stream: when nothing was ever trimmed)."""
        try:
            after = cursor_key(cursor)
        except ValueError:
            return None
        try:
            info = self.client.xinfo_stream(self.key)
        except redis.ResponseError:  # no stream: nothing was ever kept here
            return [] if after == (0, 0) else None
        if after > cursor_key(_text(info["last-generated-id"])):
            return None  # Redis lost the stream, or another deployment's cursor
        if after == (0, 0):
            if int(info.get("entries-added", 0)) > int(info["length"]):
                return None
        elif not self.client.xrange(self.key, min=cursor, max=cursor, count=1):
            return None  # trimmed: what came after it may be gone too
        out: list[Event] = []
        start = f"({after[0]}-{after[1]}"
        while True:
            entries = self.client.xrange(self.key, min=start, count=PAGE)
            out += self._events(entries)
            if len(entries) < PAGE:
                return out
            start = "(" + _text(entries[-1][0])

    def follow(self, cursor: str, timeout: float) -> list[Event]:
        got = self.client.xread({self.key: cursor}, count=PAGE,
                                block=max(1, int(timeout * 1000)))
        return self._events(got[0][1]) if got else []

    def close(self) -> None:
        self.client.close()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def feed_bus_for(settings: Settings) -> FeedBus:
    """The feed's bus: a Redis stream in ``WHARF_FEED_REDIS_URL`` or the broker's Redis; a
    RabbitMQ stream queue on a RabbitMQ broker (``tasks.feed_rabbit``); else the
    process's own (the embedded mode with the in-process broker)."""
    kind = broker_kind(settings.broker_url)
    url = settings.feed_redis_url or (settings.broker_url if kind == "redis" else "")
    if not url and kind == "rabbitmq":
        from tasks.feed_rabbit import RabbitStreamBus
        return RabbitStreamBus(settings.broker_url, settings.broker_namespace,
                               settings.feed_retention)
    if not url:
        return MemoryBus(settings.feed_retention)
    client = redis_client(url, socket_timeout=5, socket_connect_timeout=2)
    return RedisStreamBus(client, settings.broker_namespace, settings.feed_retention)
