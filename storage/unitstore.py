"""The UnitStore: documents (units) in their own database, never joined with the product DB.

A unit has a JSON snapshot and an append-only list of revisions; each revision is an
RFC 6902 JSON Patch against a base revision, applied by :mod:`storage.unitpatch` within
its size, depth and operation-count limits.
Creating a unit is idempotent on its id (``INSERT … ON CONFLICT DO NOTHING``; several at
once in one transaction with :meth:`UnitStore.create_units`). Transient database trouble
surfaces as :class:`storage.errors.UnitStoreUnavailable` (the core maps it to a retryable
failure), so workers back off and retry.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Protocol, TypeVar

from sqlalchemy import (
    JSON,
    ForeignKey,
    Insert,
    Integer,
    String,
    Table,
    delete,
    select,
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
    RevisionConflict,
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
    json_size,
    parse_changeset,
)

__all__ = ["ChangesetTooLarge", "InvalidChangeset", "RevisionConflict", "UnitConflict",
           "UnitLimits", "UnitNotFound", "UnitStoreUnavailable", "UnitTooDeep", "UnitTooLarge"]

T = TypeVar("T")

SCHEMA_VERSION = 1
UNIT_TYPES = values(UnitType)


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


UNITS = UnitRow.__table__


class MetaRow(UnitBase):
    __tablename__ = "unitstore_meta"

    key: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(64))


@dataclass(frozen=True)
class Unit:
    id: str
    unit_type: str
    snapshot: dict[str, Any]
    revision: int
    updated_at: datetime


def initial_snapshot(unit_type: str) -> dict[str, Any]:
    return {"type": unit_type, "schemaVersion": 1, "body": {}}


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

    def create_unit(self, unit_id: str, unit_type: str,
                    snapshot: dict[str, Any] | None = None) -> Unit:
        """Create the unit, or return it if it already exists with the same type (another
        type: :class:`UnitConflict`)."""
        def run() -> Unit:
            with self.db.write() as s:
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
        stmt = (pg_insert(UNITS) if self.db.is_postgres else sqlite_insert(UNITS))
        return stmt.on_conflict_do_nothing(index_elements=[UNITS.c.id])

    def get(self, unit_id: str) -> Unit | None:
        def run() -> Unit | None:
            with self.db.read() as s:
                row = s.get(UnitRow, unit_id)
                return self._unit(row) if row else None
        return self._guard(run)

    def exists(self, unit_id: str) -> bool:
        return self.get(unit_id) is not None

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

    @staticmethod
    def _unit(row: UnitRow) -> Unit:
        return Unit(row.id, row.unit_type, row.snapshot, row.revision, row.updated_at)


class UnitStoreSchemaError(RuntimeError):
    """The unit store database was written by a newer Wharf (unknown schema version)."""


def prepare_unitstore_db(db: Database, report: Callable[[str], None] = print) -> None:
    """Create the UnitStore schema if missing; refuse a schema newer than this code."""
    from sqlalchemy import inspect
    with db.engine.connect() as conn:
        tables = set(inspect(conn).get_table_names())
    if "unitstore_meta" in tables:
        with db.read() as s:
            row = s.get(MetaRow, "schema_version")
        version = int(row.value) if row else 0
        if version > SCHEMA_VERSION:
            raise UnitStoreSchemaError(
                f"the unit store schema is version {version}; this Wharf knows {SCHEMA_VERSION}")
        if version == SCHEMA_VERSION:
            return
    elif tables & {"units", "unit_revisions"}:
        raise UnitStoreSchemaError("the unit store has unit tables but no schema version: "
                                   "partially created or foreign; refusing")
    UnitBase.metadata.create_all(db.engine)
    with db.write() as s:
        s.merge(MetaRow(key="schema_version", value=str(SCHEMA_VERSION)))
    report(f"wharf: unit store schema at version {SCHEMA_VERSION}")


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
