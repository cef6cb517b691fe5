"""Team-space issues: ``#N`` per space, comments and an event timeline, labels, assignees
and references to nodes (docs/issues.md).

Plain product data: every write is one database transaction with its audit row and its
timeline event, no operation, no ``Idempotency-Key``. Permissions come from the space
role (:mod:`wharf.issues.access`); the services are in :mod:`wharf.issues.service`, the
merged timeline in :mod:`wharf.issues.timeline`.
"""
from __future__ import annotations

from wharf.infra.hooks import register
from wharf.issues.service import unreference_purged
from wharf.trash import service as trash

# Every process that purges trash imports this package (wharfd.capabilities): issues lose
# their references to purged nodes, each with a ``node_unreferenced`` event.
register(trash.NODES_PURGED, unreference_purged)
