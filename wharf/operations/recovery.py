"""The slow paths that make the broker a doorbell: the outbox relay and the recovery sweep.

``relay`` sends outbox rows the fast path did not mark dispatched (older than a grace
period, so it does not race the fast path). On PostgreSQL rows are claimed with
``FOR UPDATE SKIP LOCKED`` so several relays share the work; on SQLite the write
transaction is a short ``BEGIN IMMEDIATE``.

``recover`` re-enqueues operations that are due but have no message in flight: pending
ones whose retry time came (or whose message was lost with the broker), and running
ones whose lease expired (their worker died). One that used up its attempts is failed.
An operation with an undispatched outbox row is left to the relay (its message is on
its way), so the two slow paths never both deliver it.

Both ring one doorbell per kind per batch, not one per operation: the worker that answers
a bell drains every due operation of its kind (``tasks.actors``), and every row or
operation a batch read was committed before that batch's bell was sent, so the answer's
claims see them all. Neither trusts a doorbell flag (``BrokerDispatcher.send``): they
run because something may have been lost, a flag's bell included.

Timing (DESIGN §3.6; issue 12 asks for an orphan of kill -9 to complete within 15 s): a
lease runs out ``WHARF_OPERATION_LEASE_SECONDS`` (8) after its last renewal, the next
recovery sweep (every ``WHARF_RECOVERY_INTERVAL``, 2 s, rung by the scheduler's tick,
at most 0.5 s late) re-rings it, and a worker claims it within a second: about 11 s at
worst. The queries are cheap whatever the table's size: each is bounded by the running
or pending rows it can match (``ix_operations_lease``, ``ix_operations_due``), never by
the finished ones, which are nearly all of them.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, or_, select, update

from storage.db import Database
from storage.enums import AttemptOutcome, OperationStatus
from storage.models import Operation, OutboxMessage
from wharf.infra.clock import utcnow
from wharf.operations.finish import Outcome, finish
from wharf.operations.service import QUEUE, outbox_for

log = logging.getLogger("wharf.operations")
#: The error of an attempt whose worker stopped answering (its lease expired).
LOST_ATTEMPT = "the worker stopped responding; its lease expired"

Send = Callable[[OutboxMessage], None]


@dataclass
class RecoveryReport:
    requeued: int = 0
    expired: int = 0


def is_bell(row: OutboxMessage) -> bool:
    """An operation's outbox row that a doorbell of its kind covers: due now (a delayed
    retry's row waits for its own time)."""
    return row.queue_name == QUEUE and not row.delay_ms


def relay(db: Database, send: Send, *, grace_seconds: float = 5.0, batch: int = 500) -> int:
    """Send undispatched outbox rows older than the grace period; returns how many."""
    cutoff = utcnow() - timedelta(seconds=grace_seconds)
    with db.write() as s:
        q = (select(OutboxMessage)
             .where(OutboxMessage.dispatched_at.is_(None), OutboxMessage.created_at < cutoff)
             .order_by(OutboxMessage.created_at).limit(batch))
        if db.is_postgres:
            q = q.with_for_update(skip_locked=True)
        rows = list(s.scalars(q))
        now = utcnow()
        sent = 0
        rung: set[str] = set()  # kinds whose bell this batch sent: it covers their rows
        for row in rows:
            row.send_attempts += 1
            if not (is_bell(row) and row.actor_name in rung):
                try:
                    send(row)
                except Exception:
                    log.warning("relay: could not send outbox %s; will retry", row.id,
                                exc_info=True)
                    break
                if is_bell(row):
                    rung.add(row.actor_name)
            row.dispatched_at = now
            sent += 1
    if sent:
        log.info("relay: sent %d outbox message(s)", sent)
    return sent


def recover(db: Database, send: Send, *, key_ttl: int, grace_seconds: float = 5.0,
            batch: int = 500, handlers: Mapping[str, Any] | None = None) -> RecoveryReport:
    """Re-ring what is due; fail what used up its attempts. An operation failed here is
    finished as every finisher does (``wharf.operations.finish``: its Idempotency-Key kept
    ``key_ttl`` seconds, counted, logged, its long-polls woken) and gets its kind's
    failure hooks like one the executor fails (``on_failed`` in the same transaction,
    ``compensate`` after it), so e.g. a replace's staged object is queued for deletion
    instead of left behind."""
    now = utcnow()
    stale = now - timedelta(seconds=grace_seconds)
    report = RecoveryReport()
    with db.write() as s:
        # Running with an expired lease and no attempts left: fail, nobody will claim it.
        q = select(Operation).where(
            Operation.status == OperationStatus.RUNNING, Operation.lease_expires_at < now,
            Operation.attempts >= Operation.max_attempts).limit(batch)
        if db.is_postgres:  # (SQLite's write transaction is exclusive)
            q = q.with_for_update(skip_locked=True)
        failed = list(s.scalars(q))
        error = {"code": "lease_expired", "retryable": False,
                 "message": "the worker stopped responding on the last attempt"}
        finish(s, [Outcome(op, OperationStatus.FAILED, error=error, attempt=AttemptOutcome.LOST,
                           attempt_error={"code": "lease_expired", "retryable": True,
                                          "message": LOST_ATTEMPT},
                           handler=(handlers or {}).get(op.kind), when="after recovery")
                   for op in failed], key_ttl=key_ttl, now=now)
        report.expired = len(failed)
        # An operation whose message still waits in the outbox (the broker was down when
        # it was announced) has one on its way: the relay sends it and marks the row, so
        # ringing here as well would only deliver it twice and leave the row unmarked.
        announced = (select(OutboxMessage.id).where(OutboxMessage.subject_id == Operation.id,
                                                    OutboxMessage.dispatched_at.is_(None))
                     .exists())
        due = list(s.scalars(select(Operation).where(
            Operation.attempts < Operation.max_attempts, ~announced,
            or_(and_(Operation.status == OperationStatus.PENDING, Operation.updated_at < stale,
                     or_(Operation.next_attempt_at.is_(None), Operation.next_attempt_at <= now)),
                and_(Operation.status == OperationStatus.RUNNING,
                     Operation.lease_expires_at < now)))
            .order_by(Operation.updated_at).limit(batch)))
        # Touch them so the next sweep does not ring again while these messages are queued.
        if due:
            s.execute(update(Operation).where(Operation.id.in_([o.id for o in due]))
                      .values(updated_at=now))
    by_kind: dict[str, list[Operation]] = {}
    for op in due:
        by_kind.setdefault(op.kind, []).append(op)
    for ops in by_kind.values():  # one bell per kind: its answer drains them all
        try:
            send(outbox_for(ops[0]))
        except Exception:
            log.warning("recover: broker unavailable; will retry", exc_info=True)
            break
        report.requeued += len(ops)
    if report.requeued or report.expired:
        log.info("recover: re-enqueued %d operation(s), expired %d", report.requeued,
                 report.expired)
    return report
