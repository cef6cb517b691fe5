"""Audit rows, written in the same transaction as the change they describe.

``record`` flushes immediately: if the audit row cannot be written, the exception
propagates and the caller's transaction (and so the change) is rolled back.
``record_core`` writes the same row with one Core INSERT on the transaction's connection
(no unit of work): for hot paths that do not otherwise use the ORM. ``values`` is the row
both write, for a caller that folds the INSERT into a statement of its own.

``AUDITED``: callables run with the session and each row ``record`` or ``record_core``
writes (the live feed, ``wharf.feed``, derives the events a write announces from them);
a higher capability registers there.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import insert
from sqlalchemy.orm import Session

from storage.models import AuditLog
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.ids import new_id

AUDIT = AuditLog.__table__
#: Every column of an audit row, in one fixed order (``values`` fills each).
COLUMNS = ("id", "at", "actor_type", "actor_id", "action", "target_type", "target_id",
           "space_id", "request_id", "client_ip", "user_agent", "details")
INSERT = insert(AUDIT)
#: Run with each audited row (its ``_fields`` dict) in the writing session, and the parent
#: node of what it created when the caller knows it (else None).
AUDITED: list[Callable[[Session, dict[str, Any], str | None], None]] = []


def announce(session: Session, fields: dict[str, Any], *,
             parent_id: str | None = None) -> None:
    """Run the :data:`AUDITED` hooks for a row written by other means (a Core
    executemany); ``record`` and ``record_core`` do so themselves."""
    for hook in AUDITED:
        hook(session, fields, parent_id)


def _fields(ctx: RequestContext, action: str, target_type: str, target_id: str | None,
            space_id: str | None, details: dict[str, Any] | None) -> dict[str, Any]:
    principal = ctx.principal
    if principal.kind == "system":
        actor_id = principal.username  # the operation id
    else:
        actor_id = principal.user_id
    return {"actor_type": principal.kind, "actor_id": actor_id, "action": action,
            "target_type": target_type, "target_id": target_id, "space_id": space_id,
            "request_id": (ctx.request_id or None) and ctx.request_id[:128],
            "client_ip": (ctx.client_ip or None) and ctx.client_ip[:64],
            "user_agent": (ctx.user_agent or None) and ctx.user_agent[:512],
            "details": details or None}


def record(session: Session, ctx: RequestContext, action: str, target_type: str,
           target_id: str | None, *, space_id: str | None = None,
           details: dict[str, Any] | None = None) -> AuditLog:
    fields = _fields(ctx, action, target_type, target_id, space_id, details)
    row = AuditLog(**fields)
    session.add(row)
    session.flush()
    announce(session, fields)
    return row


def values(ctx: RequestContext, action: str, target_type: str, target_id: str | None, *,
           space_id: str | None = None,
           details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The audit row ``record`` would write (every column of ``COLUMNS``, id and time
    included), as a dict for a Core INSERT."""
    return {"id": new_id(), "at": utcnow(),
            **_fields(ctx, action, target_type, target_id, space_id, details)}


def record_core(session: Session, ctx: RequestContext, action: str, target_type: str,
                target_id: str | None, *, space_id: str | None = None,
                details: dict[str, Any] | None = None) -> str:
    """``record`` with one Core INSERT on the session's connection; returns the row id.
    An error propagates like ``record``'s (the caller's transaction rolls back)."""
    row = values(ctx, action, target_type, target_id, space_id=space_id, details=details)
    session.connection().execute(INSERT, row)
    announce(session, row)
    return str(row["id"])
