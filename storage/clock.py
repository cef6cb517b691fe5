"""The one place Wharf reads the time, so tests can move it.

It lives in the lowest layer because column defaults need it; the core uses it as
:mod:`wharf.infra.clock`, which re-exports it."""
from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
