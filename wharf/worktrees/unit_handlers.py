"""The ``add_worktree_unit`` and ``create_worktree_unit`` operation handlers (§7.2, §7.3).

Both write the draft in the unit store (``perform``, idempotent), then, in the completion
transaction, re-check that the worktree is still a draft with room for one more unit,
that the draft is still there and within its creator's draft quota (the draft counted),
and insert its ``worktree_units`` row (and, for a local unit, its node intent). A failure for
good deletes the draft only when no product row names it (a second addition of the same
trunk unit fails ``unit_already_added`` and must not take the first one's draft)."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.models import Operation, Worktree, WorktreeNodeIntent, WorktreeUnit
from storage.unitstore import UnitStore
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Forbidden, TransientFailure
from wharf.infra.settings import Settings
from wharf.operations.kinds import payload
from wharf.worktrees import access
from wharf.worktrees.drafts import Drafts
from wharf.worktrees.enums import MergeState, WorktreeState, WorktreeUnitSource
from wharf.worktrees.kinds import (
    ADD_WORKTREE_UNIT,
    CREATE_WORKTREE_UNIT,
    AddWorktreeUnitPayload,
    AddWorktreeUnitResult,
    CreateWorktreeUnitPayload,
    CreateWorktreeUnitResult,
)
from wharf.worktrees.limits import check_draft_quota
from wharf.worktrees.units import (
    check_limit,
    check_not_added,
    local_target,
    next_ordinal,
    trunk_unit,
)


def _draft_worktree(session: Session, worktree_id: str, actor: Principal, *,
                    lock: bool) -> Worktree:
    """The worktree, if ``actor`` still may add units to it (404/403 → the operation
    fails ``permission_revoked``) and it is still a draft (409 ``worktree_state``)."""
    view = access.find(session, actor, worktree_id, lock=lock)
    if not view.rights["add_unit"]:
        raise Forbidden("You may no longer add units to this worktree.")
    wt = view.worktree
    if wt.state != WorktreeState.DRAFT:
        access.check_state(wt, "add_unit")
    return wt


def _draft(store: UnitStore, worktree_id: str, unit_id: str) -> int:
    """The base revision of the draft ``perform`` wrote, read under the worktree's lock
    (the orphan-draft sweep takes it too before it deletes a draft without a row): gone --
    a failed duplicate's compensation or the sweep took it -- the operation retries, and
    perform writes it again. No document is read."""
    base_revision = Drafts.of(store).base_revision(worktree_id, unit_id)
    if base_revision is None:
        raise TransientFailure("The unit's draft is gone; it is written again.")
    return base_revision


def _has_row(db: Database, worktree_id: str, unit_id: str) -> bool:
    with db.read() as s:
        return s.scalar(select(WorktreeUnit.unit_id).where(
            WorktreeUnit.worktree_id == worktree_id,
            WorktreeUnit.unit_id == unit_id)) is not None


class AddWorktreeUnit:
    """``add_worktree_unit``: fork the trunk unit's draft, then the ``worktree_units``
    row (source ``trunk``)."""

    kind = ADD_WORKTREE_UNIT

    def __init__(self, db: Database, unitstore: UnitStore, settings: Settings):
        self.db, self.unitstore, self.settings = db, unitstore, settings

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        p = payload(op, AddWorktreeUnitPayload)
        wt = _draft_worktree(session, p.worktree_id, actor, lock=False)
        trunk_unit(session, actor, wt, p.resource_id)  # still an editor of the unit

    def perform(self, op: Operation) -> None:
        p = payload(op, AddWorktreeUnitPayload)
        Drafts.of(self.unitstore).fork(p.worktree_id, p.unit_id)

    def commit(self, session: Session, op: Operation,
               ctx: RequestContext) -> AddWorktreeUnitResult:
        p = payload(op, AddWorktreeUnitPayload)
        actor = Principal(kind="user", user_id=op.actor_id)
        wt = _draft_worktree(session, p.worktree_id, actor, lock=True)
        check_not_added(session, wt, p.resource_id)
        check_limit(session, wt, self.settings)
        base_revision = _draft(self.unitstore, p.worktree_id, p.unit_id)
        check_draft_quota(session, self.unitstore, self.settings, wt.creator_id, 0)
        now = utcnow()
        session.add(WorktreeUnit(
            worktree_id=wt.id, unit_id=p.unit_id, resource_id=p.resource_id,
            source=WorktreeUnitSource.TRUNK.value, unit_type=p.unit_type,
            ordinal=next_ordinal(session, wt.id), added_by=op.actor_id, added_at=now,
            merge_state=MergeState.PENDING.value, conflict_count=0))
        wt.updated_at = now
        session.flush()
        audit.record(session, ctx, "worktree.unit_add", "worktree", wt.id,
                     space_id=op.scope_id,
                     details={"unit_id": p.unit_id, "resource_id": p.resource_id,
                              "source": "trunk", "base_revision": base_revision,
                              "on_behalf_of": op.actor_id})
        return AddWorktreeUnitResult(worktree_id=wt.id, unit_id=p.unit_id,
                                     resource_id=p.resource_id,
                                     base_revision=base_revision)

    def compensate(self, op: Operation) -> None:
        p = payload(op, AddWorktreeUnitPayload)
        if not _has_row(self.db, p.worktree_id, p.unit_id):
            Drafts.of(self.unitstore).delete_draft(p.worktree_id, p.unit_id)


class CreateWorktreeUnit:
    """``create_worktree_unit``: the local draft, then the ``worktree_units`` row (source
    ``worktree``, the reserved resource id) and its node intent (the reserved node id,
    the target)."""

    kind = CREATE_WORKTREE_UNIT

    def __init__(self, db: Database, unitstore: UnitStore, settings: Settings):
        self.db, self.unitstore, self.settings = db, unitstore, settings

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        p = payload(op, CreateWorktreeUnitPayload)
        wt = _draft_worktree(session, p.worktree_id, actor, lock=False)
        local_target(session, actor, wt, p.space_id, p.parent_id)

    def perform(self, op: Operation) -> None:
        p = payload(op, CreateWorktreeUnitPayload)
        Drafts.of(self.unitstore).create_local_draft(p.worktree_id, p.unit_id, p.unit_type,
                                                     p.initial_snapshot)

    def commit(self, session: Session, op: Operation,
               ctx: RequestContext) -> CreateWorktreeUnitResult:
        p = payload(op, CreateWorktreeUnitPayload)
        actor = Principal(kind="user", user_id=op.actor_id)
        wt = _draft_worktree(session, p.worktree_id, actor, lock=True)
        check_limit(session, wt, self.settings)
        _draft(self.unitstore, p.worktree_id, p.unit_id)
        check_draft_quota(session, self.unitstore, self.settings, wt.creator_id, 0)
        now = utcnow()
        session.add(WorktreeUnit(
            worktree_id=wt.id, unit_id=p.unit_id, resource_id=p.resource_id,
            source=WorktreeUnitSource.WORKTREE.value, unit_type=p.unit_type,
            ordinal=next_ordinal(session, wt.id), added_by=op.actor_id, added_at=now,
            merge_state=MergeState.PENDING.value, conflict_count=0))
        session.flush()
        session.add(WorktreeNodeIntent(
            worktree_id=wt.id, unit_id=p.unit_id, node_id=p.node_id,
            target_space_id=p.space_id, target_parent_id=p.parent_id, name=p.name,
            unit_type=p.unit_type, created_by=op.actor_id, created_at=now, updated_at=now))
        wt.updated_at = now
        session.flush()
        audit.record(session, ctx, "worktree.unit_add", "worktree", wt.id,
                     space_id=op.scope_id,
                     details={"unit_id": p.unit_id, "resource_id": p.resource_id,
                              "node_id": p.node_id, "source": "worktree",
                              "target_space_id": p.space_id, "target_parent_id": p.parent_id,
                              "on_behalf_of": op.actor_id})
        return CreateWorktreeUnitResult(worktree_id=wt.id, unit_id=p.unit_id,
                                        resource_id=p.resource_id, node_id=p.node_id)

    def compensate(self, op: Operation) -> None:
        p = payload(op, CreateWorktreeUnitPayload)
        if not _has_row(self.db, p.worktree_id, p.unit_id):
            Drafts.of(self.unitstore).delete_draft(p.worktree_id, p.unit_id)

