"""Sharing, trash, recent, stars."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class NodeGrant(Base):
    """A direct grant on a personal-space node; inherited by its descendants."""

    __tablename__ = "node_grants"

    node_id: Mapped[str] = mapped_column(ID, ForeignKey("nodes.id", ondelete="CASCADE"),
                                         primary_key=True)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True, index=True)
    role: Mapped[str] = mapped_column(String(16))  # editor | viewer
    created_by: Mapped[str] = mapped_column(ID)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LinkSharing(Base):
    """Link sharing on a node: anyone with the node's link gets ``role`` (anonymous: viewer)."""

    __tablename__ = "link_sharing"

    node_id: Mapped[str] = mapped_column(ID, ForeignKey("nodes.id", ondelete="CASCADE"),
                                         primary_key=True)
    role: Mapped[str] = mapped_column(String(16))  # editor | viewer
    created_by: Mapped[str] = mapped_column(ID)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TrashBatch(Base):
    """Nodes trashed together: a root and its descendants that were not already trashed."""

    __tablename__ = "trash_batches"
    __table_args__ = (Index("ix_trash_batches_space", "space_id", "created_at"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id"))
    root_node_id: Mapped[str] = mapped_column(ID, ForeignKey("nodes.id"), unique=True)
    created_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    node_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class RecentOpen(Base):
    """The last successful open of a resource by a user (names come from the node)."""

    __tablename__ = "recent_opens"
    __table_args__ = (Index("ix_recent_user_time", "user_id", "opened_at"),)

    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True)
    resource_id: Mapped[str] = mapped_column(ID, ForeignKey("resources.id", ondelete="CASCADE"),
                                             primary_key=True)
    opened_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Star(Base):
    """A resource a user starred (names come from the node; a personal preference: the row
    goes with the user or the resource)."""

    __tablename__ = "stars"
    __table_args__ = (Index("ix_stars_user_time", "user_id", "created_at", "resource_id"),)

    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True)
    resource_id: Mapped[str] = mapped_column(ID, ForeignKey("resources.id", ondelete="CASCADE"),
                                             primary_key=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
