"""What happens to permission objects when what they name goes: a purged unit's objects
and collaborators are deleted in the purge's transaction (:func:`units_purged`, registered
in ``trash.UNITS_PURGED``; the account deletion's purge of a personal space calls
:func:`delete_for_units` itself). A deleted account's objects stay, handed over to the
deleted-account placeholder (:data:`AUTHORED`, which ``wharf.accounts.purge`` rewrites):
nobody is their creator any more, the document's owner and admins manage them. Its
explicit roles go (:func:`forget_user`). Trash, move and rename change nothing: the ids
stay."""
from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from storage.models import ContentPermissionCollaborator as Collab
from storage.models import ContentPermissionObject as Obj
from storage.results import rowcount

#: The columns naming a user who created something here: ``(table, column)``.
AUTHORED = ((Obj.__table__, "creator_id"),)
_CHUNK = 500


def delete_for_units(s: Session, unit_ids: list[str]) -> int:
    """Delete the objects of ``unit_ids`` with their collaborators; how many objects went."""
    gone = 0
    for i in range(0, len(unit_ids), _CHUNK):
        chunk = unit_ids[i:i + _CHUNK]
        ids = select(Obj.id).where(Obj.unit_id.in_(chunk)).scalar_subquery()
        s.execute(delete(Collab).where(Collab.object_id.in_(ids))
                  .execution_options(synchronize_session=False))
        gone += rowcount(s.execute(delete(Obj).where(Obj.unit_id.in_(chunk))
                                   .execution_options(synchronize_session=False)))
    return gone


def units_purged(s: Session, unit_ids: list[str]) -> int:
    """``trash.UNITS_PURGED``: the objects go with the units; no storage object does."""
    delete_for_units(s, unit_ids)
    return 0


def forget_user(s: Session, user_id: str, limit: int) -> int:
    """Delete up to ``limit`` of ``user_id``'s explicit roles; how many went."""
    keys = list(s.scalars(select(Collab.object_id).where(Collab.user_id == user_id).limit(limit)))
    if not keys:
        return 0
    return rowcount(s.execute(
        delete(Collab).where(Collab.user_id == user_id, Collab.object_id.in_(keys))
        .execution_options(synchronize_session=False)))
