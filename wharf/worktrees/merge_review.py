"""Reading and preparing a worktree's merge, unit by unit (specs/assets-worktrees.md
§6.2, §8.7): what merging a unit would do now (``preview``), the conflicts its last merge
recorded (``conflicts``), and a rebase of its draft onto the trunk head with explicit
resolutions (``rebase``). The merge itself is :mod:`wharf.worktrees.merging`'s.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import MergeOutcome
from storage.models import Worktree, WorktreeUnit
from storage.unitstore import UnitStore
from wharf.infra import audit
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, Forbidden, InvalidCursor, NotFound, ValidationFailed
from wharf.infra.ids import is_id
from wharf.infra.pagination import decode_cursor, encode_cursor
from wharf.infra.settings import Settings
from wharf.worktrees import access
from wharf.worktrees import merge as three_way
from wharf.worktrees.deciding import changed_paths, decide, listed_conflicts
from wharf.worktrees.drafts import Drafts
from wharf.worktrees.enums import MergeState
from wharf.worktrees.errors import DraftPurged, WorktreeStateConflict
from wharf.worktrees.merging import (
    OPEN_STATES,
    SHOWN_CONFLICTS,
    MergeConflict,
    UnitRow,
    units_of,
)
from wharf.worktrees.records import MergeRecords
from wharf.worktrees.service import scope_of


def _reviewed_unit(s: Session, ctx: RequestContext, worktree_id: str, unit_id: str,
                   action: str) -> tuple[Worktree, UnitRow]:
    """The worktree and one of its units, if the caller may ``action`` it (404 for a
    worktree or unit they cannot see; the unit's own read right for a trunk unit)."""
    view = access.find(s, ctx.principal, worktree_id)
    access.require(view, action)
    found = units_of(s, view.worktree.id, unit_id) if is_id(unit_id) else []
    if not found:
        raise NotFound("No such unit in this worktree.")
    u = found[0]
    rights = access.unit_access(s, ctx.principal, view.worktree, only=u.unit_id).get(
        u.unit_id, access.NOTHING)
    if not rights.read:
        raise NotFound("No such unit in this worktree.")
    if action != "review" and not rights.edit:
        raise Forbidden("You may not edit this unit.")
    return view.worktree, u


@dataclass(frozen=True, slots=True)
class Preview:
    outcome: str
    trunk_revision: int | None
    conflict_count: int
    conflicts: list[dict[str, Any]]
    patch_ops: int


def preview(db: Database, unitstore: UnitStore, settings: Settings, ctx: RequestContext,
            worktree_id: str, unit_id: str) -> Preview:
    """What merging the unit would do now (§8.2, nothing written): ``created`` for a unit
    new in the worktree, else ``unchanged``, ``fast_forward``, ``merged`` or
    ``conflict`` with the first 100 conflicts; ``patch_ops``: operations it would write
    to trunk."""
    with db.read() as s:
        wt, u = _reviewed_unit(s, ctx, worktree_id, unit_id, "review")
        if wt.processed_at is not None:
            raise WorktreeStateConflict(wt.state, OPEN_STATES, "a merge preview")
        wt_id = wt.id
    draft = Drafts.of(unitstore).get_draft(wt_id, u.unit_id)
    if draft is None:
        raise NotFound("No such unit in this worktree.")
    if u.pending_creation:
        return Preview(MergeOutcome.CREATED.value, None, 0, [], 0)
    trunk = unitstore.get(u.unit_id)
    if trunk is None:
        raise NotFound("No such unit in this worktree.")
    touched = changed_paths(unitstore, draft, trunk)
    d = decide(draft, trunk, settings.merge_max_conflicts, touched)
    count = d.merge.conflict_count if d.merge is not None else 0
    return Preview(d.outcome, d.trunk_revision, count, listed_conflicts(d.merge, SHOWN_CONFLICTS),
                   d.patch_ops if d.outcome != MergeOutcome.FAST_FORWARD
                   else len(three_way.diff(trunk.snapshot, draft.snapshot, touched)))


@dataclass(frozen=True, slots=True)
class ConflictPage:
    operation_id: str | None
    conflict_count: int
    items: list[dict[str, Any]]
    next_cursor: str | None


def conflicts(db: Database, unitstore: UnitStore, ctx: RequestContext, worktree_id: str,
              unit_id: str, *, limit: int, cursor: str | None) -> ConflictPage:
    """A page of the conflicts the unit's last merge recorded (in document order); 410
    ``draft_purged`` once retention deleted them with the worktree's drafts."""
    after = decode_cursor("merge_conflicts", cursor, 1)
    start = 0
    if after:
        if not after[0].isdigit() or len(after[0]) > 9:
            raise InvalidCursor("The cursor is not valid for this listing.")
        start = int(after[0])
    with db.read() as s:
        wt, u = _reviewed_unit(s, ctx, worktree_id, unit_id, "review")
        if wt.drafts_purged_at is not None:  # retention took the merge records too
            raise DraftPurged("This worktree was processed and retention deleted its "
                              "drafts and merge records.",
                              details={"drafts_purged_at": wt.drafts_purged_at.isoformat()})
        op_id = s.scalar(select(WorktreeUnit.last_merge_operation_id).where(
            WorktreeUnit.worktree_id == wt.id, WorktreeUnit.unit_id == u.unit_id))
    if op_id is None:
        return ConflictPage(None, 0, [], None)
    rec = MergeRecords.of(unitstore).merge_record(op_id, u.unit_id)
    if rec is None:
        return ConflictPage(op_id, 0, [], None)
    items = list(rec.conflicts[start:start + limit])
    end = start + len(items)
    nxt = encode_cursor("merge_conflicts", [str(end)]) if end < len(rec.conflicts) else None
    return ConflictPage(op_id, rec.conflict_count, items, nxt)


@dataclass(frozen=True, slots=True)
class Rebased:
    draft_revision: int
    base_revision: int


def rebase(db: Database, unitstore: UnitStore, settings: Settings, ctx: RequestContext,
           worktree_id: str, unit_id: str, draft_revision: int,
           resolutions: Mapping[str, three_way.Take]) -> Rebased:
    """Move the unit's draft onto the trunk head (§8.7): each conflict must have a
    resolution (409 ``merge_conflict`` otherwise, 400 ``unknown_conflict_path`` for a
    path that is not one), the draft must still be at ``draft_revision`` (409
    ``revision_conflict``); one unit-store transaction (``Drafts.rebase_draft``), then the
    unit's ``merge_state`` goes back to ``pending`` (a display field)."""
    with db.read() as s:
        wt, u = _reviewed_unit(s, ctx, worktree_id, unit_id, "edit_draft")
        wt_id, scope = wt.id, scope_of(s, wt)
    if u.pending_creation:
        raise ValidationFailed("A unit new in this worktree has no trunk to rebase onto.",
                               details={"field": "unit_id"})
    draft = Drafts.of(unitstore).get_draft(wt_id, u.unit_id)
    trunk = unitstore.get(u.unit_id)
    if draft is None or trunk is None:
        raise NotFound("No such unit in this worktree.")
    if draft.revision != draft_revision:
        raise Conflict(f"draft revision {draft_revision} is stale; the draft is at "
                       f"revision {draft.revision}", code="revision_conflict",
                       details={"current_revision": draft.revision, "scope": "draft"})
    try:
        result = three_way.rebase(draft.base_snapshot, trunk.snapshot, draft.snapshot,
                                  resolutions, max_conflicts=settings.merge_max_conflicts,
                                  touched=changed_paths(unitstore, draft, trunk))
    except three_way.UnknownConflictPaths as exc:
        raise ValidationFailed("These resolution paths are not conflicts.",
                               code="unknown_conflict_path",
                               details={"paths": exc.paths[:SHOWN_CONFLICTS]}) from None
    except three_way.UnresolvedConflicts as exc:
        raise MergeConflict(f"{exc.conflict_count} conflict(s) need a resolution.",
                            details={"conflict_count": exc.conflict_count,
                                     "conflicts": [c.to_json() for c in
                                                   exc.conflicts[:SHOWN_CONFLICTS]]}) from None
    except three_way.MergeTooDeep as exc:
        raise ValidationFailed(str(exc), code="unit_too_deep") from None
    head = Drafts.of(unitstore).rebase_draft(
        wt_id, u.unit_id, expected_draft_revision=draft_revision,
        base_revision=trunk.revision, base_snapshot=trunk.snapshot, snapshot=result.draft,
        changeset=result.patch, author_id=ctx.principal.user_id)
    with db.write() as s:
        s.execute(update(WorktreeUnit).where(
            WorktreeUnit.worktree_id == wt_id, WorktreeUnit.unit_id == u.unit_id).values(
            merge_state=MergeState.PENDING.value, conflict_count=0)
            .execution_options(synchronize_session=False))
        audit.record(s, ctx, "worktree.rebase", "worktree", wt_id, space_id=scope,
                     details={"unit_id": u.unit_id, "base_revision": trunk.revision,
                              "draft_revision": head.revision,
                              "resolved": result.resolved})
    return Rebased(draft_revision=head.revision, base_revision=head.base_revision)


__all__ = ["ConflictPage", "Preview", "Rebased", "conflicts", "preview", "rebase"]
