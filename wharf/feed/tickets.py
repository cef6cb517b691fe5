"""Feed tickets: how a client enters the live change feed (``GET /api/feed?ticket=T``;
browsers cannot set headers on a WebSocket).

A ticket is asked for with the client's own credentials (``POST /api/feed-tickets``), is
good once, for :data:`TTL` seconds, and stays bound to the login session or API token
that asked: only its SHA-256 digest is stored, with that session's or token's id. It is
consumed by deleting its row (``DELETE ... RETURNING``: of two feed processes racing for
the same ticket, exactly one gets the row), and then the session or token is checked
again (a logout, a revoked token or a deleted account since the ticket was issued: no
entry; the row's foreign keys also take the tickets of a deleted session or token).
"""
from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select

from storage.db import Database
from storage.enums import UserStatus
from storage.models import ApiToken, FeedTicket, LoginSession, User
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal
from wharf.infra.errors import Unauthenticated

#: Seconds a ticket is good for.
TTL = 30
#: At most this many tickets a user holds unused (older ones are dropped on issue).
PER_USER = 50


@dataclass(frozen=True)
class Holder:
    """Whose a consumed ticket was."""

    user_id: str
    session_id: str | None
    token_id: str | None


def _digest(ticket: str) -> str:
    return hashlib.sha256(("feed-ticket:" + ticket).encode()).hexdigest()


def issue(db: Database, principal: Principal) -> tuple[str, datetime]:
    """A new ticket for ``principal`` (a user by session or token) and its expiry."""
    if principal.user_id is None or (principal.session_id is None
                                     and principal.token_id is None):
        raise Unauthenticated("Log in or send an API token.")
    ticket = secrets.token_urlsafe(32)
    now = utcnow()
    expires_at = now + timedelta(seconds=TTL)
    with db.write() as s:
        s.execute(delete(FeedTicket).where(FeedTicket.expires_at <= now))
        held = list(s.scalars(select(FeedTicket.digest).where(
            FeedTicket.user_id == principal.user_id).order_by(
            FeedTicket.expires_at.desc()).offset(PER_USER - 1)))
        if held:
            s.execute(delete(FeedTicket).where(FeedTicket.digest.in_(held)))
        s.add(FeedTicket(digest=_digest(ticket), user_id=principal.user_id,
                         session_id=principal.session_id, token_id=principal.token_id,
                         expires_at=expires_at))
    return ticket, expires_at


def consume(db: Database, ticket: str | None) -> Holder | None:
    """Who ``ticket`` admits, once: None when it is unknown, used, expired, or its session
    or token is no longer good."""
    if not ticket or len(ticket) > 200:
        return None
    now = utcnow()
    with db.write() as s:
        row = s.execute(delete(FeedTicket).where(FeedTicket.digest == _digest(ticket))
                        .returning(FeedTicket.user_id, FeedTicket.session_id,
                                   FeedTicket.token_id, FeedTicket.expires_at)).first()
        if row is None:
            return None
        user_id, session_id, token_id, expires_at = row
        if expires_at <= now:
            return None
        if s.scalar(select(User.status).where(User.id == user_id)) != UserStatus.ACTIVE:
            return None
        if session_id is not None:
            ends = s.scalar(select(LoginSession.expires_at).where(
                LoginSession.id == session_id, LoginSession.user_id == user_id))
            if ends is None or ends <= now:
                return None
        elif token_id is not None:
            token = s.execute(select(ApiToken.revoked_at, ApiToken.expires_at).where(
                ApiToken.id == token_id, ApiToken.user_id == user_id)).first()
            if token is None or token[0] is not None or (token[1] is not None
                                                         and token[1] <= now):
                return None
        else:
            return None
    return Holder(user_id, session_id, token_id)
