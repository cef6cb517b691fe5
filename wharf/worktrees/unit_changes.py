"""Changing the units of a worktree, synchronously (specs/assets-worktrees.md §6.2, §7.3):
a draft changeset, renaming or re-targeting a local unit, and removing a unit (its assets
and uploads with it, then its draft). Adding and reading units is
:mod:`wharf.worktrees.units`'; the checks come in the same order (worktree 404, unit 404,
the worktree right 403, its state 409, the unit's own edit right 403).
"""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from storage.db import Database
from storage.errors import UnitStoreUnavailable
from storage.models import Worktree, WorktreeNodeIntent, WorktreeUnit
from storage.unitstore import Applied, UnitStore
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import (
    Conflict,
    Forbidden,
    NotFound,
    ProblemCode,
    ValidationFailed,
)
from wharf.infra.ids import is_id
from wharf.infra.settings import Settings
from wharf.infra.validation import clean_name
from wharf.protection.enforce import Bound, bound_in, check_changes
from wharf.protection.records import standing_on_unit
from wharf.worktrees import access
from wharf.worktrees.drafts import Drafts
from wharf.worktrees.enums import MergeState, WorktreeUnitSource
from wharf.worktrees.limits import draft_room
from wharf.worktrees.reactions import dropped
from wharf.worktrees.service import scope_of
from wharf.worktrees.units import (
    UnitView,
    local_target,
    may_change,
    not_purged,
    unit_row,
    unit_rows,
    unit_views,
)

#: ``object_deletion_jobs.reason`` of the assets of a unit removed from its worktree.
UNIT_REMOVED = "worktree_unit_removed"


def _changed(s: Session, wt: Worktree, unit: WorktreeUnit) -> None:
    now = utcnow()
    unit.merge_state = MergeState.PENDING.value
    unit.conflict_count = 0
    wt.updated_at = now
    s.flush()


def apply_changeset(db: Database, store: UnitStore, settings: Settings, ctx: RequestContext,
                    worktree_id: str, unit_id: str, base_revision: int,
                    changes: list[Any], *, with_document: bool = False) -> Applied:
    """A draft changeset (same contract as trunk: compare-and-set on the draft
    revision). Only in ``draft``; the unit's merge state goes back to ``pending``. A
    changeset that would grow the draft past its creator's draft quota is refused (409
    ``draft_quota_exceeded``, nothing written), and so is one touching a range protected
    in the draft's base the caller may not edit by the trunk unit's current ACL (403
    ``protected_range``, ``wharf.protection``).

    The worktree row stays locked while the unit store applies it, so marking the
    worktree ready (or merging it) cannot slip in between the state check and the
    write."""
    with db.write() as s:
        view = access.find(s, ctx.principal, worktree_id, lock=True)
        row, rights = unit_row(s, view, unit_id)
        not_purged(view.worktree)
        may_change(view, rights, "edit_draft")
        if row[0].merge_state == MergeState.ACTIVATION_BLOCKED:
            # Its trunk unit exists (without a node) with the draft's content: the draft
            # is read-only until it is activated (or its target changed), so the two
            # cannot drift apart (spec §7.4).
            raise Conflict("This unit's activation is blocked: activate it (POST …/activate) "
                           "or change its target before editing it.",
                           code=ProblemCode.ACTIVATION_BLOCKED)
        drafts = Drafts.of(store)

        def bindings(objects: list[Any]) -> Bound | None:
            # The draft's document: the bindings of its base (a rebase: of trunk then).
            d = drafts.get_draft(worktree_id, unit_id)
            return None if d is None or d.revision != base_revision \
                else bound_in(d.snapshot, objects)

        check_changes(s, lambda: standing_on_unit(s, ctx.principal, unit_id), unit_id,
                      changes, bindings)
        head = drafts.apply_draft_changeset(
            worktree_id, unit_id, base_revision, changes, ctx.principal.user_id,
            max_growth=draft_room(s, store, settings, view.worktree.creator_id),
            with_document=with_document)
        _changed(s, view.worktree, row[0])
        audit.record(s, ctx, "worktree.changeset", "worktree", worktree_id,
                     space_id=scope_of(s, view.worktree),
                     details={"unit_id": unit_id, "revision": head.revision,
                              "ops": len(changes)})
    return head


def update_unit(db: Database, store: UnitStore, ctx: RequestContext, worktree_id: str,
                unit_id: str, changes: dict[str, Any]) -> UnitView:
    """Rename a local unit or move its target (``name``, ``target``): the right to create
    in the new target; only in ``draft``; merge state back to ``pending``."""
    if not changes:
        raise ValidationFailed("nothing to change: send name and/or target")
    with db.write() as s:
        view = access.find(s, ctx.principal, worktree_id, lock=True)
        row, rights = unit_row(s, view, unit_id)
        unit, intent = row[0], row[1]
        if unit.source != WorktreeUnitSource.WORKTREE or intent is None:
            raise ValidationFailed("Only units new in the worktree have a name and target "
                                   "of their own.", code=ProblemCode.NOT_LOCAL_UNIT)
        if not view.rights["edit_draft"]:
            raise Forbidden("You may not edit this worktree.")
        access.check_state(view.worktree, "edit_draft")
        if intent.activated_at is not None or intent.discarded_at is not None:
            raise Conflict("This unit's node exists already (or was discarded).")
        done: dict[str, Any] = {}
        name = clean_name(changes["name"], "name") if "name" in changes else intent.name
        if "target" in changes:
            target = changes["target"]
            if not isinstance(target, dict):
                raise ValidationFailed("target must be {space_id, parent_id}",
                                       details={"field": "target"})
            space_id, parent_id = local_target(s, ctx.principal, view.worktree,
                                               target.get("space_id"),
                                               target.get("parent_id"))
        else:
            if not rights.edit:
                raise Forbidden("You may not create in this unit's target.")
            space_id, parent_id = intent.target_space_id, intent.target_parent_id
        if name != intent.name:
            intent.name = name
            done["name"] = name
        if (space_id, parent_id) != (intent.target_space_id, intent.target_parent_id):
            intent.target_space_id, intent.target_parent_id = space_id, parent_id
            done["target"] = {"space_id": space_id, "parent_id": parent_id}
        if done:
            intent.updated_at = utcnow()
            _changed(s, view.worktree, unit)
            audit.record(s, ctx, "worktree.unit_update", "worktree", worktree_id,
                         space_id=scope_of(s, view.worktree),
                         details={"unit_id": unit_id, **done})
        out = unit_views(store, worktree_id, unit_rows(s, worktree_id, unit_id))[0]
    return out


def remove_unit(db: Database, store: UnitStore, settings: Settings, ctx: RequestContext,
                worktree_id: str, unit_id: str) -> None:
    """Take a unit out of a draft worktree: its worktree assets' objects queued for
    deletion and their rows deleted, its uploads still waiting cancelled, its node intent
    and its row deleted, in one transaction; then its draft is deleted from the unit
    store (when that fails, the draft is an orphan the ``sweep_worktree_drafts`` sweep
    deletes). Needs the worktree's *edit draft* right, not the unit's own: a unit whose
    node was trashed or whose rights were lost can still be taken out."""
    with db.write() as s:
        view = access.find(s, ctx.principal, worktree_id, lock=True)
        rows = unit_rows(s, worktree_id, unit_id) if is_id(unit_id) else []
        if not rows or not view.rights["review"]:
            raise NotFound("No such unit in this worktree.")
        if not view.rights["edit_draft"]:
            raise Forbidden("You may not edit this worktree.")
        access.check_state(view.worktree, "edit_draft")
        unit = rows[0][0]
        now = utcnow()
        assets, _cancelled = dropped(
            s, worktree_id, unit_id=unit_id, reason=UNIT_REMOVED, code=ProblemCode.NOT_FOUND,
            message="the unit was removed from the worktree", now=now,
            idempotency_key_ttl=settings.idempotency_key_ttl)
        s.execute(WorktreeNodeIntent.__table__.delete().where(
            WorktreeNodeIntent.worktree_id == worktree_id,
            WorktreeNodeIntent.unit_id == unit_id))
        s.execute(WorktreeUnit.__table__.delete().where(
            WorktreeUnit.worktree_id == worktree_id, WorktreeUnit.unit_id == unit_id))
        view.worktree.updated_at = now
        s.flush()
        audit.record(s, ctx, "worktree.unit_remove", "worktree", worktree_id,
                     space_id=scope_of(s, view.worktree),
                     details={"unit_id": unit_id, "resource_id": unit.resource_id,
                              "source": unit.source, "assets_deleted": assets})
    try:
        Drafts.of(store).delete_draft(worktree_id, unit_id)
    except UnitStoreUnavailable:
        pass  # an orphan draft now: the sweep deletes it
