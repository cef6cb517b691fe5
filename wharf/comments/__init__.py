"""Comment threads on trunk units: anchored in the document, with replies, a solved state
and a concurrency ``generation`` (docs/comments.md).

Plain product data: every write is one database transaction with its audit row, no
operation, no ``Idempotency-Key``. Who may do what: :mod:`wharf.comments.access`; what the
API calls: :mod:`wharf.comments.service`.
"""
from __future__ import annotations

from wharf.comments.lifecycle import units_purged
from wharf.infra.hooks import register
from wharf.trash import service as trash

# Every process that purges trash imports this package (wharf.capabilities): a purged
# unit's comments go in the purge's transaction.
register(trash.UNITS_PURGED, units_purged)
