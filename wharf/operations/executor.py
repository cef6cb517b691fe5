"""Executing operations: the bookkeeping every kind shares, in one place, one batch at a time.

``execute(id)`` is a batch of one (``include=id``); ``run_batch`` claims up to ``limit``.
1. Claim: ONE statement takes the leases of up to ``limit`` due operations
   (``WITH picked AS MATERIALIZED (SELECT id … ORDER BY created_at LIMIT n [FOR UPDATE SKIP
   LOCKED]) UPDATE operations … FROM picked … RETURNING *``, :func:`claim_statement`);
   with ``WHARF_FAIR_CLAIMING`` (the default) the others are picked round-robin across
   actors, each one's oldest first (:func:`fair_claim_statement`, bounded on PostgreSQL).
   A duplicate delivery that finds the operation done or leased does nothing. In the
   same transaction: earlier unfinished attempts are marked ``lost``, the new attempt rows
   are inserted (one executemany) and the actor's permission is re-checked once per
   distinct target of the batch; lost → ``failed`` ``permission_revoked``, no effect.
2. Side effects (idempotent, keyed on ids in ``payload``) outside the product transaction;
   a kind may do a whole batch at once (``perform_many``); if that raises, each operation
   is performed on its own so each error is classified for its operation. The lease keeper
   renews every lease of the batch meanwhile.
3. Completion: ONE transaction for the batch: lock the operations still ours, re-check
   permission, write product rows (``commit_many`` or each ``commit``), mark them
   ``completed`` and finish their attempts (``wharf.operations.finish``, the one terminal
   writer every finisher uses: executemany, counted, logged, waiters woken). If it fails
   for a reason that is not transient, each operation is completed in its own
   transaction, so one bad operation cannot fail the others.
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

import contextlib
import functools
import logging
import os
import random
import socket
import threading
import time
from collections.abc import Collection, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

import msgspec
from sqlalchemy import (
    ColumnElement,
    Integer,
    and_,
    bindparam,
    case,
    column,
    func,
    or_,
    select,
    text,
    true,
    tuple_,
    union_all,
    update,
)
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from storage.db import Database, is_transient_db_error, send_after_commit
from storage.driver import DriverStatement, array_param, in_param
from storage.errors import DatabaseBusy, StorageError
from storage.models import Operation, OperationAttempt
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext, system_principal
from wharf.infra.errors import Forbidden, NotFound, WharfError, from_storage
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.observability import logctx, tracing
from wharf.operations.errors import PermissionRevoked
from wharf.operations.finish import Outcome, finish
from wharf.operations.hooks import commit_products, target_key
from wharf.operations.kinds import to_json
from wharf.operations.service import outbox_for

log = logging.getLogger("wharf.operations")

# For the executor's ORM UPDATEs: the session never holds the rows they change (a fresh
# session, or objects that are re-read), so skip SQLAlchemy's in-Python "evaluate" pass.
NO_SYNC = {"synchronize_session": False}

OPS = Operation.__table__
OP_COLUMNS = tuple(OPS.c.keys())
ATTEMPTS = OperationAttempt.__table__
#: The WHERE of the partial index ``ix_operations_claim`` (storage.models), verbatim.
CLAIMABLE = text("operations.status IN ('pending', 'running')")
LOST_ERROR = {"code": "lease_expired", "message": "the worker stopped responding",
              "retryable": True}


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


def actor_principal(op: Operation) -> Principal:
    return Principal(kind="user", user_id=op.actor_id)


def due(now: datetime | ColumnElement[Any], *,
        index_hint: bool = False) -> ColumnElement[bool]:
    """Pending and due, or running with an expired lease; attempts left.

    PostgreSQL proves from this OR that the partial index ``ix_operations_claim`` applies
    (an explicit ``status IN`` beside it would count the status selectivity twice and turn
    the plan into a sort of every pending row). SQLite only uses a partial index whose
    WHERE appears word for word in the query: ``index_hint`` adds it."""
    c = OPS.c
    cond = and_(or_(and_(c.status == "pending",
                         or_(c.next_attempt_at.is_(None), c.next_attempt_at <= now)),
                    and_(c.status == "running", c.lease_expires_at < now)),
                c.attempts < c.max_attempts)
    return and_(CLAIMABLE, cond) if index_hint else cond


def claim_order() -> tuple[Any, ...]:
    """The order in which due operations are claimed with fair claiming off (and within
    one actor with it on): oldest first, served by the partial index
    ``ix_operations_claim`` (``ix_operations_fair`` per actor)."""
    return (OPS.c.created_at, OPS.c.id)


#: The fair claim's rotation cursor: none (start at the first (kind, actor) pair), "pair"
#: (start after ``(:ck, :ca)``) or "kind" (start after kind ``:ck``: the last pair served
#: had no actor).
CURSOR_MODES = ("none", "pair", "kind")

# The ``due`` predicate over the alias ``o`` (as :func:`due`; PostgreSQL proves the
# partial indexes' ``status IN ('pending', 'running')`` from it).
_DUE_O = ("((o.status = 'pending' AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= "
          ":now)) OR (o.status = 'running' AND o.lease_expires_at < :now)) "
          "AND o.attempts < o.max_attempts")
_DUE_OPS = _DUE_O.replace("o.", "operations.")


def _pair_scan(name: str, due_kinds: str, bound: str) -> str:
    """A recursive loose index scan of ``ix_operations_fair``: the first ``:n`` distinct
    (kind, actor) pairs with due operations that satisfy ``bound``, in index order, one
    index descent each, however deep an actor's backlog."""
    return f"""{name}(kind, actor_id, i) AS (
  (SELECT o.kind, o.actor_id, 1 FROM operations o
   WHERE {due_kinds}{bound}
   ORDER BY o.kind, o.actor_id, o.created_at, o.id LIMIT 1)
  UNION ALL
  SELECT nx.kind, nx.actor_id, p.i + 1 FROM {name} p CROSS JOIN LATERAL (
    SELECT o.kind, o.actor_id FROM operations o
    WHERE {due_kinds}{bound} AND (o.kind, o.actor_id) > (p.kind, p.actor_id)
    ORDER BY o.kind, o.actor_id, o.created_at, o.id LIMIT 1) nx
  WHERE p.i < :n
)"""


@functools.cache
def fair_claim_statement(include: bool, kinds: bool, cursor: str = "none",
                         one_kind: bool = False) -> Any:
    """PostgreSQL's fair claim: ``claim_statement`` with the ``n`` others taken round-robin
    across (kind, actor) pairs, each one's oldest first, the pairs served in rotation.

    1. ``after`` / ``wrap``: the next ``n`` distinct (kind, actor) pairs with due
       operations after the rotation ``cursor`` (the last pair the previous claim of this
       executor served), wrapping around to the first pairs, by recursive loose index
       scans of ``ix_operations_fair`` (one index descent per pair, at most ``2n``);
    2. ``chosen``: those ``n`` pairs in rotation order; each may give
       ``k = ceil(n / pairs chosen)`` operations (its ``share``);
    3. ``cand``: each chosen pair's ``k`` oldest due operations (a LATERAL ``LIMIT k``,
       locked ``FOR UPDATE SKIP LOCKED``, so concurrent claimers take disjoint rows),
       numbered 1..k within the pair;
    4. ``picked``: the first ``n`` by (number, age): round robin.
    So a claim locks at most ``n + pairs - 1`` rows and reads at most ``2n`` index
    descents plus ``n + pairs`` entries, whatever the backlog or the number of actors.
    RETURNING adds ``fair_share`` (k: a pair that gave k may have more due, the drain's
    ``full``) and ``cursor_kind`` / ``cursor_actor``, the last pair chosen (the next
    claim starts after it)."""
    if cursor not in CURSOR_MODES:
        raise ValueError(cursor)
    # (One kind, as a drain claims, is an equality: with ``= ANY(array)`` PostgreSQL
    # spent 12-17 % more CPU in the benchmark's (c), docs/benchmarks.md.)
    kinds_o = "" if not kinds else " AND o.kind = :kinds" if one_kind else \
        " AND o.kind = ANY(:kinds)"
    not_include = " AND o.id <> :include" if include else ""
    cols = ", ".join(f"operations.{c.name}" for c in OPS.c)
    rest = """(SELECT id FROM cand ORDER BY rn, created_at, id LIMIT :n)"""
    if include:
        rest = (f"SELECT id FROM (SELECT operations.id FROM operations "
                f"WHERE operations.id = :include AND {_DUE_OPS} FOR UPDATE SKIP LOCKED) "
                f"AS named UNION ALL {rest}")
    due_kinds = f"{_DUE_O}{kinds_o}"
    if cursor == "none":
        scans = _pair_scan("after", due_kinds, "")
        ordered = "SELECT kind, actor_id, 0 AS part, i FROM after"
    else:
        if cursor == "pair":
            past, upto = " AND (o.kind, o.actor_id) > (:ck, :ca)", \
                " AND (o.kind, o.actor_id) <= (:ck, :ca)"
        else:
            past, upto = " AND o.kind > :ck", " AND o.kind <= :ck"
        scans = (_pair_scan("after", due_kinds, past) + ",\n"
                 + _pair_scan("wrap", due_kinds, upto))
        ordered = ("SELECT kind, actor_id, 0 AS part, i FROM after UNION ALL "
                   "SELECT kind, actor_id, 1 AS part, i FROM wrap")
    sql = f"""
WITH RECURSIVE {scans},
chosen AS (SELECT kind, actor_id, part, i FROM ({ordered}) AS r ORDER BY part, i LIMIT :n),
last AS (SELECT kind, actor_id FROM chosen ORDER BY part DESC, i DESC LIMIT 1),
share AS (SELECT (CAST(:n AS integer) + count(*) - 1) / greatest(count(*), 1) AS k
          FROM chosen),
cand AS (
  SELECT l.id, l.created_at,
         row_number() OVER (PARTITION BY l.kind, l.actor_id
                            ORDER BY l.created_at, l.id) AS rn
  FROM chosen c CROSS JOIN LATERAL (
    SELECT o.id, o.kind, o.actor_id, o.created_at FROM operations o
    WHERE o.kind = c.kind AND o.actor_id = c.actor_id AND {_DUE_O}{not_include}
    ORDER BY o.created_at, o.id LIMIT (SELECT k FROM share)
    FOR UPDATE OF o SKIP LOCKED) l
),
picked AS MATERIALIZED ({rest})
UPDATE operations SET status = 'running', lease_owner = :worker,
  lease_expires_at = :lease_until, attempts = operations.attempts + 1, updated_at = :now
FROM picked WHERE operations.id = picked.id AND {_DUE_OPS}
RETURNING {cols}, (SELECT k FROM share) AS fair_share,
  (SELECT kind FROM last) AS cursor_kind, (SELECT actor_id FROM last) AS cursor_actor
"""
    params = [_p("now", OPS.c.updated_at), _p("lease_until", OPS.c.lease_expires_at),
              _p("worker", OPS.c.lease_owner), bindparam("n", type_=Integer())]
    if include:
        params.append(_p("include", OPS.c.id))
    if kinds:
        params.append(_kinds_param(one_kind))
    if cursor != "none":
        params.append(_p("ck", OPS.c.kind))
    if cursor == "pair":
        params.append(_p("ca", OPS.c.actor_id))
    return text(sql).bindparams(*params).columns(
        *OPS.c, column("fair_share", Integer()), column("cursor_kind", OPS.c.kind.type),
        column("cursor_actor", OPS.c.actor_id.type))


# -- the hot path's statements, built once (SQLAlchemy then only looks up the compiled
# form; building expressions per call was a tenth of a batch of one's CPU) -------------

def _p(name: str, column: Any = None, *, expanding: bool = False) -> Any:
    return bindparam(name, type_=column.type if column is not None else None,
                     expanding=expanding)


def _kinds_param(one_kind: bool) -> Any:
    """PostgreSQL's ``kinds`` parameter: one value, or one array (never expanding ``IN``,
    so the driver can run the claim)."""
    return _p("kinds", OPS.c.kind) if one_kind else array_param("kinds", OPS.c.kind)


@functools.cache
def claim_statement(include: bool, kinds: bool, rest: bool, postgres: bool,
                    fair: bool = False, cursor: str = "none", one_kind: bool = False) -> Any:
    """``UPDATE operations … FROM (picked ids) … RETURNING *``: the ``include`` operation
    if due, then up to ``n`` others in :func:`claim_order` (of ``kinds``); on PostgreSQL
    picked ``FOR UPDATE SKIP LOCKED``. Parameters: now, lease_until, worker, include,
    kinds, n. ``fair`` (``WHARF_FAIR_CLAIMING``): the others round-robin across (kind,
    actor) pairs, each one's oldest first: on PostgreSQL :func:`fair_claim_statement`
    (bounded, whatever the backlog); on SQLite ``ROW_NUMBER() OVER (PARTITION BY kind,
    actor_id …)`` over the due rows (a window over every due row: SQLite serves small
    deployments). Fair claims rotate: ``cursor`` (:data:`CURSOR_MODES`, parameters ``ck``
    and ``ca``) is the last (kind, actor) pair served; the ``n`` pairs after it (wrapping
    around) give their oldest first."""
    if fair and rest and postgres:
        return fair_claim_statement(include, kinds, cursor, one_kind)
    if cursor not in CURSOR_MODES:
        raise ValueError(cursor)
    now = _p("now", OPS.c.updated_at)
    picks = []
    if include:
        picks.append(select(OPS.c.id).where(OPS.c.id == _p("include", OPS.c.id), due(now)))
    if rest:
        q = select(OPS.c.id).where(due(now, index_hint=not postgres))
        if kinds:
            q = q.where(OPS.c.kind == _kinds_param(True) if one_kind
                        else in_param(OPS.c.kind, "kinds", postgres=postgres))
        if include:
            q = q.where(OPS.c.id != _p("include", OPS.c.id))
        if fair:
            rn = func.row_number().over(partition_by=(OPS.c.kind, OPS.c.actor_id),
                                        order_by=claim_order()).label("rn")
            ranked = q.add_columns(OPS.c.created_at, OPS.c.kind, OPS.c.actor_id,
                                   rn).subquery("ranked")
            # Each pair's oldest (rn 1) in rotation order: the pairs after the cursor,
            # then (wrapping around) the others; then each pair's next ones by age.
            first = ranked.c.rn == 1
            if cursor == "pair":
                past: Any = tuple_(ranked.c.kind, ranked.c.actor_id) > tuple_(
                    _p("ck", OPS.c.kind), _p("ca", OPS.c.actor_id))
            elif cursor == "kind":
                past = ranked.c.kind > _p("ck", OPS.c.kind)
            else:
                past = true()
            q = select(ranked.c.id).order_by(
                ranked.c.rn, case((and_(first, past), 0), (first, 1), else_=0),
                case((first, ranked.c.kind), else_=None),
                case((first, ranked.c.actor_id), else_=None),
                ranked.c.created_at, ranked.c.id)
            picks.append(q.limit(_p("n")))
        else:
            picks.append(q.order_by(*claim_order()).limit(_p("n")))
    if postgres:  # concurrent claimers take disjoint rows, nobody waits
        picks = [p.with_for_update(skip_locked=True) for p in picks]
    # A materialized CTE: picked once. (As ``IN (subquery)`` PostgreSQL may rescan the
    # LIMIT … SKIP LOCKED subquery per row and claim more than ``limit``.)
    picked = (picks[0] if len(picks) == 1 else union_all(
        *(select(p.subquery().c.id) for p in picks))).cte("picked").prefix_with(
        "MATERIALIZED")
    return update(OPS).where(OPS.c.id == picked.c.id, due(now)).values(
        status="running", lease_owner=_p("worker", OPS.c.lease_owner),
        lease_expires_at=_p("lease_until", OPS.c.lease_expires_at),
        attempts=OPS.c.attempts + 1, updated_at=now).returning(*OPS.c)


@functools.cache
def driver_claim(include: bool, kinds: bool, rest: bool, postgres: bool, fair: bool,
                 cursor: str, one_kind: bool = False) -> DriverStatement:
    """:func:`claim_statement` as a :class:`DriverStatement`: on PostgreSQL run on the
    driver (its kinds one value or one array, never expanding ``IN``); on SQLite
    SQLAlchemy runs it."""
    return DriverStatement(claim_statement(include, kinds, rest, postgres, fair, cursor,
                                           one_kind))


MARK_LOST = update(ATTEMPTS).where(
    ATTEMPTS.c.operation_id.in_(_p("ids", ATTEMPTS.c.operation_id, expanding=True)),
    ATTEMPTS.c.finished_at.is_(None)).values(
    finished_at=_p("now", ATTEMPTS.c.finished_at), outcome="lost", error=LOST_ERROR)
INSERT_ATTEMPT = DriverStatement.insert_rows(
    ATTEMPTS, ("id", "operation_id", "number", "worker_id", "started_at"))


def _ours(postgres: bool) -> DriverStatement:
    """The batch's operations (``ids``) this worker (``worker``) still holds running; on
    PostgreSQL locked (SQLite's write transaction is already exclusive)."""
    q = select(OPS.c.id).where(
        in_param(OPS.c.id, "ids", postgres=postgres), OPS.c.status == "running",
        OPS.c.lease_owner == _p("worker", OPS.c.lease_owner)).order_by(OPS.c.id)
    return DriverStatement(q.with_for_update() if postgres else q)


OURS = {postgres: _ours(postgres) for postgres in (False, True)}  # by backend
RENEW_LEASES = update(OPS).where(
    OPS.c.id.in_(_p("ids", OPS.c.id, expanding=True)),
    OPS.c.lease_owner == _p("worker", OPS.c.lease_owner),
    OPS.c.status == "running").values(
    lease_expires_at=_p("lease_until", OPS.c.lease_expires_at))


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


class Executor:
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

    def _settle_error(self, handler: Handler | None, op: Operation, worker_id: str,
                      exc: BaseException) -> str:
        """Classify what went wrong with one operation and record it: retry or fail."""
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

    # -- leases ------------------------------------------------------------------------
    @contextlib.contextmanager
    def _lease_kept(self, op_ids: Sequence[str], worker_id: str) -> Iterator[None]:
        """While side effects run, one keeper thread per executor renews the leases every
        third of their length, so a slow verification is not taken over by another worker
        (the keeper runs while any lease is held: :meth:`_keep_leases`)."""
        with self._leases_lock:
            for op_id in op_ids:
                self._leases[op_id] = worker_id
            if self._keeper is None:
                self._keeper = threading.Thread(target=self._keep_leases, name="lease-keeper",
                                                daemon=True)
                self._keeper.start()
        try:
            yield
        finally:
            with self._leases_lock:
                for op_id in op_ids:
                    self._leases.pop(op_id, None)

    def _keep_leases(self) -> None:
        """Renew the leases held, until none is: the keeper then exits (the next
        ``_lease_kept`` starts another), so an executor left idle or dropped keeps no
        thread behind."""
        every = max(0.5, self.settings.operation_lease_seconds / 3)
        while True:
            time.sleep(every)
            by_worker: dict[str, list[str]] = {}
            with self._leases_lock:
                if not self._leases:
                    self._keeper = None
                    return
                for op_id, worker_id in self._leases.items():
                    by_worker.setdefault(worker_id, []).append(op_id)
            for worker_id, op_ids in by_worker.items():
                try:
                    with self.db.write() as s:
                        s.connection().execute(RENEW_LEASES, {
                            "ids": op_ids, "worker": worker_id,
                            "lease_until": utcnow() + timedelta(
                                seconds=self.settings.operation_lease_seconds)})
                except Exception:  # the lease may lapse; completion re-checks ownership
                    log.warning("operations %s: could not renew the leases", op_ids,
                                exc_info=True)

    # -- permission --------------------------------------------------------------------
    @staticmethod
    def _authorize(handler: Handler, s: Session, op: Operation) -> None:
        try:
            handler.authorize(s, op, actor_principal(op))
        except (NotFound, Forbidden) as exc:
            raise PermissionRevoked("The submitter no longer has permission on the target.",
                                    details={"reason": exc.code}) from None

    def _authorize_batch(self, s: Session, batch: Sequence[Claimed]) -> None:
        """Re-check permission once per distinct target of the batch (the handler's
        ``target_key``; each operation is its own target without one); a refusal becomes
        the operation's error."""
        verdicts: dict[Hashable, BaseException | None] = {}
        for c in batch:
            if c.handler is None:  # a handler removed since submission
                c.error = WharfError(f"no handler for kind {c.op.kind}", code="unknown_kind")
                continue
            try:
                k = target_key(c.handler, c.op)
            except Exception as exc:  # e.g. a payload that no longer decodes
                c.error = exc
                continue
            if k not in verdicts:
                try:
                    self._authorize(c.handler, s, c.op)
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
                    c.outcome = "lost"
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
            finish(s, [Outcome(c.op, "completed", result=results[c.op.id],
                               attempt="completed") for c in ok],
                   key_ttl=self.settings.idempotency_key_ttl)
        for c in ok:
            c.outcome = "completed"
        return ok

    # -- one operation at a time (fallback and failures) -------------------------------
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

    # -- outcomes ----------------------------------------------------------------------
    def _complete(self, handler: Handler, op: Operation, worker_id: str) -> str:
        with self.db.write() as s:
            current = self._locked_if_ours(s, op, worker_id)
            if current is None:
                log.info("operation %s: lease lost before completion; not committing", op.id)
                return "lost"
            self._authorize(handler, s, current)
            ctx = RequestContext(principal=system_principal(current.id))
            result = to_json(handler.commit(s, current, ctx))
            s.flush()  # whatever commit changed, before the terminal write
            finish(s, [Outcome(current, "completed", result=result, attempt="completed")],
                   key_ttl=self.settings.idempotency_key_ttl)
        return "completed"

    def _fail(self, handler: Handler | None, op: Operation, worker_id: str,
              error: dict[str, Any]) -> str:
        error = {**error, "retryable": False}
        with self.db.write() as s:
            current = self._locked_if_ours(s, op, worker_id)
            if current is None:
                return "lost"
            finish(s, [Outcome(current, "failed", error=error, attempt="failed",
                               handler=handler)],
                   key_ttl=self.settings.idempotency_key_ttl)
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
