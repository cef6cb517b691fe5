"""The operator dashboard (``GET /api/ops/dashboard``): the core's own Structs
(``wharf.dashboard.views``), so what the panels compute is what the document declares."""
from __future__ import annotations

from wharf.dashboard.views import (
    AttemptView,
    Dashboard,
    DeletionJobView,
    KindCount,
    Minute,
    OperationView,
    ProcessView,
    QueuePanel,
    StatusPanel,
    SweepView,
    ThroughputPanel,
)

__all__ = ["AttemptView", "Dashboard", "DeletionJobView", "KindCount", "Minute",
           "OperationView", "ProcessView", "QueuePanel", "StatusPanel", "SweepView",
           "ThroughputPanel"]
