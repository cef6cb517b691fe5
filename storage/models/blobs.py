"""Blobs: blob resources and their upload sessions."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class BlobResource(Base):
    """Metadata of a blob resource; the bytes live in the BlobStore under ``object_key``."""

    __tablename__ = "blob_resources"

    resource_id: Mapped[str] = mapped_column(ID, ForeignKey("resources.id", ondelete="CASCADE"),
                                             primary_key=True)
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    filename: Mapped[str] = mapped_column(String(255))
    mime_type: Mapped[str] = mapped_column(String(255))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    object_etag: Mapped[str] = mapped_column(String(128))
    etag: Mapped[str] = mapped_column(String(64))  # the HTTP strong ETag; random per content
    state: Mapped[str] = mapped_column(String(16), default="ready")  # ready | quarantined
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class BlobUploadSession(Base):
    """An upload in progress: ids reserved at creation, nothing in the tree until publish."""

    __tablename__ = "blob_upload_sessions"
    __table_args__ = (
        Index("ix_upload_sessions_expiry", "state", "expires_at"),
        UniqueConstraint("actor_id", "idempotency_key", name="uq_upload_sessions_actor_key"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    actor_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"))
    idempotency_key: Mapped[str | None] = mapped_column(String(200))
    request_fingerprint: Mapped[str] = mapped_column(String(64))
    space_id: Mapped[str] = mapped_column(ID)
    parent_id: Mapped[str | None] = mapped_column(ID)
    filename: Mapped[str] = mapped_column(String(255))
    declared_size: Mapped[int] = mapped_column(BigInteger)
    # storage.enums.UploadState
    state: Mapped[str] = mapped_column(String(24))
    node_id: Mapped[str] = mapped_column(ID)
    resource_id: Mapped[str] = mapped_column(ID)
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    received_size: Mapped[int | None] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))
    mime_type: Mapped[str | None] = mapped_column(String(255))
    object_etag: Mapped[str | None] = mapped_column(String(128))
    operation_id: Mapped[str | None] = mapped_column(ID)
    error_code: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
