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
from typing import Any

from sqlalchemy.orm import Session

from storage.models import Operation

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
