"""Spaces and the tree: spaces, their members, nodes, and the resources (units) nodes hold."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, String, Text, func, text
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.limits import SPACE_NAME_MAX
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class Space(Base):
    __tablename__ = "spaces"
    __table_args__ = (
        Index("uq_spaces_personal_owner", "owner_id", unique=True,
              sqlite_where=text("type = 'personal'"),
              postgresql_where=text("type = 'personal'")),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    type: Mapped[str] = mapped_column(String(16))  # personal | team
    name: Mapped[str] = mapped_column(String(SPACE_NAME_MAX))
    description: Mapped[str] = mapped_column(Text, default="", server_default=text("''"))
    owner_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id"), index=True)
    public_read: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # A team space whose owner's account was deleted with no admin to take it over: owned
    # by the deleted-account placeholder, members read only, until an operator acts.
    # Archived by its owner or an admin (POST /api/spaces/{id}/archive): also read_only,
    # which unarchiving clears. An orphaned space is read_only with no archived_at.
    read_only: Mapped[bool] = mapped_column(Boolean, default=False,
                                            server_default=text("false"))
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class SpaceMember(Base):
    __tablename__ = "space_members"

    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id", ondelete="CASCADE"),
                                          primary_key=True)
    user_id: Mapped[str] = mapped_column(ID, ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True, index=True)
    role: Mapped[str] = mapped_column(String(16))  # admin | editor | viewer
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Node(Base):
    __tablename__ = "nodes"
    __table_args__ = (
        Index("ix_nodes_parent", "space_id", "parent_id", "name", "id"),
        Index("ix_nodes_trash", "trash_batch_id"),
        # Name search (wharf.search): a trigram GIN index on PostgreSQL; SQLite keeps an FTS5
        # trigram table in step by triggers instead (migration 0033, not a model).
        Index("ix_nodes_name_trgm", func.lower(text("name")), postgresql_using="gin",
              postgresql_ops={"lower(name)": "gin_trgm_ops"}).ddl_if(dialect="postgresql"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    space_id: Mapped[str] = mapped_column(ID, ForeignKey("spaces.id"))
    parent_id: Mapped[str | None] = mapped_column(ID, ForeignKey("nodes.id"))
    name: Mapped[str] = mapped_column(String(255))
    created_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    trash_batch_id: Mapped[str | None] = mapped_column(ID)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Resource(Base):
    __tablename__ = "resources"

    id: Mapped[str] = mapped_column(ID, primary_key=True, default=new_id)
    node_id: Mapped[str] = mapped_column(ID, ForeignKey("nodes.id"), unique=True)
    kind: Mapped[str] = mapped_column(String(8))  # unit | blob
    created_by: Mapped[str] = mapped_column(ID, ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class UnitResource(Base):
    __tablename__ = "unit_resources"

    resource_id: Mapped[str] = mapped_column(ID, ForeignKey("resources.id", ondelete="CASCADE"),
                                             primary_key=True)
    unit_id: Mapped[str] = mapped_column(ID, unique=True)
    unit_type: Mapped[str] = mapped_column(String(8))  # sheet | doc | slide | board | base
