"""Finding another user by name: an exact, case-insensitive username lookup for logged-in
users, answering only id and username, throttled per user.

The throttle (``lookup:user:<user id>`` in ``auth_throttle``, see wharf.identity.throttle)
counts every lookup, found or not, so enumerating usernames is slow; naming a member by
username (PUT /api/spaces/{id}/members) takes a slot of the same limit.
"""
from __future__ import annotations

from sqlalchemy import select

from storage.db import Database
from storage.enums import UserStatus
from storage.models import User
from wharf.identity import throttle
from wharf.identity.throttle import Limit
from wharf.infra.context import RequestContext

#: Lookups one user may make per :data:`LOOKUP_WINDOW` seconds.
LOOKUPS_PER_WINDOW = 30
LOOKUP_WINDOW = 60
USERNAME_MAX = 64


def take_lookup(db: Database, ctx: RequestContext) -> None:
    """Count one username lookup by the caller; 429 ``rate_limited`` over the limit."""
    limits = [Limit(f"lookup:user:{ctx.principal.user_id}", LOOKUPS_PER_WINDOW,
                    LOOKUP_WINDOW)]
    with db.read() as session:
        throttle.check(session, limits, "user lookups")
    with db.write() as session:
        throttle.take(session, limits, "user lookups")


def find_by_username(db: Database, ctx: RequestContext, username: str) -> list[tuple[str, str]]:
    """``[(id, username)]`` of the active user named ``username`` (any case), or ``[]``."""
    take_lookup(db, ctx)
    if not username or len(username) > USERNAME_MAX:
        return []
    with db.read() as session:
        row = session.execute(select(User.id, User.username).where(
            User.username_key == username.lower(),
            User.status == UserStatus.ACTIVE)).first()
    return [(row[0], row[1])] if row is not None else []
