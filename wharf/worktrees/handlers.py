"""The ``create_worktree`` and ``discard_worktree`` operation handlers.

Both re-check the actor's right at the claim and again in the completion transaction
(engine rule 4): a creator who lost the team role, or a manager who left the team, gets
``permission_revoked`` and nothing changes (a failed discard gives the worktree back its
state)."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from storage.db import Database
from storage.models import (
    Operation,
    Worktree,
    WorktreeNodeIntent,
    WorktreeUnit,
)
from storage.unitstore import UnitStore
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Forbidden, NotFound, ProblemCode
from wharf.infra.settings import Settings
from wharf.operations.kinds import payload
from wharf.worktrees import access
from wharf.worktrees.enums import MergeState, WorktreeState, WorktreeUnitSource
from wharf.worktrees.errors import WorktreeStateConflict
from wharf.worktrees.kinds import (
    CREATE_WORKTREE,
    DISCARD_WORKTREE,
    CreateWorktreePayload,
    CreateWorktreeResult,
    DiscardWorktreePayload,
    DiscardWorktreeResult,
)
from wharf.worktrees.limits import check_open
from wharf.worktrees.reactions import dropped
from wharf.worktrees.service import require_team_writer

#: ``object_deletion_jobs.reason`` of a discarded worktree's assets.
DISCARDED = "worktree_discarded"


class CreateWorktree:
    """``create_worktree``: the ``worktrees`` row (state ``draft``) appears at commit,
    within the open-worktree limits (counted again, locked: ``limits.check_open``);
    nothing happens outside the product database."""

    kind = CREATE_WORKTREE

    def __init__(self, settings: Settings):
        self.settings = settings

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        p = payload(op, CreateWorktreePayload)
        if p.team_space_id is not None:  # a team writer still
            require_team_writer(session, actor, p.team_space_id)

    def perform(self, op: Operation) -> None:
        pass

    def commit(self, session: Session, op: Operation,
               ctx: RequestContext) -> CreateWorktreeResult:
        p = payload(op, CreateWorktreePayload)
        check_open(session, self.settings, op.actor_id, p.team_space_id, committing=True)
        now = utcnow()
        session.add(Worktree(id=p.worktree_id, kind=p.kind, name=p.name, summary=p.summary,
                             creator_id=op.actor_id, team_space_id=p.team_space_id,
                             visibility=p.visibility, state=WorktreeState.DRAFT.value,
                             created_at=now, updated_at=now))
        session.flush()
        audit.record(session, ctx, "worktree.create", "worktree", p.worktree_id,
                     space_id=op.scope_id,
                     details={"kind": p.kind, "team_space_id": p.team_space_id,
                              "visibility": p.visibility, "on_behalf_of": op.actor_id})
        return CreateWorktreeResult(worktree_id=p.worktree_id)

    def compensate(self, op: Operation) -> None:
        pass


class DiscardWorktree:
    """``discard_worktree``: submission moved the worktree to ``discarding``; the commit
    marks it ``discarded`` (processed), discards its waiting node intents, queues its
    assets' objects for deletion and deletes their rows, and cancels its uploads still
    waiting to be published, in one transaction. A failure puts the state back."""

    kind = DISCARD_WORKTREE

    def __init__(self, db: Database, unitstore: UnitStore, settings: Settings):
        self.db = db
        self.unitstore = unitstore
        self.settings = settings

    @staticmethod
    def _ours(session: Session, op: Operation, *, lock: bool) -> Worktree:
        p = payload(op, DiscardWorktreePayload)
        wt = session.get(Worktree, p.worktree_id, with_for_update=lock)
        if wt is None or wt.state != WorktreeState.DISCARDING or \
                wt.busy_operation_id != op.id:
            state = wt.state if wt is not None else "missing"
            raise WorktreeStateConflict(state, (WorktreeState.DISCARDING.value,),
                                        "this discard")
        return wt

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        wt = self._ours(session, op, lock=True)
        rel = access.relation_to(session, actor, wt)
        # The rights decide (the state is ours: discarding); either refusal ends the
        # operation as permission_revoked.
        if not access.discoverable(wt.kind, wt.visibility, rel):
            raise NotFound("No such worktree.")
        if not access.rights(wt.kind, wt.visibility, rel)["discard"]:
            raise Forbidden("You may no longer discard this worktree.")

    def perform(self, op: Operation) -> None:
        # Local units whose activation was blocked have trunk content without a node:
        # nothing will ever reach them once the worktree is discarded (idempotent).
        p = payload(op, DiscardWorktreePayload)
        with self.db.read() as s:
            orphans = list(s.scalars(select(WorktreeUnit.unit_id).where(
                WorktreeUnit.worktree_id == p.worktree_id,
                WorktreeUnit.source == WorktreeUnitSource.WORKTREE.value,
                WorktreeUnit.merge_state == MergeState.ACTIVATION_BLOCKED.value)))
        for unit_id in orphans:
            self.unitstore.delete_unit(unit_id)

    def commit(self, session: Session, op: Operation,
               ctx: RequestContext) -> DiscardWorktreeResult:
        wt = self._ours(session, op, lock=True)  # authorize() locked it already
        now = utcnow()
        wt.state = WorktreeState.DISCARDED.value
        wt.processed_at = now
        wt.busy_operation_id = None
        wt.updated_at = now
        intents = session.execute(update(WorktreeNodeIntent).where(
            WorktreeNodeIntent.worktree_id == wt.id,
            WorktreeNodeIntent.activated_at.is_(None),
            WorktreeNodeIntent.discarded_at.is_(None)).values(
            discarded_at=now, updated_at=now).execution_options(synchronize_session=False))
        intents_discarded = int(getattr(intents, "rowcount", 0) or 0)
        assets, cancelled = dropped(
            session, wt.id, reason=DISCARDED, code=ProblemCode.WORKTREE_DISCARDED,
            message="the worktree was discarded", now=now,
            idempotency_key_ttl=self.settings.idempotency_key_ttl)
        session.flush()
        audit.record(session, ctx, "worktree.discard", "worktree", wt.id,
                     space_id=op.scope_id,
                     details={"from": payload(op, DiscardWorktreePayload).from_state,
                              "assets_deleted": assets, "uploads_cancelled": cancelled,
                              "intents_discarded": intents_discarded,
                              "on_behalf_of": op.actor_id})
        return DiscardWorktreeResult(worktree_id=wt.id, state=wt.state,
                                     assets_deleted=assets, uploads_cancelled=cancelled,
                                     intents_discarded=intents_discarded)

    def on_failed(self, session: Session, op: Operation, error: dict[str, Any]) -> None:
        p = payload(op, DiscardWorktreePayload)
        wt = session.get(Worktree, p.worktree_id, with_for_update=True)
        if wt is not None and wt.state == WorktreeState.DISCARDING and \
                wt.busy_operation_id == op.id:
            wt.state = p.from_state
            wt.busy_operation_id = None
            wt.updated_at = utcnow()
            session.flush()

    def compensate(self, op: Operation) -> None:
        pass
