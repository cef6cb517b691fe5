"""Sign-in with an external provider (issue 40 item 4): the identities linked to users
(``external_identities``) and the authorization requests under way
(``external_authorizations``), kept in the database so any API process can finish the
callback of a request another one started."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class ExternalIdentity(Base):
    """A user's account at a provider (``oidc``, ``github``): the provider's stable subject
    (OIDC ``sub``, GitHub's numeric user id) is unique per provider, and a user has at
    most one identity per provider."""

    __tablename__ = "external_identities"
    __table_args__ = (
        UniqueConstraint("provider", "subject", name="uq_external_identities_provider_subject"),
        UniqueConstraint("user_id", "provider", name="uq_external_identities_user_provider"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"))
    provider: Mapped[str] = mapped_column(String(32))
    subject: Mapped[str] = mapped_column(String(255))
    # What the provider called the account when it was linked (shown in the list only).
    display_name: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ExternalAuthorization(Base):
    """One authorization request under way: the SHA-256 of its ``state`` (never the state
    itself), the nonce and PKCE verifier it was sent with, the SHA-256 of the browser
    binding cookie, the user who started it to link an identity (NULL: a sign-in), and
    where to go afterwards. Consumed by deleting it (single use); expired rows are
    deleted by the next request that starts one."""

    __tablename__ = "external_authorizations"

    state_digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    provider: Mapped[str] = mapped_column(String(32))
    nonce: Mapped[str] = mapped_column(String(128))
    code_verifier: Mapped[str] = mapped_column(String(128))
    browser_digest: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[str | None] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"))
    next_path: Mapped[str] = mapped_column(String(2048))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
