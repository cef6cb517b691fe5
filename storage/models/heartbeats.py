"""Process heartbeats (issue 15)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.models.base import Base
from storage.types import UTCDateTime


class ProcessHeartbeat(Base):
    """One running (or lately stopped) Wharf process: its writer upserts the row every
    ``WHARF_HEARTBEAT_SECONDS`` (``wharf.observability.heartbeats``)."""

    __tablename__ = "process_heartbeats"
    __table_args__ = (Index("ix_process_heartbeats_seen", "last_seen_at"),)

    # host:pid:started-epoch
    process_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    role: Mapped[str] = mapped_column(String(16))  # api | worker | scheduler | serve
    hostname: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    stopped_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    version: Mapped[str] = mapped_column(String(64))
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON)
