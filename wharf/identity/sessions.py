"""A user's own login sessions: list them (which one is the caller's) and end one.

Ending a session deletes its row; the process that does it forgets the cookie at once, every
other API process within ``WHARF_AUTH_CACHE_SECONDS`` (wharf.identity.cache). Ending the
caller's own session is a logout.
"""
from __future__ import annotations

from sqlalchemy import select

from storage.db import Database
from storage.models import LoginSession
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import NotFound
from wharf.infra.ids import is_id


def list_sessions(db: Database, ctx: RequestContext) -> list[LoginSession]:
    """The caller's unexpired login sessions, newest first."""
    with db.read() as session:
        return list(session.scalars(
            select(LoginSession).where(LoginSession.user_id == ctx.principal.user_id,
                                       LoginSession.expires_at > utcnow())
            .order_by(LoginSession.created_at.desc(), LoginSession.id.desc())))


def end_session(db: Database, ctx: RequestContext, session_id: str) -> bool:
    """End one of the caller's sessions (404 for another user's or an unknown one);
    whether it was the caller's current session."""
    with db.write() as session:
        row = session.get(LoginSession, session_id) if is_id(session_id) else None
        if row is None or row.user_id != ctx.principal.user_id:
            raise NotFound("No such login session.")
        session.delete(row)  # cached principals go at flush and after commit
        current = session_id == ctx.principal.session_id
        audit.record(session, ctx, "session.revoke", "login_session", session_id,
                     details={"current": current})
    return current
