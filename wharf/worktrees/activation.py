"""Re-driving a blocked activation (specs/assets-worktrees.md §7.6): the operation
``activate_worktree_resource``.

A merge that created a unit new in the worktree creates its node in the same completion
transaction, unless the target folder went away meanwhile: the unit is then in trunk with
no node (``merge_state = activation_blocked``). This operation creates that node — at the
stored target, or at a new one given with the request — with the very code the merge
uses (:func:`wharf.worktrees.merging.activate_intent`), publishes the unit's worktree
assets, and makes the worktree ``merged`` when that was its last unmerged unit."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.models import Operation, Worktree, WorktreeNodeIntent, WorktreeUnit
from storage.unitstore import UnitStore
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Conflict, Forbidden, NotFound
from wharf.infra.ids import is_id
from wharf.operations.kinds import payload
from wharf.operations.service import Operations, Submission
from wharf.worktrees import access
from wharf.worktrees.enums import MergeState, WorktreeState, WorktreeUnitSource
from wharf.worktrees.errors import WorktreeBusy, WorktreeStateConflict
from wharf.worktrees.kinds import (
    ACTIVATE_WORKTREE_RESOURCE,
    ActivateWorktreeResourcePayload,
    ActivateWorktreeResourceResult,
)
from wharf.worktrees.merging import (
    DONE,
    UnitUnavailable,
    activate_intent,
    publish_assets,
)
from wharf.worktrees.service import scope_of
from wharf.worktrees.units import local_target

#: The worktree states that accept an activation (a blocked unit leaves it ``draft``;
#: its author may have marked it ready again since).
STATES = (WorktreeState.DRAFT.value, WorktreeState.READY.value)


class NotBlocked(Conflict):
    """The unit's activation is not blocked (``details.merge_state``): nothing to do."""

    code = "not_blocked"
    title = "Activation not blocked"

    def __init__(self, merge_state: str) -> None:
        super().__init__("Only a unit whose activation was blocked at merge can be "
                         "activated.", details={"merge_state": merge_state})


def _blocked(s: Session, wt_id: str, unit_id: str, *,
             lock: bool = False) -> tuple[WorktreeUnit, WorktreeNodeIntent]:
    unit = s.get(WorktreeUnit, (wt_id, unit_id), with_for_update=lock) \
        if is_id(unit_id) else None
    if unit is None:
        raise NotFound("No such unit in this worktree.")
    intent = s.get(WorktreeNodeIntent, (wt_id, unit_id), with_for_update=lock)
    if unit.source != WorktreeUnitSource.WORKTREE or intent is None or \
            intent.activated_at is not None or \
            unit.merge_state != MergeState.ACTIVATION_BLOCKED:
        raise NotBlocked(unit.merge_state)
    return unit, intent


def _check_state(wt: Worktree) -> None:
    if wt.state in STATES and wt.busy_operation_id is None:
        return
    if wt.state in access.BUSY_STATES:
        raise WorktreeBusy(wt.state, wt.busy_operation_id)
    raise WorktreeStateConflict(wt.state, STATES, "an activation")


def submit_activate(ops: Operations, ctx: RequestContext, key: str | None, worktree_id: str,
                    unit_id: str, target: dict[str, Any] | None) -> Submission:
    """Check the *merge* right and that the unit's activation is blocked (409
    ``not_blocked`` otherwise); a new ``target`` is validated like a local unit's (the
    right to create there) and stored in the intent now, in the submission transaction.
    Without one, the stored target must hold again (409 ``unit_unavailable``)."""
    request = {"worktree_id": worktree_id, "unit_id": unit_id, "target": target}

    def prepare(s: Session, op_id: str) -> tuple[str | None, ActivateWorktreeResourcePayload]:
        view = access.find(s, ctx.principal, worktree_id, lock=True)
        if not view.rights["merge"]:
            raise Forbidden("You may not merge this worktree.")
        wt = view.worktree
        _check_state(wt)
        unit, intent = _blocked(s, wt.id, unit_id, lock=True)
        now = utcnow()
        if target is not None:
            space_id, parent_id = local_target(s, ctx.principal, wt, target.get("space_id"),
                                               target.get("parent_id"))
            intent.target_space_id, intent.target_parent_id = space_id, parent_id
            intent.updated_at = now
        else:
            try:
                local_target(s, ctx.principal, wt, intent.target_space_id,
                             intent.target_parent_id)
            except NotFound:
                raise UnitUnavailable([unit.unit_id]) from None
        s.flush()
        scope = scope_of(s, wt)
        audit.record(s, ctx, "worktree.unit_activate_submit", "worktree", wt.id,
                     space_id=scope, details={"operation_id": op_id,
                                              "unit_id": unit.unit_id,
                                              "target": {"space_id": intent.target_space_id,
                                                         "parent_id": intent.target_parent_id}})
        return scope, ActivateWorktreeResourcePayload(
            worktree_id=wt.id, unit_id=unit.unit_id, node_id=intent.node_id,
            resource_id=unit.resource_id)

    return ops.submit(ctx, ACTIVATE_WORKTREE_RESOURCE, key, request, prepare)


class ActivateWorktreeResource:
    """``activate_worktree_resource`` (§7.6)."""

    kind = ACTIVATE_WORKTREE_RESOURCE

    def __init__(self, db: Database, unitstore: UnitStore):
        self.db = db
        self.unitstore = unitstore

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        """Every right the submission checked: the *merge* right on the worktree and the
        right to create in the (stored) target folder."""
        p = payload(op, ActivateWorktreeResourcePayload)
        wt = session.get(Worktree, p.worktree_id)
        if wt is None:
            raise NotFound("No such worktree.")
        rel = access.relation_to(session, actor, wt)
        if not access.discoverable(wt.kind, wt.visibility, rel):
            raise NotFound("No such worktree.")
        if not access.rights(wt.kind, wt.visibility, rel)["merge"]:
            raise Forbidden("You may no longer merge this worktree.")
        # The submission also checked the right to create in the target folder: a member
        # removed from (or demoted in) the target's space since then creates nothing.
        intent = session.get(WorktreeNodeIntent, (wt.id, p.unit_id))
        if intent is None or intent.activated_at is not None:
            return  # the commit answers (not_blocked)
        try:
            local_target(session, actor, wt, intent.target_space_id, intent.target_parent_id)
        except NotFound:
            if access.target_holds(session, intent.target_space_id, intent.target_parent_id):
                raise  # the target is there; the actor may no longer see it
            raise UnitUnavailable([p.unit_id]) from None

    def perform(self, op: Operation) -> None:
        p = payload(op, ActivateWorktreeResourcePayload)
        if self.unitstore.get(p.unit_id) is None:
            raise Conflict(f"unit {p.unit_id} is not in trunk", code="unit_missing")

    def commit(self, session: Session, op: Operation,
               ctx: RequestContext) -> ActivateWorktreeResourceResult:
        p = payload(op, ActivateWorktreeResourcePayload)
        wt = session.get(Worktree, p.worktree_id, with_for_update=True)
        if wt is None:
            raise NotFound("No such worktree.")
        _check_state(wt)
        unit, intent = _blocked(session, wt.id, p.unit_id, lock=True)
        now = utcnow()
        if not activate_intent(session, op, intent, unit.resource_id, unit.unit_type, now):
            raise UnitUnavailable([unit.unit_id])  # the target went away again
        published = publish_assets(session, wt.id, [unit.unit_id], now)
        unit.merge_state = MergeState.CREATED.value
        session.flush()
        states = set(session.scalars(select(WorktreeUnit.merge_state)
                                     .where(WorktreeUnit.worktree_id == wt.id)))
        if states <= DONE:
            wt.state = WorktreeState.MERGED.value
            wt.processed_at = now
        wt.updated_at = now
        session.flush()
        audit.record(session, ctx, "worktree.unit_activate", "worktree", wt.id,
                     space_id=op.scope_id,
                     details={"unit_id": unit.unit_id, "node_id": intent.node_id,
                              "assets_published": published, "state": wt.state,
                              "on_behalf_of": op.actor_id})
        return ActivateWorktreeResourceResult(worktree_id=wt.id, unit_id=unit.unit_id,
                                              node_id=intent.node_id,
                                              resource_id=unit.resource_id)

    def compensate(self, op: Operation) -> None:
        pass  # perform writes nothing


__all__ = ["ActivateWorktreeResource", "NotBlocked", "submit_activate"]
