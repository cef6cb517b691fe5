"""The UnitStore: documents (units) in their own database, never joined with the product DB.

A unit has a JSON document and an append-only list of revisions; each revision is an
RFC 6902 JSON Patch against a base revision, applied by :mod:`storage.unitpatch` within
its size, depth and operation-count limits. The document is stored as checkpoints plus
the revision log and kept hot per process (:mod:`storage.unitheads`), so a changeset
costs what it changes.
Creating a unit is idempotent on its id (``INSERT … ON CONFLICT DO NOTHING``; several at
once in one transaction with :meth:`UnitStore.create_units`). Transient database trouble
surfaces as :class:`storage.errors.UnitStoreUnavailable` (the core maps it to a retryable
failure), so workers back off and retry.

This module keeps the trunk units. The tables (and the schema's creation and upgrades) are
:mod:`storage.unitschema`'s; the worktrees capability keeps its drafts and merge records
in the same database (``wharf.worktrees.drafts``, ``wharf.worktrees.records``) with the
primitives of :mod:`storage.unitrows` (each inside the caller's transaction).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import (
    delete,
    func,
    insert,
    select,
    update,
)

from storage import unitretention
from storage.clock import utcnow
from storage.db import Database, json_text, json_value
from storage.enums import UnitType, values
from storage.errors import (
    RevisionConflict,
    UnitConflict,
    UnitNotFound,
    UnitStoreUnavailable,
)
from storage.results import rowcount
from storage.unitheads import (
    Head,
    HeadCache,
    HeadMoved,
    HeadRow,
    editing,
    load_head,
    needs_checkpoint,
    read_document_at,
)
from storage.unitpatch import (
    ChangesetTooLarge,
    InvalidChangeset,
    UnitLimits,
    UnitTooDeep,
    UnitTooLarge,
    json_size,
    parse_changeset,
)
from storage.unitrows import (
    append_revisions,
    check_patch,
    check_snapshot,
    check_trunk_revision,
    create_unit_statement,
    encode_document,
    guard,
    head_row,
    insert_units,
)
from storage.unitschema import CHECKPOINTS, REVISIONS, UNITS, RevisionRow, UnitRow

__all__ = ["ChangesetTooLarge", "InvalidChangeset", "RevisionConflict", "UnitConflict",
           "UnitLimits", "UnitNotFound", "UnitStoreUnavailable", "UnitTooDeep",
           "UnitTooLarge"]

T = TypeVar("T")
R = TypeVar("R")

#: Default budget of a process's documents kept in memory (compact JSON bytes).
DEFAULT_CACHE_BYTES = 256 * 1024 * 1024

UNIT_TYPES = values(UnitType)


@dataclass(frozen=True)
class Unit:
    id: str
    unit_type: str
    snapshot: dict[str, Any]
    revision: int
    updated_at: datetime


@dataclass(frozen=True)
class Applied:
    """A changeset's result: the unit's new revision, and its document as compact JSON
    when the caller asked for it (serialized before another changeset could land)."""

    id: str
    unit_type: str
    revision: int
    updated_at: datetime
    document_json: bytes | None


@dataclass(frozen=True)
class Revision:
    """One trunk revision: the changeset that made ``revision`` from ``revision - 1``."""

    unit_id: str
    revision: int
    changeset: list[Any]
    author_id: str | None
    origin: dict[str, Any] | None
    created_at: datetime



def initial_snapshot(unit_type: str) -> dict[str, Any]:
    return {"type": unit_type, "schemaVersion": 1, "body": {}}


class UnitStore:
    def __init__(self, db: Database, limits: UnitLimits | None = None,
                 cache_bytes: int = DEFAULT_CACHE_BYTES):
        self.db = db
        self.limits = limits or UnitLimits()
        self.heads = HeadCache(cache_bytes)

    def _guard(self, fn: Callable[[], T]) -> T:
        return guard(fn)

    # -- trunk units ----------------------------------------------------------------------

    def create_unit(self, unit_id: str, unit_type: str,
                    snapshot: dict[str, Any] | None = None) -> Unit:
        """Create the unit (its row and its first checkpoint), or return it if it already
        exists with the same type (another type: :class:`UnitConflict`). Unbundled
        (:meth:`Database.unbundled`): on PostgreSQL the two inserts are one statement
        (a data-modifying ``WITH``) that commits on its own, without ``BEGIN``/``COMMIT``
        round trips; an insert that finds the unit there wrote nothing (a lost
        connection's rerun is idempotent: the id is fixed)."""
        document = snapshot or initial_snapshot(unit_type)

        def run() -> Unit | None:
            now = utcnow()
            with self.db.unbundled() as s:
                conn = s.connection()
                if self.db.is_postgres:
                    statement = create_unit_statement(self.db, unit_id, unit_type, document,
                                                      now)
                    created = conn.execute(statement).first() is not None
                else:
                    created = bool(insert_units(conn, self.db, [(unit_id, unit_type, document)],
                                                now))
                if created:  # as written: revision 0, updated now (no read back)
                    return Unit(unit_id, unit_type, document, 0, now)
                existing = conn.scalar(select(UNITS.c.unit_type).where(UNITS.c.id == unit_id))
                if existing is not None and existing != unit_type:
                    raise UnitConflict(f"unit {unit_id} exists with type {existing}")
                return None
        unit = self._guard(run) or self.get(unit_id)
        if unit is None:  # deleted in between: as if created and deleted at once
            raise UnitNotFound("No such unit.")
        return unit

    def create_units(self, units: Sequence[tuple[str, str, dict[str, Any] | None]]) -> None:
        """Create several units ``(id, type, snapshot or None)`` in one transaction, each
        idempotent on its id: one that exists with the same type is left as it is, one
        with another type fails the whole call with :class:`UnitConflict` (nothing is
        created; the caller may then go one by one)."""
        if not units:
            return

        def run() -> None:
            with self.db.write() as s:
                conn = s.connection()
                inserted = insert_units(conn, self.db, [
                    (uid, utype, snapshot or initial_snapshot(utype))
                    for uid, utype, snapshot in units])
                existing = {uid: utype for uid, utype, _ in units if uid not in inserted}
                if existing:
                    for uid, utype in conn.execute(select(UNITS.c.id, UNITS.c.unit_type).where(
                            UNITS.c.id.in_(list(existing)))):
                        if utype != existing[uid]:
                            raise UnitConflict(f"unit {uid} exists with type {utype}")
        self._guard(run)

    def head(self, unit_id: str) -> HeadRow | None:
        """The unit's head row (revision, size, times), without its document."""
        def run() -> HeadRow | None:
            with self.db.read() as s:
                return head_row(s.connection(), unit_id)
        return self._guard(run)

    def get(self, unit_id: str) -> Unit | None:
        """The unit with its document (a copy the caller owns)."""
        found = self._read(unit_id, lambda head: json_value(json_text(head.doc)))
        if found is None:
            return None
        row, doc = found
        return Unit(row.unit_id, row.unit_type, doc, row.revision, row.updated_at)

    def document_json(self, unit_id: str) -> tuple[HeadRow, bytes] | None:
        """The unit's head row and its document as compact UTF-8 JSON, serialized from the
        process's copy (no copy of the document is made)."""
        return self._read(unit_id, lambda head: encode_document(head.doc))

    def inspect(self, unit_id: str,
                look: Callable[[dict[str, Any]], R]) -> tuple[HeadRow, R] | None:
        """``look`` applied to the unit's head document, under the unit's lock: the
        process's own copy, so ``look`` reads it and returns what it needs (a few members,
        not the document) without changing it. None when there is no such unit."""
        return self._read(unit_id, lambda head: look(head.doc))

    def _read(self, unit_id: str,
              render: Callable[[Head], R]) -> tuple[HeadRow, R] | None:
        """``render`` of the unit's head document, under the unit's lock (taken before
        the read transaction, in the order a changeset takes them)."""
        def run() -> tuple[HeadRow, R] | None:
            with self.heads.locked(unit_id) as slot:
                for attempt in range(3):
                    with self.db.read() as s:
                        conn = s.connection()
                        row = head_row(conn, unit_id)
                        if row is None:
                            return None
                        try:
                            head = load_head(conn, row, slot.head)
                        except HeadMoved:
                            if attempt == 2:
                                raise
                            continue
                        self.heads.keep(unit_id, slot, head)
                        return row, render(head)
            raise AssertionError("unreachable")  # pragma: no cover
        return self._guard(run)

    def exists(self, unit_id: str) -> bool:
        return self.head(unit_id) is not None

    def stored_size(self, unit_id: str) -> int | None:
        """Bytes of the unit's document as compact UTF-8 JSON (None: no such unit), as its
        changesets have kept it: no document is read."""
        row = self.head(unit_id)
        return None if row is None else row.size

    def revisions(self, unit_id: str, after: int = 0, limit: int | None = None) -> list[Revision]:
        """The unit's trunk revisions numbered above ``after``, oldest first (at most
        ``limit``)."""
        def run() -> list[Revision]:
            query = (select(*REVISIONS.c).where(REVISIONS.c.unit_id == unit_id,
                                                REVISIONS.c.revision > after)
                     .order_by(REVISIONS.c.revision))
            if limit is not None:
                query = query.limit(limit)
            with self.db.read() as s:
                return [Revision(r.unit_id, r.revision, r.changeset, r.author_id, r.origin,
                                 r.created_at) for r in s.connection().execute(query)]
        return self._guard(run)

    def revisions_before(self, unit_id: str, before: int | None,
                         limit: int) -> list[Revision]:
        """The unit's trunk revisions numbered below ``before`` (None: all), newest first,
        at most ``limit`` (its history, keyset-paged)."""
        def run() -> list[Revision]:
            query = select(*REVISIONS.c).where(REVISIONS.c.unit_id == unit_id)
            if before is not None:
                query = query.where(REVISIONS.c.revision < before)
            with self.db.read() as s:
                return [Revision(r.unit_id, r.revision, r.changeset, r.author_id, r.origin,
                                 r.created_at) for r in s.connection().execute(
                    query.order_by(REVISIONS.c.revision.desc()).limit(limit))]
        return self._guard(run)

    def document_at(self, unit_id: str, revision: int) -> tuple[HeadRow, bytes] | None:
        """The unit's document as it was at ``revision`` (compact JSON), from the newest
        checkpoint at or below it and the revisions after that (at most about twice the
        document read, whatever ``revision``); None when the unit or the revision does not
        exist."""
        def run() -> tuple[HeadRow, bytes] | None:
            with self.db.read() as s:
                conn = s.connection()
                row = head_row(conn, unit_id)
                if row is None or not 0 <= revision <= row.revision:
                    return None
                try:
                    head = read_document_at(conn, row, revision)
                except LookupError:  # its revisions are being pruned (retention)
                    return None
                return None if head is None else (row, encode_document(head.doc))
        return self._guard(run)

    def apply_changeset(self, unit_id: str, base_revision: int, changes: list[Any],
                        author_id: str | None = None, *,
                        with_document: bool = False) -> Applied:
        """Apply ``changes`` to the unit at ``base_revision`` (compare-and-set:
        :class:`RevisionConflict` when it has moved on). Work and bytes written follow the
        changeset: the process's copy of the document is patched in place (and undone if
        anything refuses or the commit fails), its size kept from what the operations
        insert and remove, and only the revision row and the head columns are written
        (plus, when the changesets since the last checkpoint outgrow the document, a new
        checkpoint). ``with_document``: the result carries the new document as JSON (work
        that grows with the document)."""
        ops = parse_changeset(changes, self.limits)
        changeset_bytes = json_size(changes)

        def run() -> Applied:
            with editing(self.heads, unit_id) as edit:
                with self.db.write() as s:
                    conn = s.connection()
                    row = head_row(conn, unit_id)
                    if row is None:
                        raise UnitNotFound("No such unit.")
                    if row.revision != base_revision:
                        raise RevisionConflict(
                            f"base revision {base_revision} is stale; the unit is at "
                            f"revision {row.revision}",
                            details={"current_revision": row.revision})
                    edit.load(load_head(conn, row, edit.cached))
                    doc, size = edit.apply(ops, self.limits)
                    new_rev, now = base_revision + 1, utcnow()
                    log_bytes = row.log_bytes + changeset_bytes
                    checkpoint = needs_checkpoint(log_bytes, size)
                    values: dict[str, Any] = {"revision": new_rev, "size": size,
                                              "log_bytes": log_bytes, "updated_at": now}
                    if checkpoint:
                        values.update(checkpoint_revision=new_rev, log_bytes=0)
                    if rowcount(conn.execute(update(UNITS).where(
                            UNITS.c.id == unit_id,
                            UNITS.c.revision == base_revision).values(values))) != 1:
                        raise RevisionConflict(
                            "the unit changed concurrently; rebase and retry")
                    conn.execute(insert(REVISIONS).values(
                        unit_id=unit_id, revision=new_rev, changeset=changes,
                        author_id=author_id, created_at=now))
                    if checkpoint:
                        conn.execute(insert(CHECKPOINTS).values(
                            unit_id=unit_id, revision=new_rev, snapshot=doc, size=size,
                            created_at=now))
                edit.committed = Head(row.created_at, new_rev, doc, size)
                document = encode_document(doc) if with_document else None
            return Applied(unit_id, row.unit_type, new_rev, now, document)
        return self._guard(run)

    def append_revision_with_snapshot(self, unit_id: str, expected_revision: int,
                                      changeset: list[Any], snapshot: dict[str, Any],
                                      author_id: str | None,
                                      origin: dict[str, Any] | None = None) -> Unit:
        """Append one trunk revision whose resulting document the caller computed
        (``snapshot``, e.g. a merge result, with ``changeset`` the patch from the current
        head to it): stored as given (as a checkpoint), not re-derived by applying
        ``changeset``. Compare-and-set on ``expected_revision`` (:class:`RevisionConflict`).

        The caller vouches that ``changeset`` turns the head into ``snapshot``; the store
        checks its shape (a non-empty list of operations, no operation-count limit: a merge
        may produce more than a client may post) and the size limit on ``snapshot`` (a
        unit over the limit may still shrink)."""
        check_patch(changeset)

        def run() -> Unit:
            with self.db.write() as s:
                conn = s.connection()
                head = head_row(conn, unit_id)
                if head is None:
                    raise UnitNotFound("No such unit.")
                check_trunk_revision(head.revision, expected_revision)
                size = check_snapshot(snapshot, self.limits, lambda: head.size)
                new_rev = append_revisions(conn, unit_id, expected_revision, snapshot,
                                           [(changeset, author_id)], origin, size)
                return Unit(unit_id, head.unit_type, snapshot, new_rev, utcnow())
        return self._guard(run)

    def delete_unit(self, unit_id: str) -> bool:
        """Delete the unit, its revisions and checkpoints; True if it existed. Idempotent."""
        def run() -> bool:
            with self.db.write() as s:
                s.execute(delete(RevisionRow).where(RevisionRow.unit_id == unit_id))
                s.execute(delete(CHECKPOINTS).where(CHECKPOINTS.c.unit_id == unit_id))
                return rowcount(s.execute(delete(UnitRow).where(UnitRow.id == unit_id))) > 0
        try:
            return self._guard(run)
        finally:
            self.heads.forget(unit_id)

    def prune_checkpoints(self, limit: int) -> int:
        """Delete up to ``limit`` checkpoints no document read needs
        (:func:`storage.unitretention.prune_checkpoints`); how many went."""
        return self._guard(lambda: unitretention.prune_checkpoints(self.db, limit))

    def prune_history(self, older_than: datetime, limit: int) -> int:
        """Delete up to ``limit`` revisions older than ``older_than`` that no document
        read needs any more (:func:`storage.unitretention.prune_history`); how many
        went."""
        return self._guard(lambda: unitretention.prune_history(self.db, older_than, limit))

    def first_revision(self, unit_id: str) -> int | None:
        """The oldest revision the unit still stores (None: none, never edited or all
        pruned)."""
        def run() -> int | None:
            with self.db.read() as s:
                found = s.connection().scalar(select(func.min(REVISIONS.c.revision)).where(
                    REVISIONS.c.unit_id == unit_id))
                return None if found is None else int(found)
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
