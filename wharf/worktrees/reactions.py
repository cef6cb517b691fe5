"""What other capabilities hold of a worktree, dropped with it: the ``DROP_REACTIONS``
hook list. A capability that keeps rows naming a worktree (or one of its units) registers
a reaction on import (``wharf.assets``: the worktree's assets and uploads); the worktrees
capability calls :func:`dropped` when the worktree is discarded, a unit is taken out of it,
or a purge takes a unit away, in that transaction. Worktrees import no such capability.
"""
from __future__ import annotations

from datetime import datetime
from typing import Protocol

from sqlalchemy.orm import Session


class DropReaction(Protocol):
    def __call__(self, s: Session, worktree_id: str, *, unit_id: str | None, reason: str,
                 code: str, message: str, now: datetime,
                 idempotency_key_ttl: int) -> tuple[int, int]:
        """Drop what names the worktree (one unit of it, or all when ``unit_id`` is
        None), failing what waits with ``code``/``message``; returns (rows deleted,
        waiting ones failed)."""


DROP_REACTIONS: list[DropReaction] = []


def dropped(s: Session, worktree_id: str, *, unit_id: str | None = None, reason: str,
            code: str, message: str, now: datetime,
            idempotency_key_ttl: int) -> tuple[int, int]:
    """Every registered reaction, in ``s``'s transaction; their counts summed."""
    deleted = failed = 0
    for react in DROP_REACTIONS:
        d, f = react(s, worktree_id, unit_id=unit_id, reason=reason, code=code,
                     message=message, now=now, idempotency_key_ttl=idempotency_key_ttl)
        deleted, failed = deleted + d, failed + f
    return deleted, failed
