"""The core's clock: :mod:`storage.clock` (the one place Wharf reads the time) re-exported,
so the core and the layers above it name the time as ``wharf.infra.clock``."""
from __future__ import annotations

from storage.clock import iso, utcnow

__all__ = ["iso", "utcnow"]
