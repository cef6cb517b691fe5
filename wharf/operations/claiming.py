"""Claiming operations: which are due, in which order, and the one statement that takes
the leases of a batch (:func:`claim_statement`; with ``WHARF_FAIR_CLAIMING``,
:func:`fair_claim_statement`, round-robin across actors), with the claim transaction's
other statements (earlier attempts marked lost, the new attempts recorded). Used by
``wharf.operations.executor``."""
from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import (
    Integer,
    and_,
    bindparam,
    case,
    column,
    func,
    select,
    text,
    true,
    tuple_,
    union_all,
    update,
)

from storage.driver import DriverStatement, array_param, in_param
from storage.enums import AttemptOutcome, OperationStatus
from storage.models import Operation, OperationAttempt
from storage.models.operations import CLAIMABLE, due

OPS = Operation.__table__
OP_COLUMNS = tuple(OPS.c.keys())
__all__ = ["CLAIMABLE", "due"]  # (declared with the operations table; used from here)
ATTEMPTS = OperationAttempt.__table__
LOST_ERROR = {"code": "lease_expired", "message": "the worker stopped responding",
              "retryable": True}



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
        status=OperationStatus.RUNNING, lease_owner=_p("worker", OPS.c.lease_owner),
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
    finished_at=_p("now", ATTEMPTS.c.finished_at), outcome=AttemptOutcome.LOST, error=LOST_ERROR)
INSERT_ATTEMPT = DriverStatement.insert_rows(
    ATTEMPTS, ("id", "operation_id", "number", "worker_id", "started_at"))
