"""Team-space issues: ``#N`` per space, comments and an event timeline, labels, assignees
and references to nodes (docs/issues.md).

Plain product data: every write is one database transaction with its audit row and its
timeline event, no operation, no ``Idempotency-Key``. Permissions come from the space
role (:mod:`wharf.issues.access`); the services are in :mod:`wharf.issues.service`, the
merged timeline in :mod:`wharf.issues.timeline`.
"""
