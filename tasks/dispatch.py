"""Sending outbox rows to the broker: doorbells, coalesced.

An operation's outbox row announces a doorbell for its kind (``tasks.doorbell``): the
worker that answers drains every due operation of that kind. The fast path (right after
the submitting transaction commits) rings only when no bell already on its way covers the
operation, so a burst of submissions puts far fewer messages on the broker than it has
operations. A covered row counts as dispatched, like a sent one. Rows are marked
dispatched from a small background thread in batches (one Core UPDATE per batch, not per
request; the thread sleeps ``MARK_GATHER_SECONDS`` after a batch's first row, far inside
the relay's grace period, so under load one write marks dozens of rows and a request's
row wakes no thread). If the process dies before
marking, the relay sends them again: a duplicate bell is harmless because claims are
conditional.

Other rows (object deletion jobs, scheduled sweeps) and delayed bells (a retry's backoff:
the operation is not due before then, so a bell now would not help it) are sent one
message per row, as before. So are the bells of long kinds (``long_kinds()``): coalesced
behind a drain that verifies an upload for seconds, they would wait for it while other
threads idle.

The dispatcher is the one place that knows the broker: ``send`` (slow paths), ``dispatch``
(fast path) and ``ring_more`` (a draining worker) are what the rest uses, so another broker
can take Redis's place with a doorbell of its own (``PlainDoorbell``: no coalescing).

Tracing: a row's message is enqueued under an ``outbox.dispatch`` span, a child of the
row's stored ``trace_context`` (the submitter's trace; of the current span when NULL), so
the message -- which carries that span as its parent (``tasks.tracing``) -- and the
drain that answers it join the submitter's trace, whether the fast path or the relay
sends it.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any

import dramatiq
from sqlalchemy import bindparam, update

from storage.db import Database
from storage.models import OutboxMessage
from tasks.doorbell import Doorbell, PlainDoorbell, long_actors
from wharf.infra.clock import utcnow
from wharf.observability import tracing
from wharf.operations.recovery import is_bell
from wharf.operations.service import QUEUE

log = logging.getLogger("wharf.dispatch")
#: How long the marker sleeps after a batch's first row before it writes them (seconds). The
#: relay re-sends only rows older than its grace period (5 s), so a mark may wait a while.
MARK_GATHER_SECONDS = 0.25
_OUTBOX = OutboxMessage.__table__
_MARK = (update(_OUTBOX).where(_OUTBOX.c.id.in_(bindparam("ids", expanding=True)))
         .values(dispatched_at=bindparam("now")))


def to_message(row: OutboxMessage) -> dramatiq.Message[Any]:
    return dramatiq.Message(queue_name=row.queue_name, actor_name=row.actor_name,
                            args=(row.subject_id,), kwargs={}, options={})


def bell(actor: str) -> dramatiq.Message[Any]:
    """A doorbell that names no operation (a draining worker asking for help)."""
    return dramatiq.Message(queue_name=QUEUE, actor_name=actor, args=(), kwargs={},
                            options={})


class BrokerDispatcher:
    def __init__(self, broker: dramatiq.Broker, db: Database, *,
                 doorbell: Doorbell | None = None, mark_batch: int = 500):
        self.broker = broker
        self.db = db
        self.doorbell: Doorbell = doorbell or PlainDoorbell()
        self.mark_batch = mark_batch
        self._marks: queue.Queue[str | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        #: Bells enqueued and rows covered by a bell already on its way (tests, metrics).
        self.rung = 0
        self.covered = 0

    def _enqueue(self, message: dramatiq.Message[Any], delay_ms: int | None = None,
                 row: OutboxMessage | None = None) -> None:
        if row is None or not tracing.enabled():
            self.broker.enqueue(message, delay=delay_ms or None)
            return
        with tracing.start_span("outbox.dispatch", parent=row.trace_context,
                                kind=tracing.SpanKind.PRODUCER, attributes={
                                    "wharf.outbox.id": row.id,
                                    "messaging.destination.name": row.queue_name,
                                    "wharf.actor": row.actor_name,
                                    "wharf.operation.id": row.subject_id or ""}):
            self.broker.enqueue(message, delay=delay_ms or None)

    def send(self, row: OutboxMessage) -> None:
        """The slow paths (relay, recovery): enqueue one row's message, never trusting a
        doorbell flag -- they run because something may have been lost, a flag included
        (raises if the broker is unreachable)."""
        if is_bell(row):
            self.doorbell.rang(row.actor_name)
        try:
            self._enqueue(to_message(row), row.delay_ms, row)
        except Exception:
            if is_bell(row):
                self.doorbell.unring(row.actor_name)
            raise
        self.rung += 1

    def ring_more(self, actor: str) -> None:
        """A draining worker's claim came back full: one more bell, so another worker joins
        (unless one is on its way). A broker that is down only costs parallelism."""
        try:
            if not self.doorbell.ring_more(actor):
                return
        except Exception:
            log.warning("could not ring %s once more", actor, exc_info=True)
            return
        try:
            with tracing.detached():  # the next drain is no part of this one's trace
                self._enqueue(bell(actor))
        except Exception:
            self.doorbell.unring(actor)
            log.warning("could not ring %s once more", actor, exc_info=True)
            return
        self.rung += 1

    def dispatch(self, messages: list[OutboxMessage]) -> None:
        """The fast path: the rows of a committed transaction."""
        long = long_actors()
        # The rows were committed together: one ring of a kind's doorbell covers all of
        # that kind's rows here (a batch of submissions rings once, not once per row).
        rung: set[str] = set()
        for row in messages:
            # Long kinds ring per operation (tasks.doorbell.long_kinds).
            coalesce = is_bell(row) and row.actor_name not in long
            try:
                if coalesce and (row.actor_name in rung
                                 or not self.doorbell.ring(row.actor_name)):
                    rung.add(row.actor_name)
                    self.covered += 1
                    self._mark_later(row.id)
                    continue
            except Exception:
                log.warning("doorbell unavailable; outbox %s left for the relay", row.id,
                            exc_info=True)
                return
            try:
                self._enqueue(to_message(row), row.delay_ms, row)
            except Exception:
                if coalesce:
                    self.doorbell.unring(row.actor_name)
                log.warning("broker unavailable; outbox %s left for the relay", row.id,
                            exc_info=True)
                return
            self.rung += 1
            if coalesce:
                rung.add(row.actor_name)
            self._mark_later(row.id)

    # -- marking dispatched rows -------------------------------------------------------
    def _mark_later(self, row_id: str) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._marker, name="outbox-marker",
                                                    daemon=True)
                    self._thread.start()
        self._marks.put(row_id)

    def _marker(self) -> None:
        while True:
            first = self._marks.get()
            if first is None:
                return
            # Gather by sleeping, then take what came: a request's ``put`` then finds no
            # thread waiting on the queue and wakes none (a wake-up per row cost the
            # submitting thread about a sixth of its CPU per POST; docs/benchmarks.md).
            time.sleep(MARK_GATHER_SECONDS)
            ids, stop = [first], False
            while True:
                try:
                    nxt = self._marks.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                ids.append(nxt)
            for start in range(0, len(ids), self.mark_batch):
                self._mark(ids[start:start + self.mark_batch])
            if stop:
                return

    def _mark(self, ids: list[str]) -> None:
        try:
            with self.db.unbundled() as s:  # one statement: no BEGIN/COMMIT round trips
                s.connection().execute(_MARK, {"ids": ids, "now": utcnow()})
        except Exception:
            log.warning("could not mark %d outbox row(s) dispatched; the relay will resend",
                        len(ids), exc_info=True)

    def flush(self, timeout: float = 5.0) -> None:
        """Mark everything queued so far and stop the marker thread (shutdown, tests)."""
        thread = self._thread
        if thread is None:
            return
        self._marks.put(None)
        thread.join(timeout)
        with self._lock:
            self._thread = None
