"""Content search (``wharf.search``): the text extracted from each trunk unit, and the
units whose text is waiting to be extracted again.

On PostgreSQL ``search_documents.tsv`` holds ``to_tsvector('simple', body)`` under a GIN
index; on SQLite the column stays NULL and an FTS5 table ``search_documents_fts`` (external
content over ``search_documents``, keyed by its integer ``id``) is kept in step by
triggers (migration 0035, not a model)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.ids import new_id
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class SearchDocument(Base):
    """One trunk unit's searchable text (the first ``MAX_TEXT_BYTES`` of it, see
    ``wharf.search.text``) as of ``revision``. Goes with its resource (ON DELETE CASCADE):
    a purge, a space's or an account's deletion removes it in the same transaction."""

    __tablename__ = "search_documents"
    __table_args__ = (
        Index("ix_search_documents_tsv", "tsv", postgresql_using="gin"
              ).ddl_if(dialect="postgresql"),
    )

    # An integer key: the SQLite FTS5 index is keyed by it (a rowid VACUUM keeps).
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"),
                                    primary_key=True, autoincrement=True)
    unit_id: Mapped[str] = mapped_column(ID, unique=True)
    resource_id: Mapped[str] = mapped_column(ID, ForeignKey("resources.id", ondelete="CASCADE"),
                                             index=True)
    revision: Mapped[int] = mapped_column(Integer)
    body: Mapped[str] = mapped_column(Text)
    tsv: Mapped[str | None] = mapped_column(Text().with_variant(TSVECTOR(), "postgresql"))
    indexed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SearchDirty(Base):
    """A unit changed since its text was last extracted: one row per unit however many
    changes (``marks`` counts them; ``token`` changes with each, so the indexer deletes the
    row only if no change came while it read the unit). ``marked_at``: the first change
    not yet indexed (the debounce counts from it)."""

    __tablename__ = "search_dirty"
    __table_args__ = (Index("ix_search_dirty_marked", "marked_at"),)

    unit_id: Mapped[str] = mapped_column(ID, primary_key=True)
    marked_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    token: Mapped[str] = mapped_column(String(32), default=new_id)
    marks: Mapped[int] = mapped_column(Integer, default=1)
