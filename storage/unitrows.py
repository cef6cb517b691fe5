"""Primitives on the unit store's tables, inside the caller's transaction: what the trunk
units (:mod:`storage.unitstore`) and the worktrees capability's drafts and merge records
(``wharf.worktrees.drafts``, ``.records``) share. Each takes the transaction's connection;
:func:`guard` maps transient database trouble to ``UnitStoreUnavailable``."""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import msgspec
from sqlalchemy import Connection, Insert, Table, insert, literal, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError

from storage.clock import utcnow
from storage.db import Database, is_transient_db_error
from storage.driver import DriverStatement
from storage.errors import DatabaseBusy, RevisionConflict, UnitNotFound, UnitStoreUnavailable
from storage.results import rowcount
from storage.unitheads import HeadRow, read_document, read_document_at
from storage.unitpatch import InvalidChangeset, UnitLimits, UnitTooLarge, json_size
from storage.unitschema import CHECKPOINTS, REVISIONS, UNITS

T = TypeVar("T")


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


def insert_ignore(db: Database | bool, table: Table) -> Insert:
    """``INSERT INTO table … ON CONFLICT (primary key) DO NOTHING`` in ``db``'s dialect
    (or, given a bool, PostgreSQL's when it is true)."""
    postgres = db if isinstance(db, bool) else db.is_postgres
    stmt = (pg_insert(table) if postgres else sqlite_insert(table))
    return stmt.on_conflict_do_nothing(index_elements=list(table.primary_key.columns))


def check_snapshot(snapshot: Any, limits: UnitLimits, current_size: Callable[[], int]) -> int:
    """A precomputed document: a JSON object within the size limit, or no larger than
    the document it replaces (``current_size``, called only when over the limit). Its
    compact size."""
    if not isinstance(snapshot, dict):
        raise InvalidChangeset("a snapshot must stay a JSON object")
    size = json_size(snapshot)
    if size > limits.max_bytes and size > current_size():
        raise UnitTooLarge(
            f"The unit would be {size} bytes; at most {limits.max_bytes} are allowed.",
            details={"max_bytes": limits.max_bytes})
    return size


def check_patch(changeset: Any) -> None:
    """A precomputed patch: a non-empty list of operation objects (not applied here)."""
    if not isinstance(changeset, list) or not changeset \
            or not all(isinstance(op, dict) and isinstance(op.get("op"), str)
                       and isinstance(op.get("path"), str) for op in changeset):
        raise InvalidChangeset("a changeset must be a non-empty RFC 6902 JSON Patch array")


_INSERT_CHECKPOINTS = DriverStatement.insert_rows(
    CHECKPOINTS, ("unit_id", "revision", "snapshot", "size", "created_at"))


_UNIT_COLUMNS = ("id", "unit_type", "revision", "size", "checkpoint_revision", "log_bytes",
                 "created_at", "updated_at")
#: The units' rows, those that exist left as they are; on the driver one statement over
#: arrays. By backend (PostgreSQL: True).
_INSERT_UNITS = {postgres: DriverStatement.insert_rows_returning(
    insert_ignore(postgres, UNITS).returning(UNITS.c.id), _UNIT_COLUMNS)
    for postgres in (False, True)}


def insert_units(conn: Connection, db: Database,
                 units: Sequence[tuple[str, str, dict[str, Any]]],
                 now: datetime | None = None) -> set[str]:
    """Insert trunk units ``(id, type, document)`` at revision 0, each with its first
    checkpoint, created and updated at ``now`` (default: the current time), inside the
    caller's transaction; those that exist already are left as they are. Returns the ids
    inserted."""
    now = now or utcnow()
    sizes = {uid: document_size(doc) for uid, _, doc in units}
    inserted = {row[0] for row in _INSERT_UNITS[db.is_postgres].insert_returning(conn, [
        {"id": uid, "unit_type": utype, "revision": 0, "size": sizes[uid],
         "checkpoint_revision": 0, "log_bytes": 0, "created_at": now, "updated_at": now}
        for uid, utype, _ in units])}
    if inserted:  # (one multi-row INSERT on the driver)
        _INSERT_CHECKPOINTS.executemany(conn, [
            {"unit_id": uid, "revision": 0, "snapshot": doc, "size": sizes[uid],
             "created_at": now} for uid, _, doc in units if uid in inserted])
    return inserted


def create_unit_statement(db: Database, unit_id: str, unit_type: str,
                          document: dict[str, Any], now: datetime) -> Any:
    """One statement (PostgreSQL) inserting the unit's row, unless it exists, and its
    first checkpoint: ``WITH new AS (INSERT … ON CONFLICT DO NOTHING RETURNING id)
    INSERT INTO unit_checkpoints SELECT … FROM new RETURNING unit_id``, created and
    updated at ``now``."""
    size = document_size(document)
    new = insert_ignore(db, UNITS).values(
        id=unit_id, unit_type=unit_type, revision=0, size=size, checkpoint_revision=0,
        log_bytes=0, created_at=now, updated_at=now).returning(UNITS.c.id).cte("new_unit")
    columns = [CHECKPOINTS.c.unit_id, CHECKPOINTS.c.revision, CHECKPOINTS.c.snapshot,
               CHECKPOINTS.c.size, CHECKPOINTS.c.created_at]
    values = select(new.c.id, literal(0), literal(document, CHECKPOINTS.c.snapshot.type),
                    literal(size, CHECKPOINTS.c.size.type),
                    literal(now, CHECKPOINTS.c.created_at.type))
    return insert(CHECKPOINTS).from_select(columns, values).returning(CHECKPOINTS.c.unit_id)


def rewrite_first_checkpoint(conn: Connection, unit_id: str, snapshot: dict[str, Any]) -> None:
    """Replace the document of a unit still at revision 0 (just inserted by the caller's
    transaction, with no reader yet)."""
    size = json_size(snapshot)
    conn.execute(update(CHECKPOINTS).where(CHECKPOINTS.c.unit_id == unit_id,
                                           CHECKPOINTS.c.revision == 0).values(
        snapshot=snapshot, size=size))
    conn.execute(update(UNITS).where(UNITS.c.id == unit_id, UNITS.c.revision == 0).values(
        size=size))


def head_row(conn: Connection, unit_id: str) -> HeadRow | None:
    """The trunk unit's ``units`` row (no document), or None."""
    row = conn.execute(select(*_HEAD_COLUMNS).where(UNITS.c.id == unit_id)).first()
    return None if row is None else HeadRow(*row)


_HEAD_COLUMNS = (UNITS.c.id, UNITS.c.unit_type, UNITS.c.revision, UNITS.c.size,
                 UNITS.c.checkpoint_revision, UNITS.c.log_bytes, UNITS.c.created_at,
                 UNITS.c.updated_at)


@dataclass(frozen=True)
class TrunkDocument:
    """A trunk unit's document read inside the caller's transaction (a copy it owns)."""

    unit_type: str
    snapshot: dict[str, Any]
    revision: int
    size: int


def read_trunk(conn: Connection, unit_id: str) -> TrunkDocument | None:
    """The trunk unit's head document, from its checkpoint and revisions, inside the
    caller's transaction (for the worktrees capability's drafts and merges)."""
    row = head_row(conn, unit_id)
    if row is None:
        return None
    head = read_document(conn, row)
    return TrunkDocument(row.unit_type, head.doc, row.revision, row.size)


def read_trunk_at(conn: Connection, unit_id: str, revision: int) -> dict[str, Any]:
    """The trunk unit's document at ``revision`` (a copy the caller owns): its newest
    checkpoint at or below it with the revisions after it applied. What a draft forked
    from that revision shares with trunk instead of storing a copy.
    :class:`storage.errors.UnitNotFound` when the unit (or that revision) is gone."""
    row = head_row(conn, unit_id)
    head = None if row is None or row.revision < revision else \
        read_document_at(conn, row, revision)
    if head is None:
        raise UnitNotFound(f"unit {unit_id} has no revision {revision}")
    return head.doc


def document_size(doc: dict[str, Any]) -> int:
    """Bytes of a new unit's document as compact UTF-8 JSON (:func:`json_size`). A body
    that comes already encoded (``msgspec.Raw``: an import's, made by its reader child
    without a Python object per cell) is stored as it is (``json_text`` splices it): its
    own length counts, around the rest measured as usual."""
    body = doc.get("body")
    if isinstance(body, msgspec.Raw):
        return json_size({**doc, "body": None}) - len("null") + len(body)
    return json_size(doc)


def encode_document(doc: dict[str, Any]) -> bytes:
    """A document as compact UTF-8 JSON (the encoding its size is counted in)."""
    text: str = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


def check_trunk_revision(current: int, expected: int | None) -> None:
    if current != expected:
        raise RevisionConflict(f"the unit is at revision {current}, not {expected}",
                               details={"current_revision": current, "scope": "trunk"})


def append_revisions(conn: Connection, unit_id: str, expected_revision: int,
                     snapshot: dict[str, Any],
                     changesets: Sequence[tuple[list[Any], str | None]],
                     origin: dict[str, Any] | None, size: int | None = None) -> int:
    """Compare-and-set the unit from ``expected_revision`` to ``snapshot`` and insert one
    trunk revision per changeset; returns the new revision. ``size``: the snapshot's
    compact size when the caller measured it already (:func:`check_snapshot`)."""
    new_revision = expected_revision + len(changesets)
    now = utcnow()
    size = json_size(snapshot) if size is None else size
    result = conn.execute(update(UNITS).where(
        UNITS.c.id == unit_id, UNITS.c.revision == expected_revision).values(
        revision=new_revision, size=size, checkpoint_revision=new_revision, log_bytes=0,
        updated_at=now))
    if rowcount(result) != 1:
        raise RevisionConflict("the unit changed concurrently; recompute and retry",
                               details={"scope": "trunk"})
    conn.execute(insert(REVISIONS), [
        {"unit_id": unit_id, "revision": expected_revision + i, "changeset": changeset,
         "author_id": author_id, "origin": origin, "created_at": now}
        for i, (changeset, author_id) in enumerate(changesets, start=1)])
    # the document the caller computed is stored as it is: readers load it, never
    # re-derive it from the changesets
    conn.execute(insert(CHECKPOINTS).values(unit_id=unit_id, revision=new_revision,
                                            snapshot=snapshot, size=size, created_at=now))
    return new_revision
