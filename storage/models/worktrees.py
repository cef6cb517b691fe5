"""Worktrees: the worktree, its units, its node intents and its events."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    CheckConstraint,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class Worktree(Base):
    """An isolated draft of units, merged back into trunk by an operation. Its state is
    product data (listing needs no unit-store call); the drafts live in the unit store."""

    __tablename__ = "worktrees"
    __table_args__ = (
        Index("ix_worktrees_creator", "creator_id", "processed_at", "updated_at", "id"),
        Index("ix_worktrees_team", "team_space_id", "processed_at", "updated_at", "id"),
        CheckConstraint("(kind = 'user' AND team_space_id IS NULL AND visibility = 'private')"
                        " OR (kind = 'team' AND team_space_id IS NOT NULL)",
                        name="ck_worktrees_kind_scope"),
        CheckConstraint("(processed_at IS NOT NULL) = (state IN ('merged', 'discarded'))",
                        name="ck_worktrees_processed"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))  # WorktreeKind
    name: Mapped[str] = mapped_column(String(255))
    summary: Mapped[str | None] = mapped_column(Text)
    creator_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    team_space_id: Mapped[str | None] = mapped_column(ID, ForeignKey("spaces.id"))
    visibility: Mapped[str] = mapped_column(String(8))  # WorktreeVisibility
    state: Mapped[str] = mapped_column(String(16))  # WorktreeState
    busy_operation_id: Mapped[str | None] = mapped_column(ID)
    last_merge_operation_id: Mapped[str | None] = mapped_column(ID)
    processed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    drafts_purged_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WorktreeUnit(Base):
    """A unit in a worktree: a trunk unit's copy, or a worktree-local unit whose
    ``resource_id`` is reserved (no ``resources`` row until the merge activates it)."""

    __tablename__ = "worktree_units"
    __table_args__ = (
        UniqueConstraint("worktree_id", "resource_id", name="uq_worktree_units_resource"),
        Index("ix_worktree_units_resource", "resource_id"),
        CheckConstraint("ordinal >= 0", name="ck_worktree_units_ordinal"),
    )

    worktree_id: Mapped[str] = mapped_column(ID, ForeignKey("worktrees.id"), primary_key=True)
    unit_id: Mapped[str] = mapped_column(ID, primary_key=True)
    resource_id: Mapped[str] = mapped_column(ID)
    source: Mapped[str] = mapped_column(String(8))  # WorktreeUnitSource
    unit_type: Mapped[str] = mapped_column(String(8))
    ordinal: Mapped[int] = mapped_column(Integer)
    added_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    added_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    merge_state: Mapped[str] = mapped_column(String(24), default="pending")  # MergeState
    merged_trunk_revision: Mapped[int | None] = mapped_column(Integer)
    conflict_count: Mapped[int] = mapped_column(Integer, default=0)
    last_merge_operation_id: Mapped[str | None] = mapped_column(ID)


class WorktreeNodeIntent(Base):
    """Where a worktree-local unit's node will be created when the worktree is merged
    (ids reserved at submission, never chosen by the client)."""

    __tablename__ = "worktree_node_intents"
    __table_args__ = (
        ForeignKeyConstraint(["worktree_id", "unit_id"],
                             ["worktree_units.worktree_id", "worktree_units.unit_id"],
                             ondelete="CASCADE"),
        Index("ix_worktree_intents_parent", "target_parent_id"),
        CheckConstraint("activated_at IS NULL OR discarded_at IS NULL",
                        name="ck_worktree_intents_outcome"),
    )

    worktree_id: Mapped[str] = mapped_column(ID, primary_key=True)
    unit_id: Mapped[str] = mapped_column(ID, primary_key=True)
    node_id: Mapped[str] = mapped_column(ID, unique=True)
    target_space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id"))
    # No foreign key: the parent may be purged once the intent is activated or discarded
    # (while the intent waits, the purge is refused); activation re-checks it.
    target_parent_id: Mapped[str | None] = mapped_column(ID)
    name: Mapped[str] = mapped_column(String(255))
    unit_type: Mapped[str] = mapped_column(String(8))
    created_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    activated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    discarded_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WorktreeEvent(Base):
    """Something that happened to a worktree that its creator did not do and must be
    able to see afterwards: a permanent delete of trash took a unit out of it
    (``unit_purged``: its draft discarded) or removed the folder a unit new in it was to be
    created in (``target_purged``). Written in the purge's completion transaction."""

    __tablename__ = "worktree_events"
    __table_args__ = (Index("ix_worktree_events_worktree", "worktree_id", "id"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    worktree_id: Mapped[str] = mapped_column(ID, ForeignKey("worktrees.id"))
    kind: Mapped[str] = mapped_column(String(32))  # WorktreeEventKind
    unit_id: Mapped[str] = mapped_column(ID)
    resource_id: Mapped[str | None] = mapped_column(ID)
    # The purge_trash operation, and whether the trash retention submitted it.
    operation_id: Mapped[str | None] = mapped_column(ID)
    reason: Mapped[str] = mapped_column(String(16))  # "purge" | "retention"
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
