""""At most N per user" under concurrency: count, then insert, with the user's rows held.

Counting a user's rows and inserting one more is a race when two requests of the same
user run at once: both count N - 1 and both insert. :func:`require_room` takes a lock per
user first, so that such checks of one user run one after the other (other users' do not
wait):

- PostgreSQL: ``SELECT ... FOR NO KEY UPDATE`` of the user's ``users`` row, held to the end
  of the transaction. It does not block the foreign-key checks of inserts that reference
  the user (those take ``FOR KEY SHARE``), only other lockers and updates of that row.
- SQLite: a write transaction holds the database's one write lock from ``BEGIN
  IMMEDIATE`` (``storage.db``), so writers run one at a time already; nothing to take.

Call it inside the write transaction that inserts, before the insert (webhooks:
``WHARF_WEBHOOK_MAX_PER_USER``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from storage.models import User
from wharf.infra.errors import WharfError


def lock_user(s: Session, user_id: str) -> None:
    """Hold ``user_id``'s row to the end of the transaction (see the module docstring)."""
    if s.get_bind().dialect.name == "postgresql":
        s.execute(select(User.id).where(User.id == user_id)
                  .with_for_update(key_share=True))


def lock_name(s: Session, name: str) -> None:
    """Serialise, to the end of the transaction, the callers that pass the same ``name``
    (e.g. ``"worktrees:<space id>"``) without locking a row others read: a PostgreSQL
    transaction-scoped advisory lock on the name's hash (a collision only makes two
    names wait for each other); nothing on SQLite (see the module docstring)."""
    if s.get_bind().dialect.name == "postgresql":
        s.execute(select(func.pg_advisory_xact_lock(func.hashtext(name))))


def require_room(s: Session, user_id: str, count: Select[Any], limit: int,
                 refuse: Callable[[], WharfError]) -> None:
    """Raise ``refuse()`` when ``count`` (a ``SELECT count(*)`` of ``user_id``'s rows)
    is ``limit`` or more, counted under :func:`lock_user`: the caller's insert that
    follows, in the same transaction, cannot take a concurrent request past ``limit``."""
    lock_user(s, user_id)
    if (s.scalar(count) or 0) >= limit:
        raise refuse()
