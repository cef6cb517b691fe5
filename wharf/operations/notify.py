"""Wake long-polling readers when an operation finishes.

``LocalNotifier`` works inside one process (embedded mode, tests). A cross-process
implementation (Redis pub/sub, in ``tasks.notify``) forwards remote publishes to it.
``PollingNotifier`` (brokers without pub/sub Wharf uses: RabbitMQ) wakes local waiters at
once and re-reads the database every ``interval`` for completions in other processes.

A notice carries the finished operation as its finisher committed it (``Done``), so a
long-poll it wakes answers without reading the operation again; a notice of the id alone
(too large to carry, or sent by an older worker) makes the long-poll read it.

A process that accepted a submission *expects* its operation (``expect``): while the
notices reach it, a long-poll of that operation by its actor waits without reading it
first, since a notice will say when it is done. It reads anyway after ``CONFIRM_SECONDS``
without one (a notice lost on its way costs that long, not the whole wait).

Each waiter holds a request thread, so at most ``max_waiters`` wait at once per process
(``WHARF_LONG_POLL_MAX_WAITERS``); a wait beyond that does not block: it only checks
``is_done()`` once, and the caller answers with the current state (and ``Retry-After``).
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import msgspec

from storage.enums import DONE_STATUSES
from storage.models import Operation
from wharf.observability.metrics import LONG_POLLS_REFUSED
from wharf.operations.registry import KINDS

log = logging.getLogger("wharf.notify")

#: A long-poll that skipped its first read (an expected operation) reads after this long
#: without a notice: the longest a lost notice delays its answer.
CONFIRM_SECONDS = 1.0
#: Operations one process expects at most (the oldest are forgotten first) ...
EXPECT_MAX = 10_000
#: ... and for how long after their submission (seconds).
EXPECT_SECONDS = 60.0


class Done(msgspec.Struct, frozen=True):
    """A finished operation as the transaction that finished it committed it: what a
    long-poll answers (and whose it is) without reading it again."""

    id: str
    actor_id: str
    kind: str
    status: str
    attempts: int
    max_attempts: int
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None = None
    error: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    #: Of the payload, only the field the retry rule reads (its kind's
    #: ``failure_consumes_input_if``), if it has one.
    payload: dict[str, Any] | None = None

    @classmethod
    def of(cls, op: Operation) -> Done:
        """The notice of ``op`` as it stands (finished: the values just committed)."""
        return cls(id=op.id, actor_id=op.actor_id, kind=op.kind, status=op.status,
                   attempts=op.attempts, max_attempts=op.max_attempts,
                   created_at=op.created_at, updated_at=op.updated_at,
                   completed_at=op.completed_at, error=op.error, result=op.result,
                   payload=retry_fields(op))

    def operation(self) -> Operation:
        """The operation it describes, detached (read it, never write it)."""
        return Operation.detached({f: getattr(self, f) for f in self.__struct_fields__})


def retry_fields(op: Operation) -> dict[str, Any] | None:
    """Of ``op``'s payload, what a notice carries: the field its kind's retry rule reads
    (``KindSpec.failure_consumes_input_if``), or None."""
    spec = KINDS.get(op.kind)
    field = spec.failure_consumes_input_if if spec is not None else None
    return None if field is None else {field: (op.payload or {}).get(field)}


#: What one notice carries: the finished operation, or its id alone (read it).
Notice = Done | str


def notice_id(notice: Notice) -> str:
    return notice if isinstance(notice, str) else notice.id


#: What a process remembers of an operation: its actor (expected) or None (heard), and
#: until when (``time.monotonic``).
_Entry = tuple[str | None, float]


def _remember(entries: OrderedDict[str, _Entry], key: str, actor: str | None,
              now: float) -> None:
    """Remember ``key`` for ``EXPECT_SECONDS``, then forget the oldest entries beyond
    ``EXPECT_MAX`` or past their time."""
    entries[key] = (actor, now + EXPECT_SECONDS)
    entries.move_to_end(key)
    while entries:
        _, until = next(iter(entries.values()))
        if len(entries) <= EXPECT_MAX and until > now:
            break
        entries.popitem(last=False)


class _Waiter:
    __slots__ = ("event", "notice")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.notice: Done | None = None


class LocalNotifier:
    def __init__(self, max_waiters: int | None = None):
        self._lock = threading.Lock()
        self._waiters: dict[str, list[_Waiter]] = defaultdict(list)
        # Operations accepted here, not yet finished: id -> (actor, monotonic deadline);
        # and those heard finished lately (a notice may arrive before its ``expect``).
        self._expected: OrderedDict[str, _Entry] = OrderedDict()
        self._heard: OrderedDict[str, _Entry] = OrderedDict()
        self._slots = None  # unbounded
        if max_waiters is not None:
            self._slots = threading.BoundedSemaphore(max_waiters) if max_waiters > 0 \
                else _NoSlots()

    def publish(self, notice: Notice) -> None:
        self.wake(notice)

    def publish_many(self, notices: Sequence[Notice]) -> None:
        """:meth:`publish` each of ``notices`` (a finished batch)."""
        for notice in notices:
            self.publish(notice)

    def publish_quietly(self, notices: Sequence[Notice]) -> None:
        """:meth:`publish_many`, for a finisher whose change has committed: a failure is
        logged, not raised (a long-poll it would have woken answers at its timeout, or,
        expected, after ``CONFIRM_SECONDS``)."""
        if not notices:
            return
        try:
            self.publish_many(notices)
        except Exception:
            log.warning("could not publish the completion of %s",
                        ", ".join(notice_id(n) for n in notices), exc_info=True)

    def wake(self, notice: Notice) -> None:
        operation_id = notice_id(notice)
        now = time.monotonic()
        with self._lock:
            if self._expected.pop(operation_id, None) is None:
                _remember(self._heard, operation_id, None, now)
            waiters = self._waiters.pop(operation_id, [])
        for w in waiters:
            if not isinstance(notice, str):
                w.notice = notice
            w.event.set()

    # -- expectations ------------------------------------------------------------------
    def expect(self, operation_id: str, actor_id: str) -> None:
        """This process accepted ``operation_id`` for ``actor_id``, not finished yet: its
        long-polls by that actor may wait without reading it first (module docstring)."""
        now = time.monotonic()
        with self._lock:  # (a lost subscription clears its flag, then forgets under it)
            if not self.listening():
                return
            if self._heard.pop(operation_id, None) is None:  # else finished already
                _remember(self._expected, operation_id, actor_id, now)

    def listening(self) -> bool:
        """Whether every finished operation's notice reaches this process now."""
        return True

    def forget_expected(self) -> None:
        """Notices may have been missed (the subscription was lost): expect nothing."""
        with self._lock:
            self._expected.clear()
            self._heard.clear()

    def _is_expected(self, operation_id: str, reader: str | None) -> bool:
        """Called under the lock."""
        entry = self._expected.get(operation_id)
        return entry is not None and entry[0] == reader and entry[1] > time.monotonic()

    # -- waiting -----------------------------------------------------------------------
    def wait(self, operation_id: str, timeout: float, is_done: Callable[[], bool], *,
             answer: Callable[[Done], None] | None = None, reader: str | None = None) -> bool:
        """Block until ``is_done()`` or ``timeout``; registers before checking (no lost
        wake). A notice carrying the finished operation is handed to ``answer`` instead
        of calling ``is_done()`` again. ``reader`` (the caller's user id): when this
        process expects the operation for that user, the first ``is_done()`` is skipped.

        When ``max_waiters`` others already wait, do not block: return ``is_done()``."""
        if self._slots is not None and not self._slots.acquire(blocking=False):
            LONG_POLLS_REFUSED.inc()
            return is_done()
        try:
            return self._wait(operation_id, timeout, is_done, answer, reader)
        finally:
            if self._slots is not None:
                self._slots.release()

    def _wait(self, operation_id: str, timeout: float, is_done: Callable[[], bool],
              answer: Callable[[Done], None] | None, reader: str | None) -> bool:
        deadline = time.monotonic() + timeout
        w = _Waiter()
        with self._lock:
            self._waiters[operation_id].append(w)
            expected = reader is not None and self._is_expected(operation_id, reader)
        try:
            if expected and self._woken(w, min(timeout, CONFIRM_SECONDS), answer):
                return True
            if is_done():
                return True
            if self._woken(w, max(0.0, deadline - time.monotonic()), answer):
                return True
            return is_done()
        finally:
            with self._lock:
                lst = self._waiters.get(operation_id)
                if lst and w in lst:
                    lst.remove(w)
                    if not lst:
                        self._waiters.pop(operation_id, None)

    @staticmethod
    def _woken(w: _Waiter, seconds: float, answer: Callable[[Done], None] | None) -> bool:
        """Wait for a notice; True if it carried the operation, finished, and ``answer``
        took it."""
        if w.event.wait(seconds) and w.notice is not None and answer is not None \
                and w.notice.status in DONE_STATUSES:
            answer(w.notice)
            return True
        return False

    def close(self) -> None:
        pass


class PollingNotifier(LocalNotifier):
    """No cross-process notices: a waiter re-checks ``is_done()`` (the database) every
    ``interval`` seconds, so a completion in another process is seen within ``interval``;
    one in this process wakes it at once."""

    def __init__(self, max_waiters: int | None = None, interval: float = 0.5):
        super().__init__(max_waiters)
        self.interval = interval

    def listening(self) -> bool:
        return False  # other processes' completions are read, not heard

    def _wait(self, operation_id: str, timeout: float, is_done: Callable[[], bool],
              answer: Callable[[Done], None] | None, reader: str | None) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= self.interval:
                return super()._wait(operation_id, max(0.0, left), is_done, answer, None)
            if super()._wait(operation_id, self.interval, is_done, answer, None):
                return True


class _NoSlots:
    """``max_waiters=0``: long-polling disabled, every wait answers at once."""

    def acquire(self, blocking: bool = True) -> bool:
        return False

    def release(self) -> None:  # pragma: no cover - never acquired
        pass
