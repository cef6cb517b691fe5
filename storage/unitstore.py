"""The UnitStore: documents (units) in their own database, never joined with the product DB.

A unit has a JSON snapshot and an append-only list of revisions; each revision is an
RFC 6902 JSON Patch against a base revision, applied by :mod:`storage.unitpatch` within
its size, depth and operation-count limits.
Creating a unit is idempotent on its id (``INSERT … ON CONFLICT DO NOTHING``; several at
once in one transaction with :meth:`UnitStore.create_units`). Transient database trouble
surfaces as :class:`storage.errors.UnitStoreUnavailable` (the core maps it to a retryable
failure), so workers back off and retry.

This module keeps the trunk units. The tables (and the schema's creation and upgrades) are
:mod:`storage.unitschema`'s; the worktrees capability keeps its drafts and merge records
in the same database (``wharf.worktrees.drafts``, ``wharf.worktrees.records``) with the
primitives below: :func:`guard` (transient trouble as ``UnitStoreUnavailable``),
:func:`insert_ignore`, :func:`check_snapshot`, :func:`check_patch`,
:func:`check_trunk_revision` and :func:`append_revisions` (compare-and-set a trunk unit
and append its revisions inside the caller's transaction).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import (
    Connection,
    Insert,
    Table,
    Text,
    cast,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError

from storage.clock import utcnow
from storage.db import Database, is_transient_db_error
from storage.enums import UnitType, values
from storage.errors import (
    DatabaseBusy,
    RevisionConflict,
    UnitConflict,
    UnitNotFound,
    UnitStoreUnavailable,
)
from storage.results import rowcount
from storage.unitpatch import (
    ChangesetTooLarge,
    InvalidChangeset,
    UnitLimits,
    UnitTooDeep,
    UnitTooLarge,
    apply_changeset,
    json_size,
    parse_changeset,
)
from storage.unitschema import REVISIONS, UNITS, RevisionRow, UnitRow

__all__ = ["ChangesetTooLarge", "InvalidChangeset", "RevisionConflict", "UnitConflict",
           "UnitLimits", "UnitNotFound", "UnitStoreUnavailable", "UnitTooDeep",
           "UnitTooLarge"]

T = TypeVar("T")

UNIT_TYPES = values(UnitType)


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



def initial_snapshot(unit_type: str) -> dict[str, Any]:
    return {"type": unit_type, "schemaVersion": 1, "body": {}}


class UnitStore:
    def __init__(self, db: Database, limits: UnitLimits | None = None):
        self.db = db
        self.limits = limits or UnitLimits()

    def _guard(self, fn: Callable[[], T]) -> T:
        return guard(fn)

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
    def _insert_new(self) -> Insert:
        """``INSERT INTO units … ON CONFLICT (id) DO NOTHING`` in this database's dialect."""
        return insert_ignore(self.db, UNITS)

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
        check_patch(changeset)

        def run() -> Unit:
            with self.db.write() as s:
                conn = s.connection()
                head = conn.execute(select(UNITS.c.unit_type, UNITS.c.revision)
                                    .where(UNITS.c.id == unit_id)).first()
                if head is None:
                    raise UnitNotFound("No such unit.")
                check_trunk_revision(head.revision, expected_revision)
                check_snapshot(snapshot, self.limits,
                               lambda: stored_size(conn, UNITS.c.snapshot, UNITS.c.id == unit_id))
                new_rev = append_revisions(conn, unit_id, expected_revision, snapshot,
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


# -- primitives the unit store's other users share (one transaction's connection each) -----

def guard(fn: Callable[[], T]) -> T:
    """Run ``fn``; transient database trouble (a lost connection, a busy SQLite) is
    :class:`UnitStoreUnavailable`, which the core maps to a retryable failure."""
    try:
        return fn()
    except DBAPIError as exc:
        if is_transient_db_error(exc):
            raise UnitStoreUnavailable("The unit store is unavailable.") from exc
        raise
    except DatabaseBusy as exc:
        raise UnitStoreUnavailable("The unit store is busy.") from exc


def insert_ignore(db: Database, table: Table) -> Insert:
    """``INSERT INTO table … ON CONFLICT (primary key) DO NOTHING`` in ``db``'s dialect."""
    stmt = (pg_insert(table) if db.is_postgres else sqlite_insert(table))
    return stmt.on_conflict_do_nothing(index_elements=list(table.primary_key.columns))


def check_snapshot(snapshot: Any, limits: UnitLimits, current_size: Callable[[], int]) -> None:
    """A precomputed document: a JSON object within the size limit, or no larger than
    the document it replaces (``current_size``, called only when over the limit)."""
    if not isinstance(snapshot, dict):
        raise InvalidChangeset("a snapshot must stay a JSON object")
    size = json_size(snapshot)
    if size > limits.max_bytes and size > current_size():
        raise UnitTooLarge(
            f"The unit would be {size} bytes; at most {limits.max_bytes} are allowed.",
            details={"max_bytes": limits.max_bytes})


def check_patch(changeset: Any) -> None:
    """A precomputed patch: a non-empty list of operation objects (not applied here)."""
    if not isinstance(changeset, list) or not changeset \
            or not all(isinstance(op, dict) and isinstance(op.get("op"), str)
                       and isinstance(op.get("path"), str) for op in changeset):
        raise InvalidChangeset("a changeset must be a non-empty RFC 6902 JSON Patch array")


def stored_size(conn: Connection, column: Any, *where: Any) -> int:
    """The compact size of the stored document in ``column`` of the row ``where`` selects."""
    return json_size(conn.scalar(select(column).where(*where)))


def check_trunk_revision(current: int, expected: int | None) -> None:
    if current != expected:
        raise RevisionConflict(f"the unit is at revision {current}, not {expected}",
                               details={"current_revision": current, "scope": "trunk"})


def append_revisions(conn: Connection, unit_id: str, expected_revision: int,
                     snapshot: dict[str, Any],
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
