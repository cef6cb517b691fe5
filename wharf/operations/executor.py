"""Executing operations: the bookkeeping every kind shares, in one place, one batch at a time.

``execute(id)`` is a batch of one (``include=id``); ``run_batch`` claims up to ``limit``.
1. Claim: ONE statement takes the leases of up to ``limit`` due operations
   (``WITH picked AS MATERIALIZED (SELECT id … ORDER BY created_at LIMIT n [FOR UPDATE SKIP
   LOCKED]) UPDATE operations … FROM picked … RETURNING *``,
   ``wharf.operations.claiming.claim_statement``);
   with ``WHARF_FAIR_CLAIMING`` (the default) the others are picked round-robin across
   actors, each one's oldest first (``claiming.fair_claim_statement``, bounded on
   PostgreSQL).
   A duplicate delivery that finds the operation done or leased does nothing. In the
   same transaction: earlier unfinished attempts are marked ``lost``, the new attempt rows
   are inserted (one statement over arrays on PostgreSQL) and the actor's permission is
   re-checked once per distinct target of the batch; lost → ``failed``
   ``permission_revoked``, no effect. The actors' accounts are read in one query: a
   disabled actor's operation waits, ``pending``.
2. Side effects (idempotent, keyed on ids in ``payload``) outside the product transaction;
   a kind may do a whole batch at once (``perform_many``); if that raises, each operation
   is performed on its own so each error is classified for its operation. The lease keeper
   renews every lease of the batch meanwhile (``wharf.operations.leases``).
3. Completion: ONE transaction for the batch: lock the operations still ours, re-check
   permission, write product rows (``commit_many`` or each ``commit``), mark them
   ``completed`` and finish their attempts (``wharf.operations.finish``, the one terminal
   writer every finisher uses: one statement each over arrays, counted, logged, waiters
   woken). If it fails for a reason that is not transient, each operation is completed in its own
   transaction, so one bad operation cannot fail the others (``wharf.operations.outcomes``).
   Completion webhooks (``wharf.webhooks.service.announce``) are written in the same
   transaction that finishes an operation (completed or failed): one indexed query per
   batch for the submitters' endpoints, deliveries and outbox rows only if one listens.
Tracing (``wharf.observability.tracing``; nothing while it is off): the batch runs under an
``operation.batch`` span, a child of the current context (the Dramatiq message's), linked
to each claimed operation's stored trace; claim and batched completion run under it. Each
claimed operation gets one ``operation.attempt`` span, a child of its stored
``trace_context`` (so retries and a re-run after a crash join the submitter's trace), made
current while its own side effects (``perform``), its one-by-one completion and its
retry/failure bookkeeping run, and ended with its outcome (error status unless completed).

Errors are classified: retryable → ``pending`` with exponential backoff and jitter until
``max_attempts``; anything else → ``failed`` and the kind's ``compensate`` undoes what the
side effects left behind.
Logs (``wharf.observability.logctx``): from the claim on, lines carry the batch
(``batch_size``, the first ``operation_ids``); each operation's perform, commit and outcome
handling carry its
``operation_id``, ``kind`` and ``attempt`` (one ``ContextVar.set`` each; a batch of one is
bound as its operation throughout).

The hot path is SQLAlchemy Core (no ORM unit of work); handlers still receive
``Operation`` objects (built, detached, from the claim's RETURNING rows).
"""
from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

import msgspec
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from storage.db import Database, is_transient_db_error
from storage.enums import AttemptOutcome, OperationStatus
from storage.errors import DatabaseBusy, StorageError
from storage.models import Operation
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import WharfError
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.observability import logctx, tracing
from wharf.operations.claiming import (
    INSERT_ATTEMPT,
    MARK_LOST,
    OP_COLUMNS,
    driver_claim,
)
from wharf.operations.finish import Outcome, finish
from wharf.operations.hooks import commit_products, target_key
from wharf.operations.kinds import to_json
from wharf.operations.leases import OURS, LeaseKeeping
from wharf.operations.outcomes import Outcomes, actor_disabled, disabled_actors

log = logging.getLogger("wharf.operations")


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
    # Optional, for kinds that batch (see ``wharf.operations.hooks``): ``target_key(op)``
    # (one permission check per distinct key per batch), ``perform_many(ops)`` (side
    # effects of several operations at once; on failure each is performed on its own) and
    # ``commit_many(session, ops)`` (the product rows of several, their results in order).


class Hooks:
    """Test seams (pause points); production uses the no-op default."""

    def before_perform(self, op: Operation) -> None:
        pass

    def before_commit(self, op: Operation) -> None:
        pass


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


@dataclass(eq=False)
class Claimed:
    """One claimed operation on its way through a batch."""

    op: Operation
    handler: Handler | None
    error: BaseException | None = None  # why it cannot complete (classified at the end)
    outcome: str | None = None  # completed | failed | retry | lost, once settled
    span: Any = None  # its attempt's span (wharf.observability.tracing), None while tracing is off
    share: int | None = None  # fair claiming on PostgreSQL: what one actor could give


@dataclass(frozen=True)
class BatchRun:
    """What one ``run_batch_report`` claimed. ``full``: the part of the claim that the bell
    did not name came back full (``limit``, less one slot kept for the named operation),
    so more may be due -- even when the named operation was no longer due and the claim
    holds fewer than ``limit``."""

    claimed: int
    full: bool


def _by_kind(batch: Sequence[Claimed]) -> list[list[Claimed]]:
    """The batch's operations grouped by kind (one handler each), in batch order."""
    groups: dict[str, list[Claimed]] = {}
    for c in batch:
        groups.setdefault(c.op.kind, []).append(c)
    return list(groups.values())


def _is_transient(exc: BaseException) -> bool:
    return isinstance(exc, DatabaseBusy) or is_transient_db_error(exc)


class Executor(Outcomes, LeaseKeeping):
    """Claims, performs and completes batches of operations (module docstring); its
    leases are kept by :class:`LeaseKeeping`, its outcomes recorded by :class:`Outcomes`."""

    def __init__(self, db: Database, settings: Settings, handlers: Mapping[str, Handler], *,
                 hooks: Hooks | None = None) -> None:
        self.db = db
        self.settings = settings
        self.handlers = handlers
        self.hooks = hooks or Hooks()
        self._leases: dict[str, str] = {}
        self._leases_lock = threading.Lock()
        self._keeper: threading.Thread | None = None
        # Fair claiming's rotation: per set of kinds claimed, the last (kind, actor) pair
        # served (in process: each worker rotates on its own).
        self._cursors: dict[frozenset[str] | None, tuple[str, str | None]] = {}

    def _rotate(self, rotation: frozenset[str] | None, cursor: tuple[str, str | None] | None,
                rows: Sequence[dict[str, Any]], include: str | None) -> None:
        """Remember the last (kind, actor) pair this fair claim served: PostgreSQL says
        which (``cursor_kind``); on SQLite it is the last served pair in rotation order
        (SQLite's BINARY collation is Python's string order; NULL sorts first)."""
        m = rows[0]
        if "cursor_kind" in m:
            if m["cursor_kind"] is not None:
                self._cursors[rotation] = (m["cursor_kind"], m["cursor_actor"])
            return
        pairs = {(r["kind"], r["actor_id"]) for r in rows if r["id"] != include}
        if not pairs:
            return

        def key(pair: tuple[str, str | None]) -> tuple[bool, str, bool, str]:
            kind, actor = pair
            if cursor is None:
                past = True
            elif cursor[1] is None or actor is None:
                past = kind > cursor[0]
            else:
                past = (kind, actor) > (cursor[0], cursor[1])
            return (not past, kind, actor is not None, actor or "")

        self._cursors[rotation] = max(pairs, key=key)

    # -- entry points ------------------------------------------------------------------
    def run_batch(self, kinds: Collection[str] | None = None, *, limit: int = 32,
                  worker_id: str | None = None, include: str | None = None) -> int:
        """Claim up to ``limit`` due operations (of ``kinds``; all kinds when None; always
        including ``include`` if it is due), execute them, complete them; return how many
        were claimed (0: nothing was due)."""
        return self.run_batch_report(kinds, limit=limit, worker_id=worker_id,
                                     include=include).claimed

    def run_batch_report(self, kinds: Collection[str] | None = None, *, limit: int = 32,
                         worker_id: str | None = None,
                         include: str | None = None) -> BatchRun:
        """``run_batch``, telling a drain whether to claim again: a named operation that is
        no longer due leaves its slot empty, so ``claimed < limit`` does not mean short."""
        batch = self._run(kinds, limit, worker_id or default_worker_id(), include)
        rest = limit - (include is not None)
        others = [c for c in batch if c.op.id != include]
        full = limit >= 1 and len(others) >= rest
        share = batch[0].share if batch else None
        if not full and share is not None:
            # A fair claim gives each actor at most its share: an actor that gave all of
            # it may have more due although the claim came back short.
            per_actor: dict[tuple[str, str], int] = {}
            for c in others:
                key = (c.op.kind, c.op.actor_id)
                per_actor[key] = per_actor.get(key, 0) + 1
            full = max(per_actor.values(), default=0) >= share
        return BatchRun(claimed=len(batch), full=full)

    def execute(self, operation_id: str, worker_id: str | None = None) -> str:
        """Run one attempt of one operation (a batch of one); returns what happened (for
        logs and tests): completed, failed, retry, lost or skipped (not claimed)."""
        batch = self._run(None, 1, worker_id or default_worker_id(), operation_id,
                          strict=True)
        return (batch[0].outcome or "lost") if batch else "skipped"

    # -- the whole batch ---------------------------------------------------------------
    def _run(self, kinds: Collection[str] | None, limit: int, worker_id: str,
             include: str | None, *, strict: bool = False) -> list[Claimed]:
        """Claim, perform, complete; then settle what went wrong, operation by operation.
        ``strict``: an outcome that could not be recorded is raised (once every other
        operation is settled); otherwise it is logged and the lease left to lapse."""
        with tracing.start_span("operation.batch", attributes={
                "wharf.worker.id": worker_id, "wharf.batch.limit": limit}) as batch_span:
            batch = self._claim(kinds, limit, worker_id, include)
            if batch_span is not None:
                batch_span.set_attribute("wharf.batch.claimed", len(batch))
            if not batch:
                return batch
            self._open_attempts(batch, worker_id, batch_span)
            try:
                with logctx.bound_batch([c.op for c in batch]):
                    return self._run_claimed(batch, worker_id, strict)
            finally:
                self._close_attempts(batch)

    @staticmethod
    def _open_attempts(batch: Sequence[Claimed], worker_id: str, batch_span: Any) -> None:
        """One ``operation.attempt`` span per claimed operation, a child of its stored
        trace context (of the batch span when it has none)."""
        if batch_span is None:
            return
        tracing.link_to(batch_span, [c.op.trace_context for c in batch])
        for c in batch:
            c.span = tracing.open_span("operation.attempt", parent=c.op.trace_context,
                                       attributes={"wharf.operation.id": c.op.id,
                                                   "wharf.operation.kind": c.op.kind,
                                                   "wharf.operation.attempt": c.op.attempts,
                                                   "wharf.worker.id": worker_id})

    @staticmethod
    def _close_attempts(batch: Sequence[Claimed]) -> None:
        for c in batch:
            if c.span is None:
                continue
            outcome = c.outcome or "unsettled"
            tracing.close_span(c.span, error=c.error,
                               failure=None if outcome == "completed" else outcome,
                               attributes={"wharf.operation.outcome": outcome})
            c.span = None

    def _run_claimed(self, batch: list[Claimed], worker_id: str,
                     strict: bool) -> list[Claimed]:
        failures: list[BaseException] = []

        def settle(done: Sequence[Claimed]) -> None:
            for c in done:
                if c.outcome is None and c.error is not None:
                    try:
                        with tracing.use(c.span), logctx.bound_op(c.op):
                            c.outcome = self._settle_error(c.handler, c.op, worker_id,
                                                           c.error)
                    except Exception as exc:  # the lease lapses; recovery takes it from there
                        log.warning("operation %s: could not record its outcome", c.op.id,
                                    exc_info=True)
                        failures.append(exc)

        # Refusals (and a failed test hook) are settled at once, not after the others'
        # side effects: their leases are not kept meanwhile.
        settle(batch)
        runnable = [c for c in batch if c.error is None]
        for c in runnable:
            try:
                self.hooks.before_perform(c.op)
            except Exception as exc:
                c.error = exc
        settle(runnable)
        runnable = [c for c in runnable if c.error is None]
        if runnable:
            with self._lease_kept([c.op.id for c in runnable], worker_id):
                self._perform(runnable)
        performed = [c for c in runnable if c.error is None]
        for c in performed:
            try:
                self.hooks.before_commit(c.op)
            except Exception as exc:
                c.error = exc
        performed = [c for c in performed if c.error is None]
        if performed:
            self._complete_batch(performed, worker_id)
        settle(batch)
        if failures and strict:
            raise failures[0]
        return batch

    # -- permission --------------------------------------------------------------------
    def _authorize_batch(self, s: Session, batch: Sequence[Claimed]) -> None:
        """Re-check permission once per distinct target of the batch (the handler's
        ``target_key``; each operation is its own target without one); a refusal becomes
        the operation's error."""
        verdicts: dict[Hashable, BaseException | None] = {}
        disabled = disabled_actors(s, {c.op.actor_id for c in batch}) if batch else set()
        for c in batch:
            if c.handler is None:  # a handler removed since submission
                c.error = WharfError(f"no handler for kind {c.op.kind}", code="unknown_kind")
                continue
            if c.op.actor_id in disabled:  # waits (wharf.operations.outcomes)
                c.error = actor_disabled()
                continue
            try:
                k = target_key(c.handler, c.op)
            except Exception as exc:  # e.g. a payload that no longer decodes
                c.error = exc
                continue
            if k not in verdicts:
                try:
                    self._authorize(c.handler, s, c.op, actor_checked=True)
                    verdicts[k] = None
                except WharfError as exc:
                    verdicts[k] = exc
                except (DBAPIError, StorageError):
                    raise  # the transaction itself is in trouble: claim again later
                except Exception as exc:
                    # One bad operation must not roll back (and so block) the whole claim:
                    # it becomes this operation's error (internal_error, retried, bounded).
                    verdicts[k] = exc
            if verdicts[k] is not None:
                c.error = verdicts[k]

    # -- claim -------------------------------------------------------------------------
    def _claim(self, kinds: Collection[str] | None, limit: int, worker_id: str,
               include: str | None) -> list[Claimed]:
        """Take the leases of up to ``limit`` due operations in one statement, record the
        attempts and re-check permission, in one transaction. A refused operation carries
        its refusal (raised after the claim commits, so the attempt is on record)."""
        if limit < 1:
            return []
        now = utcnow()
        params: dict[str, Any] = {
            "now": now, "worker": worker_id,
            "lease_until": now + timedelta(seconds=self.settings.operation_lease_seconds)}
        if include is not None:
            params["include"] = include
        one_kind = kinds is not None and len(kinds) == 1 and self.db.is_postgres
        if kinds is not None:
            params["kinds"] = next(iter(kinds)) if one_kind else list(kinds)
        rest = limit - (include is not None)
        if rest > 0:
            params["n"] = rest
        fair = self.settings.fair_claiming
        rotation = frozenset(kinds) if kinds is not None else None
        cursor = self._cursors.get(rotation) if fair and rest > 0 else None
        mode = "none" if cursor is None else "kind" if cursor[1] is None else "pair"
        if cursor is not None:
            params["ck"] = cursor[0]
            if cursor[1] is not None:
                params["ca"] = cursor[1]
        claim = driver_claim(include is not None, kinds is not None, rest > 0,
                             self.db.is_postgres, fair, mode, one_kind)
        with self.db.write() as s:
            conn = s.connection()
            rows = claim.mappings(conn, params)
            if not rows:
                return []
            # Executed oldest first (the named operation first), whichever order claimed.
            rows = sorted(rows, key=lambda r: (r["id"] != include, r["created_at"], r["id"]))
            share = rows[0].get("fair_share")
            if fair and rest > 0:
                self._rotate(rotation, cursor, rows, include)
            batch = [Claimed(Operation.detached({k: r[k] for k in OP_COLUMNS}),
                             self.handlers.get(r["kind"]), share=share) for r in rows]
            # Earlier attempts that never finished were lost (their worker died). On a
            # first attempt there is no earlier one.
            again = [c.op.id for c in batch if c.op.attempts > 1]
            if again:
                conn.execute(MARK_LOST, {"ids": again, "now": now})
            INSERT_ATTEMPT.executemany(conn, [
                {"id": new_id(), "operation_id": c.op.id, "number": c.op.attempts,
                 "worker_id": worker_id[:128], "started_at": now} for c in batch])
            self._authorize_batch(s, batch)
            return batch

    # -- perform -----------------------------------------------------------------------
    def _perform(self, batch: Sequence[Claimed]) -> None:
        """Side effects, per kind: ``perform_many`` for a kind that batches (more than one
        operation); on its failure, or for other kinds, ``perform`` one by one so each
        error belongs to its operation."""
        for group in _by_kind(batch):
            handler = group[0].handler
            assert handler is not None  # refused at the claim otherwise
            many = getattr(handler, "perform_many", None)
            if many is not None and len(group) > 1:
                try:
                    many([c.op for c in group])
                    continue
                except Exception:
                    log.info("%s: batch perform failed; performing one by one",
                             group[0].op.kind, exc_info=True)
            for c in group:
                try:
                    with tracing.use(c.span), logctx.bound_op(c.op):
                        handler.perform(c.op)
                except Exception as exc:
                    c.error = exc

    # -- complete ----------------------------------------------------------------------
    def _complete_batch(self, batch: Sequence[Claimed], worker_id: str) -> None:
        try:
            self._commit_batch(batch, worker_id)
        except Exception as exc:
            for c in batch:
                c.outcome = None
            if _is_transient(exc):  # the database is in trouble: every one retries later
                for c in batch:
                    c.error = exc
                return
            if len(batch) > 1:
                log.warning("batch completion failed; completing one by one", exc_info=True)
            for c in batch:
                c.error = None
                try:
                    assert c.handler is not None
                    with tracing.use(c.span), logctx.bound_op(c.op):
                        c.outcome = self._complete(c.handler, c.op, worker_id)
                except Exception as one:
                    c.error = one
            return

    def _commit_batch(self, batch: Sequence[Claimed], worker_id: str) -> list[Claimed]:
        """One transaction: lock the operations still ours, re-check permission, write the
        product rows, mark them completed and finish their attempts. Those no longer ours
        are ``lost``; those refused carry the refusal (failed after this commits)."""
        with self.db.write() as s:
            conn = s.connection()
            params = {"ids": [c.op.id for c in batch], "worker": worker_id}
            ours = {row[0] for row in OURS[self.db.is_postgres].all(conn, params)}
            for c in batch:
                if c.op.id not in ours:
                    with logctx.bound_op(c.op):
                        log.info("operation %s: lease lost before completion; not "
                                 "committing", c.op.id)
                    c.outcome = AttemptOutcome.LOST
            mine = [c for c in batch if c.outcome is None]
            self._authorize_batch(s, mine)
            ok = [c for c in mine if c.error is None]
            if not ok:
                return []
            results: dict[str, dict[str, Any]] = {}
            for group in _by_kind(ok):
                handler = group[0].handler
                ops = [c.op for c in group]
                for op, result in zip(ops, commit_products(handler, s, ops), strict=True):
                    results[op.id] = to_json(result)
            finish(s, [Outcome(c.op, OperationStatus.COMPLETED, result=results[c.op.id],
                               attempt=AttemptOutcome.COMPLETED) for c in ok],
                   key_ttl=self.settings.idempotency_key_ttl)
        for c in ok:
            c.outcome = AttemptOutcome.COMPLETED
        return ok
