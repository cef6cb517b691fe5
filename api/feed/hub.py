"""The connections of one feed process and the one dispatcher that feeds them.

The dispatcher follows the bus (``FeedBus.follow`` in a thread, about a second at a time)
and, for each batch of events, asks once per event who of the users listening may hear it
(``wharf.feed.audience.hearers``, in one read transaction off the event loop: decided at
delivery, by the rules every route uses), then puts the event's public JSON on the
buffer of each connection that subscribed to it and whose user may hear it. A full buffer
closes that connection (a slow consumer: counted); it resumes by cursor.

When the bus fails (Redis down) the dispatcher keeps retrying; once it answers again,
every connection gets ``resync`` (events may have been lost meanwhile), as it does when
the log went back (Redis restarted empty).
"""
from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from storage.db import Database
from wharf.feed import audience
from wharf.feed.bus import FeedBus, LogLost, cursor_key
from wharf.feed.events import Event, EventType

from . import metrics
from .direct import DirectWriter, frame

log = logging.getLogger("wharf.feed")

#: Seconds one ``follow`` call waits for events.
FOLLOW_WAIT = 1.0
#: Seconds between freezes of what the open connections hold (when connections opened
#: since the last), and between full collections of everything (see :meth:`Hub._heap`).
FREEZE_EVERY, COLLECT_EVERY = 2.0, 600.0
#: Seconds between attempts while the bus is unreachable (doubling up to the max).
RETRY_MIN, RETRY_MAX = 0.2, 5.0

SPACE_TYPES = frozenset({EventType.TREE_CHANGED, EventType.ISSUES_CHANGED,
                         EventType.WORKTREES_CHANGED})
UNIT_TYPES = frozenset({EventType.UNIT_CHANGED, EventType.COMMENTS_CHANGED})


def key(cursor: str | None) -> tuple[int, int]:
    """A cursor's order (:func:`wharf.feed.bus.cursor_key`; anything else sorts first)."""
    try:
        return cursor_key(cursor) if cursor else (0, 0)
    except ValueError:
        return (0, 0)


def encode(body: dict[str, Any]) -> str:
    return msgspec.json.encode(body).decode()


@dataclass(frozen=True)
class Subscription:
    spaces: frozenset[str] = frozenset()
    units: frozenset[str] = frozenset()
    operations: bool = False
    worktrees: bool = False

    def wants(self, event: Event) -> bool:
        t = event.type
        if t in SPACE_TYPES and event.space_id in self.spaces:
            return True
        if t in UNIT_TYPES and event.unit_id in self.units:
            return True
        if t == EventType.OPERATION_DONE:
            return self.operations
        return t == EventType.WORKTREES_CHANGED and self.worktrees


class SlowConsumer(Exception):
    """The connection's buffer filled up: it is closed (WebSocket 4008)."""


@dataclass(eq=False)
class Connection:
    """One client's connection: its subscription and its bounded buffer of messages
    (filled by the dispatcher, emptied by the connection's sender; both on the event
    loop's thread)."""

    user_id: str
    subscription: Subscription
    transport: str  # ws | sse
    buffer: int
    items: deque[tuple[str | None, str]] = field(default_factory=deque)
    dropped: bool = False
    #: what the sender awaits while the buffer is empty (:meth:`next`)
    waiter: asyncio.Future[None] | None = None
    #: the order (:func:`key`) of the newest event sent: older ones are skipped
    last: tuple[int, int] = (0, 0)
    #: writes frames straight to the WebSocket (:mod:`api.feed.direct`), once the
    #: opening is sent; None for SSE and other servers
    writer: DirectWriter | None = None
    #: the sender is in the middle of a send
    sending: bool = False

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def offer(self, cursor: str | None, text: str) -> bool:
        """Put one message on the buffer; False when it is full (the connection is then
        told to close: a slow consumer)."""
        if self.dropped:
            return False
        if len(self.items) >= self.buffer:
            self.dropped = True
            self.items.clear()
            metrics.DROPPED.inc()
            self._wake()
            return False
        self.items.append((cursor, text))
        self._wake()
        return True

    def deliver(self, cursor: str | None, order: tuple[int, int], text: str,
                data: bytes) -> bool:
        """Send one event: its frame (``data``) written straight to the WebSocket when
        the connection is at rest (nothing queued or being sent, the transport not
        backed up), else its JSON queued (:meth:`offer`). False when it was not sent
        (sent already, or the buffer overflowed). Behind queued messages an event is
        queued whatever its order: the sender skips what it sent already, and a ``resync``
        waiting there resets the order (a log that started again), so an event of the new
        log is not taken for an old one before the client has been told."""
        if self.dropped:
            return False
        idle = not self.items and not self.sending
        if idle and order <= self.last:
            return False
        writer = self.writer
        if writer is not None and idle and writer.ready():
            writer.write(data)
            self.last = order
            return True
        return self.offer(cursor, text)

    async def next(self, timeout: float) -> tuple[str | None, str] | None:
        """The next message as (cursor, JSON), or None after ``timeout`` (time to ping);
        SlowConsumer when the buffer overflowed. An event's cursor orders it (a
        connection skips what it was sent already); a ``resync`` has none: always sent.

        Waiting is one bare future and one timer per wait (no task, no ``wait_for``): the
        dispatcher wakes every subscriber of an event, a thousand of them at once."""
        if not self.items and not self.dropped:
            loop = asyncio.get_running_loop()
            waiter = self.waiter = loop.create_future()
            timer = loop.call_later(timeout, _expire, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self.waiter = None
            if not self.items and not self.dropped:
                return None
        if self.dropped:
            raise SlowConsumer
        return self.items.popleft()


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _hearers(s: Any, events: list[Event],
             listening: list[set[str]]) -> list[set[str]]:
    """Who of ``listening`` may hear each event, in one read transaction: asked once per
    distinct event (its cursor aside) and listeners (a burst of the same change, e.g.
    many nodes made in one folder, costs one question)."""
    asked: dict[tuple[Event, frozenset[str]], set[str]] = {}
    out: list[set[str]] = []
    for e, users in zip(events, listening, strict=True):
        if not users:
            out.append(set())
            continue
        k = (msgspec.structs.replace(e, cursor=None), frozenset(users))
        if k not in asked:
            asked[k] = audience.hearers(s, e, users)
        out.append(asked[k])
    return out


class Hub:
    """The connections of this process, their per-user cap and the dispatcher."""

    def __init__(self, db: Database, bus: FeedBus, *, buffer: int, per_user: int):
        self.db, self.bus = db, bus
        self.buffer, self.per_user = buffer, per_user
        self.connections: set[Connection] = set()
        self.by_user: dict[str, int] = {}
        #: the connections by what they subscribed to (the dispatcher's look-up)
        self.by_space: dict[str, set[Connection]] = {}
        self.by_unit: dict[str, set[Connection]] = {}
        self.of_operations: set[Connection] = set()
        self.of_worktrees: set[Connection] = set()
        self._task: asyncio.Task[None] | None = None
        self._heap_task: asyncio.Task[None] | None = None
        self.opened = 0  # connections opened, ever (the heap keeper compares)
        self.stopped = False
        self.cursor: str | None = None

    # -- connections -----------------------------------------------------------------------
    def open(self, user_id: str, subscription: Subscription, transport: str) -> Connection | None:
        """A new connection, or None when the user holds ``per_user`` already."""
        if self.by_user.get(user_id, 0) >= self.per_user:
            return None
        conn = Connection(user_id, subscription, transport, self.buffer)
        self.connections.add(conn)
        self._index(conn, add=True)
        self.opened += 1
        self.by_user[user_id] = self.by_user.get(user_id, 0) + 1
        metrics.CONNECTIONS.labels(transport).inc()
        return conn

    def close(self, conn: Connection) -> None:
        if conn in self.connections:
            self.connections.discard(conn)
            self._index(conn, add=False)
            left = self.by_user.get(conn.user_id, 1) - 1
            if left:
                self.by_user[conn.user_id] = left
            else:
                self.by_user.pop(conn.user_id, None)
            metrics.CONNECTIONS.labels(conn.transport).dec()

    def _index(self, conn: Connection, *, add: bool) -> None:
        sub = conn.subscription
        slots = [self.by_space.setdefault(i, set()) for i in sub.spaces] + \
            [self.by_unit.setdefault(i, set()) for i in sub.units]
        if sub.operations:
            slots.append(self.of_operations)
        if sub.worktrees:
            slots.append(self.of_worktrees)
        for slot in slots:
            if add:
                slot.add(conn)
            else:
                slot.discard(conn)
        if not add:
            for index, ids in ((self.by_space, sub.spaces), (self.by_unit, sub.units)):
                for i in ids:
                    if not index.get(i, True):
                        del index[i]

    def subscribers(self, event: Event) -> list[Connection]:
        """The connections subscribed to ``event`` (by the index, then
        :meth:`Subscription.wants`)."""
        t = event.type
        found: set[Connection] = set()
        if t in SPACE_TYPES and event.space_id:
            found |= self.by_space.get(event.space_id, set())
        if t in UNIT_TYPES and event.unit_id:
            found |= self.by_unit.get(event.unit_id, set())
        if t == EventType.OPERATION_DONE:
            found |= self.of_operations
        if t == EventType.WORKTREES_CHANGED:
            found |= self.of_worktrees
        return [c for c in found if c.subscription.wants(event)]

    # -- the first events of a connection ---------------------------------------------------
    async def opening(self, conn: Connection, cursor: str | None) -> list[tuple[str, str]]:
        """What a new connection is sent first, as (cursor, JSON): with ``cursor``, the
        events it missed that it may hear (or ``resync`` when they are gone), then
        ``ready`` with the cursor to resume from."""
        out: list[tuple[str, str]] = []
        if cursor is not None:
            missed = await asyncio.to_thread(self._missed, conn, cursor)
            if missed is not None:
                out += [(e.cursor or "", encode(e.public())) for e in missed]
                last = missed[-1].cursor if missed else cursor
                return [*out, (last or "", encode({"type": EventType.READY,
                                                   "cursor": last}))]
        head = await asyncio.to_thread(self.bus.head)
        if cursor is not None:
            out.append((head, encode({"type": EventType.RESYNC, "cursor": head})))
        return [*out, (head, encode({"type": EventType.READY, "cursor": head}))]

    def _missed(self, conn: Connection, cursor: str) -> list[Event] | None:
        events = self.bus.since(cursor)
        if events is None:
            return None
        wanted = [e for e in events if conn.subscription.wants(e)]
        if not wanted:
            return []
        with self.db.read() as s:
            heard = _hearers(s, wanted, [{conn.user_id}] * len(wanted))
        return [e for e, users in zip(wanted, heard, strict=True) if users]

    # -- the dispatcher ---------------------------------------------------------------------
    def start(self) -> None:
        if self.stopped:
            return
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(),
                                                                 name="feed-dispatcher")
        if self._heap_task is None or self._heap_task.done():
            self._heap_task = asyncio.get_running_loop().create_task(
                self._heap(), name="feed-heap")

    async def _heap(self) -> None:
        """Keep the garbage collector's full collections short while connections are open.

        A full collection walks every tracked object, and each open connection holds
        dozens (its tasks, futures, buffers, the transport's): with thousands open, one
        stopped every connection of the process for 0.2-1 s in the middle of a fan-out
        (bench_feed.py). So what the connections hold is frozen (``gc.freeze``: moved to
        the permanent generation, which collections skip) a moment after connections
        opened; a closed connection's cycles stay uncollected until the next thaw, every
        ``COLLECT_EVERY`` seconds: one full collection then, a bounded pause at a known
        rate instead of many at random."""
        frozen_at, collected = self.opened, time.monotonic()
        while not self.stopped:
            await asyncio.sleep(FREEZE_EVERY)
            if time.monotonic() - collected >= COLLECT_EVERY:
                gc.unfreeze()
                gc.collect()
                gc.freeze()
                collected, frozen_at = time.monotonic(), self.opened
            elif self.opened != frozen_at:
                gc.freeze()
                frozen_at = self.opened

    async def stop(self) -> None:
        self.stopped = True
        if self._heap_task is not None:
            self._heap_task.cancel()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
            self._task = None

    async def _run(self) -> None:
        delay = RETRY_MIN
        failing = False
        while True:
            try:
                if self.cursor is None:
                    self.cursor = await asyncio.to_thread(self.bus.head)
                lost = False
                try:
                    events = await asyncio.to_thread(self.bus.follow, self.cursor,
                                                     FOLLOW_WAIT)
                except LogLost:  # the log no longer has the cursor's entry
                    events, lost = [], True
                if not events:
                    head = await asyncio.to_thread(self.bus.head)
                    if lost or key(head) < key(self.cursor):  # events lost
                        log.warning("feed: the bus's log lost %s (its head: %s): resync",
                                    self.cursor, head)
                        self.cursor = head
                        self.resync(head)
            except asyncio.CancelledError:
                raise
            except Exception:
                if self.stopped:
                    return
                if not failing:
                    log.warning("feed: the bus is unreachable; retrying", exc_info=True)
                failing = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
                continue
            if failing:
                failing, delay = False, RETRY_MIN
                log.warning("feed: the bus answers again: resync")
                try:
                    head = await asyncio.to_thread(self.bus.head)
                except Exception:
                    failing = True
                    continue
                self.cursor = head
                self.resync(head)
                continue
            if events:
                self.cursor = events[-1].cursor
                try:
                    await self.dispatch(events)
                except asyncio.CancelledError:
                    raise
                except Exception:  # the database: these events are lost for now
                    log.exception("feed: %d event(s) could not be dispatched: resync",
                                  len(events))
                    self.resync(self.cursor)

    def resync(self, cursor: str | None) -> None:
        metrics.RESYNCS.inc()
        text = encode({"type": EventType.RESYNC, "cursor": cursor})
        for conn in list(self.connections):
            conn.offer(None, text)  # unordered: always sent

    async def dispatch(self, events: list[Event]) -> None:
        """Deliver ``events`` to the connections that subscribed to them and may hear
        them now."""
        targets = [self.subscribers(e) for e in events]
        listening = [{c.user_id for c in group} for group in targets]
        if not any(listening):
            return
        heard = await asyncio.to_thread(self._decide, events, listening)
        for event, group, users in zip(events, targets, heard, strict=True):
            if not users:
                continue
            # encoded once for all: the JSON, and the WebSocket frame carrying it
            text = encode(event.public())
            data, order = frame(text.encode()), key(event.cursor)
            delivered = 0
            for conn in group:
                if conn.user_id in users and conn.deliver(event.cursor, order, text, data):
                    delivered += 1
            if delivered:
                metrics.DELIVERED.labels(event.type.value).inc(delivered)
                stored = self.bus.stored_ms(order)
                if stored:
                    metrics.FANOUT.observe(max(0.0, time.time() - stored / 1000))

    def _decide(self, events: list[Event], listening: list[set[str]]) -> list[set[str]]:
        with self.db.read() as s:
            return _hearers(s, events, listening)


def parse_ids(value: str | None, valid: Callable[[str], bool]) -> Iterable[str] | None:
    """Comma-separated ids (None: one is not an id)."""
    if not value:
        return ()
    ids = [v.strip() for v in value.split(",") if v.strip()]
    return ids if all(valid(i) for i in ids) else None
