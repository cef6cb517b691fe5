"""Exports (issue 38): units exported to Office files and takeouts (zip archives of a space
or of everything a user owns), temporary objects in the blob store; and a takeout's plan
and progress while its operation runs."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from storage.clock import utcnow
from storage.models.base import ID, Base
from storage.types import UTCDateTime


class Export(Base):
    """A unit exported to a file (``export_unit``, ``scope`` ``unit``) or a takeout
    (``export_takeout``, ``scope`` ``space`` or ``user``): the object under ``object_key`` is
    temporary. Written with the operation's completion; deleted, and its object queued
    for deletion, once ``expires_at`` has passed (the ``expire_exports`` sweep).
    ``object_key`` never leaves the server. ``id`` is the operation's id."""

    __tablename__ = "exports"
    __table_args__ = (Index("ix_exports_expiry", "expires_at", "id"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    scope: Mapped[str] = mapped_column(String(8), default="unit",
                                       server_default="unit")  # unit | space | user
    unit_id: Mapped[str | None] = mapped_column(ID, index=True)  # scope unit
    space_id: Mapped[str | None] = mapped_column(ID)  # scope space
    # No foreign key: an account deletion removes the user row while their exports may
    # still be waiting for expiry, which deletes the row and queues its object.
    owner_id: Mapped[str] = mapped_column(ID, index=True)
    format: Mapped[str] = mapped_column(String(16))
    filename: Mapped[str] = mapped_column(String(255))
    object_key: Mapped[str] = mapped_column(String(255), unique=True)
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)


class TakeoutRun(Base):
    """A running takeout's progress (``wharf.exchange.takeout``), one row per operation:
    the resumable upload and what its completed parts hold. Written once a part is
    stored; a writer that resumes after a crash goes on from here. Deleted with the
    operation's completion or failure."""

    __tablename__ = "takeout_runs"

    operation_id: Mapped[str] = mapped_column(ID, primary_key=True)
    as_of: Mapped[datetime] = mapped_column(UTCDateTime)  # when the plan was made
    upload_id: Mapped[str] = mapped_column(String(1024))
    part_size: Mapped[int] = mapped_column(BigInteger)  # the parts' target size
    # [[number, tag], ...] of the stored parts
    parts: Mapped[list[Any]] = mapped_column(JSON, default=list)
    written: Mapped[int] = mapped_column(BigInteger, default=0)  # archive bytes in parts
    next_seq: Mapped[int] = mapped_column(Integer, default=0)  # the first item not done
    # inside item ``next_seq`` (a blob or an asset, split across parts): data bytes
    # already in parts and their running CRC-32
    data_offset: Mapped[int] = mapped_column(BigInteger, default=0)
    data_crc: Mapped[int] = mapped_column(BigInteger, default=0)
    items: Mapped[int] = mapped_column(Integer)  # how many the plan holds


class TakeoutItem(Base):
    """One member of a takeout's archive, fixed when the plan is made (the nodes, unit
    revisions, blobs and assets at ``as_of``), in archive order. ``offset``, ``crc32``,
    ``size`` and ``sha256`` are filled once its bytes are in a stored part."""

    __tablename__ = "takeout_items"

    operation_id: Mapped[str] = mapped_column(ID, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    path: Mapped[str] = mapped_column(Text)  # in the archive; "/" ends a folder
    # folder | blob | asset (bytes of ``ref``, an object key) | unit_json | unit_file
    # (the unit ``ref`` at ``revision``, as its JSON document or ``format``)
    source: Mapped[str] = mapped_column(String(16))
    ref: Mapped[str | None] = mapped_column(String(255))
    revision: Mapped[int | None] = mapped_column(BigInteger)
    unit_type: Mapped[str | None] = mapped_column(String(8))
    format: Mapped[str | None] = mapped_column(String(16))
    size: Mapped[int | None] = mapped_column(BigInteger)  # known at plan for blob/asset
    sha256: Mapped[str | None] = mapped_column(String(64))
    offset: Mapped[int | None] = mapped_column(BigInteger)  # of its local header
    crc32: Mapped[int | None] = mapped_column(BigInteger)
