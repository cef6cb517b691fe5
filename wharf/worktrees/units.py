"""Units inside a worktree (specs/assets-worktrees.md §6.2, §7.2, §7.3): adding a trunk
unit (operation ``add_worktree_unit``: its draft forked from the trunk head), creating a
unit new in the worktree (operation ``create_worktree_unit``: a local draft and a node
intent), and reading a unit and its draft. Changing them (draft changesets, renaming or
re-targeting a local unit, removing a unit) is :mod:`wharf.worktrees.unit_changes`'.

Every request finds the worktree first (404 when the caller cannot discover it), then the
unit in it (404), then the caller's right on the worktree (403), its state (409), then the
unit's own permission (§5: 404 for a trunk unit the caller cannot discover any more,
403 for one they may read but not edit).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import Role
from storage.errors import StorageError
from storage.models import Node, Resource, UnitResource, Worktree, WorktreeNodeIntent, WorktreeUnit
from storage.unitpatch import check_document
from storage.unitstore import UNIT_TYPES, UnitStore, initial_snapshot
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import (
    Conflict,
    Forbidden,
    NotFound,
    ProblemCode,
    ValidationFailed,
    from_storage,
)
from wharf.infra.ids import is_id, new_id
from wharf.infra.settings import Settings
from wharf.infra.validation import clean_name, one_of
from wharf.operations.service import Operations, Submission
from wharf.spaces.access import require_node
from wharf.spaces.nodes import resolve_parent
from wharf.units.service import unit_limits
from wharf.worktrees import access
from wharf.worktrees.access import UnitRights, WorktreeView
from wharf.worktrees.drafts import Drafts
from wharf.worktrees.enums import MergeState, WorktreeKind, WorktreeUnitSource
from wharf.worktrees.errors import DraftPurged
from wharf.worktrees.kinds import (
    ADD_WORKTREE_UNIT,
    CREATE_WORKTREE_UNIT,
    AddWorktreeUnitPayload,
    CreateWorktreeUnitPayload,
)
from wharf.worktrees.limits import check_draft_quota
from wharf.worktrees.merge import same
from wharf.worktrees.service import scope_of

# --- problems ---------------------------------------------------------------------------

class UnitAlreadyAdded(Conflict):
    code = "unit_already_added"
    title = "Unit already added"


class WorktreeUnitLimit(Conflict):
    code = "worktree_unit_limit"
    title = "Worktree unit limit"


def _not_a_unit() -> ValidationFailed:
    return ValidationFailed("Only unit resources go into worktrees (this is a blob).",
                            code=ProblemCode.NOT_A_UNIT, details={"field": "resource_id"})


def _outside_team_space(field: str) -> ValidationFailed:
    return ValidationFailed("A team worktree holds only units of its team space.",
                            code=ProblemCode.OUTSIDE_TEAM_SPACE, details={"field": field})


# --- shared checks ----------------------------------------------------------------------

def check_limit(s: Session, wt: Worktree, settings: Settings) -> None:
    """409 ``worktree_unit_limit`` when the worktree holds its most units already."""
    n = s.scalar(select(func.count()).select_from(WorktreeUnit)
                 .where(WorktreeUnit.worktree_id == wt.id)) or 0
    if n >= settings.worktree_max_units:
        raise WorktreeUnitLimit(
            f"A worktree holds at most {settings.worktree_max_units} units.",
            details={"max_units": settings.worktree_max_units})


def check_not_added(s: Session, wt: Worktree, resource_id: str) -> None:
    found = s.scalar(select(WorktreeUnit.unit_id).where(
        WorktreeUnit.worktree_id == wt.id, WorktreeUnit.resource_id == resource_id))
    if found is not None:
        raise UnitAlreadyAdded("This unit is in the worktree already.",
                               details={"unit_id": found})


def trunk_unit(s: Session, principal: Principal, wt: Worktree,
               resource_id: object) -> tuple[Resource, UnitResource, Node]:
    """The trunk unit resource ``principal`` may add to ``wt``: 404 unknown, trashed or
    undiscoverable; 400 ``not_a_unit`` for a blob; 403 below editor; 400
    ``outside_team_space`` for a team worktree and a unit of another space."""
    res = s.get(Resource, resource_id) if is_id(resource_id) else None
    if res is None:
        raise NotFound("No such resource.")
    try:
        node, _ = require_node(s, principal, res.node_id, Role.VIEWER)
    except NotFound:
        raise NotFound("No such resource.") from None
    unit = s.get(UnitResource, res.id)
    if unit is None:
        raise _not_a_unit()
    require_node(s, principal, res.node_id, Role.EDITOR)
    if wt.kind == WorktreeKind.TEAM and node.space_id != wt.team_space_id:
        raise _outside_team_space("resource_id")
    return res, unit, node


def local_target(s: Session, principal: Principal, wt: Worktree, space_id: object,
                 parent_id: object) -> tuple[str, str | None]:
    """Where a local unit's node may be created by ``principal``: ``resolve_parent``'s
    answers, and 400 ``outside_team_space`` for a team worktree and another space."""
    space, parent = resolve_parent(s, RequestContext(principal=principal), space_id,
                                   parent_id)
    if wt.kind == WorktreeKind.TEAM and space.id != wt.team_space_id:
        raise _outside_team_space("target")
    return space.id, parent.id if parent is not None else None


def next_ordinal(s: Session, wt_id: str) -> int:
    top = s.scalar(select(func.max(WorktreeUnit.ordinal))
                   .where(WorktreeUnit.worktree_id == wt_id))
    return 0 if top is None else top + 1


# --- add (trunk) / create (local): submission ---------------------------------------------

def submit_add_unit(ops: Operations, store: UnitStore, settings: Settings,
                    ctx: RequestContext, key: str | None, worktree_id: str,
                    body: dict[str, Any]) -> Submission:
    """``POST /api/worktrees/{id}/units``: ``source`` ``trunk`` (operation
    ``add_worktree_unit``) or ``worktree`` (``create_worktree_unit``). Either stores a
    draft of two documents (its base and its head): refused with 409
    ``draft_quota_exceeded`` when they would take the creator's drafts past their quota."""
    source = one_of(body.get("source"), "source",
                    (WorktreeUnitSource.TRUNK.value, WorktreeUnitSource.WORKTREE.value))
    fields = {k for k, v in body.items() if v is not None} - {"source"}
    if source == WorktreeUnitSource.TRUNK:
        extra = fields - {"resource_id"}
        if extra:
            raise ValidationFailed(f"A trunk unit takes only resource_id (not "
                                   f"{', '.join(sorted(extra))}).",
                                   details={"field": sorted(extra)[0]})
        return _submit_trunk(ops, store, settings, ctx, key, worktree_id,
                             body.get("resource_id"))
    if "resource_id" in fields:
        raise ValidationFailed("A unit new in the worktree takes no resource_id.",
                               details={"field": "resource_id"})
    return _submit_local(ops, store, settings, ctx, key, worktree_id, body)


def _submit_trunk(ops: Operations, store: UnitStore, settings: Settings,
                  ctx: RequestContext, key: str | None, worktree_id: str,
                  resource_id: object) -> Submission:
    if resource_id is None:
        raise ValidationFailed("resource_id is required", details={"field": "resource_id"})
    request = {"worktree_id": worktree_id, "source": "trunk", "resource_id": resource_id}

    def prepare(s: Session, op_id: str) -> tuple[str | None, AddWorktreeUnitPayload]:
        view = access.find(s, ctx.principal, worktree_id, lock=True)
        access.require(view, "add_unit")
        wt = view.worktree
        res, unit, _ = trunk_unit(s, ctx.principal, wt, resource_id)
        check_not_added(s, wt, res.id)
        check_limit(s, wt, settings)
        # the stored size, read by the unit store without loading the document (not a
        # 16 MiB read and re-serialisation inside this write transaction)
        check_draft_quota(s, store, settings, wt.creator_id,
                          2 * (store.stored_size(unit.unit_id) or 0))
        return scope_of(s, wt), AddWorktreeUnitPayload(
            worktree_id=wt.id, resource_id=res.id, unit_id=unit.unit_id,
            unit_type=unit.unit_type)

    return ops.submit(ctx, ADD_WORKTREE_UNIT, key, request, prepare)


def _submit_local(ops: Operations, store: UnitStore, settings: Settings,
                  ctx: RequestContext, key: str | None, worktree_id: str,
                  body: dict[str, Any]) -> Submission:
    target = body.get("target")
    snapshot = body.get("initial_snapshot")
    request = {"worktree_id": worktree_id, "source": "worktree", "name": body.get("name"),
               "unit_type": body.get("unit_type"), "target": target,
               "initial_snapshot": snapshot}

    def measure(document: dict[str, Any]) -> int:
        try:  # the unit store checks it again when it stores it
            return check_document(document, unit_limits(settings), field="initial_snapshot")
        except StorageError as exc:
            raise from_storage(exc) from None

    if snapshot is not None and not isinstance(snapshot, dict):
        raise ValidationFailed("initial_snapshot must be a JSON object",
                               details={"field": "initial_snapshot"})
    # a client's document (up to the body limit) is measured before the write transaction
    # opens: on SQLite that transaction holds the database's one write lock
    given = measure(snapshot) if snapshot is not None else None

    def prepare(s: Session, op_id: str) -> tuple[str | None, CreateWorktreeUnitPayload]:
        view = access.find(s, ctx.principal, worktree_id, lock=True)
        access.require(view, "add_unit")
        wt = view.worktree
        name = clean_name(request["name"], "name")
        unit_type = one_of(request["unit_type"], "unit_type", UNIT_TYPES)
        if not isinstance(target, dict):
            raise ValidationFailed("target {space_id, parent_id} is required",
                                   details={"field": "target"})
        size = given if given is not None else measure(initial_snapshot(unit_type))
        space_id, parent_id = local_target(s, ctx.principal, wt, target.get("space_id"),
                                           target.get("parent_id"))
        check_limit(s, wt, settings)
        check_draft_quota(s, store, settings, wt.creator_id, 2 * size)
        return scope_of(s, wt), CreateWorktreeUnitPayload(
            worktree_id=wt.id, unit_id=new_id(), resource_id=new_id(), node_id=new_id(),
            unit_type=unit_type, name=name, space_id=space_id, parent_id=parent_id,
            initial_snapshot=snapshot)

    return ops.submit(ctx, CREATE_WORKTREE_UNIT, key, request, prepare)


# --- reading ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class UnitView:
    """A worktree unit as the API shows it (§6.1 "Unit JSON")."""

    unit_id: str
    resource_id: str
    node_id: str
    source: str
    unit_type: str
    name: str
    target: dict[str, str | None] | None
    base_revision: int
    draft_revision: int
    change: str
    trunk_revision: int | None
    trunk_moved: bool
    merge_state: str
    conflict_count: int
    activation: str

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__slots__}


def _activation(unit: WorktreeUnit, intent: WorktreeNodeIntent | None) -> str:
    if intent is None:
        return "not_applicable"
    if intent.activated_at is not None:
        return "activated"
    if intent.discarded_at is not None:
        return "discarded"
    if unit.merge_state == MergeState.ACTIVATION_BLOCKED:
        return "blocked"
    return "waiting"


def unit_rows(s: Session, wt_id: str, unit_id: str | None = None) -> list[Any]:
    q = (select(WorktreeUnit, WorktreeNodeIntent, Node.id, Node.name)
         .outerjoin(WorktreeNodeIntent, (WorktreeNodeIntent.worktree_id == WorktreeUnit.worktree_id)
                    & (WorktreeNodeIntent.unit_id == WorktreeUnit.unit_id))
         .outerjoin(Resource, Resource.id == WorktreeUnit.resource_id)
         .outerjoin(Node, Node.id == Resource.node_id)
         .where(WorktreeUnit.worktree_id == wt_id))
    if unit_id is not None:
        q = q.where(WorktreeUnit.unit_id == unit_id)
    return list(s.execute(q.order_by(WorktreeUnit.ordinal)).all())


def unit_views(store: UnitStore, wt_id: str, rows: list[Any]) -> list[UnitView]:
    ids = [r[0].unit_id for r in rows]
    drafts = Drafts.of(store).draft_states(wt_id, ids, same)
    trunk = Drafts.of(store).trunk_revisions([r[0].unit_id for r in rows
                                   if r[0].source == WorktreeUnitSource.TRUNK])
    out = []
    for unit, intent, node_id, node_name in rows:
        d = drafts.get(unit.unit_id)
        local = unit.source == WorktreeUnitSource.WORKTREE
        base = d.base_revision if d is not None else 0
        head = trunk.get(unit.unit_id)
        out.append(UnitView(
            unit_id=unit.unit_id, resource_id=unit.resource_id,
            node_id=intent.node_id if intent is not None else (node_id or ""),
            source=unit.source, unit_type=unit.unit_type,
            name=intent.name if intent is not None else (node_name or ""),
            target=({"space_id": intent.target_space_id,
                     "parent_id": intent.target_parent_id} if intent is not None else None),
            base_revision=base, draft_revision=d.revision if d is not None else 0,
            change="added" if local else (
                "modified" if d is not None and d.changed else "unchanged"),
            trunk_revision=None if local else head,
            trunk_moved=(not local and head is not None and head != base),
            merge_state=unit.merge_state, conflict_count=unit.conflict_count,
            activation=_activation(unit, intent)))
    return out


def list_units(s: Session, store: UnitStore, view: WorktreeView) -> list[UnitView]:
    """The units of a worktree the caller may review (none without the worktree's
    *review* right; of the others, those whose own permission lets them read)."""
    if not view.rights["review"]:
        return []
    readable = view.unit_access
    rows = [r for r in unit_rows(s, view.worktree.id)
            if readable.get(r[0].unit_id, UnitRights(False, False)).read]
    return unit_views(store, view.worktree.id, rows)


def unit_row(s: Session, view: WorktreeView, unit_id: str) -> tuple[Any, UnitRights]:
    """The worktree's unit and the caller's own rights on it (404 when it is not in the
    worktree, the caller may not review the worktree's units, or may not read it)."""
    rows = unit_rows(s, view.worktree.id, unit_id) if is_id(unit_id) else []
    if not rows or not view.rights["review"]:
        raise NotFound("No such unit in this worktree.")
    rights = access.unit_access(s, view.principal, view.worktree, only=unit_id).get(
        unit_id, UnitRights(False, False))
    if not rights.read:
        raise NotFound("No such unit in this worktree.")
    return rows[0], rights


def get_unit(db: Database, store: UnitStore, ctx: RequestContext, worktree_id: str,
             unit_id: str) -> tuple[UnitView, dict[str, Any]]:
    """A worktree unit and its draft head's document."""
    with db.read() as s:
        view = access.find(s, ctx.principal, worktree_id)
        row, _ = unit_row(s, view, unit_id)
        not_purged(view.worktree)
        unit_view = unit_views(store, view.worktree.id, [row])[0]
    draft = Drafts.of(store).get_draft_head(worktree_id, unit_id)
    if draft is None:
        raise NotFound("This unit's draft is gone.")
    return unit_view, draft.snapshot


def not_purged(wt: Worktree) -> None:
    """410 ``draft_purged`` once retention deleted the worktree's drafts (§12)."""
    if wt.drafts_purged_at is not None:
        raise DraftPurged("This worktree was processed and its drafts were deleted by "
                          "retention.",
                          details={"drafts_purged_at": wt.drafts_purged_at.isoformat()})


def may_change(view: WorktreeView, rights: UnitRights, action: str) -> None:
    """The worktree's right (403), state (409), then the unit's own edit right (403)."""
    if not view.rights[action]:
        raise Forbidden(f"You may not {action.replace('_', ' ')} this worktree.")
    access.check_state(view.worktree, action)
    if not rights.edit:
        raise Forbidden("You may not edit this unit.")
