"""Server-generated identifiers: :mod:`storage.ids` re-exported, so the core and the layers
above it name them as ``wharf.infra.ids``."""
from __future__ import annotations

from storage.ids import ID_PATTERN, is_id, new_id

__all__ = ["ID_PATTERN", "is_id", "new_id"]
