"""Sending outbox rows to the broker.

The fast path sends right after the submitting transaction commits and marks the rows
dispatched from a small background thread in batches (one write per batch, not per
request). If the process dies before marking, the relay sends them again: a duplicate
delivery is harmless because the lease claim is conditional.
"""
from __future__ import annotations

import logging
import queue
import threading
from typing import Any

import dramatiq
from sqlalchemy import update

from storage.db import Database
from storage.models import OutboxMessage
from wharf.clock import utcnow

log = logging.getLogger("wharf.dispatch")


def to_message(row: OutboxMessage) -> dramatiq.Message[Any]:
    return dramatiq.Message(queue_name=row.queue_name, actor_name=row.actor_name,
                            args=(row.subject_id,), kwargs={}, options={})


class BrokerDispatcher:
    def __init__(self, broker: dramatiq.Broker, db: Database, *, mark_batch: int = 500):
        self.broker = broker
        self.db = db
        self.mark_batch = mark_batch
        self._marks: queue.Queue[str | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def send(self, row: OutboxMessage) -> None:
        """Enqueue one outbox row (raises if the broker is unreachable)."""
        self.broker.enqueue(to_message(row), delay=row.delay_ms or None)

    def dispatch(self, messages: list[OutboxMessage]) -> None:
        for row in messages:
            try:
                self.send(row)
            except Exception:
                log.warning("broker unavailable; outbox %s left for the relay", row.id,
                            exc_info=True)
                return
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
            ids, stop = [first], False
            while len(ids) < self.mark_batch:
                try:
                    nxt = self._marks.get(timeout=0.02)
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                ids.append(nxt)
            self._mark(ids)
            if stop:
                return

    def _mark(self, ids: list[str]) -> None:
        try:
            with self.db.write() as s:
                s.execute(update(OutboxMessage).where(OutboxMessage.id.in_(ids))
                          .values(dispatched_at=utcnow()))
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
