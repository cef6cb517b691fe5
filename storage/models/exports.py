"""Exports of units to Office files (issue 38): temporary objects in the blob store."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class Export(Base):
    """A unit exported to a file (``export_unit``): the object under ``object_key`` is
    temporary. Written with the operation's completion; deleted, and its object queued
    for deletion, once ``expires_at`` has passed (the ``expire_exports`` sweep).
    ``object_key`` never leaves the server. ``id`` is the operation's id."""

    __tablename__ = "exports"
    __table_args__ = (Index("ix_exports_expiry", "expires_at", "id"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    unit_id: Mapped[str] = mapped_column(ID, index=True)
    # No foreign key: an account deletion removes the user row while their exports may
    # still be waiting for expiry, which deletes the row and queues its object.
    owner_id: Mapped[str] = mapped_column(ID, index=True)
    format: Mapped[str] = mapped_column(String(16))
    filename: Mapped[str] = mapped_column(String(255))
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
