"""Deletion: the queue of objects to delete from the BlobStore, and the deletion ledger
(wharf.accounts.service, issue 18)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class ObjectDeletionJob(Base):
    """An object to delete from the BlobStore, written in the transaction that orphans it.

    ``next_attempt_at`` in the future also serves as a *reservation*: an object being
    uploaded is announced here first, and the row is removed once something references it;
    if the upload dies, the object is deleted when the reservation comes due.
    """

    __tablename__ = "object_deletion_jobs"
    __table_args__ = (
        Index("ix_deletion_jobs_due", "next_attempt_at"),
        # ``wharf.deletion.service.failing_jobs``: failing ones (attempted at least once), oldest.
        Index("ix_deletion_jobs_failing", "created_at",
              postgresql_where=text("attempts > 0"), sqlite_where=text("attempts > 0")),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    reason: Mapped[str] = mapped_column(String(64))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_error: Mapped[str | None] = mapped_column(Text)
    last_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class DeletionRecord(Base):
    """A permanent deletion (an account, or an object key), appended in the transaction
    that decides it and shipped to the blob store's ``ledger/`` prefix by a sweep; a
    restored backup replays them (``wharf restore-check``)."""

    __tablename__ = "deletion_records"
    __table_args__ = (
        Index("ix_deletion_records_shipping", "shipped_at", "recorded_at", "id"),
        Index("ix_deletion_records_recorded", "recorded_at"),
        Index("ix_deletion_records_username", "username_digest", "recorded_at"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(16))  # account | object
    subject: Mapped[str] = mapped_column(String(255))  # a user id, or an object key
    # SHA-256 of the lower-cased username (accounts): holds the name for a while.
    username_digest: Mapped[str | None] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(String(64))
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    shipped_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    ledger_key: Mapped[str | None] = mapped_column(String(255))
