"""Wake long-polling readers when an operation finishes.

``LocalNotifier`` works inside one process (embedded mode, tests). A cross-process
implementation (Redis pub/sub, in ``tasks.notify``) forwards remote publishes to it.
``PollingNotifier`` (brokers without pub/sub Wharf uses: RabbitMQ) wakes local waiters at
once and re-reads the database every ``interval`` for completions in other processes.

Each waiter holds a request thread, so at most ``max_waiters`` wait at once per process
(``WHARF_LONG_POLL_MAX_WAITERS``); a wait beyond that does not block: it only checks
``is_done()`` once, and the caller answers with the current state (and ``Retry-After``).
"""
from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence

from wharf.metrics import LONG_POLLS_REFUSED


class LocalNotifier:
    def __init__(self, max_waiters: int | None = None):
        self._lock = threading.Lock()
        self._waiters: dict[str, list[threading.Event]] = defaultdict(list)
        self._slots = None  # unbounded
        if max_waiters is not None:
            self._slots = threading.BoundedSemaphore(max_waiters) if max_waiters > 0 \
                else _NoSlots()

    def publish(self, operation_id: str) -> None:
        self.wake(operation_id)

    def publish_many(self, operation_ids: Sequence[str]) -> None:
        """:meth:`publish` each of ``operation_ids`` (a finished batch)."""
        for operation_id in operation_ids:
            self.publish(operation_id)

    def wake(self, operation_id: str) -> None:
        with self._lock:
            events = self._waiters.pop(operation_id, [])
        for ev in events:
            ev.set()

    def wait(self, operation_id: str, timeout: float, is_done: Callable[[], bool]) -> bool:
        """Block until ``is_done()`` or ``timeout``; registers before checking (no lost wake).

        When ``max_waiters`` others already wait, do not block: return ``is_done()``."""
        if self._slots is not None and not self._slots.acquire(blocking=False):
            LONG_POLLS_REFUSED.inc()
            return is_done()
        try:
            return self._wait(operation_id, timeout, is_done)
        finally:
            if self._slots is not None:
                self._slots.release()

    def _wait(self, operation_id: str, timeout: float, is_done: Callable[[], bool]) -> bool:
        ev = threading.Event()
        with self._lock:
            self._waiters[operation_id].append(ev)
        try:
            if is_done():
                return True
            ev.wait(timeout)
            return is_done()
        finally:
            with self._lock:
                lst = self._waiters.get(operation_id)
                if lst and ev in lst:
                    lst.remove(ev)
                    if not lst:
                        self._waiters.pop(operation_id, None)

    def close(self) -> None:
        pass


class PollingNotifier(LocalNotifier):
    """No cross-process notices: a waiter re-checks ``is_done()`` (the database) every
    ``interval`` seconds, so a completion in another process is seen within ``interval``;
    one in this process wakes it at once."""

    def __init__(self, max_waiters: int | None = None, interval: float = 0.5):
        super().__init__(max_waiters)
        self.interval = interval

    def _wait(self, operation_id: str, timeout: float, is_done: Callable[[], bool]) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= self.interval:
                return super()._wait(operation_id, max(0.0, left), is_done)
            if super()._wait(operation_id, self.interval, is_done):
                return True


class _NoSlots:
    """``max_waiters=0``: long-polling disabled, every wait answers at once."""

    def acquire(self, blocking: bool = True) -> bool:
        return False

    def release(self) -> None:  # pragma: no cover - never acquired
        pass
