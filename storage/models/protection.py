"""Protected ranges (wharf.protection): content permission objects inside a unit and
their explicit collaborators. These are product authorization data only: the protected
target (a JSON Pointer prefix) is bound to the object's id in the unit's document
(``/protection/{id}``), never stored here, so a worktree draft sees its base's bindings."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class ContentPermissionObject(Base):
    """One protected object of a unit: who created it, its scopes and its strategies."""

    __tablename__ = "content_permission_objects"
    __table_args__ = (
        # A unit's objects, oldest first (the changeset check and the listings).
        Index("ix_content_permission_objects_unit", "unit_id", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    unit_id: Mapped[str] = mapped_column(ID)
    # The unit's resource: its purge deletes the objects (wharf.protection.lifecycle; the
    # foreign key cascades as well).
    resource_id: Mapped[str] = mapped_column(
        ID, ForeignKey("resources.id", ondelete="CASCADE"), index=True)
    object_type: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(255))
    creator_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id"), index=True)
    read_scope: Mapped[str] = mapped_column(String(32))  # all_collaborators | specified
    edit_scope: Mapped[str] = mapped_column(String(32))  # one_self | specified
    # {"copy": level, "print": level, "export": level}; level: reader | editor | owner
    strategies: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ContentPermissionCollaborator(Base):
    """An explicit collaborator of an object, with their role on it."""

    __tablename__ = "content_permission_collaborators"

    object_id: Mapped[str] = mapped_column(
        ID, ForeignKey("content_permission_objects.id", ondelete="CASCADE"),
        primary_key=True)
    user_id: Mapped[str] = mapped_column(
        ID, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True)
    role: Mapped[str] = mapped_column(String(16))  # editor | viewer
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
