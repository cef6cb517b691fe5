"""What happens to comments when what they name goes: a purged unit's threads and
comments are deleted in the purge's transaction (:func:`units_purged`, registered in
``trash.UNITS_PURGED``; the purge of a whole space, ``wharf.accounts.tree``, calls
:func:`delete_for_units` itself); a deleted account's comments stay, handed over to the
deleted-account placeholder (:data:`AUTHORED`, which ``wharf.accounts.purge`` rewrites)."""
from __future__ import annotations

from sqlalchemy import delete
from sqlalchemy.orm import Session

from storage.models import UnitComment, UnitCommentThread
from storage.results import rowcount

#: The columns naming a user who wrote something here: ``(table, column)``.
AUTHORED = ((UnitComment.__table__, "author_id"), (UnitCommentThread.__table__, "created_by"))
_CHUNK = 500


def delete_for_units(s: Session, unit_ids: list[str]) -> int:
    """Delete the threads and comments of ``unit_ids``; returns how many comments went."""
    gone = 0
    for i in range(0, len(unit_ids), _CHUNK):
        chunk = unit_ids[i:i + _CHUNK]
        gone += rowcount(s.execute(delete(UnitComment).where(UnitComment.unit_id.in_(chunk))
                                   .execution_options(synchronize_session=False)))
        s.execute(delete(UnitCommentThread).where(UnitCommentThread.unit_id.in_(chunk))
                  .execution_options(synchronize_session=False))
    return gone


def units_purged(s: Session, unit_ids: list[str]) -> int:
    """``trash.UNITS_PURGED``: the comments go with the units; no storage object does."""
    delete_for_units(s, unit_ids)
    return 0
