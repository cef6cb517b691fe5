"""Executing one operation: the bookkeeping every kind shares, in one place.

1. Claim: one conditional UPDATE takes the lease (pending and due, or running with an
   expired lease). A duplicate delivery that finds the operation done or leased does nothing.
2. Re-resolve the actor's permission; lost → ``failed`` ``permission_revoked``, no effect.
3. Side effects (idempotent, keyed on ids in ``payload``) outside the product transaction.
4. Completion: product rows + ``completed`` in one transaction, only if we still hold the
   lease (permission checked once more inside it).
Errors are classified: retryable → ``pending`` with exponential backoff and jitter until
``max_attempts``; anything else → ``failed`` and the kind's ``compensate`` undoes what the
side effects left behind.
"""
from __future__ import annotations

import contextlib
import logging
import os
import random
import socket
import threading
import time
from collections.abc import Collection, Iterator, Mapping
from datetime import timedelta
from typing import Any, Protocol

import msgspec
from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from storage.db import Database, is_transient_db_error, send_after_commit
from storage.errors import StorageError
from storage.models import Operation, OperationAttempt
from storage.results import rowcount
from wharf import metrics
from wharf.clock import utcnow
from wharf.config import Settings
from wharf.context import Principal, RequestContext, system_principal
from wharf.errors import Forbidden, NotFound, WharfError, from_storage
from wharf.ids import new_id
from wharf.operations.errors import PermissionRevoked
from wharf.operations.hooks import run_compensate, run_on_failed
from wharf.operations.kinds import to_json
from wharf.operations.notify import LocalNotifier
from wharf.operations.service import outbox_for

log = logging.getLogger("wharf.operations")

# For the executor's ORM UPDATEs: the session never holds the rows they change (a fresh
# session, or objects that are re-read), so skip SQLAlchemy's in-Python "evaluate" pass.
NO_SYNC = {"synchronize_session": False}


class Handler(Protocol):
    kind: str

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        """Raise if the actor may no longer do this (NotFound/Forbidden → permission_revoked)."""

    def perform(self, op: Operation) -> None:
        """Idempotent side effects outside the product database."""

    def commit(self, session: Session, op: Operation,
               ctx: RequestContext) -> msgspec.Struct | dict[str, Any]:
        """Write the product rows; return the operation's result (the kind's result
        Struct from ``wharf.operations.kinds``)."""

    def compensate(self, op: Operation) -> None:
        """Undo side effects after the operation failed for good (idempotent)."""

    # Optional: ``on_failed(session, op, error)`` writes product rows in the same
    # transaction that marks the operation failed (e.g. queue an object for deletion).


class Hooks:
    """Test seams (pause points); production uses the no-op default."""

    def before_perform(self, op: Operation) -> None:
        pass

    def before_commit(self, op: Operation) -> None:
        pass


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def actor_principal(op: Operation) -> Principal:
    return Principal(kind="user", user_id=op.actor_id)


def due(now: Any) -> ColumnElement[bool]:
    """Pending and due, or running with an expired lease; attempts left."""
    return and_(or_(and_(Operation.status == "pending",
                         or_(Operation.next_attempt_at.is_(None),
                             Operation.next_attempt_at <= now)),
                    and_(Operation.status == "running", Operation.lease_expires_at < now)),
                Operation.attempts < Operation.max_attempts)


def claim_order() -> tuple[Any, ...]:
    """The order in which due operations are claimed: oldest first. (Issue 19 makes it
    per-actor round robin; keep it in this one place.)"""
    return (Operation.created_at, Operation.id)


class Executor:
    def __init__(self, db: Database, settings: Settings, handlers: Mapping[str, Handler], *,
                 notifier: LocalNotifier | None = None, hooks: Hooks | None = None) -> None:
        self.db = db
        self.settings = settings
        self.handlers = handlers
        self.notifier = notifier
        self.hooks = hooks or Hooks()
        self._leases: dict[str, str] = {}
        self._leases_lock = threading.Lock()
        self._keeper: threading.Thread | None = None

    # -- a batch -----------------------------------------------------------------------
    def run_batch(self, kinds: Collection[str] | None = None, *, limit: int = 32,
                  worker_id: str | None = None, include: str | None = None) -> int:
        """Claim up to ``limit`` due operations (of ``kinds``; all kinds when None; always
        including ``include`` if it is due), execute them, complete them; return how many
        were claimed (0: nothing was due)."""
        worker_id = worker_id or default_worker_id()
        now = utcnow()
        q = select(Operation.id).where(due(now))
        if kinds is not None:
            q = q.where(Operation.kind.in_(list(kinds)))
        with self.db.read() as s:
            ids = list(s.scalars(q.order_by(*claim_order()).limit(limit)))
        if include is not None:
            ids = [include, *[i for i in ids if i != include]][:limit]
        return sum(self.execute(op_id, worker_id) != "skipped" for op_id in ids)

    # -- the whole attempt -------------------------------------------------------------
    def execute(self, operation_id: str, worker_id: str | None = None) -> str:
        """Run one attempt; returns what happened (for logs and tests)."""
        worker_id = worker_id or default_worker_id()
        claimed = self._claim(operation_id, worker_id)
        if claimed is None:
            return "skipped"
        op, refusal = claimed
        handler = self.handlers.get(op.kind)
        try:
            if refusal is not None:
                raise refusal
            if handler is None:  # _claim refuses an unknown kind; a handler removed since
                raise WharfError(f"no handler for kind {op.kind}", code="unknown_kind")
            self.hooks.before_perform(op)
            with self._lease_kept(op, worker_id):
                handler.perform(op)
            self.hooks.before_commit(op)
            return self._complete(handler, op, worker_id)
        except (WharfError, StorageError) as exc:
            error = exc if isinstance(exc, WharfError) else from_storage(exc)
            if error.retryable:
                return self._retry_or_fail(handler, op, worker_id, error.to_dict())
            return self._fail(handler, op, worker_id, error.to_dict())
        except DBAPIError as exc:
            if is_transient_db_error(exc):
                return self._retry_or_fail(handler, op, worker_id, {
                    "code": "database_unavailable", "message": str(exc.orig)[:300],
                    "retryable": True})
            log.exception("operation %s: database error", op.id)
            return self._retry_or_fail(handler, op, worker_id, {
                "code": "internal_error", "message": "database error", "retryable": True})
        except Exception as exc:  # a bug or an unclassified failure: retry, bounded
            log.exception("operation %s: unexpected error", op.id)
            return self._retry_or_fail(handler, op, worker_id, {
                "code": "internal_error", "message": f"{type(exc).__name__}",
                "retryable": True})

    @contextlib.contextmanager
    def _lease_kept(self, op: Operation, worker_id: str) -> Iterator[None]:
        """While a side effect runs, one keeper thread per executor renews the lease every
        third of its length, so a slow verification is not taken over by another worker."""
        with self._leases_lock:
            self._leases[op.id] = worker_id
            if self._keeper is None:
                self._keeper = threading.Thread(target=self._keep_leases, name="lease-keeper",
                                                daemon=True)
                self._keeper.start()
        try:
            yield
        finally:
            with self._leases_lock:
                self._leases.pop(op.id, None)

    def _keep_leases(self) -> None:
        every = max(0.5, self.settings.operation_lease_seconds / 3)
        while True:
            time.sleep(every)
            with self._leases_lock:
                held = list(self._leases.items())
            for op_id, worker_id in held:
                try:
                    with self.db.write() as s:
                        s.execute(update(Operation).where(
                            Operation.id == op_id, Operation.lease_owner == worker_id,
                            Operation.status == "running").values(
                            lease_expires_at=utcnow() + timedelta(
                                seconds=self.settings.operation_lease_seconds)),
                            execution_options=NO_SYNC)
                except Exception:  # the lease may lapse; completion re-checks ownership
                    log.warning("operation %s: could not renew the lease", op_id,
                                exc_info=True)

    @staticmethod
    def _authorize(handler: Handler, s: Session, op: Operation) -> None:
        try:
            handler.authorize(s, op, actor_principal(op))
        except (NotFound, Forbidden) as exc:
            raise PermissionRevoked("The submitter no longer has permission on the target.",
                                    details={"reason": exc.code}) from None

    # -- claim -------------------------------------------------------------------------
    def _claim(self, operation_id: str,
               worker_id: str) -> tuple[Operation, WharfError | None] | None:
        """Take the lease, record the attempt and re-check permission, in one transaction.
        Returns the operation and, if it must not run, why (raised after the claim commits,
        so the attempt is on record)."""
        now = utcnow()
        lease_until = now + timedelta(seconds=self.settings.operation_lease_seconds)
        with self.db.write() as s:
            res = s.execute(update(Operation).where(
                Operation.id == operation_id,
                or_(and_(Operation.status == "pending",
                         or_(Operation.next_attempt_at.is_(None),
                             Operation.next_attempt_at <= now)),
                    and_(Operation.status == "running", Operation.lease_expires_at < now)),
                Operation.attempts < Operation.max_attempts,
            ).values(status="running", lease_owner=worker_id, lease_expires_at=lease_until,
                     attempts=Operation.attempts + 1, updated_at=now),
                execution_options=NO_SYNC)
            if rowcount(res) != 1:
                return None
            op = s.get(Operation, operation_id, populate_existing=True)
            if op is None:  # just updated in this transaction; nothing to run if not
                return None
            # An earlier attempt that never finished was lost (its worker died). On the
            # first attempt there is no earlier one, so the UPDATE is skipped.
            if op.attempts > 1:
                s.execute(update(OperationAttempt).where(
                    OperationAttempt.operation_id == op.id,
                    OperationAttempt.finished_at.is_(None)).values(
                    finished_at=now, outcome="lost",
                    error={"code": "lease_expired", "message": "the worker stopped responding",
                           "retryable": True}), execution_options=NO_SYNC)
            s.add(OperationAttempt(id=new_id(), operation_id=op.id, number=op.attempts,
                                   worker_id=worker_id[:128], started_at=now))
            s.flush()
            refusal: WharfError | None = None
            handler = self.handlers.get(op.kind)
            if handler is None:
                refusal = WharfError(f"no handler for kind {op.kind}", code="unknown_kind")
            else:
                try:
                    self._authorize(handler, s, op)
                except WharfError as exc:
                    refusal = exc
            s.expunge(op)
            return op, refusal

    def _locked_if_ours(self, s: Session, op: Operation, worker_id: str) -> Operation | None:
        current = s.get(Operation, op.id, with_for_update=True, populate_existing=True)
        if current is None or current.status != "running" or current.lease_owner != worker_id:
            return None
        return current

    def _finish_attempt(self, s: Session, op: Operation, outcome: str,
                        error: dict[str, Any] | None) -> None:
        s.execute(update(OperationAttempt).where(
            OperationAttempt.operation_id == op.id,
            OperationAttempt.number == op.attempts).values(
            finished_at=utcnow(), outcome=outcome, error=error), execution_options=NO_SYNC)

    def _done(self, op_id: str) -> None:
        if self.notifier is not None:
            try:
                self.notifier.publish(op_id)
            except Exception:  # a missed wake only delays a long-poll until its timeout
                log.warning("could not publish completion of %s", op_id, exc_info=True)

    # -- outcomes ----------------------------------------------------------------------
    def _complete(self, handler: Handler, op: Operation, worker_id: str) -> str:
        with self.db.write() as s:
            current = self._locked_if_ours(s, op, worker_id)
            if current is None:
                log.info("operation %s: lease lost before completion; not committing", op.id)
                return "lost"
            self._authorize(handler, s, current)
            ctx = RequestContext(principal=system_principal(current.id))
            current.result = to_json(handler.commit(s, current, ctx))
            self._settle(current, "completed", None)
            self._finish_attempt(s, current, "completed", None)
        metrics.OPS_FINISHED.labels(op.kind, "completed", "").inc()
        self._done(op.id)
        return "completed"

    def _settle(self, current: Operation, status: str, error: dict[str, Any] | None) -> None:
        """Mark the operation done (completed or failed): release the lease, start the
        idempotency key's retention clock."""
        now = utcnow()
        current.status = status
        current.error = error
        current.completed_at = now
        current.updated_at = now
        current.lease_owner = None
        current.lease_expires_at = None
        current.next_attempt_at = None
        current.key_expires_at = now + timedelta(seconds=self.settings.idempotency_key_ttl)

    def _fail(self, handler: Handler | None, op: Operation, worker_id: str,
              error: dict[str, Any]) -> str:
        error = {**error, "retryable": False}
        with self.db.write() as s:
            current = self._locked_if_ours(s, op, worker_id)
            if current is None:
                return "lost"
            self._settle(current, "failed", error)
            self._finish_attempt(s, current, "failed", error)
            run_on_failed(handler, s, current, error)
        run_compensate(handler, op, "after failure")
        metrics.OPS_FINISHED.labels(op.kind, "failed", str(error.get("code", ""))).inc()
        self._done(op.id)
        return "failed"

    def backoff(self, attempts: int) -> float:
        base = self.settings.operation_backoff_base * (1 << max(0, attempts - 1))
        capped = min(self.settings.operation_backoff_max, base)
        return capped * random.uniform(0.5, 1.0)

    def _retry_or_fail(self, handler: Handler | None, op: Operation, worker_id: str,
                       error: dict[str, Any]) -> str:
        if op.attempts >= op.max_attempts:
            error = {**error, "message": f"{error.get('message', '')} "
                                         f"(gave up after {op.attempts} attempts)".strip()}
            return self._fail(handler, op, worker_id, error)
        delay = self.backoff(op.attempts)
        with self.db.write() as s:
            current = self._locked_if_ours(s, op, worker_id)
            if current is None:
                return "lost"
            now = utcnow()
            current.status = "pending"
            current.error = error
            current.updated_at = now
            current.lease_owner = None
            current.lease_expires_at = None
            current.next_attempt_at = now + timedelta(seconds=delay)
            self._finish_attempt(s, current, "retry", error)
            send_after_commit(s, outbox_for(current, delay_ms=int(delay * 1000)))
        log.info("operation %s: attempt %s failed (%s); retry in %.2fs", op.id, op.attempts,
                 error.get("code"), delay)
        return "retry"
