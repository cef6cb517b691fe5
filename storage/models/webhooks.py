"""Webhooks (wharf.webhooks)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class Webhook(Base):
    """An endpoint a user registered to be told when their operations finish."""

    __tablename__ = "webhooks"
    __table_args__ = (Index("ix_webhooks_user", "user_id", "enabled"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"))
    url: Mapped[str] = mapped_column(String(2048))
    events: Mapped[list[str]] = mapped_column(JSON)
    secret: Mapped[str] = mapped_column(String(128))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled_reason: Mapped[str | None] = mapped_column(String(500))
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    # The first failed attempt since the last success (None: the last attempt succeeded).
    failing_since: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WebhookDelivery(Base):
    """One event for one endpoint: written with the change it announces, sent by workers
    until it succeeds or gives up. Its id is the ``webhook-id`` header (same on retries)."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index("ix_webhook_deliveries_webhook", "webhook_id", "id"),
        Index("ix_webhook_deliveries_due", "next_attempt_at"),
        Index("ix_webhook_deliveries_created", "created_at"),  # retention
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    webhook_id: Mapped[str] = mapped_column(ID, ForeignKey("webhooks.id",
                                                           ondelete="CASCADE"))
    event_type: Mapped[str] = mapped_column(String(64))
    subject_id: Mapped[str] = mapped_column(ID)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The token of the send in progress: only the worker holding it records the attempt.
    claim: Mapped[str | None] = mapped_column(String(32))
    # ``data`` of the body, as the operation was when it finished (written by ``announce``).
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSON)
