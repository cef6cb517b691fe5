"""Where committed events go, and where feed processes read them: a log of events with
cursors, kept for a retention window.

- ``publish(events)`` never blocks the writer and never raises: events go to a bounded
  queue that one thread empties into the log (a full queue, or a log that cannot be
  reached, drops them: counted, logged; a client then gets ``resync`` when it resumes
  across the hole, since a dropped event leaves the log's ``epoch`` behind);
- ``since(cursor)``: the events after ``cursor``, oldest first, or None when the cursor is
  older than the window (or from another log: the client must resync);
- ``follow(cursor)``: block up to ``timeout`` for events after ``cursor``; :class:`LogLost`
  when the log can tell that ``cursor``'s entry is no longer the one it named (the log
  was deleted and written again): the follower resyncs from ``head()``.

:class:`MemoryBus` keeps the log in the process (the embedded ``wharf serve``, tests); the
Redis stream implementation is ``tasks.feed_bus.RedisStreamBus`` (the API and workers
append with XADD, feed processes read with XREAD).
"""
from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Sequence

import msgspec

from wharf.feed.events import Event

log = logging.getLogger("wharf.feed")

#: Events waiting for the publishing thread at most (then dropped, counted).
QUEUE_MAX = 10_000
#: Events the memory log holds at most, whatever the window.
MEMORY_MAX = 100_000


def encode(event: Event) -> bytes:
    return msgspec.json.encode(event)


def decode(data: bytes | str, cursor: str) -> Event:
    event = msgspec.json.decode(data, type=Event)
    return msgspec.structs.replace(event, cursor=cursor)


class LogLost(Exception):
    """``follow``'s cursor names an entry the log no longer has: events may be lost."""


class FeedBus:
    """The interface (see the module's docstring); ``retention`` in seconds."""

    def __init__(self, retention: float):
        self.retention = retention
        self._queue: queue.Queue[list[Event]] = queue.Queue(QUEUE_MAX)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.dropped = 0

    # -- writers ---------------------------------------------------------------------------

    def publish(self, events: Sequence[Event]) -> None:
        if not events:
            return
        self._start()
        try:
            self._queue.put_nowait(list(events))
        except queue.Full:
            self.dropped += len(events)
            log.warning("feed: %d event(s) dropped (the publishing queue is full)",
                        len(events))

    def _start(self) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._drain, name="feed-publish",
                                                    daemon=True)
                    self._thread.start()

    def _drain(self) -> None:
        while True:
            batch = self._queue.get()
            while len(batch) < 500:
                try:
                    batch.extend(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self.append(batch)
            except Exception:  # Redis down: the events are lost, readers resync
                self.dropped += len(batch)
                log.warning("feed: %d event(s) could not be stored", len(batch),
                            exc_info=True)
            finally:
                self._queue.task_done()

    def flush(self, timeout: float = 5.0) -> None:
        """Wait until what was published is stored (tests)."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.005)

    def append(self, events: list[Event]) -> None:
        """Store ``events`` in the log (the publishing thread's call)."""
        raise NotImplementedError

    # -- readers ---------------------------------------------------------------------------

    def head(self) -> str:
        """The cursor of the newest stored event (``"0"`` for none): a new listener starts
        after it."""
        raise NotImplementedError

    def since(self, cursor: str) -> list[Event] | None:
        raise NotImplementedError

    def follow(self, cursor: str, timeout: float) -> list[Event]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def stored_ms(self, order: tuple[int, int]) -> int:
        """When the event of a cursor's order (:func:`cursor_key`) was stored, in ms since
        the epoch (0: unknown): a Redis stream's and the memory log's cursors begin with
        it."""
        return order[0]


def cursor_key(cursor: str) -> tuple[int, int]:
    """A cursor's order: ``<ms>-<seq>`` as two ints (ValueError for anything else)."""
    ms, _, seq = cursor.partition("-")
    return int(ms), int(seq or 0)


class MemoryBus(FeedBus):
    """The log in this process: cursors ``<ms>-<seq>`` like a Redis stream's, events older
    than ``retention`` seconds (or past :data:`MEMORY_MAX`) forgotten."""

    def __init__(self, retention: float):
        super().__init__(retention)
        self._log: deque[tuple[tuple[int, int], float, Event]] = deque()
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._last = (0, 0)
        self._forgot = (0, 0)  # the newest cursor no longer held

    def append(self, events: list[Event]) -> None:
        with self._cond:
            now = time.time()
            for event in events:
                ms = int(now * 1000)
                key = (ms, next(self._seq)) if ms > self._last[0] else \
                    (self._last[0], self._last[1] + 1)
                self._last = key
                self._log.append((key, now, msgspec.structs.replace(
                    event, cursor=f"{key[0]}-{key[1]}")))
            while self._log and (len(self._log) > MEMORY_MAX
                                 or self._log[0][1] < now - self.retention):
                self._forgot = self._log.popleft()[0]
            self._cond.notify_all()

    def head(self) -> str:
        with self._cond:
            return f"{self._last[0]}-{self._last[1]}"

    def since(self, cursor: str) -> list[Event] | None:
        try:
            after = cursor_key(cursor)
        except ValueError:
            return None
        with self._cond:
            if after < self._forgot or after > self._last:
                return None  # older than the window, or not this log's
            return [e for k, _, e in self._log if k > after]

    def follow(self, cursor: str, timeout: float) -> list[Event]:
        after = cursor_key(cursor)
        with self._cond:
            if self._last <= after:
                self._cond.wait(timeout)
            return [e for k, _, e in self._log if k > after]
