"""An operation's terminal state, written in one place: :func:`finish`.

Every finisher calls it: the executor (a completed batch, one completed or failed
operation), a cancel, the recovery sweep (a lease that expired on the last attempt), the
upload-session expiry, an asset upload abandoned, an account's deletion. For each operation
it is given, in the caller's transaction:

- the row: ``completed`` or ``failed``, its result or error, ``completed_at``, the lease
  and the next attempt cleared, and ``key_expires_at`` (``WHARF_IDEMPOTENCY_KEY_TTL`` from
  now: the Idempotency-Key is released then, not when the row is deleted);
- its open attempt, if it has one (``attempt``): finished with that outcome;
- the ``FINISHED_HOOKS`` of the capabilities that react to an operation's end (the
  completion webhooks register theirs: ``wharf.webhooks``), each given the whole list;
- a failed one's ``on_failed`` hook (``Outcome.handler``; ``compensate`` after commit);

and once the transaction commits (never if it rolls back), in this order:
- ``compensate`` of the failed ones with a handler;

- the notices that wake a waiting ``Prefer: wait`` or long-poll
  (``storage.db.notify_after_commit``: the database's ``on_notices_committed``, the
  process's notifier);
- ``wharf_operations_finished_total`` (kind, status, error code);
- one log line (logger ``wharf.operations``): ``operation_id``, ``kind``, ``attempt``,
  ``status``, ``error_code`` (failed), ``duration_s`` (from submission to finish) and
  ``trace_id`` (the operation's trace, when it has one); INFO when completed, WARNING
  when failed, nothing built when that level is off.

Each of the two writes is one statement for the whole list on PostgreSQL (its values as
arrays, ``unnest``; both in one pipelined round trip), one executemany elsewhere, so a
batch costs about what one operation does. The caller holds the rows: it
locked them (``FOR UPDATE``; SQLite's write transaction is exclusive) or otherwise made
sure they are still open and its own; :func:`finish` writes by id.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, bindparam, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session, object_session
from sqlalchemy.orm.attributes import set_committed_value

from storage.db import after_commit, json_text, notify_after_commit
from storage.driver import DriverStatement, direct, execute_sql, pipelined
from storage.enums import AttemptOutcome, OperationStatus
from storage.models import Operation, OperationAttempt
from wharf.infra.clock import utcnow
from wharf.observability import logctx, metrics
from wharf.operations.hooks import run_compensate, run_on_failed
from wharf.operations.idempotency import released_at
from wharf.operations.notify import Done, retry_fields

log = logging.getLogger("wharf.operations")

#: What a capability does, in the finishing transaction, when operations end: called with
#: the session and every :class:`Outcome` of the call (one call per :func:`finish`). The
#: engine knows no capability: each registers its own on import (``wharf.webhooks``), and
#: the composition root imports every capability (``wharfd.capabilities``).
FinishedHook = Callable[[Session, Sequence["Outcome"]], object]
FINISHED_HOOKS: list[FinishedHook] = []

_OPS = Operation.__table__
_ATTEMPTS = OperationAttempt.__table__
_JSON = JSON(none_as_null=True)  # None is SQL NULL (a completed row has no error)

MARK_FINISHED = DriverStatement(update(_OPS).where(_OPS.c.id == bindparam("b_id")).values(
    status=bindparam("b_status", type_=_OPS.c.status.type),
    result=bindparam("b_result", type_=_JSON), error=bindparam("b_error", type_=_JSON),
    completed_at=bindparam("b_now", type_=_OPS.c.completed_at.type),
    updated_at=bindparam("b_now", type_=_OPS.c.updated_at.type),
    lease_owner=None, lease_expires_at=None, next_attempt_at=None,
    key_expires_at=bindparam("b_key_until", type_=_OPS.c.key_expires_at.type)))
FINISH_ATTEMPT = DriverStatement(update(_ATTEMPTS).where(
    _ATTEMPTS.c.operation_id == bindparam("b_id"),
    _ATTEMPTS.c.finished_at.is_(None)).values(
    finished_at=bindparam("b_now", type_=_ATTEMPTS.c.finished_at.type),
    outcome=bindparam("b_outcome", type_=_ATTEMPTS.c.outcome.type),
    error=bindparam("b_error", type_=_JSON)))

# On the driver (PostgreSQL): each of the two is ONE statement for the whole list, its
# per-operation values as arrays (``unnest``): PostgreSQL plans and runs it once, where
# an executemany runs it once per operation. (Arrays in binary: no quoting per element.)
_MARK_FINISHED_SQL = (
    "UPDATE operations SET status = v.status, result = CAST(v.result AS json), "
    "error = CAST(v.error AS json), completed_at = %(now)s, updated_at = %(now)s, "
    "lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = NULL, "
    "key_expires_at = %(key_until)s FROM unnest(CAST(%(ids)b AS varchar[]), "
    "CAST(%(statuses)b AS varchar[]), CAST(%(results)b AS text[]), "
    "CAST(%(errors)b AS text[])) AS v(id, status, result, error) "
    "WHERE operations.id = v.id")
_FINISH_ATTEMPT_SQL = (
    "UPDATE operation_attempts SET finished_at = %(now)s, outcome = v.outcome, "
    "error = CAST(v.error AS json) FROM unnest(CAST(%(ids)b AS varchar[]), "
    "CAST(%(outcomes)b AS varchar[]), CAST(%(errors)b AS text[])) AS v(id, outcome, error) "
    "WHERE operation_attempts.operation_id = v.id "
    "AND operation_attempts.finished_at IS NULL")


def _json(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json_text(value)


def _write(conn: Connection, outcomes: Sequence[Outcome], now: datetime,
           key_until: datetime) -> None:
    """The rows' and open attempts' terminal state (module docstring): one statement each
    on the driver, else one executemany each."""
    attempts = [o for o in outcomes if o.attempt is not None]
    if direct(conn):
        with pipelined(conn):  # (one round trip for both)
            execute_sql(conn, _MARK_FINISHED_SQL, {
                "now": now, "key_until": key_until, "ids": [o.op.id for o in outcomes],
                "statuses": [str(o.status) for o in outcomes],
                "results": [_json(o.result) for o in outcomes],
                "errors": [_json(o.error) for o in outcomes]})
            if attempts:
                execute_sql(conn, _FINISH_ATTEMPT_SQL, {
                    "now": now, "ids": [o.op.id for o in attempts],
                    "outcomes": [str(o.attempt) for o in attempts],
                    "errors": [_json(o.attempt_error if o.attempt_error is not None
                                     else o.error) for o in attempts]})
        return
    MARK_FINISHED.executemany(conn, [
        {"b_id": o.op.id, "b_status": o.status, "b_result": o.result,
         "b_error": o.error, "b_now": now, "b_key_until": key_until}
        for o in outcomes])
    FINISH_ATTEMPT.executemany(conn, [
        {"b_id": o.op.id, "b_now": now, "b_outcome": o.attempt,
         "b_error": o.attempt_error if o.attempt_error is not None else o.error}
        for o in attempts])


#: The columns :func:`finish` sets, as an ``Operation`` reads them afterwards.
_SET = ("status", "result", "error", "completed_at", "updated_at", "lease_owner",
        "lease_expires_at", "next_attempt_at", "key_expires_at")


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one operation ends. ``op``: its row as the caller holds it (loaded, locked).
    ``attempt``: the outcome of its open attempt (``completed``, ``failed``, ``lost``),
    None when it has none open (a pending operation); ``attempt_error`` its error
    (``error`` when not given). ``handler``: the kind's handler, whose failure hooks
    (``wharf.operations.hooks``) a failed operation gets."""

    op: Operation
    status: OperationStatus  # completed | failed
    error: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    attempt: AttemptOutcome | None = None
    attempt_error: dict[str, Any] | None = None
    handler: Any = None  # failed: its kind's failure hooks run (``when``: for the log)
    when: str = "after failure"


def finish(s: Session, outcomes: Sequence[Outcome], *, key_ttl: int,
           now: datetime | None = None) -> list[Done]:
    """Write the terminal state of ``outcomes`` in ``s``'s transaction (module docstring);
    returns each one's notice (the row as committed). ``key_ttl``: seconds the
    Idempotency-Key stays taken (``Settings.idempotency_key_ttl``)."""
    if not outcomes:
        return []
    now = now or utcnow()
    key_until = released_at(now, key_ttl)
    _write(s.connection(), outcomes, now, key_until)
    for hook in FINISHED_HOOKS:
        hook(s, outcomes)
    done = [Done(id=o.op.id, actor_id=o.op.actor_id, kind=o.op.kind, status=o.status,
                 attempts=o.op.attempts, max_attempts=o.op.max_attempts,
                 created_at=o.op.created_at, updated_at=now, completed_at=now,
                 error=o.error, result=o.result, payload=retry_fields(o.op))
            for o in outcomes]
    for o in outcomes:
        _reflect(o, now, key_until)
    hooked = [o for o in outcomes if o.handler is not None and o.status == OperationStatus.FAILED]
    for o in hooked:  # ``on_failed`` in this transaction, ``compensate`` after it
        with logctx.bound_op(o.op):
            run_on_failed(o.handler, s, o.op, o.error or {})
    if hooked:
        after_commit(s, lambda: _compensate(hooked))
    # After commit, in this order: compensations, counts and log lines, then the notices
    # (the database's sink runs after the callbacks): a woken reader finds the failed
    # operation's side effects already undone.
    after_commit(s, lambda: finished(outcomes, done))
    notify_after_commit(s, list(done))
    return done


def _compensate(outcomes: Sequence[Outcome]) -> None:
    for o in outcomes:
        with logctx.bound_op(o.op):
            run_compensate(o.handler, o.op, o.when)


def _reflect(o: Outcome, now: datetime, key_until: datetime) -> None:
    """The caller's ``op`` reads what was written (an ORM row without becoming dirty: the
    session must not write it again)."""
    values = (o.status, o.result, o.error, now, now, None, None, None, key_until)
    if object_session(o.op) is not None:
        for name, value in zip(_SET, values, strict=True):
            set_committed_value(o.op, name, value)
    else:
        o.op.__dict__.update(zip(_SET, values, strict=True))


def finished(outcomes: Sequence[Outcome], done: Sequence[Done]) -> None:
    """After commit: count each outcome and log it (one line each)."""
    completed_on = log.isEnabledFor(logging.INFO)
    failed_on = log.isEnabledFor(logging.WARNING)
    for o, d in zip(outcomes, done, strict=True):
        code = str(o.error.get("code", "")) if o.error else ""
        metrics.OPS_FINISHED.labels(d.kind, d.status, code).inc()
        failed = d.status == OperationStatus.FAILED
        if not (failed_on if failed else completed_on):
            continue
        extra: dict[str, Any] = {
            "status": d.status,
            "duration_s": round((d.updated_at - d.created_at).total_seconds(), 4)}
        if failed:
            extra["error_code"] = code
        trace_context = getattr(o.op, "trace_context", None)
        if trace_context:  # W3C traceparent: version-traceid-spanid-flags
            extra["trace_id"] = trace_context.split("-")[1]
        # (Bound as its operation: operation_id, kind, attempt, and not the batch's ids.)
        with logctx.bound_op(d):
            log.log(logging.WARNING if failed else logging.INFO, "operation %s %s", d.id,
                    d.status, extra=extra)
