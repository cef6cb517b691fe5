"""The UnitStore: documents (units) in their own database, never joined with the product DB.

A unit has a JSON snapshot and an append-only list of revisions; each revision is an
RFC 6902 JSON Patch against a base revision, applied by :mod:`storage.unitpatch` within
its size, depth and operation-count limits.
Creating a unit is idempotent on its id (``INSERT … ON CONFLICT DO NOTHING``; several at
once in one transaction with :meth:`UnitStore.create_units`). Transient database trouble
surfaces as :class:`storage.errors.UnitStoreUnavailable` (the core maps it to a retryable
failure), so workers back off and retry.

Worktrees (schema version 2) keep their drafts here too, next to the trunk units:

- a **draft** per (worktree, unit): ``base_snapshot`` at trunk ``base_revision`` (what it
  was forked from or last re-based onto), the draft head ``snapshot`` at draft ``revision``,
  and ``base_draft_revision``, the draft revision at which the base was last set (0 until a
  rebase or a merge re-bases it: only then do draft revisions ``1..n`` apply to the base);
  Each draft row keeps the size of its two documents (``base_bytes``, ``snapshot_bytes``:
  compact UTF-8 JSON, schema version 4), written with them, so what a worktree's drafts
  hold is summed without reading a document (:meth:`UnitStore.draft_bytes`);
- **draft revisions** (RFC 6902, like trunk's), of kind ``edit``, ``rebase`` or
  ``merge_sync``;
- **merge records**, one per (merge operation, unit), written in the *same transaction* as
  the trunk write it describes (``commit_*``) or alone (:meth:`UnitStore.record_outcome`).
  A record's conflicts are stored once per (worktree, unit) and content (schema version
  3): a record whose conflicts equal an earlier record's of the same worktree unit (a
  re-merge with nothing changed) stores a reference to it (``conflicts_operation_id``),
  not the list again. Records go with their worktree's drafts (:meth:`UnitStore.delete_drafts`).

The merge itself (three-way JSON merge, patches, conflicts) is computed by the core; this
module stores its results. Every ``commit_*`` method is idempotent on
(``operation_id``, ``unit_id``): when a record exists (the operation ran before a crash,
or a second worker raced it), the record is returned and nothing is written, so a re-run
never appends a trunk revision twice. Trunk writes are compare-and-set on the trunk
revision (:class:`RevisionConflict` when trunk moved: recompute and try again), draft
writes on the draft revision. A committed unit's draft is re-based in the same
transaction (base := the trunk head just written, draft := the merged document), so a
later merge of the same worktree finds it unchanged.
"""
from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Connection,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Insert,
    Integer,
    String,
    Table,
    Text,
    cast,
    delete,
    func,
    insert,
    select,
    tuple_,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from storage.clock import utcnow
from storage.db import Database, is_transient_db_error
from storage.enums import UnitType, values
from storage.errors import (
    DatabaseBusy,
    DraftQuotaExceeded,
    RevisionConflict,
    StorageConflict,
    StorageError,
    UnitConflict,
    UnitNotFound,
    UnitStoreUnavailable,
)
from storage.results import rowcount
from storage.types import UTCDateTime
from storage.unitpatch import (
    ChangesetTooLarge,
    InvalidChangeset,
    UnitLimits,
    UnitTooDeep,
    UnitTooLarge,
    apply_changeset,
    check_document,
    json_size,
    parse_changeset,
)

__all__ = ["ChangesetTooLarge", "DraftNotFound", "FastForwardUnavailable", "InvalidChangeset",
           "RevisionConflict", "UnitConflict", "UnitLimits", "UnitNotFound",
           "UnitStoreUnavailable", "UnitTooDeep", "UnitTooLarge"]

T = TypeVar("T")

SCHEMA_VERSION = 4
UNIT_TYPES = values(UnitType)

#: ``author_id`` of the draft revisions a merge writes (``merge_sync``).
MERGE_AUTHOR = "system:merge"
#: ``author_id`` a caller may give a rebase it does on nobody's behalf.
REBASE_AUTHOR = "system:rebase"


class DraftSource(StrEnum):
    """Where a draft's unit comes from: a trunk unit, or new in the worktree (local)."""

    TRUNK = "trunk"
    WORKTREE = "worktree"


class DraftRevisionKind(StrEnum):
    EDIT = "edit"              # a changeset posted to the draft
    REBASE = "rebase"          # the draft moved onto a new trunk head (resolutions applied)
    MERGE_SYNC = "merge_sync"  # a merge took trunk's changes into the draft


class MergeOutcome(StrEnum):
    """A unit's outcome in one merge operation (spec §8.2), as its merge record stores it."""

    UNCHANGED = "unchanged"
    FAST_FORWARD = "fast_forward"
    MERGED = "merged"
    CREATED = "created"
    CONFLICT = "conflict"
    FAILED = "failed"


class DraftNotFound(UnitNotFound):
    """No draft of this unit in this worktree (never forked, deleted, or purged)."""


class FastForwardUnavailable(StorageConflict):
    """:meth:`UnitStore.commit_fast_forward` cannot replay the draft's revisions onto trunk
    (``details["reason"]``: ``no_revisions`` — no draft revision since the base was set;
    ``replay_differs`` — replaying them onto the base does not give the draft, e.g. after a
    rebase with resolutions). Nothing was written: commit the single-revision form with
    :meth:`UnitStore.commit_merge` (``outcome=fast_forward``) instead."""


class _RecordExists(Exception):
    """Inside a ``commit_*`` transaction: another transaction wrote this record first."""


class UnitBase(DeclarativeBase):
    # Every model here maps one Table (DeclarativeBase declares the wider FromClause).
    __table__: ClassVar[Table]


class UnitRow(UnitBase):
    __tablename__ = "units"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    unit_type: Mapped[str] = mapped_column(String(8))
    snapshot: Mapped[dict[str, Any]] = mapped_column(JSON)
    revision: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


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


@dataclass(frozen=True)
class Unit:
    id: str
    unit_type: str
    snapshot: dict[str, Any]
    revision: int
    updated_at: datetime


@dataclass(frozen=True)
class Revision:
    """One trunk revision: the changeset that made ``revision`` from ``revision - 1``."""

    unit_id: str
    revision: int
    changeset: list[Any]
    author_id: str | None
    origin: dict[str, Any] | None
    created_at: datetime


@dataclass(frozen=True)
class DraftHead:
    """A draft without its base document: what a changeset or a rebase returns."""

    worktree_id: str
    unit_id: str
    unit_type: str
    source: str
    base_revision: int
    base_draft_revision: int
    snapshot: dict[str, Any]
    revision: int
    updated_at: datetime


@dataclass(frozen=True)
class Draft(DraftHead):
    """A draft with its base document (``base_snapshot``: trunk at ``base_revision``).

    Treat the documents as read-only: a draft just forked or created returns the same
    object as ``snapshot`` and ``base_snapshot`` (they are equal; no deep copy)."""

    base_snapshot: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class DraftRevision:
    worktree_id: str
    unit_id: str
    revision: int
    changeset: list[Any]
    author_id: str | None
    kind: str
    created_at: datetime


class DraftState(NamedTuple):
    """A draft's revisions, and whether its content differs from its base."""

    base_revision: int
    revision: int
    changed: bool


class DraftKey(NamedTuple):
    worktree_id: str
    unit_id: str


@dataclass(frozen=True)
class MergeRecord:
    """What one merge operation did to one unit (``trunk_revision_before`` is None for a
    unit the merge created; before == after when nothing was written to trunk)."""

    operation_id: str
    unit_id: str
    worktree_id: str
    outcome: str
    trunk_revision_before: int | None
    trunk_revision_after: int | None
    conflicts: list[Any]
    conflict_count: int
    created_at: datetime


def initial_snapshot(unit_type: str) -> dict[str, Any]:
    return {"type": unit_type, "schemaVersion": 1, "body": {}}


def merge_origin(worktree_id: str, operation_id: str) -> dict[str, Any]:
    """The ``origin`` of a trunk revision written by a merge."""
    return {"merge": {"worktree_id": worktree_id, "operation_id": operation_id}}


#: Replaying a draft's stored revisions re-checks nothing they passed when written.
_REPLAY_LIMITS = UnitLimits(max_bytes=sys.maxsize, max_ops=sys.maxsize, max_depth=sys.maxsize)

_DRAFT_HEAD_COLUMNS = (DRAFTS.c.worktree_id, DRAFTS.c.unit_id, DRAFTS.c.unit_type,
                       DRAFTS.c.source, DRAFTS.c.base_revision, DRAFTS.c.base_draft_revision,
                       DRAFTS.c.snapshot, DRAFTS.c.revision, DRAFTS.c.updated_at,
                       DRAFTS.c.snapshot_bytes)


class UnitStore:
    def __init__(self, db: Database, limits: UnitLimits | None = None):
        self.db = db
        self.limits = limits or UnitLimits()

    def _guard(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except DBAPIError as exc:
            if is_transient_db_error(exc):
                raise UnitStoreUnavailable("The unit store is unavailable.") from exc
            raise
        except DatabaseBusy as exc:
            raise UnitStoreUnavailable("The unit store is busy.") from exc

    # -- trunk units ----------------------------------------------------------------------

    def create_unit(self, unit_id: str, unit_type: str,
                    snapshot: dict[str, Any] | None = None) -> Unit:
        """Create the unit, or return it if it already exists with the same type (another
        type: :class:`UnitConflict`). Unbundled (:meth:`Database.unbundled`): its one
        insert commits on its own, without ``BEGIN``/``COMMIT`` round trips; an insert
        that finds the unit there wrote nothing, and reading it after needs no lock (a
        lost connection's rerun is idempotent: the id is fixed)."""
        def run() -> Unit:
            with self.db.unbundled() as s:
                row = s.connection().execute(self._insert_new().returning(*UNITS.c), {
                    "id": unit_id, "unit_type": unit_type,
                    "snapshot": snapshot or initial_snapshot(unit_type), "revision": 0,
                    "created_at": utcnow(), "updated_at": utcnow()}).first()
                if row is None:
                    row = s.connection().execute(
                        select(*UNITS.c).where(UNITS.c.id == unit_id)).one()
                    if row.unit_type != unit_type:
                        raise UnitConflict(f"unit {unit_id} exists with type {row.unit_type}")
                return Unit(row.id, row.unit_type, row.snapshot, row.revision, row.updated_at)
        return self._guard(run)

    def create_units(self, units: Sequence[tuple[str, str, dict[str, Any] | None]]) -> None:
        """Create several units ``(id, type, snapshot or None)`` in one transaction, each
        idempotent on its id as :meth:`create_unit`: one that exists with the same type is
        left as it is, one with another type fails the whole call with
        :class:`UnitConflict` (nothing is created; the caller may then go one by one)."""
        if not units:
            return

        def run() -> None:
            now = utcnow()
            with self.db.write() as s:
                conn = s.connection()
                inserted = set(conn.scalars(self._insert_new().returning(UNITS.c.id), [
                    {"id": uid, "unit_type": utype,
                     "snapshot": snapshot or initial_snapshot(utype), "revision": 0,
                     "created_at": now, "updated_at": now}
                    for uid, utype, snapshot in units]))
                existing = {uid: utype for uid, utype, _ in units if uid not in inserted}
                if existing:
                    for uid, utype in conn.execute(select(UNITS.c.id, UNITS.c.unit_type).where(
                            UNITS.c.id.in_(list(existing)))):
                        if utype != existing[uid]:
                            raise UnitConflict(f"unit {uid} exists with type {utype}")
        self._guard(run)

    def _insert_ignore(self, table: Table) -> Insert:
        """``INSERT INTO table … ON CONFLICT (primary key) DO NOTHING`` in this database's
        dialect."""
        stmt = (pg_insert(table) if self.db.is_postgres else sqlite_insert(table))
        return stmt.on_conflict_do_nothing(index_elements=list(table.primary_key.columns))

    def _insert_new(self) -> Insert:
        """``INSERT INTO units … ON CONFLICT (id) DO NOTHING`` in this database's dialect."""
        return self._insert_ignore(UNITS)

    def get(self, unit_id: str) -> Unit | None:
        def run() -> Unit | None:
            with self.db.read() as s:
                row = s.get(UnitRow, unit_id)
                return self._unit(row) if row else None
        return self._guard(run)

    def exists(self, unit_id: str) -> bool:
        return self.get(unit_id) is not None

    def stored_size(self, unit_id: str) -> int | None:
        """Characters of the unit's stored snapshot (None: no such unit), measured by the
        database without loading the document. The stored text is ASCII JSON with spaces
        after separators, so this is never less than the document's compact size
        (:func:`json_size`): an estimate that errs on the large side."""
        def run() -> int | None:
            with self.db.read() as s:
                size = s.connection().scalar(
                    select(func.length(cast(UNITS.c.snapshot, Text)))
                    .where(UNITS.c.id == unit_id))
                return None if size is None else int(size)
        return self._guard(run)

    def revisions(self, unit_id: str, after: int = 0) -> list[Revision]:
        """The unit's trunk revisions numbered above ``after``, oldest first."""
        def run() -> list[Revision]:
            with self.db.read() as s:
                rows = s.connection().execute(
                    select(*REVISIONS.c).where(REVISIONS.c.unit_id == unit_id,
                                               REVISIONS.c.revision > after)
                    .order_by(REVISIONS.c.revision))
                return [Revision(r.unit_id, r.revision, r.changeset, r.author_id, r.origin,
                                 r.created_at) for r in rows]
        return self._guard(run)

    def apply_changeset(self, unit_id: str, base_revision: int, changes: list[Any],
                        author_id: str | None = None) -> Unit:
        ops = parse_changeset(changes, self.limits)

        def run() -> Unit:
            with self.db.write() as s:
                row = s.get(UnitRow, unit_id)
                if row is None:
                    raise UnitNotFound("No such unit.")
                if row.revision != base_revision:
                    raise RevisionConflict(
                        f"base revision {base_revision} is stale; the unit is at "
                        f"revision {row.revision}", details={"current_revision": row.revision})

                def original_size() -> int:
                    # a column select is not identity-mapped: the stored document, unpatched
                    return json_size(s.scalar(select(UnitRow.snapshot).where(
                        UnitRow.id == unit_id)))

                # In place: the loaded document is this transaction's own copy (the JSON
                # column is not mutation-tracked; the UPDATE below writes it), so there is
                # no recursive deepcopy of a possibly deep document.
                new_snapshot = apply_changeset(row.snapshot, ops, self.limits, original_size)
                new_rev = row.revision + 1
                result = s.execute(update(UnitRow).where(
                    UnitRow.id == unit_id, UnitRow.revision == base_revision).values(
                    snapshot=new_snapshot, revision=new_rev, updated_at=utcnow()))
                if rowcount(result) != 1:
                    raise RevisionConflict("the unit changed concurrently; rebase and retry")
                s.add(RevisionRow(unit_id=unit_id, revision=new_rev, changeset=changes,
                                  author_id=author_id))
                s.flush()
                return Unit(unit_id, row.unit_type, new_snapshot, new_rev, utcnow())
        return self._guard(run)

    def append_revision_with_snapshot(self, unit_id: str, expected_revision: int,
                                      changeset: list[Any], snapshot: dict[str, Any],
                                      author_id: str | None,
                                      origin: dict[str, Any] | None = None) -> Unit:
        """Append one trunk revision whose resulting document the caller computed
        (``snapshot``, e.g. a merge result, with ``changeset`` the patch from the current
        head to it): stored as given, not re-derived by applying ``changeset`` to a copy
        of the head. Compare-and-set on ``expected_revision`` (:class:`RevisionConflict`).

        The caller vouches that ``changeset`` turns the head into ``snapshot``; the store
        checks its shape (a non-empty list of operations, no operation-count limit: a merge
        may produce more than a client may post) and the size limit on ``snapshot`` (a
        unit over the limit may still shrink)."""
        _check_patch(changeset)

        def run() -> Unit:
            with self.db.write() as s:
                conn = s.connection()
                head = conn.execute(select(UNITS.c.unit_type, UNITS.c.revision)
                                    .where(UNITS.c.id == unit_id)).first()
                if head is None:
                    raise UnitNotFound("No such unit.")
                _check_trunk_revision(head.revision, expected_revision)
                self._check_snapshot(snapshot, lambda: _stored_size(conn, UNITS.c.snapshot,
                                                                    UNITS.c.id == unit_id))
                new_rev = _append(conn, unit_id, expected_revision, snapshot,
                                  [(changeset, author_id)], origin)
                return Unit(unit_id, head.unit_type, snapshot, new_rev, utcnow())
        return self._guard(run)

    def delete_unit(self, unit_id: str) -> bool:
        """Delete the unit and its revisions; True if it existed. Idempotent."""
        def run() -> bool:
            with self.db.write() as s:
                s.execute(delete(RevisionRow).where(RevisionRow.unit_id == unit_id))
                return rowcount(s.execute(delete(UnitRow).where(UnitRow.id == unit_id))) > 0
        return self._guard(run)

    def unit_ids(self) -> list[str]:
        with self.db.read() as s:
            return list(s.scalars(select(UnitRow.id)))

    def unit_page(self, after: str | None, limit: int) -> list[tuple[str, datetime]]:
        """Up to ``limit`` trunk units (id, created_at) with an id after ``after``, in
        bytewise id order: keyset pages that ``wharf fsck`` merges with the product
        database's references. Ids are lower-case hex, which every collation orders
        bytewise, so the primary key's own order serves each page."""
        def run() -> list[tuple[str, datetime]]:
            key = UNITS.c.id
            query = select(UNITS.c.id, UNITS.c.created_at)
            if after is not None:
                query = query.where(key > after)
            with self.db.read() as s:
                return [(r.id, r.created_at) for r in
                        s.connection().execute(query.order_by(key).limit(limit))]
        return self._guard(run)

    def existing_units(self, unit_ids: Sequence[str]) -> set[str]:
        """Those of ``unit_ids`` that are trunk units now (one query)."""
        def run() -> set[str]:
            if not unit_ids:
                return set()
            with self.db.read() as s:
                return set(s.scalars(select(UnitRow.id).where(UnitRow.id.in_(unit_ids))))
        return self._guard(run)

    @staticmethod
    def _unit(row: UnitRow) -> Unit:
        return Unit(row.id, row.unit_type, row.snapshot, row.revision, row.updated_at)

    def _check_snapshot(self, snapshot: Any, current_size: Callable[[], int]) -> None:
        """A precomputed document: a JSON object within the size limit, or no larger than
        the document it replaces (``current_size``, called only when over the limit)."""
        if not isinstance(snapshot, dict):
            raise InvalidChangeset("a snapshot must stay a JSON object")
        size = json_size(snapshot)
        if size > self.limits.max_bytes and size > current_size():
            raise UnitTooLarge(
                f"The unit would be {size} bytes; at most {self.limits.max_bytes} are allowed.",
                details={"max_bytes": self.limits.max_bytes})

    # -- worktree drafts ------------------------------------------------------------------

    def fork_draft(self, worktree_id: str, unit_id: str) -> Draft:
        """The worktree's draft of trunk unit ``unit_id``, forked from the trunk head
        (``base_revision`` = trunk revision, ``base_snapshot`` = ``snapshot`` = trunk
        snapshot, draft revision 0). Idempotent: an existing draft is returned as it is
        (:class:`UnitConflict` if it is a local draft). :class:`UnitNotFound` without a
        trunk unit."""
        def run() -> Draft:
            with self.db.write() as s:
                conn = s.connection()
                found = _select_draft(conn, worktree_id, unit_id)
                if found is None:
                    unit = conn.execute(select(UNITS.c.unit_type, UNITS.c.snapshot,
                                               UNITS.c.revision)
                                        .where(UNITS.c.id == unit_id)).first()
                    if unit is None:
                        raise UnitNotFound("No such unit.")
                    found = self._insert_draft(conn, worktree_id, unit_id, unit.unit_type,
                                               DraftSource.TRUNK, unit.revision, unit.snapshot)
                if found.source != DraftSource.TRUNK:
                    raise UnitConflict(f"unit {unit_id} is a local unit of this worktree")
                return found
        return self._guard(run)

    def create_local_draft(self, worktree_id: str, unit_id: str, unit_type: str,
                           snapshot: dict[str, Any] | None = None) -> Draft:
        """A new unit of the worktree (no trunk unit until a merge creates it): a draft at
        revision 0 with ``base_revision`` 0 and ``base_snapshot`` = ``snapshot`` (default
        :func:`initial_snapshot`), within the unit limits (:func:`check_document`:
        :class:`UnitTooLarge`, :class:`UnitTooDeep`). Idempotent: an existing local draft of
        the same type is returned as it is; a trunk draft or another type is
        :class:`UnitConflict`."""
        document = snapshot if snapshot is not None else initial_snapshot(unit_type)
        check_document(document, self.limits)

        def run() -> Draft:
            with self.db.write() as s:
                conn = s.connection()
                found = _select_draft(conn, worktree_id, unit_id) or self._insert_draft(
                    conn, worktree_id, unit_id, unit_type, DraftSource.WORKTREE, 0, document)
                if found.source != DraftSource.WORKTREE or found.unit_type != unit_type:
                    raise UnitConflict(f"unit {unit_id} exists in this worktree as a "
                                       f"{found.source} {found.unit_type}")
                return found
        return self._guard(run)

    def _insert_draft(self, conn: Connection, worktree_id: str, unit_id: str, unit_type: str,
                      source: DraftSource, base_revision: int,
                      snapshot: dict[str, Any]) -> Draft:
        now = utcnow()
        size = json_size(snapshot)
        inserted = conn.execute(self._insert_ignore(DRAFTS).returning(DRAFTS.c.unit_id), {
            "worktree_id": worktree_id, "unit_id": unit_id, "unit_type": unit_type,
            "source": str(source), "base_revision": base_revision, "base_draft_revision": 0,
            "base_snapshot": snapshot, "snapshot": snapshot, "revision": 0,
            "base_bytes": size, "snapshot_bytes": size,
            "created_at": now, "updated_at": now}).first()
        if inserted is not None:  # (no re-read of the two documents just written)
            return Draft(worktree_id, unit_id, unit_type, str(source), base_revision, 0,
                         snapshot, 0, now, snapshot, now)
        # inserted concurrently by another transaction (committed: we waited for it)
        found = _select_draft(conn, worktree_id, unit_id)
        if found is None:  # pragma: no cover - deleted between the two statements
            raise DraftNotFound("The draft was deleted concurrently.")
        return found

    def get_draft(self, worktree_id: str, unit_id: str) -> Draft | None:
        """The draft with its base document, or None."""
        def run() -> Draft | None:
            with self.db.read() as s:
                return _select_draft(s.connection(), worktree_id, unit_id)
        return self._guard(run)

    def get_draft_head(self, worktree_id: str, unit_id: str) -> DraftHead | None:
        """The draft without its base document (one JSON document read, not two)."""
        def run() -> DraftHead | None:
            with self.db.read() as s:
                row = s.connection().execute(select(*_DRAFT_HEAD_COLUMNS).where(
                    *_draft_is(worktree_id, unit_id))).first()
                return _head(row) if row is not None else None
        return self._guard(run)

    def draft_states(self, worktree_id: str, unit_ids: Sequence[str],
                     same: Callable[[Any, Any], bool]) -> dict[str, DraftState]:
        """The revisions of the worktree's drafts of ``unit_ids`` and whether each draft's
        content differs from its base by ``same`` (the caller's equality), in two
        statements: the documents are read only for drafts edited since they were forked
        (a draft at revision 0 is its base). Drafts that do not exist are left out."""
        if not unit_ids:
            return {}

        def run() -> dict[str, DraftState]:
            with self.db.read() as s:
                conn = s.connection()
                ids = list(unit_ids)
                heads = conn.execute(select(DRAFTS.c.unit_id, DRAFTS.c.base_revision,
                                            DRAFTS.c.revision).where(
                    DRAFTS.c.worktree_id == worktree_id, DRAFTS.c.unit_id.in_(ids))).all()
                edited = [h.unit_id for h in heads if h.revision > 0]
                changed: set[str] = set()
                if edited:
                    for d in conn.execute(select(DRAFTS.c.unit_id, DRAFTS.c.base_snapshot,
                                                 DRAFTS.c.snapshot).where(
                            DRAFTS.c.worktree_id == worktree_id,
                            DRAFTS.c.unit_id.in_(edited))):
                        if not same(d.base_snapshot, d.snapshot):
                            changed.add(d.unit_id)
                return {h.unit_id: DraftState(h.base_revision, h.revision,
                                              h.unit_id in changed) for h in heads}
        return self._guard(run)

    def trunk_revisions(self, unit_ids: Sequence[str]) -> dict[str, int]:
        """The trunk head revision of each unit of ``unit_ids`` that exists (no document
        is read)."""
        if not unit_ids:
            return {}

        def run() -> dict[str, int]:
            with self.db.read() as s:
                return {r.id: r.revision for r in s.connection().execute(
                    select(UNITS.c.id, UNITS.c.revision).where(
                        UNITS.c.id.in_(list(unit_ids))))}
        return self._guard(run)

    def draft_revisions(self, worktree_id: str, unit_id: str,
                        after: int = 0) -> list[DraftRevision]:
        """The draft's revisions numbered above ``after``, oldest first."""
        def run() -> list[DraftRevision]:
            with self.db.read() as s:
                return _select_draft_revisions(s.connection(), worktree_id, unit_id, after)
        return self._guard(run)

    def apply_draft_changeset(self, worktree_id: str, unit_id: str, base_revision: int,
                              changes: list[Any], author_id: str | None, *,
                              max_growth: int | None = None) -> DraftHead:
        """Apply an RFC 6902 changeset to the draft head, exactly as
        :meth:`apply_changeset` does to a trunk unit (same limits and refusals;
        compare-and-set on the draft revision: :class:`RevisionConflict` with
        ``details["current_revision"]``), recording an ``edit`` draft revision.
        :class:`DraftNotFound` without a draft. ``max_growth``: the most bytes the draft's
        document may grow by (:class:`DraftQuotaExceeded`, nothing written)."""
        ops = parse_changeset(changes, self.limits)

        def run() -> DraftHead:
            with self.db.write() as s:
                conn = s.connection()
                where = _draft_is(worktree_id, unit_id)
                row = conn.execute(select(*_DRAFT_HEAD_COLUMNS).where(*where)).first()
                if row is None:
                    raise DraftNotFound("No such draft.")
                if row.revision != base_revision:
                    raise RevisionConflict(
                        f"base revision {base_revision} is stale; the draft is at "
                        f"revision {row.revision}", details={"current_revision": row.revision})
                # in place: the selected document is this transaction's own copy
                new_snapshot = apply_changeset(
                    row.snapshot, ops, self.limits,
                    lambda: _stored_size(conn, DRAFTS.c.snapshot, *where))
                size = json_size(new_snapshot)
                if max_growth is not None:
                    grown = size - row.snapshot_bytes
                    if grown > 0 and grown > max_growth:
                        raise DraftQuotaExceeded(
                            f"The draft would grow by {grown} bytes; {max(0, max_growth)} "
                            "are left in your draft quota.",
                            details={"bytes": grown, "available": max(0, max_growth)})
                now = utcnow()
                _advance_draft(conn, worktree_id, unit_id, base_revision,
                               [(changes, author_id, DraftRevisionKind.EDIT)],
                               {"snapshot": new_snapshot, "snapshot_bytes": size}, now)
                return DraftHead(worktree_id, unit_id, row.unit_type, row.source,
                                 row.base_revision, row.base_draft_revision, new_snapshot,
                                 base_revision + 1, now)
        return self._guard(run)

    def rebase_draft(self, worktree_id: str, unit_id: str, *, expected_draft_revision: int,
                     base_revision: int, base_snapshot: dict[str, Any],
                     snapshot: dict[str, Any], changeset: list[Any],
                     author_id: str | None) -> DraftHead:
        """Move the draft onto trunk head ``base_revision`` (whose document is
        ``base_snapshot``), its head becoming ``snapshot`` (the core's merge of base, trunk
        and draft with the conflicts resolved; ``changeset`` is the patch from the current
        draft head to it), all in one transaction: a ``rebase`` draft revision (none when
        ``changeset`` is empty: the draft's content did not change), the new base, and
        ``base_draft_revision`` := the resulting draft revision.

        Compare-and-set on ``expected_draft_revision`` and on the trunk still being at
        ``base_revision`` (:class:`RevisionConflict`, ``details["current_revision"]`` and
        ``details["scope"]`` ``draft`` or ``trunk``). :class:`DraftNotFound` without a
        draft, :class:`UnitNotFound` without a trunk unit (a local draft that was never
        merged has no trunk to rebase onto)."""
        if changeset:
            _check_patch(changeset)

        def run() -> DraftHead:
            with self.db.write() as s:
                conn = s.connection()
                where = _draft_is(worktree_id, unit_id)
                row = conn.execute(select(DRAFTS.c.unit_type, DRAFTS.c.source,
                                          DRAFTS.c.revision).where(*where)).first()
                if row is None:
                    raise DraftNotFound("No such draft.")
                _check_draft_revision(row.revision, expected_draft_revision)
                trunk = conn.scalar(select(UNITS.c.revision).where(UNITS.c.id == unit_id))
                if trunk is None:
                    raise UnitNotFound("No such unit.")
                if trunk != base_revision:
                    raise RevisionConflict(
                        f"the unit is at revision {trunk}, not {base_revision}",
                        details={"current_revision": trunk, "scope": "trunk"})
                self._check_snapshot(snapshot,
                                     lambda: _stored_size(conn, DRAFTS.c.snapshot, *where))
                now = utcnow()
                revision = _advance_draft(
                    conn, worktree_id, unit_id, expected_draft_revision,
                    [(changeset, author_id, DraftRevisionKind.REBASE)] if changeset else [],
                    {"snapshot": snapshot, "base_snapshot": base_snapshot,
                     "base_revision": base_revision}, now, rebased=True)
                return DraftHead(worktree_id, unit_id, row.unit_type, row.source,
                                 base_revision, revision, snapshot, revision, now)
        return self._guard(run)

    def draft_bytes(self, worktree_ids: Sequence[str]) -> int:
        """What the drafts of these worktrees hold: the sum of their documents' sizes
        (``base_bytes + snapshot_bytes``; one statement, no document read)."""
        if not worktree_ids:
            return 0

        def run() -> int:
            with self.db.read() as s:
                total = s.connection().scalar(
                    select(func.sum(DRAFTS.c.base_bytes + DRAFTS.c.snapshot_bytes))
                    .where(DRAFTS.c.worktree_id.in_(list(worktree_ids))))
                return int(total or 0)
        return self._guard(run)

    def delete_draft(self, worktree_id: str, unit_id: str) -> bool:
        """Delete one draft and its revisions (a failed addition's compensation, an orphan
        draft); True if it existed. Idempotent."""
        def run() -> bool:
            with self.db.write() as s:
                s.execute(delete(DRAFT_REVISIONS).where(
                    DRAFT_REVISIONS.c.worktree_id == worktree_id,
                    DRAFT_REVISIONS.c.unit_id == unit_id))
                return rowcount(s.execute(delete(DRAFTS).where(
                    *_draft_is(worktree_id, unit_id)))) > 0
        return self._guard(run)

    def delete_drafts(self, worktree_id: str) -> int:
        """Delete every draft of the worktree, their revisions and the worktree's merge
        records (retention, account deletion); returns how many drafts there were. The
        trunk revisions a merge wrote keep their ``origin``. Idempotent."""
        def run() -> int:
            with self.db.write() as s:
                s.execute(delete(MERGE_RECORDS).where(
                    MERGE_RECORDS.c.worktree_id == worktree_id))
                s.execute(delete(DRAFT_REVISIONS).where(
                    DRAFT_REVISIONS.c.worktree_id == worktree_id))
                return rowcount(s.execute(delete(DRAFTS).where(
                    DRAFTS.c.worktree_id == worktree_id)))
        return self._guard(run)

    def orphan_drafts(self, older_than: datetime, *, after: DraftKey | None = None,
                      limit: int = 500) -> list[DraftKey]:
        """Candidates for the orphan-draft sweep: the keys of drafts created before
        ``older_than``, in key order, after ``after`` (keyset paging), at most ``limit``.
        The store cannot see the product database: the caller keeps those that have no
        product row and deletes them with :meth:`delete_draft`."""
        def run() -> list[DraftKey]:
            with self.db.read() as s:
                query = select(DRAFTS.c.worktree_id, DRAFTS.c.unit_id).where(
                    DRAFTS.c.created_at < older_than)
                if after is not None:
                    query = query.where(tuple_(DRAFTS.c.worktree_id, DRAFTS.c.unit_id)
                                        > tuple_(after.worktree_id, after.unit_id))
                rows = s.connection().execute(
                    query.order_by(DRAFTS.c.worktree_id, DRAFTS.c.unit_id).limit(limit))
                return [DraftKey(r.worktree_id, r.unit_id) for r in rows]
        return self._guard(run)

    # -- merge records and merge commits ----------------------------------------------------

    def merge_record(self, operation_id: str, unit_id: str) -> MergeRecord | None:
        """The record operation ``operation_id`` wrote for ``unit_id``, or None."""
        def run() -> MergeRecord | None:
            with self.db.read() as s:
                return _select_record(s.connection(), operation_id, unit_id)
        return self._guard(run)

    def merge_records(self, operation_id: str) -> list[MergeRecord]:
        """Every record of the operation, by unit id."""
        def run() -> list[MergeRecord]:
            with self.db.read() as s:
                rows = s.connection().execute(select(*MERGE_RECORDS.c).where(
                    MERGE_RECORDS.c.operation_id == operation_id)
                    .order_by(MERGE_RECORDS.c.unit_id))
                return [_record(r, _stored_conflicts(s.connection(), r)) for r in rows.all()]
        return self._guard(run)

    def has_merge_records(self, operation_id: str) -> bool:
        """Whether the operation wrote any record (it has started writing)."""
        def run() -> bool:
            with self.db.read() as s:
                return s.connection().execute(select(MERGE_RECORDS.c.unit_id).where(
                    MERGE_RECORDS.c.operation_id == operation_id).limit(1)).first() is not None
        return self._guard(run)

    def _commit(self, operation_id: str, unit_id: str,
                work: Callable[[Connection], MergeRecord]) -> MergeRecord:
        """Run ``work`` in one write transaction unless the record of (operation, unit)
        exists; return the existing record when it does, also when a concurrent run of the
        same operation committed it first (this run's write then fails its
        compare-and-set, or its record insert finds the row, and rolls back)."""
        def run() -> MergeRecord:
            with self.db.write() as s:
                conn = s.connection()
                existing = _select_record(conn, operation_id, unit_id)
                return existing if existing is not None else work(conn)
        try:
            return self._guard(run)
        except (_RecordExists, RevisionConflict):
            existing = self.merge_record(operation_id, unit_id)
            if existing is not None:
                return existing
            raise

    def _insert_record(self, conn: Connection, operation_id: str, worktree_id: str,
                       unit_id: str, outcome: MergeOutcome, before: int | None,
                       after: int | None, conflicts: Sequence[Any] = (),
                       conflict_count: int | None = None) -> MergeRecord:
        """Insert the record; conflicts equal to those an earlier record of the same
        worktree unit stores (a re-merge with nothing changed) are not stored again: the
        record refers to that one (``conflicts_operation_id``)."""
        listed = list(conflicts)
        digest = _digest(listed) if listed else None
        original = None if digest is None else conn.scalar(
            select(MERGE_RECORDS.c.operation_id).where(
                MERGE_RECORDS.c.worktree_id == worktree_id,
                MERGE_RECORDS.c.unit_id == unit_id,
                MERGE_RECORDS.c.conflicts_sha256 == digest,
                MERGE_RECORDS.c.conflicts_operation_id.is_(None),
                MERGE_RECORDS.c.operation_id != operation_id).limit(1))
        values = {"operation_id": operation_id, "unit_id": unit_id, "worktree_id": worktree_id,
                  "outcome": str(outcome), "trunk_revision_before": before,
                  "trunk_revision_after": after,
                  "conflicts": [] if original is not None else listed,
                  "conflict_count": len(listed) if conflict_count is None
                  else conflict_count, "created_at": utcnow(),
                  "conflicts_sha256": digest, "conflicts_operation_id": original}
        row = conn.execute(self._insert_ignore(MERGE_RECORDS).returning(*MERGE_RECORDS.c),
                           values).first()
        if row is None:
            raise _RecordExists
        return _record(row, listed)

    def commit_fast_forward(self, operation_id: str, worktree_id: str, unit_id: str, *,
                            expected_trunk_revision: int,
                            expected_draft_revision: int) -> MergeRecord:
        """Fast-forward trunk to the draft (trunk has not moved since the draft's base):
        append the draft revisions made since the base was set (``base_draft_revision + 1
        .. n``; all of them for a draft never re-based) to trunk in order, each with its own
        author and ``origin`` = :func:`merge_origin`, trunk snapshot := draft snapshot;
        re-base the draft onto the new head; write the ``fast_forward`` record — one
        transaction.

        Compare-and-set on ``expected_trunk_revision`` (which must also be the draft's
        ``base_revision``) and ``expected_draft_revision`` (:class:`RevisionConflict`).
        The revisions are replayed onto trunk's document first and the result compared
        with the draft: when they cannot reproduce it (none to replay; a rebase with
        resolutions left the draft head unlike its base, so the later revisions do not
        apply to it), :class:`FastForwardUnavailable` and nothing is written.
        Returns the existing record, writing nothing, if the operation already has one
        for the unit."""
        def work(conn: Connection) -> MergeRecord:
            trunk = conn.execute(select(UNITS.c.snapshot, UNITS.c.revision)
                                 .where(UNITS.c.id == unit_id)).first()
            if trunk is None:
                raise UnitNotFound("No such unit.")
            _check_trunk_revision(trunk.revision, expected_trunk_revision)
            draft = conn.execute(select(DRAFTS.c.snapshot, DRAFTS.c.revision,
                                        DRAFTS.c.base_revision, DRAFTS.c.base_draft_revision)
                                 .where(*_draft_is(worktree_id, unit_id))).first()
            if draft is None:
                raise DraftNotFound("No such draft.")
            _check_draft_revision(draft.revision, expected_draft_revision)
            if draft.base_revision != trunk.revision:
                raise RevisionConflict(
                    f"the draft's base is revision {draft.base_revision}; trunk moved to "
                    f"{trunk.revision}: not a fast-forward",
                    details={"current_revision": trunk.revision, "scope": "trunk"})
            revisions = _select_draft_revisions(conn, worktree_id, unit_id,
                                                draft.base_draft_revision)
            if not revisions:
                raise FastForwardUnavailable("the draft has no revisions",
                                             details={"reason": "no_revisions"})
            # trunk's document is this transaction's own copy: replay in place
            if _replay(trunk.snapshot, revisions) != draft.snapshot:
                raise FastForwardUnavailable("replaying the draft's revisions does not give "
                                             "the draft", details={"reason": "replay_differs"})
            after = _append(conn, unit_id, trunk.revision, draft.snapshot,
                            [(r.changeset, r.author_id) for r in revisions],
                            merge_origin(worktree_id, operation_id))
            _advance_draft(conn, worktree_id, unit_id, draft.revision, [],
                           {"base_snapshot": draft.snapshot, "base_revision": after},
                           utcnow(), rebased=True)
            return self._insert_record(conn, operation_id, worktree_id, unit_id,
                                       MergeOutcome.FAST_FORWARD, trunk.revision, after)
        return self._commit(operation_id, unit_id, work)

    def commit_merge(self, operation_id: str, worktree_id: str, unit_id: str, *,
                     expected_trunk_revision: int, expected_draft_revision: int,
                     changeset: list[Any], snapshot: dict[str, Any],
                     draft_changeset: list[Any], author_id: str | None,
                     outcome: MergeOutcome = MergeOutcome.MERGED) -> MergeRecord:
        """Write a merge result to trunk: one trunk revision (``changeset``, the patch from
        the trunk head to ``snapshot``, the merged document stored as given; ``author_id``
        the actor; ``origin`` = :func:`merge_origin`), the draft re-based onto it (base and
        head := ``snapshot``; a ``merge_sync`` draft revision by :data:`MERGE_AUTHOR` with
        ``draft_changeset``, the patch from the draft head to ``snapshot``, unless it is
        empty) and the record — one transaction.

        ``outcome`` is ``merged``, or ``fast_forward`` for the single-revision form of a
        fast-forward (a re-based draft; ``draft_changeset`` then empty). Compare-and-set on
        both revisions (:class:`RevisionConflict`); the snapshot is checked as by
        :meth:`append_revision_with_snapshot`. Returns the existing record, writing
        nothing, if the operation already has one for the unit."""
        if outcome not in (MergeOutcome.MERGED, MergeOutcome.FAST_FORWARD):
            raise ValueError(f"commit_merge records merged or fast_forward, not {outcome}")
        _check_patch(changeset)
        if draft_changeset:
            _check_patch(draft_changeset)

        def work(conn: Connection) -> MergeRecord:
            trunk = conn.scalar(select(UNITS.c.revision).where(UNITS.c.id == unit_id))
            if trunk is None:
                raise UnitNotFound("No such unit.")
            _check_trunk_revision(trunk, expected_trunk_revision)
            draft = conn.scalar(select(DRAFTS.c.revision).where(
                *_draft_is(worktree_id, unit_id)))
            if draft is None:
                raise DraftNotFound("No such draft.")
            _check_draft_revision(draft, expected_draft_revision)
            self._check_snapshot(snapshot, lambda: _stored_size(conn, UNITS.c.snapshot,
                                                                UNITS.c.id == unit_id))
            after = _append(conn, unit_id, trunk, snapshot, [(changeset, author_id)],
                            merge_origin(worktree_id, operation_id))
            _advance_draft(conn, worktree_id, unit_id, draft,
                           [(draft_changeset, MERGE_AUTHOR, DraftRevisionKind.MERGE_SYNC)]
                           if draft_changeset else [],
                           {"snapshot": snapshot, "base_snapshot": snapshot,
                            "base_revision": after}, utcnow(), rebased=True)
            return self._insert_record(conn, operation_id, worktree_id, unit_id, outcome,
                                       trunk, after)
        return self._commit(operation_id, unit_id, work)

    def commit_created(self, operation_id: str, worktree_id: str, unit_id: str, *,
                       expected_draft_revision: int,
                       catch_up: list[Any] | None = None) -> MergeRecord:
        """Create the trunk unit of a local draft: at revision 0 with the draft's
        ``base_snapshot``, then the draft revisions ``1..n`` appended with their authors
        and ``origin`` = :func:`merge_origin` (history kept) — or, when there are none or
        they do not reproduce the draft, at revision 0 with the draft's snapshot. The draft
        is re-based onto the new trunk head and the ``created`` record written, in one
        transaction (``trunk_revision_before`` None).

        Idempotent on the unit id too: if the trunk unit exists already (an earlier merge
        created it and its activation was blocked, or failed before its commit), the
        draft's later edits are appended as one revision (``catch_up``: the patch from the
        trunk unit to the draft, computed by the caller; nobody else can edit a unit with
        no node), or nothing when the two are equal; the record says ``created`` (another
        type: :class:`UnitConflict`). Compare-and-set on ``expected_draft_revision``. Returns the
        existing record, writing nothing, if the operation already has one for the unit."""
        def work(conn: Connection) -> MergeRecord:
            draft = conn.execute(select(DRAFTS.c.unit_type, DRAFTS.c.source,
                                        DRAFTS.c.base_snapshot, DRAFTS.c.snapshot,
                                        DRAFTS.c.revision, DRAFTS.c.base_draft_revision)
                                 .where(*_draft_is(worktree_id, unit_id))).first()
            if draft is None:
                raise DraftNotFound("No such draft.")
            if draft.source != DraftSource.WORKTREE:
                raise UnitConflict(f"unit {unit_id} is not a local unit of this worktree")
            _check_draft_revision(draft.revision, expected_draft_revision)
            trunk = conn.execute(select(UNITS.c.unit_type, UNITS.c.snapshot, UNITS.c.revision)
                                 .where(UNITS.c.id == unit_id)).first()
            if trunk is not None:
                if trunk.unit_type != draft.unit_type:
                    raise UnitConflict(f"unit {unit_id} exists with type {trunk.unit_type}")
                before: int | None = trunk.revision
                after, head = trunk.revision, trunk.snapshot
                if catch_up and trunk.snapshot != draft.snapshot:
                    after = _append(conn, unit_id, trunk.revision, draft.snapshot,
                                    [(catch_up, MERGE_AUTHOR)],
                                    merge_origin(worktree_id, operation_id))
                    head = draft.snapshot
            else:
                before, head = None, draft.snapshot
                after = self._create_from_draft(conn, worktree_id, operation_id, unit_id,
                                                draft.unit_type, draft.base_snapshot,
                                                draft.snapshot, draft.base_draft_revision)
            _advance_draft(conn, worktree_id, unit_id, draft.revision, [],
                           {"base_snapshot": head, "base_revision": after}, utcnow(),
                           rebased=True)
            return self._insert_record(conn, operation_id, worktree_id, unit_id,
                                       MergeOutcome.CREATED, before, after)
        return self._commit(operation_id, unit_id, work)

    def _create_from_draft(self, conn: Connection, worktree_id: str, operation_id: str,
                           unit_id: str, unit_type: str, base: dict[str, Any],
                           snapshot: dict[str, Any], base_draft_revision: int) -> int:
        """Insert the trunk unit of a local draft (see :meth:`commit_created`); returns its
        revision. A unit inserted concurrently is a :class:`RevisionConflict`."""
        revisions = _select_draft_revisions(conn, worktree_id, unit_id, base_draft_revision)
        now = utcnow()
        created = conn.execute(self._insert_new().returning(UNITS.c.id), {
            "id": unit_id, "unit_type": unit_type, "snapshot": base if revisions else snapshot,
            "revision": 0, "created_at": now, "updated_at": now}).first()
        if created is None:
            raise RevisionConflict("the unit was created concurrently",
                                   details={"scope": "trunk"})
        if not revisions:
            return 0
        # ``base`` was written above; replaying changes it in place from here on
        if _replay(base, revisions) == snapshot:
            return _append(conn, unit_id, 0, snapshot,
                           [(r.changeset, r.author_id) for r in revisions],
                           merge_origin(worktree_id, operation_id))
        conn.execute(update(UNITS).where(UNITS.c.id == unit_id).values(snapshot=snapshot))
        return 0

    def record_outcome(self, operation_id: str, worktree_id: str, unit_id: str,
                       outcome: MergeOutcome, *, trunk_revision: int | None,
                       conflicts: Sequence[Any] = (), conflict_count: int | None = None,
                       sync_changeset: list[Any] | None = None,
                       expected_draft_revision: int | None = None) -> MergeRecord:
        """Record an outcome that writes nothing to trunk — ``unchanged``, ``conflict``
        (``conflicts``, the capped list, and ``conflict_count``, the true number, default
        ``len(conflicts)``) or ``failed`` — with before == after == ``trunk_revision``.

        For ``unchanged`` only, ``sync_changeset`` (the patch from the draft head to the
        trunk head, possibly empty) also re-bases the draft onto trunk at
        ``trunk_revision`` in the same transaction: base and head := trunk's document, a
        ``merge_sync`` draft revision unless the patch is empty; compare-and-set on the
        trunk being at ``trunk_revision`` and on ``expected_draft_revision`` (required
        then). Returns the existing record, writing nothing, if the operation already has
        one for the unit."""
        outcome = MergeOutcome(outcome)
        if outcome not in (MergeOutcome.UNCHANGED, MergeOutcome.CONFLICT, MergeOutcome.FAILED):
            raise ValueError(f"record_outcome records no trunk write; {outcome} has one")
        if sync_changeset is not None:
            if outcome != MergeOutcome.UNCHANGED:
                raise ValueError("only an unchanged unit is re-based by record_outcome")
            if expected_draft_revision is None or trunk_revision is None:
                raise ValueError("re-basing needs expected_draft_revision and trunk_revision")
            if sync_changeset:
                _check_patch(sync_changeset)

        def work(conn: Connection) -> MergeRecord:
            if sync_changeset is not None and expected_draft_revision is not None:
                trunk = conn.execute(select(UNITS.c.snapshot, UNITS.c.revision)
                                     .where(UNITS.c.id == unit_id)).first()
                if trunk is None:
                    raise UnitNotFound("No such unit.")
                _check_trunk_revision(trunk.revision, trunk_revision)
                draft = conn.scalar(select(DRAFTS.c.revision).where(
                    *_draft_is(worktree_id, unit_id)))
                if draft is None:
                    raise DraftNotFound("No such draft.")
                _check_draft_revision(draft, expected_draft_revision)
                _advance_draft(conn, worktree_id, unit_id, draft,
                               [(sync_changeset, MERGE_AUTHOR, DraftRevisionKind.MERGE_SYNC)]
                               if sync_changeset else [],
                               {"snapshot": trunk.snapshot, "base_snapshot": trunk.snapshot,
                                "base_revision": trunk.revision}, utcnow(), rebased=True)
            return self._insert_record(conn, operation_id, worktree_id, unit_id, outcome,
                                       trunk_revision, trunk_revision, conflicts,
                                       conflict_count)
        return self._commit(operation_id, unit_id, work)


# -- helpers of the statements above (one transaction's connection each) ------------------

def _check_patch(changeset: Any) -> None:
    """A precomputed patch: a non-empty list of operation objects (not applied here)."""
    if not isinstance(changeset, list) or not changeset \
            or not all(isinstance(op, dict) and isinstance(op.get("op"), str)
                       and isinstance(op.get("path"), str) for op in changeset):
        raise InvalidChangeset("a changeset must be a non-empty RFC 6902 JSON Patch array")


def _stored_size(conn: Connection, column: Any, *where: Any) -> int:
    return json_size(conn.scalar(select(column).where(*where)))


def _check_trunk_revision(current: int, expected: int | None) -> None:
    if current != expected:
        raise RevisionConflict(f"the unit is at revision {current}, not {expected}",
                               details={"current_revision": current, "scope": "trunk"})


def _check_draft_revision(current: int, expected: int) -> None:
    if current != expected:
        raise RevisionConflict(f"the draft is at revision {current}, not {expected}",
                               details={"current_revision": current, "scope": "draft"})


def _draft_is(worktree_id: str, unit_id: str) -> tuple[Any, Any]:
    return DRAFTS.c.worktree_id == worktree_id, DRAFTS.c.unit_id == unit_id


def _head(row: Any) -> DraftHead:
    return DraftHead(row.worktree_id, row.unit_id, row.unit_type, row.source,
                     row.base_revision, row.base_draft_revision, row.snapshot, row.revision,
                     row.updated_at)


def _select_draft(conn: Connection, worktree_id: str, unit_id: str) -> Draft | None:
    row = conn.execute(select(*DRAFTS.c).where(*_draft_is(worktree_id, unit_id))).first()
    if row is None:
        return None
    return Draft(row.worktree_id, row.unit_id, row.unit_type, row.source, row.base_revision,
                 row.base_draft_revision, row.snapshot, row.revision, row.updated_at,
                 row.base_snapshot, row.created_at)


def _select_draft_revisions(conn: Connection, worktree_id: str, unit_id: str,
                            after: int) -> list[DraftRevision]:
    rows = conn.execute(select(*DRAFT_REVISIONS.c).where(
        DRAFT_REVISIONS.c.worktree_id == worktree_id, DRAFT_REVISIONS.c.unit_id == unit_id,
        DRAFT_REVISIONS.c.revision > after).order_by(DRAFT_REVISIONS.c.revision))
    return [DraftRevision(r.worktree_id, r.unit_id, r.revision, r.changeset, r.author_id,
                          r.kind, r.created_at) for r in rows]


def _select_record(conn: Connection, operation_id: str, unit_id: str) -> MergeRecord | None:
    row = conn.execute(select(*MERGE_RECORDS.c).where(
        MERGE_RECORDS.c.operation_id == operation_id,
        MERGE_RECORDS.c.unit_id == unit_id)).first()
    return _record(row, _stored_conflicts(conn, row)) if row is not None else None


def _stored_conflicts(conn: Connection, row: Any) -> list[Any]:
    """A record row's conflicts: its own, or those of the record it refers to."""
    if row.conflicts_operation_id is None:
        return list(row.conflicts)
    stored = conn.scalar(select(MERGE_RECORDS.c.conflicts).where(
        MERGE_RECORDS.c.operation_id == row.conflicts_operation_id,
        MERGE_RECORDS.c.unit_id == row.unit_id))
    return list(stored or [])


def _digest(conflicts: list[Any]) -> str:
    """SHA-256 of a conflict list's compact JSON (equal lists, equal digests)."""
    data = json.dumps(conflicts, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def _record(row: Any, conflicts: list[Any]) -> MergeRecord:
    return MergeRecord(row.operation_id, row.unit_id, row.worktree_id, row.outcome,
                       row.trunk_revision_before, row.trunk_revision_after, conflicts,
                       row.conflict_count, row.created_at)


def _replay(document: dict[str, Any], revisions: Sequence[DraftRevision]) -> Any:
    """``document`` (the caller's own copy, changed in place) with the revisions' stored
    changesets applied in order; None if one of them no longer applies. Their operations
    run as one changeset: the size of the result is measured once, not once per revision
    (a whole-document serialization each)."""
    operations = [op for revision in revisions for op in revision.changeset]
    try:
        return apply_changeset(document, parse_changeset(operations, _REPLAY_LIMITS),
                               _REPLAY_LIMITS, lambda: 0)
    except StorageError:
        return None


def _append(conn: Connection, unit_id: str, expected_revision: int, snapshot: dict[str, Any],
            changesets: Sequence[tuple[list[Any], str | None]],
            origin: dict[str, Any] | None) -> int:
    """Compare-and-set the unit from ``expected_revision`` to ``snapshot`` and insert one
    trunk revision per changeset; returns the new revision."""
    new_revision = expected_revision + len(changesets)
    now = utcnow()
    result = conn.execute(update(UNITS).where(
        UNITS.c.id == unit_id, UNITS.c.revision == expected_revision).values(
        snapshot=snapshot, revision=new_revision, updated_at=now))
    if rowcount(result) != 1:
        raise RevisionConflict("the unit changed concurrently; recompute and retry",
                               details={"scope": "trunk"})
    conn.execute(insert(REVISIONS), [
        {"unit_id": unit_id, "revision": expected_revision + i, "changeset": changeset,
         "author_id": author_id, "origin": origin, "created_at": now}
        for i, (changeset, author_id) in enumerate(changesets, start=1)])
    return new_revision


def _advance_draft(conn: Connection, worktree_id: str, unit_id: str, expected_revision: int,
                   revisions: Sequence[tuple[list[Any], str | None, DraftRevisionKind]],
                   values: dict[str, Any], now: datetime, *, rebased: bool = False) -> int:
    """Compare-and-set the draft from ``expected_revision``, setting ``values``, with one
    draft revision per entry of ``revisions``; ``rebased``: the base was just set, so
    ``base_draft_revision`` := the resulting revision. Returns that revision."""
    revision = expected_revision + len(revisions)
    extra: dict[str, Any] = {"base_draft_revision": revision} if rebased else {}
    for document, size in (("snapshot", "snapshot_bytes"), ("base_snapshot", "base_bytes")):
        if document in values and size not in values:  # written with their documents
            extra[size] = json_size(values[document])
    result = conn.execute(update(DRAFTS).where(
        *_draft_is(worktree_id, unit_id), DRAFTS.c.revision == expected_revision).values(
        revision=revision, updated_at=now, **values, **extra))
    if rowcount(result) != 1:
        raise RevisionConflict("the draft changed concurrently; retry",
                               details={"scope": "draft"})
    if revisions:
        conn.execute(insert(DRAFT_REVISIONS), [
            {"worktree_id": worktree_id, "unit_id": unit_id, "revision": expected_revision + i,
             "changeset": changeset, "author_id": author_id, "kind": str(kind),
             "created_at": now}
            for i, (changeset, author_id, kind) in enumerate(revisions, start=1)])
    return revision


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
            *_draft_is(key.worktree_id, key.unit_id))).one()
        conn.execute(update(DRAFTS).where(*_draft_is(key.worktree_id, key.unit_id)).values(
            base_bytes=json_size(docs.base_snapshot), snapshot_bytes=json_size(docs.snapshot)))


#: ``version -> step`` that takes a store from ``version`` to ``version + 1``, in place.
UPGRADES: dict[int, Callable[[Connection], None]] = {1: _upgrade_1_to_2,
                                                     2: _upgrade_2_to_3,
                                                     3: _upgrade_draft_sizes}


#: Key of the PostgreSQL advisory lock that serialises processes preparing the unit store.
PG_PREPARE_LOCK_KEY = 0x574E4954  # "WNIT"


def prepare_unitstore_db(db: Database, report: Callable[[str], None] = print) -> None:
    """Create the UnitStore schema if missing, upgrade an older one in place (its units and
    revisions kept); refuse a schema newer than this code.

    The check, the creation and the upgrade run in one write transaction that first takes
    the database's write lock (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: a
    transaction-scoped advisory lock), so processes starting together (two ``wharf
    migrate`` runs on a new database) queue: one creates or upgrades, the others then find
    the current version. DDL is transactional on both databases: a failed creation or
    upgrade leaves the store as it was."""
    with db.write() as s:
        conn = s.connection()
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({PG_PREPARE_LOCK_KEY})")
        message = _bring_to_head(conn)
    if message:
        report(message)


def _bring_to_head(conn: Connection) -> str | None:
    """Inside the locked transaction: create or upgrade the schema; what was done."""
    from sqlalchemy import inspect
    tables = set(inspect(conn).get_table_names())
    meta = MetaRow.__table__
    version = 0
    if "unitstore_meta" in tables:
        version = int(conn.scalar(select(meta.c.value).where(
            meta.c.key == "schema_version")) or 0)
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


def prepare_unitstore(settings: UnitStoreSettings) -> None:
    db = Database(settings.unitstore_url, settings.sqlite_busy_timeout_ms)
    try:
        prepare_unitstore_db(db)
    finally:
        db.dispose()
