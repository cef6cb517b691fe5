"""Audit rows, written in the same transaction as the change they describe.

``record`` flushes immediately: if the audit row cannot be written, the exception
propagates and the caller's transaction (and so the change) is rolled back.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from storage.models import AuditLog
from wharf.context import RequestContext


def record(session: Session, ctx: RequestContext, action: str, target_type: str,
           target_id: str | None, *, space_id: str | None = None,
           details: dict[str, Any] | None = None) -> AuditLog:
    principal = ctx.principal
    if principal.kind == "system":
        actor_id = principal.username  # the operation id
    else:
        actor_id = principal.user_id
    row = AuditLog(
        actor_type=principal.kind,
        actor_id=actor_id,
        action=action,
        target_type=target_type,
        target_id=target_id,
        space_id=space_id,
        request_id=(ctx.request_id or None) and ctx.request_id[:128],
        client_ip=(ctx.client_ip or None) and ctx.client_ip[:64],
        user_agent=(ctx.user_agent or None) and ctx.user_agent[:512],
        details=details or None,
    )
    session.add(row)
    session.flush()
    return row
