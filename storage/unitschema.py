"""The unit store's schema: its tables (trunk units and revisions; worktree drafts, their
revisions and merge records), its version, and the step that creates or upgrades it.

Storage owns the schema of both databases: :class:`storage.unitstore.UnitStore` keeps the
trunk units, the worktrees capability (``wharf.worktrees.drafts``, ``.records``) keeps
drafts and merge records in the same database, on these tables.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, Protocol

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Connection,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Table,
    insert,
    select,
    update,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from storage.clock import utcnow
from storage.db import Database
from storage.enums import DraftRevisionKind, DraftSource, MergeOutcome
from storage.types import UTCDateTime
from storage.unitpatch import json_size

SCHEMA_VERSION = 6

class UnitBase(DeclarativeBase):
    # Every model here maps one Table (DeclarativeBase declares the wider FromClause).
    __table__: ClassVar[Table]


class UnitRow(UnitBase):
    """A trunk unit's head: its revision and size, not its document (schema version 5).
    The document at a revision is the latest checkpoint at or below it with the
    revisions after that checkpoint applied (:mod:`storage.unitheads`)."""

    __tablename__ = "units"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    unit_type: Mapped[str] = mapped_column(String(8))
    revision: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # v5: the head document's compact UTF-8 JSON size, kept by each changeset from what it
    # inserts and removes; the newest checkpoint's revision; the changeset bytes since it
    size: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    checkpoint_revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    log_bytes: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class CheckpointRow(UnitBase):
    """A trunk unit's whole document at one revision (schema version 5): written when the
    unit is created, when a merge stores a document it computed, and when the changesets
    since the last checkpoint outgrow the document; older ones are pruned by the unit
    store's retention (:meth:`storage.unitstore.UnitStore.prune_checkpoints`)."""

    __tablename__ = "unit_checkpoints"

    unit_id: Mapped[str] = mapped_column(String(32), ForeignKey("units.id", ondelete="CASCADE"),
                                         primary_key=True)
    revision: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot: Mapped[dict[str, Any]] = mapped_column(JSON)
    size: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class RevisionRow(UnitBase):
    __tablename__ = "unit_revisions"

    unit_id: Mapped[str] = mapped_column(String(32), ForeignKey("units.id", ondelete="CASCADE"),
                                         primary_key=True)
    revision: Mapped[int] = mapped_column(Integer, primary_key=True)
    changeset: Mapped[list[Any]] = mapped_column(JSON)
    author_id: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # v2: where a revision came from, e.g. {"merge": {"worktree_id", "operation_id"}}
    origin: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)


UNITS = UnitRow.__table__
REVISIONS = RevisionRow.__table__
CHECKPOINTS = CheckpointRow.__table__


class MetaRow(UnitBase):
    __tablename__ = "unitstore_meta"

    key: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(64))


def _one_of(column: str, allowed: type[StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(str(v)) for v in allowed)})"


class DraftRow(UnitBase):
    __tablename__ = "worktree_drafts"
    __table_args__ = (
        CheckConstraint(_one_of("source", DraftSource), name="ck_worktree_drafts_source"),
        CheckConstraint("revision >= 0 AND base_revision >= 0 AND base_draft_revision >= 0 "
                        "AND base_draft_revision <= revision",
                        name="ck_worktree_drafts_revisions"),
    )

    worktree_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    unit_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    unit_type: Mapped[str] = mapped_column(String(8))
    source: Mapped[str] = mapped_column(String(8))
    base_revision: Mapped[int] = mapped_column(Integer)
    base_draft_revision: Mapped[int] = mapped_column(Integer, default=0)
    base_snapshot: Mapped[dict[str, Any]] = mapped_column(JSON)
    snapshot: Mapped[dict[str, Any]] = mapped_column(JSON)
    revision: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # sizes of base_snapshot and snapshot, compact UTF-8 JSON (schema version 4)
    base_bytes: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    snapshot_bytes: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    # schema version 6: ``snapshot`` is the head at draft revision ``snapshot_revision``
    # (a checkpoint); the head is it with the draft revisions after it applied, and
    # ``log_bytes`` counts their changesets' bytes (a new checkpoint once they outgrow it)
    snapshot_revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    log_bytes: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class DraftRevisionRow(UnitBase):
    __tablename__ = "worktree_draft_revisions"
    __table_args__ = (
        ForeignKeyConstraint(["worktree_id", "unit_id"],
                             ["worktree_drafts.worktree_id", "worktree_drafts.unit_id"],
                             ondelete="CASCADE", name="fk_worktree_draft_revisions_draft"),
        CheckConstraint(_one_of("kind", DraftRevisionKind),
                        name="ck_worktree_draft_revisions_kind"),
    )

    worktree_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    unit_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    revision: Mapped[int] = mapped_column(Integer, primary_key=True)
    changeset: Mapped[list[Any]] = mapped_column(JSON)
    author_id: Mapped[str | None] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class MergeRecordRow(UnitBase):
    __tablename__ = "unit_merge_records"
    __table_args__ = (
        CheckConstraint(_one_of("outcome", MergeOutcome), name="ck_unit_merge_records_outcome"),
        CheckConstraint("conflict_count >= 0", name="ck_unit_merge_records_conflict_count"),
        # v3: a worktree's records (retention deletes them; a repeat finds its original)
        Index("ix_unit_merge_records_worktree", "worktree_id", "unit_id"),
    )

    operation_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    unit_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    worktree_id: Mapped[str] = mapped_column(String(32))
    outcome: Mapped[str] = mapped_column(String(16))
    trunk_revision_before: Mapped[int | None] = mapped_column(Integer, nullable=True)
    trunk_revision_after: Mapped[int | None] = mapped_column(Integer, nullable=True)
    conflicts: Mapped[list[Any]] = mapped_column(JSON)
    conflict_count: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # v3: SHA-256 of the stored conflicts (compact JSON), None when there are none; and,
    # for a record repeating an earlier one's conflicts, that record's operation (its
    # ``conflicts`` column is then empty: the list is read from that record)
    conflicts_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    conflicts_operation_id: Mapped[str | None] = mapped_column(String(32), nullable=True)


DRAFTS = DraftRow.__table__
DRAFT_REVISIONS = DraftRevisionRow.__table__
MERGE_RECORDS = MergeRecordRow.__table__
#: The tables schema version 2 added (created in place by the 1 → 2 upgrade).
V2_TABLES = (DRAFTS, DRAFT_REVISIONS, MERGE_RECORDS)


class UnitStoreSchemaError(RuntimeError):
    """The unit store database was written by a newer Wharf (unknown schema version)."""


def _upgrade_1_to_2(conn: Connection) -> None:
    """Version 2: worktree drafts, their revisions, merge records; ``unit_revisions.origin``.
    Existing units and revisions are kept as they are (``origin`` NULL)."""
    UnitBase.metadata.create_all(conn, tables=list(V2_TABLES))
    column_type = REVISIONS.c.origin.type.compile(dialect=conn.dialect)
    conn.exec_driver_sql(f"ALTER TABLE unit_revisions ADD COLUMN origin {column_type}")


def _upgrade_2_to_3(conn: Connection) -> None:
    """Version 3: merge records' ``conflicts_sha256`` and ``conflicts_operation_id`` (a
    repeat refers to the record that stores the list) and their worktree index. Existing
    records keep their lists (NULL digest: never referred to). A store upgraded from
    version 1 in the same run has them already (its tables were created as now)."""
    from sqlalchemy import inspect
    insp = inspect(conn)
    present = {c["name"] for c in insp.get_columns(MERGE_RECORDS.name)}
    for column in (MERGE_RECORDS.c.conflicts_sha256, MERGE_RECORDS.c.conflicts_operation_id):
        if column.name not in present:
            column_type = column.type.compile(dialect=conn.dialect)
            conn.exec_driver_sql(f"ALTER TABLE {MERGE_RECORDS.name} ADD COLUMN "
                                 f"{column.name} {column_type}")
    indexes = {i["name"] for i in insp.get_indexes(MERGE_RECORDS.name)}
    for index in MERGE_RECORDS.indexes:
        if index.name not in indexes:
            index.create(conn)


def _upgrade_draft_sizes(conn: Connection) -> None:
    """Version 4: ``worktree_drafts.base_bytes`` and ``snapshot_bytes``, filled in for the
    drafts there are (each document measured once, as compact UTF-8 JSON). Skips a column
    that is there already (a store upgraded from version 1 in the same run has them), so
    it may run after any other step."""
    from sqlalchemy import inspect
    present = {c["name"] for c in inspect(conn).get_columns(DRAFTS.name)}
    added = [c for c in (DRAFTS.c.base_bytes, DRAFTS.c.snapshot_bytes)
             if c.name not in present]
    for column in added:
        conn.exec_driver_sql(f"ALTER TABLE {DRAFTS.name} ADD COLUMN {column.name} "
                             f"{column.type.compile(dialect=conn.dialect)} NOT NULL DEFAULT 0")
    if not added:
        return
    keys = conn.execute(select(DRAFTS.c.worktree_id, DRAFTS.c.unit_id)).all()
    for key in keys:
        docs = conn.execute(select(DRAFTS.c.base_snapshot, DRAFTS.c.snapshot).where(
            DRAFTS.c.worktree_id == key.worktree_id, DRAFTS.c.unit_id == key.unit_id)).one()
        conn.execute(update(DRAFTS).where(DRAFTS.c.worktree_id == key.worktree_id,
                                          DRAFTS.c.unit_id == key.unit_id).values(
            base_bytes=json_size(docs.base_snapshot), snapshot_bytes=json_size(docs.snapshot)))


def _upgrade_4_to_5(conn: Connection) -> None:
    """Version 5: a unit's document leaves the ``units`` row for ``unit_checkpoints``.
    Each unit's stored document becomes its checkpoint at its current revision (the value
    as stored; its revisions are not touched), its size is measured once, and the
    ``snapshot`` column is dropped. One unit's document in memory at a time."""
    from sqlalchemy import Column, MetaData, inspect
    from sqlalchemy import Table as SaTable
    UnitBase.metadata.create_all(conn, tables=[CHECKPOINTS])
    present = {c["name"] for c in inspect(conn).get_columns(UNITS.name)}
    for column in (UNITS.c.size, UNITS.c.checkpoint_revision, UNITS.c.log_bytes):
        if column.name not in present:
            conn.exec_driver_sql(f"ALTER TABLE {UNITS.name} ADD COLUMN {column.name} "
                                 f"{column.type.compile(dialect=conn.dialect)} NOT NULL "
                                 f"DEFAULT 0")
    if "snapshot" not in present:
        return
    old = SaTable(UNITS.name, MetaData(), Column("id", String(32)),
                  Column("snapshot", JSON), Column("revision", Integer))
    after = ""
    while True:  # keyset pages of ids, one document loaded at a time
        ids = list(conn.scalars(select(old.c.id).where(old.c.id > after)
                                .order_by(old.c.id).limit(500)))
        if not ids:
            break
        for unit_id in ids:
            row = conn.execute(select(old.c.snapshot, old.c.revision)
                               .where(old.c.id == unit_id)).one()
            size = json_size(row.snapshot)
            conn.execute(insert(CHECKPOINTS).values(
                unit_id=unit_id, revision=row.revision, snapshot=row.snapshot, size=size,
                created_at=utcnow()))
            conn.execute(update(UNITS).where(UNITS.c.id == unit_id).values(
                size=size, checkpoint_revision=row.revision, log_bytes=0))
        after = ids[-1]
    conn.exec_driver_sql(f"ALTER TABLE {UNITS.name} DROP COLUMN snapshot")


def _upgrade_5_to_6(conn: Connection) -> None:
    """Version 6: a draft's head is a checkpoint (``snapshot`` at ``snapshot_revision``)
    and the draft revisions after it. Every stored head is at its draft's revision:
    ``snapshot_revision`` := ``revision``, ``log_bytes`` 0. No document is read."""
    from sqlalchemy import inspect
    present = {c["name"] for c in inspect(conn).get_columns(DRAFTS.name)}
    for column in (DRAFTS.c.snapshot_revision, DRAFTS.c.log_bytes):
        if column.name not in present:
            conn.exec_driver_sql(f"ALTER TABLE {DRAFTS.name} ADD COLUMN {column.name} "
                                 f"{column.type.compile(dialect=conn.dialect)} NOT NULL "
                                 f"DEFAULT 0")
    conn.execute(update(DRAFTS).values(snapshot_revision=DRAFTS.c.revision, log_bytes=0))


#: ``version -> step`` that takes a store from ``version`` to ``version + 1``, in place.
UPGRADES: dict[int, Callable[[Connection], None]] = {1: _upgrade_1_to_2,
                                                     2: _upgrade_2_to_3,
                                                     3: _upgrade_draft_sizes,
                                                     4: _upgrade_4_to_5,
                                                     5: _upgrade_5_to_6}


#: Key of the PostgreSQL advisory lock that serialises processes preparing the unit store.
PG_PREPARE_LOCK_KEY = 0x574E4954  # "WNIT"


def prepare_unitstore_db(db: Database, report: Callable[[str], None] = print,
                         backup: Callable[[int], str | None] | None = None) -> None:
    """Create the UnitStore schema if missing, upgrade an older one in place (its units and
    revisions kept); refuse a schema newer than this code.

    The check, the creation and the upgrade run in one write transaction that first takes
    the database's write lock (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: a
    transaction-scoped advisory lock), so processes starting together (two ``wharf
    migrate`` runs on a new database) queue: one creates or upgrades, the others then find
    the current version. DDL is transactional on both databases: a failed creation or
    upgrade leaves the store as it was.

    ``backup(version)``, when given, runs before an upgrade from ``version`` changes
    anything (the copy's name, or None, is reported)."""
    if backup is not None:
        with db.read() as s:
            version = _stored_version(s.connection())
        if 0 < version < SCHEMA_VERSION:
            copy = backup(version)
            if copy:
                report(f"wharf: unit store backed up to {copy} before its upgrade")
    with db.write() as s:
        conn = s.connection()
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({PG_PREPARE_LOCK_KEY})")
        message = _bring_to_head(conn)
    if message:
        report(message)


def _stored_version(conn: Connection) -> int:
    """The store's schema version (0: no store yet)."""
    from sqlalchemy import inspect
    if "unitstore_meta" not in set(inspect(conn).get_table_names()):
        return 0
    meta = MetaRow.__table__
    return int(conn.scalar(select(meta.c.value).where(meta.c.key == "schema_version")) or 0)


def _bring_to_head(conn: Connection) -> str | None:
    """Inside the locked transaction: create or upgrade the schema; what was done."""
    from sqlalchemy import inspect
    tables = set(inspect(conn).get_table_names())
    meta = MetaRow.__table__
    version = 0
    if "unitstore_meta" in tables:
        version = _stored_version(conn)
        if version > SCHEMA_VERSION:
            raise UnitStoreSchemaError(f"the unit store schema is version {version}; this "
                                       f"Wharf knows {SCHEMA_VERSION}")
    elif tables & {"units", "unit_revisions"}:
        raise UnitStoreSchemaError("the unit store has unit tables but no schema version: "
                                   "partially created or foreign; refusing")
    if version == SCHEMA_VERSION:
        return None
    if version == 0:
        UnitBase.metadata.create_all(conn)
        conn.execute(meta.delete().where(meta.c.key == "schema_version"))
        conn.execute(insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
        return f"wharf: unit store schema at version {SCHEMA_VERSION}"
    start = version
    while version < SCHEMA_VERSION:
        UPGRADES[version](conn)
        version += 1
    conn.execute(update(meta).where(meta.c.key == "schema_version").values(
        value=str(version)))
    return f"wharf: unit store schema upgraded from version {start} to {version}"


class UnitStoreSettings(Protocol):
    """What ``prepare_unitstore`` reads from the settings."""

    @property
    def unitstore_url(self) -> str: ...

    @property
    def sqlite_busy_timeout_ms(self) -> int: ...


def prepare_unitstore(settings: UnitStoreSettings,
                      backup: Callable[[int], str | None] | None = None) -> None:
    db = Database(settings.unitstore_url, settings.sqlite_busy_timeout_ms)
    try:
        prepare_unitstore_db(db, backup=backup)
    finally:
        db.dispose()
