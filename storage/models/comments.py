"""Comment threads on trunk units (wharf.comments): a thread is anchored in the document
and identified by its first comment's id; the anchor is the client's (bounded JSON), the
rest (bodies, solved state, generations) the server's."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, Text
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class UnitCommentThread(Base):
    """A thread of comments on a unit. ``generation`` is bumped by every change to the
    thread (a reply, the solved state, an edit, a reply deleted): the compare-and-set of
    ``PUT /api/comment-threads/{id}/solved``."""

    __tablename__ = "unit_comment_threads"
    __table_args__ = (
        # A unit's threads, keyset-paged by creation.
        Index("ix_unit_comment_threads_unit", "unit_id", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)  # its first comment's id
    unit_id: Mapped[str] = mapped_column(ID)
    # The unit's resource: its purge deletes the threads (wharf.comments.lifecycle; the
    # foreign key cascades as well).
    resource_id: Mapped[str] = mapped_column(
        ID, ForeignKey("resources.id", ondelete="CASCADE"), index=True)
    anchor: Mapped[dict[str, Any]] = mapped_column(JSON)  # at most 4 KiB of compact JSON
    solved: Mapped[bool] = mapped_column(Boolean, default=False)
    generation: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    created_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"), index=True)


class UnitComment(Base):
    """One comment of a thread (the first one opens it). ``generation`` is bumped by
    every edit of its body: ``PATCH /api/comments/{id}`` names the one it read."""

    __tablename__ = "unit_comments"
    __table_args__ = (
        # A thread's comments, oldest first.
        Index("ix_unit_comments_thread", "thread_id", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    thread_id: Mapped[str] = mapped_column(
        ID, ForeignKey("unit_comment_threads.id", ondelete="CASCADE"))
    unit_id: Mapped[str] = mapped_column(ID)
    author_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id"), index=True)
    body: Mapped[str] = mapped_column(Text)
    generation: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
