"""The audit log."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, String, text
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class AuditLog(Base):
    __tablename__ = "audit_logs"
    __table_args__ = (
        # a space's trail, newest first (wharf.audittrail.reading; ids are time-ordered)
        Index("ix_audit_scope", "space_id", "id"),
        # an account deletion walks its user's rows (wharf.accounts.service._audit), and
        # the user's own trail
        Index("ix_audit_actor", "actor_id", "id"),
        # the failed logins against a user, in their own trail
        Index("ix_audit_login_failed", "target_id", "id",
              postgresql_where=text("action = 'session.login_failed'"),
              sqlite_where=text("action = 'session.login_failed'")))

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    actor_type: Mapped[str] = mapped_column(String(16))  # user | system | anonymous
    actor_id: Mapped[str | None] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    target_type: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[str | None] = mapped_column(String(64))
    space_id: Mapped[str | None] = mapped_column(ID)
    request_id: Mapped[str | None] = mapped_column(String(128))
    client_ip: Mapped[str | None] = mapped_column(String(64))
    user_agent: Mapped[str | None] = mapped_column(String(512))
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON)
