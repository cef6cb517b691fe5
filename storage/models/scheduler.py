"""The scheduler's ticks."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class ScheduleTick(Base):
    """One tick of one schedule. The unique (schedule, tick_at) decides which scheduler
    enqueues it; the row then records the sweep's run."""

    __tablename__ = "schedule_ticks"
    __table_args__ = (
        UniqueConstraint("schedule", "tick_at", name="uq_schedule_tick"),
        Index("ix_schedule_ticks_status", "schedule", "status"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    schedule: Mapped[str] = mapped_column(String(64))
    tick_at: Mapped[datetime] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(String(16))  # enqueued|running|done|failed|skipped
    scheduler_id: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    counts: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)
