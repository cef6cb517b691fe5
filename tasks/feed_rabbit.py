"""The feed's log as a RabbitMQ stream queue (``<namespace>.feed``, ``x-queue-type=stream``,
``x-max-age`` = the retention window), used when RabbitMQ is the broker and no feed Redis
is set. The API and workers publish with publisher confirms from the bus's publishing
thread; feed processes read over AMQP 0-9-1 with ``basic.qos`` and a consumer attached at
an offset (``x-stream-offset``).

Cursors are ``<n>-<ms>``: ``n`` is the entry's stream offset plus one (so ``0-0``, before
the first entry, is an empty stream's head and orders before every entry, as in the Redis
stream) and ``ms`` the time its publisher stored it, carried in the entry's ``ms`` header.
Offsets restart at 0 when the stream is deleted and declared again, so a cursor names its
entry only while the entry at offset ``n - 1`` still carries ``ms``: anything else (trimmed,
another stream's, not a cursor) answers None and the client resyncs. Cursors order by
offset, so a stream that went back shows as a head below the dispatcher's cursor.

pika's connections are not thread-safe: the publishing thread owns one, and readers
(called from several threads at once: the dispatcher's follow, openings' since) take one
from a small pool, each used by one thread at a time."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pika  # type: ignore[import-untyped]  # pika ships no type hints

from wharf.feed.bus import FeedBus, LogLost, cursor_key, decode, encode
from wharf.feed.events import Event

T = TypeVar("T")

#: Entries a consumer may hold unacknowledged (the stream's credit).
PREFETCH = 1000
#: How long a head() waits for the stream's last chunk (an empty stream sends nothing).
HEAD_WAIT = 0.1
#: A pause that ends a read of what is there.
IDLE = 0.02
#: Seconds an AMQP socket operation may take (a broker that hangs frees the thread).
SOCKET_TIMEOUT = 5.0


class RabbitStreamBus(FeedBus):
    def __init__(self, url: str, namespace: str, retention: float):
        super().__init__(retention)
        self.url = url
        self.queue = f"{namespace}.feed"
        self.arguments = {"x-queue-type": "stream", "x-max-age": f"{max(1, int(retention))}s",
                          # small segments, so the age limit trims in about that time
                          "x-stream-max-segment-size-bytes": 4_000_000}
        self._name = f"wharf {namespace}"
        self._writer: Any = None  # (connection, channel) of the publishing thread
        self._pool: list[Any] = []
        self._pool_lock = threading.Lock()

    # -- connections --------------------------------------------------------------------------

    def _connect(self) -> Any:
        params = pika.URLParameters(self.url)
        params.socket_timeout = params.blocked_connection_timeout = SOCKET_TIMEOUT
        params.stack_timeout = 2 * SOCKET_TIMEOUT
        params.connection_attempts, params.retry_delay = 1, 0
        params.client_properties = {"connection_name": self._name}
        connection = pika.BlockingConnection(params)
        try:
            channel = self._declare(connection)
        except Exception:
            connection.close()
            raise
        return connection, channel

    def _declare(self, connection: Any) -> Any:
        """A channel on ``connection`` with the stream declared (with another retention's
        arguments already there: as it is)."""
        channel = connection.channel()
        try:
            channel.queue_declare(self.queue, durable=True, arguments=self.arguments)
        except pika.exceptions.ChannelClosedByBroker as exc:
            if exc.reply_code != 406:  # PRECONDITION_FAILED: other arguments
                raise
            channel = connection.channel()
            channel.queue_declare(self.queue, passive=True)
        return channel

    def _reading(self, read: Callable[[Any], T]) -> T:
        """``read(channel)`` on a pooled reader; once more on a new connection (which
        declares the stream again) when the stream was deleted meanwhile or the pooled
        connection turns out broken."""
        with self._pool_lock:
            held = self._pool.pop() if self._pool else None
        for attempt in (1, 2):
            if held is None or not held[0].is_open or not held[1].is_open:
                if held is not None:
                    _close(held[0])
                held = self._connect()
            try:
                result = read(held[1])
            except (pika.exceptions.ChannelClosedByBroker,
                    pika.exceptions.AMQPConnectionError) as exc:
                # NOT_FOUND: the stream is gone; a connection the broker closed while it
                # sat in the pool: once more on a new one
                _close(held[0])
                held = None
                gone = isinstance(exc, pika.exceptions.ChannelClosedByBroker) and \
                    exc.reply_code == 404
                if attempt == 2 or not (gone or isinstance(
                        exc, pika.exceptions.AMQPConnectionError)):
                    raise
                continue
            except BaseException:
                _close(held[0])  # in an unknown state: not reused
                raise
            with self._pool_lock:
                self._pool.append(held)
            return result
        raise AssertionError("unreachable")

    # -- writers ------------------------------------------------------------------------------

    def append(self, events: list[Event]) -> None:
        """Publish ``events``, each confirmed; a connection found broken (the broker closed
        it while idle, or restarted) is replaced once, for the events not yet confirmed."""
        done = 0
        for attempt in (1, 2):
            if self._writer is None or not self._writer[1].is_open:
                if self._writer is not None:
                    _close(self._writer[0])
                connection, channel = self._connect()
                channel.confirm_delivery()
                self._writer = (connection, channel)
            try:
                for event in events[done:]:
                    self._publish(self._writer[1], event)
                    done += 1
                return
            except Exception as exc:
                _close(self._writer[0])
                self._writer = None
                if attempt == 2 or not isinstance(exc, pika.exceptions.AMQPConnectionError):
                    raise

    def _publish(self, channel: Any, event: Event) -> None:
        props = pika.BasicProperties(delivery_mode=2, content_type="application/json",
                                     headers={"ms": int(time.time() * 1000)})
        try:
            channel.basic_publish("", self.queue, encode(event), props, mandatory=True)
        except pika.exceptions.UnroutableError:  # the stream was deleted: declare it again
            channel.queue_declare(self.queue, durable=True, arguments=self.arguments)
            channel.basic_publish("", self.queue, encode(event), props, mandatory=True)

    # -- readers ------------------------------------------------------------------------------

    def _read(self, channel: Any, offset: int | str, wait: float,
              after: int | None = None) -> list[tuple[int, int, bytes]]:
        """Entries (offset, ms, body) from ``offset`` on (a chunk may start earlier). With
        ``after`` (following): once one at ``after`` or later came, or ``wait`` seconds
        passed. Without (reading what is there): until a pause, the first within ``wait``."""
        got: list[tuple[int, int, bytes]] = []

        def on_message(ch: Any, method: Any, props: Any, body: bytes) -> None:
            headers = props.headers or {}
            got.append((int(headers.get("x-stream-offset", -1)), int(headers.get("ms", 0)),
                        body))
            ch.basic_ack(method.delivery_tag)

        channel.basic_qos(prefetch_count=PREFETCH)
        tag = channel.basic_consume(self.queue, on_message,
                                    arguments={"x-stream-offset": offset})
        try:
            deadline = time.monotonic() + wait
            while True:
                seen = len(got)
                channel.connection.process_data_events(
                    time_limit=max(0.0, deadline - time.monotonic()))
                if tag not in channel.consumer_tags:  # cancelled: the stream was deleted
                    break
                if after is not None and got and got[-1][0] >= after:
                    channel.connection.process_data_events(time_limit=0)  # what is here
                    break
                if after is None and len(got) > seen:
                    deadline = time.monotonic() + min(wait, IDLE)
                elif time.monotonic() >= deadline:
                    break
        finally:
            if channel.is_open and tag in channel.consumer_tags:
                channel.basic_cancel(tag)
        return got

    def stored_ms(self, order: tuple[int, int]) -> int:
        """A stream cursor is ``<offset + 1>-<ms>``: the time is its second number."""
        return order[1]

    def head(self) -> str:
        """The stream's last entry: read from its last chunk (``x-stream-offset=last``)."""
        entries = self._reading(lambda ch: self._read(ch, "last", HEAD_WAIT))
        if not entries:
            return "0-0"
        offset, ms, _ = max(entries)
        return f"{offset + 1}-{ms}"

    def since(self, cursor: str) -> list[Event] | None:
        """The events after ``cursor``; None when its entry is gone (trimmed: events after
        it may be too) or is not the one it names (another stream, or not a cursor). A
        stream is trimmed from its oldest end only, so an entry still there means nothing
        after it is gone."""
        try:
            n, ms = cursor_key(cursor)
        except ValueError:
            return None
        start = max(0, n - 1)  # its own entry first, to check it
        entries = self._reading(lambda ch: self._read(ch, start, HEAD_WAIT))
        entries = [e for e in entries if e[0] >= start]  # a chunk may start earlier
        if n == 0:
            if entries and entries[0][0] != 0:
                return None  # entries were trimmed
        elif not entries or entries[0][:2] != (n - 1, ms):
            return None
        else:
            entries = entries[1:]
        return self._events(entries)

    def follow(self, cursor: str, timeout: float) -> list[Event]:
        """The events after ``cursor`` as they come (up to ``timeout``). Read from the
        cursor's own entry: one that is not what the cursor names (the stream was deleted
        and written again) raises :class:`wharf.feed.bus.LogLost`, and the dispatcher resyncs."""
        n, ms = cursor_key(cursor)
        start = max(0, n - 1)
        entries = self._reading(lambda ch: self._read(ch, start, timeout, after=n))
        entries = [e for e in entries if e[0] >= start]
        if n > 0 and entries and entries[0][:2] != (n - 1, ms):
            raise LogLost(f"the feed's stream {self.queue} no longer has {cursor}")
        return self._events([e for e in entries if e[0] >= n])

    @staticmethod
    def _events(entries: list[tuple[int, int, bytes]]) -> list[Event]:
        return [decode(body, f"{offset + 1}-{ms}") for offset, ms, body in entries]

    def close(self) -> None:
        with self._pool_lock:
            pool, self._pool = self._pool, []
        for connection, _ in pool:
            _close(connection)


def _close(connection: Any) -> None:
    try:
        connection.close()
    except Exception:
        pass
