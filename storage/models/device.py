"""Device authorizations (issue 40, RFC 8628): a CLI's request to log in, approved in the
browser by a logged-in user (wharf.identity.device)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class DeviceAuthorization(Base):
    """One request: the SHA-256 digests of its device code (the client's secret) and of its
    user code (what the person types), its state and, once decided, who decided.

    ``status``: ``pending`` → ``approved`` | ``denied``; ``approved`` → ``issued`` when the
    client's poll received its login session (once). Rows are swept once past
    ``expires_at`` (wharf.retention.sweeps.delete_expired_credentials)."""

    __tablename__ = "device_authorizations"

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    device_code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    status: Mapped[str] = mapped_column(String(16))
    # The approving (or denying) user; their account going takes the request with it.
    user_id: Mapped[str | None] = mapped_column(
        ID, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Polling: the last poll and the interval the client must keep (raised by slow_down).
    interval: Mapped[int] = mapped_column(Integer)
    last_polled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # What the approval page shows of the requesting client (as it said, and as seen).
    client_name: Mapped[str | None] = mapped_column(String(100))
    user_agent: Mapped[str | None] = mapped_column(String(200))
    address: Mapped[str | None] = mapped_column(String(64))
