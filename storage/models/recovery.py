"""Recovery codes: one-time codes that reset a forgotten password (wharf.identity.passwords)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class RecoveryCode(Base):
    """One of a user's recovery codes: only the SHA-256 of the code is kept. ``used_at`` is
    set, once, by the reset that spends it; a new set replaces every earlier row."""

    __tablename__ = "recovery_codes"
    __table_args__ = (Index("ix_recovery_codes_user_digest", "user_id", "digest", unique=True),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"))
    digest: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
