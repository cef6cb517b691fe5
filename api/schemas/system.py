"""Liveness, readiness and dependency details."""
from __future__ import annotations

from enum import StrEnum

import msgspec

from api.schemas.common import Response


class HealthStatus(StrEnum):
    OK = "ok"
    DEGRADED = "degraded"
    UNAVAILABLE = "unavailable"


class CheckState(StrEnum):
    OK = "ok"
    DOWN = "down"


class Health(Response):
    """``/healthz``: the process answers."""

    status: HealthStatus


class Readiness(Response):
    """``/readyz`` when ready: each check is ``ok`` or ``error: <type>``."""

    status: HealthStatus
    checks: dict[str, str]


class Check(Response):
    status: CheckState
    error: str | msgspec.UnsetType = msgspec.UNSET


class HealthDetails(Response):
    """Every dependency with its status; an error is its type only unless the metrics token
    is configured (then the operator message)."""

    status: HealthStatus
    checks: dict[str, Check]
