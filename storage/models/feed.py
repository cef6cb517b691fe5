"""Feed tickets (issue 39): one-use, short-lived passes into the live change feed,
bound to the login session or API token that asked for one."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.models.base import ID, Base
from storage.types import UTCDateTime


class FeedTicket(Base):
    """A ticket's SHA-256 digest (never the ticket), whose it is and until when. Consumed
    by deleting it (``wharf.feed.tickets.consume``); the login session's or token's row
    going takes its tickets with it."""

    __tablename__ = "feed_tickets"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         index=True)
    session_id: Mapped[str | None] = mapped_column(
        ID, ForeignKey("login_sessions.id", ondelete="CASCADE"), index=True)
    token_id: Mapped[str | None] = mapped_column(
        ID, ForeignKey("api_tokens.id", ondelete="CASCADE"), index=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
