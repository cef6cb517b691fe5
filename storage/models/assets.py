"""Unit assets and their uploads."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class UnitAsset(Base):
    """A file embedded in a unit (an image in a doc): not a node, not a resource; it
    inherits the permission of its unit. Snapshots name it by ``id`` only; ``object_key``
    never leaves the server. ``worktree_id`` NULL = a trunk asset."""

    __tablename__ = "unit_assets"
    __table_args__ = (
        Index("ix_unit_assets_unit", "unit_id", "created_at", "id"),
        Index("ix_unit_assets_worktree", "worktree_id", "unit_id", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    unit_id: Mapped[str] = mapped_column(ID)
    worktree_id: Mapped[str | None] = mapped_column(ID)
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    filename: Mapped[str] = mapped_column(String(255))
    declared_media_type: Mapped[str] = mapped_column(String(255))
    detected_media_type: Mapped[str] = mapped_column(String(255))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    etag: Mapped[str] = mapped_column(String(128))  # the store's ETag of the object
    created_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    published_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class UnitAssetUpload(Base):
    """An asset upload in flight: reserves the asset id and object key and fixes the unit
    scope. ``receiving`` while the request streams the bytes, ``stored`` once they are
    complete; deleted when the asset is published or the upload abandoned."""

    __tablename__ = "unit_asset_uploads"
    __table_args__ = (
        Index("ix_asset_uploads_expiry", "state", "expires_at", "id"),
        CheckConstraint("state = 'receiving' OR (received_size = expected_size AND "
                        "sha256 IS NOT NULL AND etag IS NOT NULL)",
                        name="ck_asset_uploads_stored_complete"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    # No foreign key: the row is written in the submitting transaction before the
    # operation row, and outlives nothing (deleted when the operation finishes).
    operation_id: Mapped[str] = mapped_column(ID, unique=True)
    asset_id: Mapped[str] = mapped_column(ID, unique=True)
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    unit_id: Mapped[str] = mapped_column(ID)
    worktree_id: Mapped[str | None] = mapped_column(ID)
    actor_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"))
    filename: Mapped[str] = mapped_column(String(255))
    declared_media_type: Mapped[str] = mapped_column(String(255))
    detected_media_type: Mapped[str | None] = mapped_column(String(255))
    expected_size: Mapped[int] = mapped_column(BigInteger)
    received_size: Mapped[int | None] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))
    etag: Mapped[str | None] = mapped_column(String(128))
    state: Mapped[str] = mapped_column(String(16))  # AssetUploadState
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
