"""Worktree drafts: a worktree's own copy of each of its units, in the unit store's database
next to the trunk units (tables: :mod:`storage.unitschema`; spec assets-worktrees §3.2).

- a **draft** per (worktree, unit): ``base_snapshot`` at trunk ``base_revision`` (what it
  was forked from or last re-based onto), the draft head ``snapshot`` at draft ``revision``,
  and ``base_draft_revision``, the draft revision at which the base was last set (0 until a
  rebase or a merge re-bases it: only then do draft revisions ``1..n`` apply to the base);
  Each draft row keeps the size of its two documents (``base_bytes``, ``snapshot_bytes``:
  compact UTF-8 JSON, schema version 4), written with them, so what a worktree's drafts
  hold is summed without reading a document (:meth:`Drafts.draft_bytes`);
- **draft revisions** (RFC 6902, like trunk's), of kind ``edit``, ``rebase`` or
  ``merge_sync``.

Merge records and the merge commits are :mod:`wharf.worktrees.records`'. Draft writes are
compare-and-set on the draft revision. Transient database trouble is
:class:`storage.errors.UnitStoreUnavailable`, as for trunk units (:func:`storage.unitstore.guard`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Connection, delete, func, select, tuple_

from storage.clock import utcnow
from storage.db import Database, json_text, json_value
from storage.enums import DraftRevisionKind, DraftSource
from storage.errors import (
    DraftQuotaExceeded,
    RevisionConflict,
    UnitConflict,
    UnitNotFound,
)
from storage.results import rowcount
from storage.unitheads import Head, HeadCache, editing, needs_checkpoint, reuse
from storage.unitpatch import (
    UnitLimits,
    check_document,
    json_size,
    parse_changeset,
)
from storage.unitrows import (
    check_patch,
    check_snapshot,
    encode_document,
    guard,
    head_row,
    insert_ignore,
)
from storage.unitschema import DRAFT_REVISIONS, DRAFTS, MERGE_RECORDS, UNITS
from storage.unitstore import Applied, UnitStore, initial_snapshot
from wharf.worktrees.draft_rows import (
    DOCUMENT_COLUMNS,
    SHARED,
    DraftRevision,
    advance_draft,
    check_draft_revision,
    draft_document,
    draft_incarnation,
    draft_is,
    draft_key,
    forward_draft,
    select_draft_revisions,
    shared,
)

#: ``author_id`` of the draft revisions a merge writes (``merge_sync``).
MERGE_AUTHOR = "system:merge"
#: ``author_id`` a caller may give a rebase it does on nobody's behalf.
REBASE_AUTHOR = "system:rebase"


class DraftNotFound(UnitNotFound):
    """No draft of this unit in this worktree (never forked, deleted, or purged)."""


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


class DraftState(NamedTuple):
    """A draft's revisions, and whether its content differs from its base."""

    base_revision: int
    revision: int
    changed: bool


class DraftKey(NamedTuple):
    worktree_id: str
    unit_id: str




_DRAFT_HEAD_COLUMNS = (*DOCUMENT_COLUMNS, DRAFTS.c.unit_type, DRAFTS.c.source,
                       DRAFTS.c.base_draft_revision, DRAFTS.c.updated_at)
#: A draft's row without its documents: what a changeset reads when its head is cached.
_DRAFT_LOG_COLUMNS = (DRAFTS.c.unit_type, DRAFTS.c.revision, DRAFTS.c.snapshot_revision,
                      DRAFTS.c.log_bytes, DRAFTS.c.created_at, DRAFTS.c.base_revision)



class Drafts:
    """The worktrees' drafts in the unit store's database (``db``, the UnitStore's, with
    its ``limits``): :meth:`of` a :class:`UnitStore` is the usual way to get one."""

    def __init__(self, db: Database, limits: UnitLimits | None = None,
                 heads: HeadCache | None = None):
        self.db = db
        self.limits = limits or UnitLimits()
        #: the process's documents in memory (none kept without one)
        self.heads = heads if heads is not None else HeadCache(0)

    @classmethod
    def of(cls, store: UnitStore) -> Drafts:
        """The drafts beside ``store``'s trunk units (its database, its limits, its
        cache of documents)."""
        return cls(store.db, store.limits, store.heads)

    def fork_draft(self, worktree_id: str, unit_id: str) -> Draft:
        """:meth:`fork`, then the draft with its documents (trunk's, read to answer)."""
        self.fork(worktree_id, unit_id)
        draft = self.get_draft(worktree_id, unit_id)
        if draft is None:  # pragma: no cover - deleted between the two transactions
            raise DraftNotFound("The draft was deleted concurrently.")
        return draft

    def fork(self, worktree_id: str, unit_id: str) -> None:
        """Fork the worktree's draft of trunk unit ``unit_id`` from the trunk head
        (``base_revision`` = trunk revision, draft revision 0). The fork stores no
        document and reads none: its base and its head are trunk's document at
        ``base_revision`` (:data:`SHARED`) until its first changeset stores its head;
        ``base_bytes`` and ``snapshot_bytes`` still count the documents' sizes (the draft
        quota counts what a draft holds, shared or not). Idempotent: an existing draft is
        left as it is (:class:`UnitConflict` if it is a local draft). :class:`UnitNotFound`
        without a trunk unit."""
        def run() -> None:
            with self.db.write() as s:
                conn = s.connection()
                source = conn.scalar(select(DRAFTS.c.source).where(
                    *draft_is(worktree_id, unit_id)))
                if source is None:
                    unit = head_row(conn, unit_id)
                    if unit is None:
                        raise UnitNotFound("No such unit.")
                    now = utcnow()
                    conn.execute(insert_ignore(self.db, DRAFTS), {
                        "worktree_id": worktree_id, "unit_id": unit_id,
                        "unit_type": unit.unit_type, "source": str(DraftSource.TRUNK),
                        "base_revision": unit.revision, "base_draft_revision": 0,
                        "base_snapshot": SHARED, "snapshot": SHARED, "revision": 0,
                        "base_bytes": unit.size, "snapshot_bytes": unit.size,
                        "created_at": now, "updated_at": now})
                    source = conn.scalar(select(DRAFTS.c.source).where(
                        *draft_is(worktree_id, unit_id)))
                if source != DraftSource.TRUNK:
                    raise UnitConflict(f"unit {unit_id} is a local unit of this worktree")
        guard(run)

    def base_revision(self, worktree_id: str, unit_id: str) -> int | None:
        """The draft's base revision (None: no such draft), no document read."""
        def run() -> int | None:
            with self.db.read() as s:
                found = s.connection().scalar(select(DRAFTS.c.base_revision).where(
                    *draft_is(worktree_id, unit_id)))
                return None if found is None else int(found)
        return guard(run)

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
                found = select_draft(conn, worktree_id, unit_id) or self._insert_draft(
                    conn, worktree_id, unit_id, unit_type, DraftSource.WORKTREE, 0, document)
                if found.source != DraftSource.WORKTREE or found.unit_type != unit_type:
                    raise UnitConflict(f"unit {unit_id} exists in this worktree as a "
                                       f"{found.source} {found.unit_type}")
                return found
        return guard(run)

    def _insert_draft(self, conn: Connection, worktree_id: str, unit_id: str, unit_type: str,
                      source: DraftSource, base_revision: int,
                      snapshot: dict[str, Any]) -> Draft:
        now = utcnow()
        size = json_size(snapshot)
        inserted = conn.execute(insert_ignore(self.db, DRAFTS).returning(DRAFTS.c.unit_id), {
            "worktree_id": worktree_id, "unit_id": unit_id, "unit_type": unit_type,
            "source": str(source), "base_revision": base_revision, "base_draft_revision": 0,
            "base_snapshot": snapshot, "snapshot": snapshot, "revision": 0,
            "base_bytes": size, "snapshot_bytes": size,
            "created_at": now, "updated_at": now}).first()
        if inserted is not None:  # (no re-read of the two documents just written)
            return Draft(worktree_id, unit_id, unit_type, str(source), base_revision, 0,
                         snapshot, 0, now, snapshot, now)
        # inserted concurrently by another transaction (committed: we waited for it)
        found = select_draft(conn, worktree_id, unit_id)
        if found is None:  # pragma: no cover - deleted between the two statements
            raise DraftNotFound("The draft was deleted concurrently.")
        return found

    def get_draft(self, worktree_id: str, unit_id: str) -> Draft | None:
        """The draft with its base document, or None."""
        def run() -> Draft | None:
            with self.db.read() as s:
                return select_draft(s.connection(), worktree_id, unit_id)
        return guard(run)

    def get_draft_head(self, worktree_id: str, unit_id: str) -> DraftHead | None:
        """The draft without its base document (one JSON document read, not two)."""
        def run() -> DraftHead | None:
            with self.db.read() as s:
                row = s.connection().execute(select(*_DRAFT_HEAD_COLUMNS).where(
                    *draft_is(worktree_id, unit_id))).first()
                return head_of(s.connection(), row) if row is not None else None
        return guard(run)

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
                for unit_id in edited:  # one draft's documents in memory at a time
                    d = conn.execute(select(*DOCUMENT_COLUMNS, DRAFTS.c.base_snapshot).where(
                        *draft_is(worktree_id, unit_id))).first()
                    if d is None:  # pragma: no cover - deleted between the statements
                        continue
                    base = shared(conn, d.unit_id, d.base_revision, d.base_snapshot)
                    if not same(base, draft_document(conn, d).doc):
                        changed.add(d.unit_id)
                return {h.unit_id: DraftState(h.base_revision, h.revision,
                                              h.unit_id in changed) for h in heads}
        return guard(run)

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
        return guard(run)

    def draft_revisions(self, worktree_id: str, unit_id: str,
                        after: int = 0) -> list[DraftRevision]:
        """The draft's revisions numbered above ``after``, oldest first."""
        def run() -> list[DraftRevision]:
            with self.db.read() as s:
                return select_draft_revisions(s.connection(), worktree_id, unit_id, after)
        return guard(run)

    def apply_draft_changeset(self, worktree_id: str, unit_id: str, base_revision: int,
                              changes: list[Any], author_id: str | None, *,
                              max_growth: int | None = None,
                              with_document: bool = False) -> Applied:
        """Apply an RFC 6902 changeset to the draft head, exactly as
        :meth:`UnitStore.apply_changeset` does to a trunk unit, at the same cost: the
        process's copy of the head is patched in place (same limits and refusals;
        compare-and-set on the draft revision: :class:`RevisionConflict` with
        ``details["current_revision"]``), an ``edit`` draft revision is appended and the
        head stored again only when the changesets since its last checkpoint outgrow it.
        :class:`DraftNotFound` without a draft. ``max_growth``: the most bytes the draft's
        document may grow by (:class:`DraftQuotaExceeded`, nothing written).
        ``with_document``: the result carries the new head as JSON."""
        ops = parse_changeset(changes, self.limits)
        changeset_bytes = json_size(changes)

        def run() -> Applied:
            with editing(self.heads, draft_key(worktree_id, unit_id)) as edit:
                with self.db.write() as s:
                    conn = s.connection()
                    row = conn.execute(select(*_DRAFT_LOG_COLUMNS).where(
                        *draft_is(worktree_id, unit_id))).first()
                    if row is None:
                        raise DraftNotFound("No such draft.")
                    if row.revision != base_revision:
                        raise RevisionConflict(
                            f"base revision {base_revision} is stale; the draft is at "
                            f"revision {row.revision}",
                            details={"current_revision": row.revision})
                    head = edit.load(reuse(
                        edit.cached, draft_incarnation(row), row.revision,
                        row.snapshot_revision,
                        lambda cached: forward_draft(conn, worktree_id, unit_id, cached,
                                                     row.revision),
                        lambda: draft_document(conn, conn.execute(
                            select(*DOCUMENT_COLUMNS).where(
                                *draft_is(worktree_id, unit_id))).one())))
                    before = head.size
                    doc, size = edit.apply(ops, self.limits)
                    grown = size - before
                    if max_growth is not None and grown > 0 and grown > max_growth:
                        raise DraftQuotaExceeded(
                            f"The draft would grow by {grown} bytes; {max(0, max_growth)} "
                            "are left in your draft quota.",
                            details={"bytes": grown, "available": max(0, max_growth)})
                    now, log_bytes = utcnow(), row.log_bytes + changeset_bytes
                    values: dict[str, Any] = {"snapshot_bytes": size, "log_bytes": log_bytes}
                    if needs_checkpoint(log_bytes, size):
                        values["snapshot"] = doc
                    revision = advance_draft(conn, worktree_id, unit_id, base_revision,
                                             [(changes, author_id, DraftRevisionKind.EDIT)],
                                             values, now)
                edit.committed = Head(draft_incarnation(row), revision, doc, size)
                document = encode_document(doc) if with_document else None
            return Applied(unit_id, row.unit_type, revision, now, document)
        return guard(run)

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
            check_patch(changeset)

        def run() -> DraftHead:
            with self.db.write() as s:
                conn = s.connection()
                where = draft_is(worktree_id, unit_id)
                row = conn.execute(select(DRAFTS.c.unit_type, DRAFTS.c.source,
                                          DRAFTS.c.revision, DRAFTS.c.snapshot_bytes)
                                   .where(*where)).first()
                if row is None:
                    raise DraftNotFound("No such draft.")
                check_draft_revision(row.revision, expected_draft_revision)
                trunk = conn.scalar(select(UNITS.c.revision).where(UNITS.c.id == unit_id))
                if trunk is None:
                    raise UnitNotFound("No such unit.")
                if trunk != base_revision:
                    raise RevisionConflict(
                        f"the unit is at revision {trunk}, not {base_revision}",
                        details={"current_revision": trunk, "scope": "trunk"})
                check_snapshot(snapshot, self.limits, lambda: int(row.snapshot_bytes))
                now = utcnow()
                revision = advance_draft(
                    conn, worktree_id, unit_id, expected_draft_revision,
                    [(changeset, author_id, DraftRevisionKind.REBASE)] if changeset else [],
                    {"snapshot": snapshot, "base_snapshot": base_snapshot,
                     "base_revision": base_revision}, now, rebased=True)
                return DraftHead(worktree_id, unit_id, row.unit_type, row.source,
                                 base_revision, revision, snapshot, revision, now)
        return guard(run)

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
        return guard(run)

    def delete_draft(self, worktree_id: str, unit_id: str) -> bool:
        """Delete one draft and its revisions (a failed addition's compensation, an orphan
        draft); True if it existed. Idempotent."""
        def run() -> bool:
            with self.db.write() as s:
                s.execute(delete(DRAFT_REVISIONS).where(
                    DRAFT_REVISIONS.c.worktree_id == worktree_id,
                    DRAFT_REVISIONS.c.unit_id == unit_id))
                return rowcount(s.execute(delete(DRAFTS).where(
                    *draft_is(worktree_id, unit_id)))) > 0
        return guard(run)

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
        return guard(run)

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
        return guard(run)

    # -- merge records and merge commits ----------------------------------------------------


# -- helpers of the statements above and of the merge records' (one transaction's connection
#    each) ---------------------------------------------------------------------------------

def head_of(conn: Connection, row: Any) -> DraftHead:
    """A draft head row (``_DRAFT_HEAD_COLUMNS``) with its document. A head is shared
    only while the base is (a fork that was never edited)."""
    return DraftHead(row.worktree_id, row.unit_id, row.unit_type, row.source,
                     row.base_revision, row.base_draft_revision,
                     draft_document(conn, row).doc, row.revision, row.updated_at)


def select_draft(conn: Connection, worktree_id: str, unit_id: str) -> Draft | None:
    row = conn.execute(select(*DRAFTS.c).where(*draft_is(worktree_id, unit_id))).first()
    if row is None:
        return None
    base = shared(conn, unit_id, row.base_revision, row.base_snapshot)
    if row.snapshot is not SHARED:
        head = draft_document(conn, row).doc
    elif row.revision == row.snapshot_revision:  # the base itself (the same object)
        head = base
    else:  # the base, copied (not read again), with the draft's revisions since
        head = forward_draft(conn, worktree_id, unit_id, Head(
            draft_incarnation(row), row.snapshot_revision, json_value(json_text(base)), 0),
            row.revision).doc
    return Draft(row.worktree_id, row.unit_id, row.unit_type, row.source, row.base_revision,
                 row.base_draft_revision, head, row.revision, row.updated_at, base,
                 row.created_at)
