"""Users and how they prove who they are: passwords, login sessions, API tokens, and the
login/registration throttle."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class User(Base):
    __tablename__ = "users"
    __table_args__ = (
        # the operators' dashboard lists disabled accounts by name (wharf.dashboard.service)
        Index("ix_users_disabled", "username_key",
              postgresql_where=text("status = 'disabled'"),
              sqlite_where=text("status = 'disabled'")),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    username: Mapped[str] = mapped_column(String(64))
    username_key: Mapped[str] = mapped_column(String(64), unique=True)  # lower-cased
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # active | deleting (wharf.accounts.service: no access; a delete_account operation runs)
    # | disabled (wharf.accounts.disabling: 403 account_disabled until enabled)
    status: Mapped[str] = mapped_column(String(16), default="active",
                                        server_default=text("'active'"))


class PasswordCredential(Base):
    __tablename__ = "password_credentials"

    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LoginSession(Base):
    __tablename__ = "login_sessions"

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         index=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    # What the user sees of their sessions (GET /api/login-sessions); set at login.
    user_agent: Mapped[str | None] = mapped_column(String(200))
    address: Mapped[str | None] = mapped_column(String(64))
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # within a minute


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         index=True)
    name: Mapped[str] = mapped_column(String(100))
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    scopes: Mapped[str] = mapped_column(String(64))  # space-separated: "read write"
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The token's own quotas (wharf.operations.quotas); NULL: the server's settings.
    quota_pending_operations: Mapped[int | None] = mapped_column(Integer)
    quota_submissions_per_minute: Mapped[int | None] = mapped_column(Integer)


class AuthThrottle(Base):
    """Fixed-window counters of login and registration attempts (see wharf.identity.throttle).

    ``key`` is e.g. ``login:pair:<username>:<addr>``, ``login:user:<username>``,
    ``login:addr:<addr>``, ``register:addr:<addr>`` (``addr``: see ``address_key``).
    """
    __tablename__ = "auth_throttle"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    window_start: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    count: Mapped[int] = mapped_column(Integer)
