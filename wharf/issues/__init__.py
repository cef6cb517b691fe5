"""Team-space issues: ``#N`` per space, comments and an event timeline, labels, assignees
and references to nodes (docs/issues.md).

Plain product data: every write is one database transaction with its audit row and its
timeline event, no operation, no ``Idempotency-Key``. Permissions come from the space
role (:mod:`wharf.issues.access`); the services are in :mod:`wharf.issues.service`, the
merged timeline in :mod:`wharf.issues.timeline`.
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from wharf.issues.service import unreference_purged
from wharf.trash import service as trash


class _PurgeReaction:
    """``trash.PURGE_REACTIONS``: issues lose their references to purged nodes, each with
    a ``node_unreferenced`` event (:func:`unreference_purged`)."""

    def units_purged(self, s: Session, unit_ids: list[str]) -> int:
        return 0  # issues reference nodes, not units

    def nodes_purged(self, s: Session, node_ids: list[str]) -> None:
        unreference_purged(s, node_ids)


PURGE_REACTION = _PurgeReaction()
# Every process that purges trash imports this package (wharfd.capabilities).
if PURGE_REACTION not in trash.PURGE_REACTIONS:
    trash.PURGE_REACTIONS.append(PURGE_REACTION)
