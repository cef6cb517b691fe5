"""A kind's failure hooks, run the same way wherever an operation becomes ``failed``: by
the executor, by a cancel, or by the recovery sweep when a lease expires on the last
attempt.

``on_failed(session, op, error)`` writes product rows in the transaction that marks the
operation failed (e.g. queue a staged object for deletion); ``compensate(op)`` undoes side
effects outside the database after that commit, best effort (the operation stays failed
whatever it does; what it could not undo is left to the sweeps and operators).
"""
from __future__ import annotations

import logging
from collections.abc import Hashable, Sequence
from typing import Any

from sqlalchemy.orm import Session

from storage.models import Operation
from wharf.infra.context import RequestContext, system_principal
from wharf.observability import logctx

log = logging.getLogger("wharf.operations")


def run_on_failed(handler: Any, session: Session, op: Operation, error: dict[str, Any]) -> None:
    """The kind's ``on_failed``, if it has one, inside the caller's transaction."""
    on_failed = getattr(handler, "on_failed", None)
    if on_failed is not None:
        on_failed(session, op, error)


def run_compensate(handler: Any, op: Operation, when: str) -> None:
    """The kind's ``compensate``, if it has one, after the commit; a failure is logged."""
    compensate = getattr(handler, "compensate", None)
    if compensate is None:
        return
    try:
        compensate(op)
    except Exception:  # left for the sweeps/operators; the operation stays failed
        log.warning("operation %s: compensation %s failed", op.id, when, exc_info=True)


def target_key(handler: Any, op: Operation) -> Hashable:
    """What a permission check depends on: operations of a batch with the same key share
    one check. The kind's ``target_key(op)``, if it has one; otherwise the operation itself
    (checked on its own)."""
    key = getattr(handler, "target_key", None)
    if key is None:
        return ("operation", op.id)
    return (handler.kind, key(op))


def commit_products(handler: Any, session: Session, ops: Sequence[Operation]) -> list[Any]:
    """Write the product rows of ``ops`` (one kind) in the caller's transaction; their
    results in order. The kind's ``commit_many(session, ops)`` if it has one (e.g. Core
    executemany), otherwise its ``commit`` one by one, each as the operation's system
    principal (what the audit rows name)."""
    many = getattr(handler, "commit_many", None)
    if many is not None:
        results: list[Any] = many(session, ops)
        return results
    results = []
    for op in ops:
        with logctx.bound_op(op):
            results.append(handler.commit(session, op,
                                          RequestContext(principal=system_principal(op.id))))
    return results
