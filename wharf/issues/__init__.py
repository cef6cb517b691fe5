"""Team-space issues: ``#N`` per space, comments and an event timeline, labels, assignees
and references to nodes (docs/issues.md).

Plain product data: every write is one database transaction with its audit row and its
timeline event, no operation, no ``Idempotency-Key``. Permissions come from the space
role (:mod:`wharf.issues.access`). :mod:`wharf.issues.service` is what the API calls, each
function in its own transaction; the rules are session-level in :mod:`wharf.issues.writes`
(issues, comments), :mod:`wharf.issues.labels` (labels, assignees, node references) and
:mod:`wharf.issues.timeline`; shared views and checks in :mod:`wharf.issues.records`.
"""
from __future__ import annotations

from wharf.infra.hooks import register
from wharf.issues.labels import unreference_purged
from wharf.trash import service as trash

# Every process that purges trash imports this package (wharfd.capabilities): issues lose
# their references to purged nodes, each with a ``node_unreferenced`` event.
register(trash.NODES_PURGED, unreference_purged)
