"""Submitting many operations at once (``POST /api/operations:batch``, issue 43).

A batch is up to the request schema's ``MAX_BATCH_ITEMS`` submissions, each with its own
Idempotency-Key and its own answer, recorded in ONE write transaction: all the operations
it records commit together, or none does (kill -9 included). Each item follows the single
route's rules:

- its ``prepare`` validates and authorizes it (the kind's own, run in the batch's
  transaction; only kinds whose ``prepare`` only reads are batched, so an item refused
  there leaves nothing to undo);
- a key the actor already used answers that operation (a replay), or 409
  ``idempotency_key_reused`` for a different request; a replay never depends on the
  caller's current rights (the recorded operation is looked up before ``prepare``);
- a key used twice in one batch: the first item that passes ``prepare`` claims it, a later
  one is a replay of it (same request) or 409 (different request);
- quotas count each operation: the batch reads the actor's counts once
  (:func:`wharf.operations.quotas.room`) and records only as many new operations as fit;
  the others answer 429 ``quota_exceeded``. An actor's batches take turns (a
  transaction-scoped lock on PostgreSQL; SQLite's writes are serial), so each counts the
  rows of the one before it and concurrent batches cannot pass the quota together.

Recording is a few statements, whatever the batch's size: one lookup of the batch's keys,
the ``prepare`` reads (``create_resource`` memoizes its permission check per folder), one
multi-row ``INSERT … ON CONFLICT (actor_id, idempotency_key) DO NOTHING RETURNING id``
for the operations (a key a concurrent request took meanwhile returns no row: it is read
and answered as a replay), then the outbox rows and the audit rows (one statement each
over arrays on PostgreSQL, pipelined; an executemany elsewhere), one commit. The outbox
rows are announced after the commit as a single submission's are (the dispatcher rings
one doorbell for a kind's rows).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from storage.db import OutboxNotice, announce_after_commit
from storage.driver import DriverStatement, pipelined
from storage.models import Operation
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Unauthenticated, WharfError
from wharf.infra.ids import new_id
from wharf.infra.limits import lock_name
from wharf.observability import metrics, tracing
from wharf.operations import quotas
from wharf.operations.errors import IdempotencyKeyReused, OperationStateConflict
from wharf.operations.idempotency import check_key, check_same_request, fingerprint
from wharf.operations.service import (
    OPERATION_KEY,
    OPERATIONS,
    OUTBOX,
    OUTBOX_COLUMNS,
    PENDING_COLUMNS,
    QUEUE,
    Operations,
    Prepare,
    Submission,
    actor_name,
    pending_row,
)

_INSERT_OUTBOX = DriverStatement.insert_rows(
    OUTBOX, [*OUTBOX_COLUMNS, "subject_id", "delay_ms", "send_attempts"])
_INSERT_AUDIT = DriverStatement.insert_rows(audit.AUDIT, list(audit.COLUMNS))
_BY_KEYS = select(*OPERATIONS.c).where(
    OPERATIONS.c.actor_id == bindparam("actor"),
    OPERATIONS.c.idempotency_key.in_(bindparam("keys", expanding=True)))


@dataclass
class BatchItem:
    """One item of a batch: its kind, key, request (as its fingerprint sees it) and
    ``prepare``; or the refusal it already met while being read (``error``)."""

    kind: str
    key: str | None
    request: dict[str, Any]
    prepare: Prepare | None = None
    error: WharfError | None = None


@dataclass
class ItemAnswer:
    """An item's answer: its operation (``submission.created``: recorded by this batch;
    else a replay), or its refusal."""

    submission: Submission | None = None
    error: WharfError | None = None


@dataclass
class _Pending:
    index: int
    item: BatchItem
    fp: str
    op_id: str = ""
    scope_id: str | None = None
    payload: Any = None
    duplicates: list[int] = field(default_factory=list)


def _insert_operations(dialect: str) -> Any:
    ins = postgresql.insert(OPERATIONS) if dialect == "postgresql" else sqlite.insert(OPERATIONS)
    return ins.on_conflict_do_nothing(index_elements=list(OPERATION_KEY)).returning(
        OPERATIONS.c.id, OPERATIONS.c.idempotency_key)


#: The batch's operations (keys taken meanwhile skipped), by dialect: on the driver one
#: statement over arrays, whatever the number of items.
_INSERT_OPERATIONS = {dialect: DriverStatement.insert_rows_returning(
    _insert_operations(dialect), PENDING_COLUMNS) for dialect in ("postgresql", "sqlite")}


def submit_batch(ops: Operations, ctx: RequestContext,
                 items: Sequence[BatchItem]) -> list[ItemAnswer]:
    """Record ``items`` in one transaction; one answer per item, in order."""
    actor = ctx.principal.user_id
    if actor is None:
        raise Unauthenticated("Only a signed-in user can start an operation.")
    answers = [ItemAnswer(error=item.error) for item in items]
    live: list[_Pending] = []
    for i, item in enumerate(items):
        if item.error is not None:
            continue
        try:
            check_key(item.key)
        except WharfError as exc:
            answers[i].error = exc
            continue
        live.append(_Pending(i, item, fingerprint(item.kind, item.request)))
    created: list[Operation] = []
    with ops.db.write() as s:
        # One batch of an actor at a time (PostgreSQL; SQLite's writes are serial): the
        # quota count below must see the rows of the actor's previous batch, and two
        # batches holding each other's keys would deadlock.
        lock_name(s, f"operations-batch:{actor}")
        # Keys already recorded: replays (or 409), whatever the caller may do now.
        keys = list({p.item.key for p in live if p.item.key is not None})
        if keys:
            recorded = {row.idempotency_key: Operation.detached(dict(row._mapping))
                        for row in s.connection().execute(
                            _BY_KEYS, {"actor": actor, "keys": keys})}
            live = [p for p in live if not _answered_by(recorded, p, answers)]
        claimed: dict[str, _Pending] = {}
        for p in live:
            if p.item.key in claimed:  # a later item of a key this batch claimed
                first = claimed[p.item.key]
                if first.fp == p.fp:
                    first.duplicates.append(p.index)
                else:
                    answers[p.index].error = _reused(first)
                continue
            p.op_id = new_id()
            try:
                assert p.item.prepare is not None
                p.scope_id, p.payload = p.item.prepare(s, p.op_id)
            except WharfError as exc:
                answers[p.index].error = exc
                continue
            claimed[str(p.item.key)] = p
        fits, refusal = quotas.room(s, ops.settings, ctx.principal, len(claimed))
        to_record = list(claimed.values())
        for p in to_record[fits:]:
            assert refusal is not None
            for i in (p.index, *p.duplicates):
                answers[i].error = refusal
        created = _record(ops, s, ctx, to_record[:fits], answers)
    for op in created:
        metrics.OPS_SUBMITTED.labels(op.kind).inc()
    return answers


def _reused(first: _Pending) -> WharfError:
    return IdempotencyKeyReused("This Idempotency-Key was used for a different request "
                                "earlier in this batch.",
                                details={"item": first.index})


def _answered_by(recorded: dict[str, Operation], p: _Pending,
                 answers: list[ItemAnswer]) -> bool:
    """Answer ``p`` from the operation its key already names (True), if there is one."""
    op = recorded.get(str(p.item.key))
    if op is None:
        return False
    try:
        check_same_request(op.request_fingerprint if op.kind == p.item.kind else None,
                           p.fp, {"operation_id": op.id})
    except WharfError as exc:
        answers[p.index].error = exc
    else:
        answers[p.index].submission = Submission(op, False)
    return True


def _record(ops: Operations, s: Session, ctx: RequestContext, batch: list[_Pending],
            answers: list[ItemAnswer]) -> list[Operation]:
    """Insert ``batch``'s operations, outbox and audit rows; answer each of its items."""
    if not batch:
        return []
    # in key order: concurrent writers of the same keys (single submissions) take them in
    # one order
    batch = sorted(batch, key=lambda p: str(p.item.key))
    actor = str(ctx.principal.user_id)
    now = utcnow()
    trace_context = tracing.current_traceparent()
    rows = [pending_row(p.op_id, p.item.kind, actor, p.item.key, p.fp, p.scope_id, p.payload,
                        max_attempts=ops.settings.operation_max_attempts, now=now,
                        trace_context=trace_context)
            for p in batch]
    conn = s.connection()
    dialect = "postgresql" if ops.db.is_postgres else "sqlite"
    inserted = {row[0] for row in _INSERT_OPERATIONS[dialect].insert_returning(conn, rows)}
    lost = [p for p in batch if p.op_id not in inserted]
    if lost:  # keys a concurrent request recorded meanwhile: answered as replays
        recorded = {row.idempotency_key: Operation.detached(dict(row._mapping))
                    for row in conn.execute(_BY_KEYS, {"actor": actor,
                                                       "keys": [p.item.key for p in lost]})}
        for p in lost:
            if not _answered_by(recorded, p, answers):
                answers[p.index].error = OperationStateConflict(
                    "Could not record the operation; retry the request.")
            for i in p.duplicates:
                answers[i] = answers[p.index]
    kept = [(p, row) for p, row in zip(batch, rows, strict=True) if p.op_id in inserted]
    notices = [OutboxNotice(id=new_id(), queue_name=QUEUE, actor_name=actor_name(p.item.kind),
                            subject_id=p.op_id, trace_context=trace_context) for p, _ in kept]
    with pipelined(conn):
        _INSERT_OUTBOX.executemany(conn, [
            {"id": n.id, "actor_name": n.actor_name, "queue_name": n.queue_name,
             "created_at": now, "trace_context": trace_context, "subject_id": n.subject_id,
             "delay_ms": 0, "send_attempts": 0} for n in notices])
        _INSERT_AUDIT.executemany(conn, [
            audit.values(ctx, "operation.submit", "operation", p.op_id, space_id=p.scope_id,
                         details={"kind": p.item.kind}) for p, _ in kept])
    created = []
    for (p, row), notice in zip(kept, notices, strict=True):
        announce_after_commit(s, notice)
        op = Operation.detached(row)
        created.append(op)
        answers[p.index].submission = Submission(op, True)
        for i in p.duplicates:
            answers[i].submission = Submission(op, False)
    return created
