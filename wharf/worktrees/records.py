"""Merge records and the merge commits (spec assets-worktrees §7.4, §8.2, §11), in the
unit store's database beside trunk units and drafts (tables: :mod:`storage.unitschema`).

**Merge records**, one per (merge operation, unit), are written in the *same transaction*
as the trunk write they describe (``commit_*``) or alone (:meth:`MergeRecords.record_outcome`).
A record's conflicts are stored once per (worktree, unit) and content (schema version 3):
a record whose conflicts equal an earlier record's of the same worktree unit (a re-merge
with nothing changed) stores a reference to it (``conflicts_operation_id``), not the list
again. Records go with their worktree's drafts
(:meth:`wharf.worktrees.drafts.Drafts.delete_drafts`).

The merge itself (three-way JSON merge, patches, conflicts) is computed by
:mod:`wharf.worktrees.merge`; this module stores its results. Every ``commit_*`` method is
idempotent on (``operation_id``, ``unit_id``): when a record exists (the operation ran
before a crash, or a second worker raced it), the record is returned and nothing is
written, so a re-run never appends a trunk revision twice. Trunk writes are
compare-and-set on the trunk revision (:class:`RevisionConflict` when trunk moved:
recompute and try again), draft writes on the draft revision. A committed unit's draft is
re-based in the same transaction (base := the trunk head just written, draft := the merged
document), so a later merge of the same worktree finds it unchanged.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select

from storage.clock import utcnow
from storage.db import Database
from storage.enums import DraftRevisionKind, DraftSource, MergeOutcome
from storage.errors import RevisionConflict, StorageConflict, UnitConflict, UnitNotFound
from storage.unitpatch import UnitLimits
from storage.unitrows import (
    append_revisions,
    check_patch,
    check_snapshot,
    check_trunk_revision,
    guard,
    head_row,
    insert_ignore,
    insert_units,
    read_trunk,
    rewrite_first_checkpoint,
)
from storage.unitschema import DRAFTS, MERGE_RECORDS
from storage.unitstore import UnitStore
from wharf.worktrees.draft_rows import (
    DOCUMENT_COLUMNS,
    SHARED,
    advance_draft,
    check_draft_revision,
    draft_document,
    draft_is,
    on_trunk,
    replay,
    select_draft_revisions,
)
from wharf.worktrees.drafts import MERGE_AUTHOR, DraftNotFound


class FastForwardUnavailable(StorageConflict):
    """:meth:`commit_fast_forward` cannot replay the draft's revisions onto trunk
    (``details["reason"]``: ``no_revisions`` — no draft revision since the base was set;
    ``replay_differs`` — replaying them onto the base does not give the draft, e.g. after a
    rebase with resolutions). Nothing was written: commit the single-revision form with
    :meth:`commit_merge` (``outcome=fast_forward``) instead."""


class _RecordExists(Exception):
    """Inside a ``commit_*`` transaction: another transaction wrote this record first."""


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


def merge_origin(worktree_id: str, operation_id: str) -> dict[str, Any]:
    """The ``origin`` of a trunk revision written by a merge."""
    return {"merge": {"worktree_id": worktree_id, "operation_id": operation_id}}



class MergeRecords:
    """The merge records and merge commits in the unit store's database (``db``, the
    UnitStore's, with its ``limits``): :meth:`of` a :class:`UnitStore` is the usual way."""

    def __init__(self, db: Database, limits: UnitLimits | None = None):
        self.db = db
        self.limits = limits or UnitLimits()

    @classmethod
    def of(cls, store: UnitStore) -> MergeRecords:
        """The merge records beside ``store``'s trunk units (its database, its limits)."""
        return cls(store.db, store.limits)

    def merge_record(self, operation_id: str, unit_id: str) -> MergeRecord | None:
        """The record operation ``operation_id`` wrote for ``unit_id``, or None."""
        def run() -> MergeRecord | None:
            with self.db.read() as s:
                return _select_record(s.connection(), operation_id, unit_id)
        return guard(run)

    def merge_records(self, operation_id: str) -> list[MergeRecord]:
        """Every record of the operation, by unit id."""
        def run() -> list[MergeRecord]:
            with self.db.read() as s:
                rows = s.connection().execute(select(*MERGE_RECORDS.c).where(
                    MERGE_RECORDS.c.operation_id == operation_id)
                    .order_by(MERGE_RECORDS.c.unit_id))
                return [_record(r, _stored_conflicts(s.connection(), r)) for r in rows.all()]
        return guard(run)

    def has_merge_records(self, operation_id: str) -> bool:
        """Whether the operation wrote any record (it has started writing)."""
        def run() -> bool:
            with self.db.read() as s:
                return s.connection().execute(select(MERGE_RECORDS.c.unit_id).where(
                    MERGE_RECORDS.c.operation_id == operation_id).limit(1)).first() is not None
        return guard(run)

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
            return guard(run)
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
        row = conn.execute(insert_ignore(self.db, MERGE_RECORDS).returning(*MERGE_RECORDS.c),
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
            trunk = read_trunk(conn, unit_id)
            if trunk is None:
                raise UnitNotFound("No such unit.")
            check_trunk_revision(trunk.revision, expected_trunk_revision)
            draft = conn.execute(select(*DOCUMENT_COLUMNS, DRAFTS.c.base_draft_revision)
                                 .where(*draft_is(worktree_id, unit_id))).first()
            if draft is None:
                raise DraftNotFound("No such draft.")
            check_draft_revision(draft.revision, expected_draft_revision)
            head = draft_document(conn, draft).doc
            if draft.base_revision != trunk.revision:
                raise RevisionConflict(
                    f"the draft's base is revision {draft.base_revision}; trunk moved to "
                    f"{trunk.revision}: not a fast-forward",
                    details={"current_revision": trunk.revision, "scope": "trunk"})
            revisions = select_draft_revisions(conn, worktree_id, unit_id,
                                                draft.base_draft_revision)
            if not revisions:
                raise FastForwardUnavailable("the draft has no revisions",
                                             details={"reason": "no_revisions"})
            # trunk's document is this transaction's own copy: replay in place
            if replay(trunk.snapshot, revisions) != head:
                raise FastForwardUnavailable("replaying the draft's revisions does not give "
                                             "the draft", details={"reason": "replay_differs"})
            after = append_revisions(conn, unit_id, trunk.revision, head,
                            [(r.changeset, r.author_id) for r in revisions],
                            merge_origin(worktree_id, operation_id), int(draft.snapshot_bytes))
            advance_draft(conn, worktree_id, unit_id, draft.revision, [],
                           on_trunk(after, int(draft.snapshot_bytes)),
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
        check_patch(changeset)
        if draft_changeset:
            check_patch(draft_changeset)

        def work(conn: Connection) -> MergeRecord:
            head = head_row(conn, unit_id)
            if head is None:
                raise UnitNotFound("No such unit.")
            trunk = head.revision
            check_trunk_revision(trunk, expected_trunk_revision)
            draft = conn.scalar(select(DRAFTS.c.revision).where(
                *draft_is(worktree_id, unit_id)))
            if draft is None:
                raise DraftNotFound("No such draft.")
            check_draft_revision(draft, expected_draft_revision)
            size = check_snapshot(snapshot, self.limits, lambda: head.size)
            after = append_revisions(conn, unit_id, trunk, snapshot, [(changeset, author_id)],
                            merge_origin(worktree_id, operation_id), size)
            advance_draft(conn, worktree_id, unit_id, draft,
                           [(draft_changeset, MERGE_AUTHOR, DraftRevisionKind.MERGE_SYNC)]
                           if draft_changeset else [], on_trunk(after, size), utcnow(),
                           rebased=True)
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
            draft = conn.execute(select(*DOCUMENT_COLUMNS, DRAFTS.c.unit_type,
                                        DRAFTS.c.source, DRAFTS.c.base_snapshot,
                                        DRAFTS.c.base_draft_revision)
                                 .where(*draft_is(worktree_id, unit_id))).first()
            if draft is None:
                raise DraftNotFound("No such draft.")
            if draft.source != DraftSource.WORKTREE:
                raise UnitConflict(f"unit {unit_id} is not a local unit of this worktree")
            check_draft_revision(draft.revision, expected_draft_revision)
            snapshot = draft_document(conn, draft).doc
            trunk = read_trunk(conn, unit_id)
            if trunk is not None:
                if trunk.unit_type != draft.unit_type:
                    raise UnitConflict(f"unit {unit_id} exists with type {trunk.unit_type}")
                before: int | None = trunk.revision
                after, head = trunk.revision, trunk.snapshot
                if catch_up and trunk.snapshot != snapshot:
                    after = append_revisions(conn, unit_id, trunk.revision, snapshot,
                                    [(catch_up, MERGE_AUTHOR)],
                                    merge_origin(worktree_id, operation_id))
                    head = snapshot
            else:
                before, head = None, snapshot
                after = self._create_from_draft(conn, worktree_id, operation_id, unit_id,
                                                draft.unit_type, draft.base_snapshot,
                                                snapshot, draft.base_draft_revision)
            values = {"base_snapshot": head, "base_revision": after}
            if draft.snapshot is SHARED:  # (a local draft never is) it would move too
                values["snapshot"] = snapshot
            advance_draft(conn, worktree_id, unit_id, draft.revision, [], values, utcnow(),
                          rebased=True)
            return self._insert_record(conn, operation_id, worktree_id, unit_id,
                                       MergeOutcome.CREATED, before, after)
        return self._commit(operation_id, unit_id, work)

    def _create_from_draft(self, conn: Connection, worktree_id: str, operation_id: str,
                           unit_id: str, unit_type: str, base: dict[str, Any],
                           snapshot: dict[str, Any], base_draft_revision: int) -> int:
        """Insert the trunk unit of a local draft (see :meth:`commit_created`); returns its
        revision. A unit inserted concurrently is a :class:`RevisionConflict`."""
        revisions = select_draft_revisions(conn, worktree_id, unit_id, base_draft_revision)
        if not insert_units(conn, self.db, [(unit_id, unit_type,
                                             base if revisions else snapshot)]):
            raise RevisionConflict("the unit was created concurrently",
                                   details={"scope": "trunk"})
        if not revisions:
            return 0
        # ``base`` was written above; replaying changes it in place from here on
        if replay(base, revisions) == snapshot:
            return append_revisions(conn, unit_id, 0, snapshot,
                           [(r.changeset, r.author_id) for r in revisions],
                           merge_origin(worktree_id, operation_id))
        rewrite_first_checkpoint(conn, unit_id, snapshot)
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
                check_patch(sync_changeset)

        def work(conn: Connection) -> MergeRecord:
            if sync_changeset is not None and expected_draft_revision is not None:
                trunk = head_row(conn, unit_id)  # (its document is not needed)
                if trunk is None:
                    raise UnitNotFound("No such unit.")
                check_trunk_revision(trunk.revision, trunk_revision)
                draft = conn.scalar(select(DRAFTS.c.revision).where(
                    *draft_is(worktree_id, unit_id)))
                if draft is None:
                    raise DraftNotFound("No such draft.")
                check_draft_revision(draft, expected_draft_revision)
                advance_draft(conn, worktree_id, unit_id, draft,
                               [(sync_changeset, MERGE_AUTHOR, DraftRevisionKind.MERGE_SYNC)]
                               if sync_changeset else [], on_trunk(trunk.revision, trunk.size),
                               utcnow(), rebased=True)
            return self._insert_record(conn, operation_id, worktree_id, unit_id, outcome,
                                       trunk_revision, trunk_revision, conflicts,
                                       conflict_count)
        return self._commit(operation_id, unit_id, work)


# -- helpers of the statements above (one transaction's connection each) ------------------

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
