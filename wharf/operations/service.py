"""Submitting, reading, retrying and cancelling operations.

Submission validates and authorizes (through the kind's ``prepare``), then records the
operation, its outbox row and an audit row in one transaction. The same actor + key +
request returns the same operation (concurrent requests included: the unique constraint
on (actor, key) decides); the same key with a different request is 409.

The key's rules (its shape, the request's fingerprint, replay or 409, release after its
TTL) are ``wharf.operations.idempotency``'s, shared with upload sessions.

The recording is plain SQL (Core, no unit of work): ``INSERT … ON CONFLICT (actor_id,
idempotency_key) DO NOTHING RETURNING id`` both records and detects a replay, so a first
request costs no lookup. On PostgreSQL the operation, outbox and audit INSERTs are one
statement (data-modifying CTEs: one round trip); on SQLite three. A replay (no row
returned) rolls the whole transaction back, ``prepare``'s writes included, and answers the
recorded operation from a fresh read; a ``prepare`` that refuses (permission lost since, an
upload session already verifying) is also answered by the recorded operation if there is
one, so a replay never depends on the caller's current rights.

An operation is its actor's: reading it, its attempts, a retry and a cancel answer 404 to
anyone else, except an operator (``wharf.infra.operators``), who may do all four on any user's
operation (the audit row of a retry or cancel then names the operator as actor and the
owner in its details). Listing stays per actor. The operation still executes as its actor.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import Integer, bindparam, insert, literal, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.db import (
    ConnectionLost,
    Database,
    OutboxNotice,
    announce_after_commit,
    send_after_commit,
)
from storage.driver import DriverStatement
from storage.enums import DONE_STATUSES, OperationStatus, values
from storage.models import Operation, OperationAttempt, OutboxMessage
from storage.results import rowcount
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import NotFound, Unauthenticated, ValidationFailed, WharfError
from wharf.infra.ids import is_id, new_id
from wharf.infra.operators import is_operator
from wharf.infra.pagination import decode_cursor, page
from wharf.infra.settings import Settings
from wharf.observability import metrics, tracing
from wharf.operations import quotas
from wharf.operations.errors import (
    OperationStateConflict,
    QuotaExceeded,
    RetryNotPossible,
)
from wharf.operations.finish import Outcome, finish
from wharf.operations.idempotency import check_key, check_same_request, fingerprint
from wharf.operations.kinds import to_json
from wharf.operations.registry import KINDS

#: What may name an operation kind (a filter naming an unknown kind matches nothing).
KIND_PATTERN = r"^[a-z_]{1,40}$"
STATUSES = values(OperationStatus)
QUEUE = "operations"
DONE = tuple(s.value for s in DONE_STATUSES)
log = logging.getLogger("wharf.operations")


def actor_name(kind: str) -> str:
    return f"op_{kind}"


def can_retry(status: str, kind: str, payload: Mapping[str, Any] | None) -> bool:
    """Whether ``POST /api/operations/{id}/retry`` can reopen an operation of ``kind`` in
    ``status`` with ``payload``: the rule :meth:`Operations.retry` applies, and what an
    operation's ``can_retry`` (its JSON, the operators' dashboard) says. Only a failed one,
    and not of a kind whose failure disposed of its input (its
    ``KindSpec.failure_consumes_input``, or ``failure_consumes_input_if`` set in the
    payload: 409 ``retry_not_possible``; an unknown kind neither)."""
    spec = KINDS.get(kind)
    if status != OperationStatus.FAILED or spec is None or spec.failure_consumes_input:
        return False
    field = spec.failure_consumes_input_if
    return field is None or (payload or {}).get(field) is None


def outbox_for(op: Operation, delay_ms: int = 0) -> OutboxMessage:
    """The outbox row that rings ``op``'s kind (sent in ``op``'s trace, if it has one)."""
    return OutboxMessage(id=new_id(), actor_name=actor_name(op.kind), queue_name=QUEUE,
                         subject_id=op.id, delay_ms=max(0, int(delay_ms)),
                         trace_context=op.trace_context)


@dataclass
class Submission:
    operation: Operation
    created: bool


# ``prepare(session, operation_id)`` validates and authorizes, returning (scope_id, payload):
# the kind's payload Struct (``wharf.operations.kinds``) or its stored dict form.
Prepare = Callable[[Session, str], tuple[str | None, msgspec.Struct | dict[str, Any]]]

#: The tables a submission writes (here and in a batch, ``wharf.operations.bulk``).
OPERATIONS = Operation.__table__
OUTBOX = OutboxMessage.__table__
#: The columns a submission writes (the rest start NULL: no result, error, lease, ...), as
#: :func:`pending_row` gives them.
PENDING_COLUMNS = ("id", "kind", "status", "actor_id", "scope_id", "idempotency_key",
                   "request_fingerprint", "payload", "attempts", "max_attempts", "created_at",
                   "updated_at", "trace_context", "next_attempt_at")
#: The outbox columns a submission sets per row (``subject_id`` aside: the operation's id).
OUTBOX_COLUMNS = ("id", "actor_name", "queue_name", "created_at", "trace_context")
OPERATION_KEY = ("actor_id", "idempotency_key")  # uq_operations_actor_key
_INSERT_OUTBOX = insert(OUTBOX)


def pending_row(op_id: str, kind: str, actor_id: str, key: str | None, fp: str,
                scope_id: str | None, payload: Any, *, max_attempts: int, now: datetime,
                trace_context: str | None, due_at: datetime | None = None) -> dict[str, Any]:
    """A new pending operation's row (the columns ``PENDING_COLUMNS`` names), as a single
    submission and a batch (``wharf.operations.bulk``) both record it."""
    return {"id": op_id, "kind": kind, "status": OperationStatus.PENDING, "actor_id": actor_id,
            "scope_id": scope_id, "idempotency_key": key, "request_fingerprint": fp,
            "payload": to_json(payload), "attempts": 0, "max_attempts": max_attempts,
            "created_at": now, "updated_at": now, "trace_context": trace_context,
            "next_attempt_at": due_at}


def _guarded_values() -> Any:
    """The operation row as a SELECT of parameters (``op_<column>``), returning a row only
    while the actor is within its quotas (:func:`wharf.operations.quotas.guard`)."""
    return select(*(bindparam(f"op_{c}", type_=OPERATIONS.c[c].type)
                    for c in PENDING_COLUMNS)
                  ).where(quotas.guard())


def _record_statement(dialect: str) -> Any:
    """``INSERT INTO operations … SELECT … WHERE <within quotas> ON CONFLICT (actor_id,
    idempotency_key) DO NOTHING RETURNING id`` (no row: the key is taken — a replay — or
    a quota is used up)."""
    ins = postgresql.insert(OPERATIONS) if dialect == "postgresql" else sqlite.insert(OPERATIONS)
    return (ins.from_select(list(PENDING_COLUMNS), _guarded_values())
            .on_conflict_do_nothing(index_elements=list(OPERATION_KEY)).returning(OPERATIONS.c.id))


def _record_all_statement() -> Any:
    """PostgreSQL: the operation, its outbox row and its audit row in one statement. The
    outbox and audit INSERTs select from the operation INSERT's RETURNING, so a replay
    (nothing inserted) inserts nothing else either; nor does a submission over a quota
    (the operation INSERT selects its row only within the quotas)."""
    op = (postgresql.insert(OPERATIONS).from_select(list(PENDING_COLUMNS),
                                                    _guarded_values())
          .on_conflict_do_nothing(index_elements=list(OPERATION_KEY))
          .returning(OPERATIONS.c.id).cte("new_op"))
    outbox = insert(OUTBOX).from_select(
        [*OUTBOX_COLUMNS, "subject_id", "delay_ms", "send_attempts"],
        select(*(bindparam(f"ob_{c}", type_=OUTBOX.c[c].type) for c in OUTBOX_COLUMNS),
               op.c.id, literal(0, Integer), literal(0, Integer))).cte("new_outbox")
    au_table = audit.AUDIT
    audit_row = insert(au_table).from_select(
        list(audit.COLUMNS),
        select(*(op.c.id if c == "target_id"
                 else bindparam(f"au_{c}", type_=au_table.c[c].type)
                 for c in audit.COLUMNS))).cte("new_audit")
    return select(op.c.id).add_cte(outbox, audit_row)


class _Replay(Exception):
    """The key was taken: roll back the submitting transaction and read the original."""


_BY_ID = DriverStatement(select(*OPERATIONS.c).where(OPERATIONS.c.id == bindparam("id")))


class Operations:
    def __init__(self, db: Database, settings: Settings,
                 handlers: dict[str, Any] | None = None):
        self.db = db
        self.settings = settings
        # The kinds' handlers: a cancelled operation is a failed one, so cancel runs the
        # same failure hooks as the executor (``on_failed`` in the transaction that marks
        # it failed, then ``compensate``).
        self.handlers = dict(handlers or {})
        dialect = "postgresql" if db.is_postgres else "sqlite"
        self._record_op = _record_statement(dialect)
        # One round trip for the three INSERTs where the database allows it (PostgreSQL),
        # on the driver (storage.driver).
        self._record_all = DriverStatement(_record_all_statement()) if db.is_postgres \
            else None

    # -- submit ------------------------------------------------------------------------
    def submit(self, ctx: RequestContext, kind: str, key: str | None, request: dict[str, Any],
               prepare: Prepare, *, due_at: datetime | None = None,
               prepare_reads_only: bool = False) -> Submission:
        """Record the operation ``prepare`` validates (or answer the one ``key`` already
        names). With ``due_at``, the operation is recorded but not announced: no outbox
        row, and no worker claims it before ``due_at`` unless the caller makes it due
        sooner (an asset upload does so once its bytes are stored).

        ``prepare_reads_only``: ``prepare`` only reads, and nothing it checks needs to hold
        until the operation is recorded (the executor checks again before any side
        effect). The submission then runs unbundled (``Database.unbundled``): its reads,
        then the one statement that records the operation with its outbox and audit rows,
        each committing on its own, with no ``BEGIN`` or ``COMMIT`` round trip."""
        key = check_key(key)
        fp = fingerprint(kind, request)
        actor = ctx.principal.user_id
        if actor is None:  # operations belong to a user (the API admits only users here)
            raise Unauthenticated("Only a signed-in user can start an operation.")
        reconnected = False
        # (Unbundled only where recording is one statement: PostgreSQL's, announced.)
        session = self.db.unbundled if prepare_reads_only and due_at is None \
            and self._record_all is not None else self.db.write
        for _ in range(3):
            op_id = new_id()
            prepared = False
            try:
                with session() as s:
                    scope_id, payload = prepare(s, op_id)
                    prepared = True
                    op = self.record_submission(s, ctx, op_id, kind, actor, key, fp,
                                                scope_id, payload, due_at=due_at)
                    if op is None:
                        raise _Replay  # rolls back whatever prepare wrote
            except _Replay:
                existing = self.replayed(ctx, kind, key, request)
                if existing is not None:
                    return Submission(existing, False)
                continue  # the operation that held the key is gone; record anew
            except ConnectionLost:
                # A pooled connection the server had closed: the pool has dropped its
                # connections from before; once more at once. (Nothing was committed, or,
                # unbundled, the record was: the key then answers it as a replay.)
                if reconnected:
                    raise
                reconnected = True
                continue
            except IntegrityError:
                continue  # a row prepare wrote raced another request's; try again
            except WharfError as exc:
                if not prepared or isinstance(exc, QuotaExceeded):
                    # Refused now (permission lost, the input moved on, a quota used
                    # up): a replay of a recorded request still answers with its
                    # operation.
                    existing = self.replayed(ctx, kind, key, request)
                    if existing is not None:
                        return Submission(existing, False)
                raise
            metrics.OPS_SUBMITTED.labels(kind).inc()
            return Submission(op, True)
        raise OperationStateConflict("Could not record the operation; retry the request.")

    def replayed(self, ctx: RequestContext, kind: str, key: str,
                 request: dict[str, Any]) -> Operation | None:
        """The operation recorded for ``key`` (a fresh read), or None; 409 if its request
        differs."""
        with self.db.read() as s:
            return self.find_by_key(s, ctx, kind, key, request)

    def record(self, s: Session, op_id: str, kind: str, actor_id: str, key: str | None,
               fp: str, scope_id: str | None,
               payload: msgspec.Struct | dict[str, Any]) -> Operation:
        """Insert a pending operation and its outbox row (sent after commit) through the
        ORM, for callers that check the key themselves (the retention sweep)."""
        now = utcnow()
        op = Operation(id=op_id, kind=kind, status=OperationStatus.PENDING, actor_id=actor_id,
                       scope_id=scope_id, idempotency_key=key, request_fingerprint=fp,
                       payload=to_json(payload), attempts=0,
                       max_attempts=self.settings.operation_max_attempts,
                       created_at=now, updated_at=now,
                       trace_context=tracing.current_traceparent())
        s.add(op)
        s.flush()
        send_after_commit(s, outbox_for(op))
        return op

    def record_submission(self, s: Session, ctx: RequestContext, op_id: str, kind: str,
                          actor_id: str, key: str, fp: str, scope_id: str | None,
                          payload: msgspec.Struct | dict[str, Any], *,
                          due_at: datetime | None = None) -> Operation | None:
        """Insert a pending operation, its outbox row (sent after commit) and its audit
        row; None (nothing inserted) when the actor already used ``key``. With
        ``due_at``: no outbox row, and the operation is not due before then."""
        now = utcnow()
        trace_context = tracing.current_traceparent()  # None (no work) when tracing is off
        row = pending_row(op_id, kind, actor_id, key, fp, scope_id, payload,
                          max_attempts=self.settings.operation_max_attempts, now=now,
                          trace_context=trace_context, due_at=due_at)
        notice = OutboxNotice(id=new_id(), queue_name=QUEUE, actor_name=actor_name(kind),
                              subject_id=op_id, trace_context=trace_context)
        outbox: dict[str, Any] = {"id": notice.id, "actor_name": notice.actor_name,
                                  "queue_name": notice.queue_name, "created_at": now,
                                  "trace_context": trace_context}
        audit_row = audit.values(ctx, "operation.submit", "operation", op_id,
                                 space_id=scope_id, details={"kind": kind})
        conn = s.connection()
        params = {f"op_{c}": v for c, v in row.items()}
        params.update(quotas.guard_params(self.settings, ctx.principal))
        if due_at is not None:
            if conn.execute(self._record_op, params).first() is None:
                self._not_recorded(s, ctx)
                return None
            conn.execute(audit.INSERT, audit_row)
            return Operation.detached(row)
        if self._record_all is not None:
            params.update({f"ob_{c}": v for c, v in outbox.items()})
            params.update({f"au_{c}": v for c, v in audit_row.items() if c != "target_id"})
            if self._record_all.first(conn, params) is None:
                self._not_recorded(s, ctx)
                return None
        else:
            if conn.execute(self._record_op, params).first() is None:
                self._not_recorded(s, ctx)
                return None
            conn.execute(_INSERT_OUTBOX, {**outbox, "subject_id": op_id, "delay_ms": 0,
                                           "send_attempts": 0})
            conn.execute(audit.INSERT, audit_row)
        announce_after_commit(s, notice)
        return Operation.detached(row)

    def _not_recorded(self, s: Session, ctx: RequestContext) -> None:
        """Nothing was inserted: the key is taken (a replay: returns), or a quota is used
        up (raises ``QuotaExceeded``; ``submit`` still answers a replay of a recorded
        key)."""
        quotas.check(s, self.settings, ctx.principal)

    # -- read --------------------------------------------------------------------------
    def find_by_key(self, session: Session, ctx: RequestContext, kind: str, key: str,
                    request: dict[str, Any]) -> Operation | None:
        """The actor's operation for ``key`` (a replay), or None; 409 if the request differs."""
        existing = self.by_key(session, ctx, key)
        if existing is not None:
            check_same_request(existing.request_fingerprint if existing.kind == kind else None,
                               fingerprint(kind, request), {"operation_id": existing.id})
        return existing

    @staticmethod
    def by_key(session: Session, ctx: RequestContext, key: str) -> Operation | None:
        """The actor's operation recorded under ``key`` (keys are scoped to the actor)."""
        return session.scalar(select(Operation).where(
            Operation.actor_id == ctx.principal.user_id, Operation.idempotency_key == key))

    def get(self, ctx: RequestContext, operation_id: str) -> Operation:
        """The caller's operation, or any user's for an operator (``wharf.infra.operators``),
        in a read transaction of its own."""
        with self.db.read() as session:
            return self.find(session, ctx, operation_id)

    def find(self, session: Session, ctx: RequestContext, operation_id: str) -> Operation:
        """:meth:`get` inside the caller's transaction."""
        op = session.get(Operation, operation_id) if is_id(operation_id) else None
        if op is None or not self._may_see(ctx, op.actor_id):
            raise NotFound("No such operation.")
        return op

    def _may_see(self, ctx: RequestContext, actor_id: str) -> bool:
        return actor_id == ctx.principal.user_id or is_operator(self.settings, ctx.principal)

    @staticmethod
    def _acted_for(ctx: RequestContext, op: Operation) -> dict[str, Any] | None:
        """An audit row's details when an operator acts on another user's operation."""
        if op.actor_id == ctx.principal.user_id:
            return None
        return {"operator": ctx.principal.username, "owner_id": op.actor_id}

    def peek(self, ctx: RequestContext, operation_id: str) -> Operation:
        """The caller's operation by one Core SELECT (no ORM identity map or unit of work):
        what a long-poll reads before and after it waits. The answer is a detached
        ``Operation`` (read it, never write it)."""
        row = None
        if is_id(operation_id):
            row = self.db.read_one(_BY_ID, {"id": operation_id})
        if row is None:
            raise NotFound("No such operation.")
        return self.visible(ctx, Operation.detached(row))

    def visible(self, ctx: RequestContext, op: Operation) -> Operation:
        """``op`` if the caller may see it (404 otherwise): a long-poll's answer from a
        completion notice is checked as a read is."""
        if not self._may_see(ctx, op.actor_id):
            raise NotFound("No such operation.")
        return op

    def attempts(self, ctx: RequestContext, operation_id: str) -> list[OperationAttempt]:
        """The operation's execution attempts, oldest first (in one read transaction)."""
        with self.db.read() as session:
            op = self.find(session, ctx, operation_id)
            return list(session.scalars(select(OperationAttempt).where(
                OperationAttempt.operation_id == op.id).order_by(OperationAttempt.number)))

    def list(self, ctx: RequestContext, *, status: str | None, kind: str | None, limit: int,
             cursor: str | None) -> tuple[list[Operation], str | None]:
        """The caller's operations, newest first, keyset-paged (in one read transaction)."""
        q = select(Operation).where(Operation.actor_id == ctx.principal.user_id)
        if status is not None:
            if status not in STATUSES:
                raise ValidationFailed(f"status must be one of {', '.join(STATUSES)}",
                                       details={"field": "status"})
            q = q.where(Operation.status == status)
        if kind is not None:
            if not re.match(KIND_PATTERN, kind):
                raise ValidationFailed("kind is not a known operation kind",
                                       details={"field": "kind"})
            q = q.where(Operation.kind == kind)
        after = decode_cursor("operations", cursor, 1)
        if after:
            q = q.where(Operation.id < after[0])
        with self.db.read() as session:
            rows = list(session.scalars(q.order_by(Operation.id.desc()).limit(limit + 1)))
        return page(rows, limit, "operations", lambda o: [o.id])

    # -- retry / cancel ----------------------------------------------------------------
    def retry(self, ctx: RequestContext, operation_id: str) -> Operation:
        with self.db.write() as s:
            op = self.find(s, ctx, operation_id)
            if op.status == OperationStatus.FAILED \
                    and not can_retry(op.status, op.kind, op.payload):
                raise RetryNotPossible(
                    f"A failed {op.kind} operation cannot be retried: its input was "
                    "discarded when it failed. Submit the request again with a new "
                    "Idempotency-Key.", details={"kind": op.kind, "reason": "input_consumed"})
            if op.status == OperationStatus.FAILED and op.actor_id == ctx.principal.user_id:
                # Opens an operation again: held to the submitter's open-operations quota
                # (an operator retrying another's operation is not).
                quotas.check(s, self.settings, ctx.principal, submission=False)
            now = utcnow()
            res = s.execute(update(Operation).where(
                Operation.id == op.id, Operation.status == OperationStatus.FAILED).values(
                status=OperationStatus.PENDING, error=None, result=None, completed_at=None,
                next_attempt_at=None, lease_owner=None, lease_expires_at=None,
                max_attempts=Operation.attempts + self.settings.operation_max_attempts,
                key_expires_at=None, updated_at=now))
            if rowcount(res) != 1:
                raise OperationStateConflict("Only a failed operation can be retried.",
                                             details={"status": op.status})
            send_after_commit(s, outbox_for(op))
            audit.record(s, ctx, "operation.retry", "operation", op.id, space_id=op.scope_id,
                         details=self._acted_for(ctx, op))
            s.flush()
            s.refresh(op)
        return op

    def cancel(self, ctx: RequestContext, operation_id: str) -> Operation:
        with self.db.write() as s:
            op = self.find(s, ctx, operation_id)
            by = "the submitter" if op.actor_id == ctx.principal.user_id else "an operator"
            error = {"code": "cancelled", "message": f"Cancelled by {by}.",
                     "retryable": False}
            s.refresh(op, with_for_update=True)  # (a worker may be claiming it)
            if op.status != OperationStatus.PENDING:
                raise OperationStateConflict("Only a pending operation can be cancelled.",
                                             details={"status": op.status})
            # Finished as every finisher does (webhooks, metrics, log, its long-polls).
            # Whatever a failed operation of this kind cleans up (a staged object queued
            # for deletion, an upload session reopened), a cancelled one cleans up too
            # (its failure hooks).
            finish(s, [Outcome(op, OperationStatus.FAILED, error=error,
                               handler=self.handlers.get(op.kind), when="after cancel")],
                   key_ttl=self.settings.idempotency_key_ttl)
            audit.record(s, ctx, "operation.cancel", "operation", op.id, space_id=op.scope_id,
                         details=self._acted_for(ctx, op))
            s.flush()
            s.refresh(op)
        return op
