"""Recording what became of one operation: completed on its own (the fallback when a batch
could not complete together), failed, or pending again with backoff (a retryable error,
until ``max_attempts``); an error classified first (:meth:`Outcomes._settle_error`). A part
of ``wharf.operations.executor.Executor`` (:class:`Outcomes`).

An operation whose actor is disabled (``users.status`` ``disabled``, checked with the
permission at claim and at completion) waits: pending again, due after
``WHARF_OPERATION_BACKOFF_MAX`` seconds, the attempt not counted against ``max_attempts``
(which grows by one), no side effect and never failed for it."""
from __future__ import annotations

import logging
import random
from collections.abc import Collection
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    select,
    update,
)
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from storage.db import Database, is_transient_db_error, send_after_commit
from storage.driver import DriverStatement, in_param
from storage.enums import AttemptOutcome, OperationStatus, UserStatus
from storage.errors import StorageError
from storage.models import Operation, OperationAttempt, User
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext, system_principal
from wharf.infra.errors import Forbidden, NotFound, WharfError, from_storage
from wharf.infra.settings import Settings
from wharf.observability import metrics
from wharf.operations.errors import ActorDisabled, PermissionRevoked
from wharf.operations.finish import Outcome, finish
from wharf.operations.kinds import to_json
from wharf.operations.service import outbox_for

if TYPE_CHECKING:
    from wharf.operations.executor import Handler

log = logging.getLogger("wharf.operations")

# For the executor's ORM UPDATEs: the session never holds the rows they change (a fresh
# session, or objects that are re-read), so skip SQLAlchemy's in-Python "evaluate" pass.
NO_SYNC = {"synchronize_session": False}


def actor_principal(op: Operation) -> Principal:
    return Principal(kind="user", user_id=op.actor_id)


def _disabled(postgres: bool) -> DriverStatement:
    users = User.__table__
    return DriverStatement(select(users.c.id).where(
        in_param(users.c.id, "ids", postgres=postgres),
        users.c.status == UserStatus.DISABLED))


_DISABLED = {postgres: _disabled(postgres) for postgres in (False, True)}  # by backend


def disabled_actors(s: Session, actor_ids: Collection[str]) -> set[str]:
    """Those of ``actor_ids`` whose account is disabled (one Core query, on the driver on
    PostgreSQL: a batch's claim and completion each ask once)."""
    conn = s.connection()
    return {row[0] for row in _DISABLED[conn.dialect.name == "postgresql"].all(
        conn, {"ids": list(actor_ids)})}


def actor_disabled() -> ActorDisabled:
    return ActorDisabled("The submitter's account is disabled; the operation waits until "
                         "it is enabled.")


class Outcomes:
    """The executor's outcome bookkeeping, one operation at a time."""

    db: Database
    settings: Settings

    def _settle_error(self, handler: Handler | None, op: Operation, worker_id: str,
                      exc: BaseException) -> str:
        """Classify what went wrong with one operation and record it: retry or fail (or
        wait, for a disabled actor)."""
        if isinstance(exc, ActorDisabled):
            return self._wait(op, worker_id, exc.to_dict())
        if isinstance(exc, (WharfError, StorageError)):
            error = exc if isinstance(exc, WharfError) else from_storage(exc)
            if error.retryable:
                return self._retry_or_fail(handler, op, worker_id, error.to_dict())
            return self._fail(handler, op, worker_id, error.to_dict())
        if isinstance(exc, DBAPIError):
            if is_transient_db_error(exc):
                return self._retry_or_fail(handler, op, worker_id, {
                    "code": "database_unavailable", "message": str(exc.orig)[:300],
                    "retryable": True})
            log.error("operation %s: database error", op.id, exc_info=exc)
            return self._retry_or_fail(handler, op, worker_id, {
                "code": "internal_error", "message": "database error", "retryable": True})
        # a bug or an unclassified failure: retry, bounded
        log.error("operation %s: unexpected error", op.id, exc_info=exc)
        return self._retry_or_fail(handler, op, worker_id, {
            "code": "internal_error", "message": f"{type(exc).__name__}", "retryable": True})

    @staticmethod
    def _authorize(handler: Handler, s: Session, op: Operation, *,
                   actor_checked: bool = False) -> None:
        """The permission re-check (and, unless ``actor_checked``, the actor's account)."""
        if not actor_checked and disabled_actors(s, [op.actor_id]):
            raise actor_disabled()
        try:
            handler.authorize(s, op, actor_principal(op))
        except (NotFound, Forbidden) as exc:
            raise PermissionRevoked("The submitter no longer has permission on the target.",
                                    details={"reason": exc.code}) from None

    def _locked_if_ours(self, s: Session, op: Operation, worker_id: str) -> Operation | None:
        current = s.get(Operation, op.id, with_for_update=True, populate_existing=True)
        if (current is None or current.status != OperationStatus.RUNNING
                or current.lease_owner != worker_id):
            return None
        return current

    def _finish_attempt(self, s: Session, op: Operation, outcome: str,
                        error: dict[str, Any] | None) -> None:
        s.execute(update(OperationAttempt).where(
            OperationAttempt.operation_id == op.id,
            OperationAttempt.number == op.attempts).values(
            finished_at=utcnow(), outcome=outcome, error=error), execution_options=NO_SYNC)

    def _complete(self, handler: Handler, op: Operation, worker_id: str) -> str:
        with self.db.write() as s:
            current = self._locked_if_ours(s, op, worker_id)
            if current is None:
                log.info("operation %s: lease lost before completion; not committing", op.id)
                return AttemptOutcome.LOST
            self._authorize(handler, s, current)
            ctx = RequestContext(principal=system_principal(current.id))
            result = to_json(handler.commit(s, current, ctx))
            s.flush()  # whatever commit changed, before the terminal write
            finish(s, [Outcome(current, OperationStatus.COMPLETED, result=result,
                               attempt=AttemptOutcome.COMPLETED)],
                   key_ttl=self.settings.idempotency_key_ttl)
        return AttemptOutcome.COMPLETED

    def _fail(self, handler: Handler | None, op: Operation, worker_id: str,
              error: dict[str, Any]) -> str:
        error = {**error, "retryable": False}
        with self.db.write() as s:
            current = self._locked_if_ours(s, op, worker_id)
            if current is None:
                return AttemptOutcome.LOST
            finish(s, [Outcome(current, OperationStatus.FAILED, error=error,
                               attempt=AttemptOutcome.FAILED, handler=handler)],
                   key_ttl=self.settings.idempotency_key_ttl)
        return AttemptOutcome.FAILED

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
        if not self._pending_again(op, worker_id, error, delay):
            return AttemptOutcome.LOST
        metrics.OPS_RETRIED.labels(op.kind).inc()
        log.info("operation %s: attempt %s failed (%s); retry in %.2fs", op.id, op.attempts,
                 error.get("code"), delay)
        return AttemptOutcome.RETRY

    def _wait(self, op: Operation, worker_id: str, error: dict[str, Any]) -> str:
        """Pending again (the actor is disabled), the attempt not counted."""
        delay = float(self.settings.operation_backoff_max)
        if not self._pending_again(op, worker_id, error, delay, uncounted=True):
            return AttemptOutcome.LOST
        log.info("operation %s: its actor is disabled; waiting %.0fs", op.id, delay)
        return AttemptOutcome.RETRY

    def _pending_again(self, op: Operation, worker_id: str, error: dict[str, Any],
                       delay: float, *, uncounted: bool = False) -> bool:
        """The attempt ends as a retry: the row pending again, due in ``delay`` seconds,
        its lease released and its message re-sent then (False: the lease is no longer
        ours). ``uncounted``: this attempt does not count against ``max_attempts``."""
        with self.db.write() as s:
            current = self._locked_if_ours(s, op, worker_id)
            if current is None:
                return False
            now = utcnow()
            current.status = OperationStatus.PENDING
            current.error = error
            current.updated_at = now
            current.lease_owner = None
            current.lease_expires_at = None
            current.next_attempt_at = now + timedelta(seconds=delay)
            if uncounted:
                current.max_attempts = current.max_attempts + 1
            self._finish_attempt(s, current, AttemptOutcome.RETRY, error)
            send_after_commit(s, outbox_for(current, delay_ms=int(delay * 1000)))
        return True
