"""Team-space issues (wharf.issues)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class IssueCounter(Base):
    """The last ``#N`` handed out in a space: creating an issue increments it in the same
    transaction (the row lock serialises creators of one space; a rollback takes the number
    back, so numbers have no gaps)."""

    __tablename__ = "issue_counters"

    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id", ondelete="CASCADE"),
                                          primary_key=True)
    last_number: Mapped[int] = mapped_column(Integer, default=0)


class Issue(Base):
    """An issue of a team space, numbered ``#N`` per space."""

    __tablename__ = "issues"
    __table_args__ = (
        UniqueConstraint("space_id", "number", name="uq_issues_space_number"),
        Index("ix_issues_space_state", "space_id", "state", "number"),
        CheckConstraint("(state = 'open' AND state_reason IS NULL) OR "
                        "(state = 'closed' AND state_reason IS NOT NULL AND "
                        "state_reason IN ('completed', 'not_planned'))",
                        name="ck_issues_state_reason"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(String(256))
    # The title lower-cased (Python's str.lower, the same on both databases): the text search.
    title_key: Mapped[str] = mapped_column(String(1024))
    body: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16))  # open | closed
    state_reason: Mapped[str | None] = mapped_column(String(16))  # completed | not_planned
    author_user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id"), index=True)
    closed_by_user_id: Mapped[str | None] = mapped_column(ID, ForeignKey("users.id"))
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The number of its comments, kept in the transaction that adds or deletes one (the
    # issue row is locked): listings read it instead of counting.
    comment_count: Mapped[int] = mapped_column(Integer, default=0)


class IssueComment(Base):
    __tablename__ = "issue_comments"
    __table_args__ = (Index("ix_issue_comments_timeline", "issue_id", "created_at", "id"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    issue_id: Mapped[str] = mapped_column(ID, ForeignKey("issues.id", ondelete="CASCADE"))
    author_user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class IssueEvent(Base):
    """One change of an issue; ``payload`` snapshots the names involved (label name and
    colour, username, node name) so the history stays readable after they change."""

    __tablename__ = "issue_events"
    __table_args__ = (Index("ix_issue_events_timeline", "issue_id", "created_at", "id"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    issue_id: Mapped[str] = mapped_column(ID, ForeignKey("issues.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    # None: the system (a node purged by retention or by an operation).
    actor_user_id: Mapped[str | None] = mapped_column(ID, ForeignKey("users.id"))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class IssueLabel(Base):
    __tablename__ = "issue_labels"
    __table_args__ = (UniqueConstraint("space_id", "name_key", name="uq_issue_labels_name"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(50))
    name_key: Mapped[str] = mapped_column(String(200))  # lower-cased: unique per space
    color: Mapped[str] = mapped_column(String(16))  # a LabelColor key
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class IssueLabelLink(Base):
    __tablename__ = "issue_label_links"

    issue_id: Mapped[str] = mapped_column(ID, ForeignKey("issues.id", ondelete="CASCADE"),
                                          primary_key=True)
    label_id: Mapped[str] = mapped_column(ID, ForeignKey("issue_labels.id", ondelete="CASCADE"),
                                          primary_key=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class IssueNodeRef(Base):
    """A node an issue references (same space). Deleted with the node's purge, which writes
    a ``node_unreferenced`` event (``wharf.issues.service.unreference_purged``)."""

    __tablename__ = "issue_node_refs"

    issue_id: Mapped[str] = mapped_column(ID, ForeignKey("issues.id", ondelete="CASCADE"),
                                          primary_key=True)
    node_id: Mapped[str] = mapped_column(ID, ForeignKey("nodes.id", ondelete="CASCADE"),
                                         primary_key=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The node's name when the reference was made: the node_unreferenced events carry it.
    name: Mapped[str] = mapped_column(String(255))


class IssueAssignee(Base):
    __tablename__ = "issue_assignees"

    issue_id: Mapped[str] = mapped_column(ID, ForeignKey("issues.id", ondelete="CASCADE"),
                                          primary_key=True)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
