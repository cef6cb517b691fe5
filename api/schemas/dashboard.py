"""The operator dashboard (``GET /api/ops/dashboard``): the core's own Structs
(``wharf.dashboard.views``), so what the panels compute is what the document declares."""
from __future__ import annotations

from wharf.dashboard.views import Dashboard

__all__ = ["Dashboard"]
