"""Worktrees and the permanent delete of trash (§10): who waits for whom.

An active worktree (not merged, not discarded) *references* a trash batch when it holds a
unit whose resource lies below it, or a waiting node intent whose target folder lies
below it. The purge of the batch:

- **waits** (409 ``worktree_reference``) for a worktree being merged, whoever purges (the
  retention too): the merge is writing the unit; it ends by itself;
- **waits** for a worktree the purging user may discard (their own, or a team worktree of
  a space they own or administer): they can take the unit out of it or discard it, and
  their draft is not thrown away behind their back;
- **wins** over every other worktree (another user's, perhaps a grantee whose grant is
  revoked, whom the owner cannot see or discard), and over every worktree when the trash
  retention purges: the worktree's draft of the unit is deleted with the unit (``perform``)
  and its unit row, assets and uploads go in the purge's completion transaction, with a
  ``unit_purged`` event on the worktree; a waiting node intent stays (its merge will
  answer ``activation_blocked``: its creator activates it elsewhere) with a
  ``target_purged`` event.

``details.worktree_ids`` of the 409 lists the blocking worktrees the caller may see.
"""
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from storage.enums import PurgeReason
from storage.models import Worktree, WorktreeEvent, WorktreeNodeIntent, WorktreeUnit
from storage.results import rowcount
from storage.unitstore import UnitStore
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import ProblemCode
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.trash.service import Blocked
from wharf.worktrees import access
from wharf.worktrees.drafts import Drafts
from wharf.worktrees.enums import WorktreeEventKind, WorktreeState
from wharf.worktrees.reactions import dropped
from wharf.worktrees.service import scope_of

CHUNK = 500
#: ``object_deletion_jobs.reason`` of the worktree assets of a unit whose trunk document
#: was deleted permanently.
UNIT_PURGED = "worktree_unit_purged"


def _chunks(ids: Sequence[str]) -> list[list[str]]:
    return [list(ids[i:i + CHUNK]) for i in range(0, len(ids), CHUNK)]


def _units(s: Session, resource_ids: Sequence[str]) -> list[tuple[WorktreeUnit, Worktree]]:
    """The units of active worktrees that are copies of these resources."""
    out: list[tuple[WorktreeUnit, Worktree]] = []
    for chunk in _chunks(resource_ids):
        out.extend(s.execute(
            select(WorktreeUnit, Worktree)
            .join(Worktree, Worktree.id == WorktreeUnit.worktree_id)
            .where(Worktree.processed_at.is_(None), WorktreeUnit.resource_id.in_(chunk))
            .order_by(WorktreeUnit.worktree_id, WorktreeUnit.unit_id)).all())
    return out


def _intents(s: Session, node_ids: Sequence[str]) -> list[tuple[WorktreeNodeIntent, Worktree]]:
    """The waiting node intents of active worktrees that target one of these nodes."""
    out: list[tuple[WorktreeNodeIntent, Worktree]] = []
    for chunk in _chunks(node_ids):
        out.extend(s.execute(
            select(WorktreeNodeIntent, Worktree)
            .join(Worktree, Worktree.id == WorktreeNodeIntent.worktree_id)
            .where(Worktree.processed_at.is_(None),
                   WorktreeNodeIntent.activated_at.is_(None),
                   WorktreeNodeIntent.discarded_at.is_(None),
                   WorktreeNodeIntent.target_parent_id.in_(chunk))
            .order_by(WorktreeNodeIntent.worktree_id, WorktreeNodeIntent.unit_id)).all())
    return out


def _merging(wt: Worktree) -> bool:
    return wt.state == WorktreeState.MERGING.value


def _sight(s: Session, actor: Principal | None, wt: Worktree) -> tuple[bool, bool]:
    """(whether ``actor`` may see the worktree, whether they may discard it); neither for
    the retention (no actor)."""
    if actor is None:
        return False, False
    rel = access.relation_to(s, actor, wt)
    return (access.discoverable(wt.kind, wt.visibility, rel),
            access.rights(wt.kind, wt.visibility, rel)["discard"])


class WorktreeReferences:
    """The ``trash.PURGE_BLOCKERS`` hook of worktrees (the rule in the module docstring)."""

    def blocked(self, s: Session, actor: Principal | None, resource_ids: list[str],
                node_ids: list[str]) -> Blocked | None:
        by_unit = {wt.id: wt for _, wt in _units(s, resource_ids)}
        by_intent = {wt.id: wt for _, wt in _intents(s, node_ids)}
        sight = {wt_id: _sight(s, actor, wt) for wt_id, wt in {**by_unit, **by_intent}.items()}

        def blocking(wts: dict[str, Worktree]) -> set[str]:
            return {i for i, wt in wts.items() if _merging(wt) or sight[i][1]}

        units, intents = blocking(by_unit), blocking(by_intent)
        if not units and not intents:
            return None
        reasons = []
        if units:
            reasons.append(f"{len(units)} active worktree(s) reference a resource below "
                           "this node")
        if intents:
            reasons.append(f"{len(intents)} active worktree(s) will create a document below "
                           "this node")
        merging = any(_merging(wt) for i, wt in {**by_unit, **by_intent}.items()
                      if i in units | intents)
        tail = (": a merge under way must finish first." if merging
                else ": take the unit out of them or discard them first.")
        return Blocked("; ".join(reasons) + tail,
                       tuple(sorted(i for i in units | intents if sight[i][0])))

    def copies(self, s: Session, resource_ids: list[str]) -> list[tuple[str, str]]:
        # Not a worktree being merged: it blocks the purge (its draft stays).
        return [(wt.id, unit.unit_id) for unit, wt in _units(s, resource_ids)
                if not _merging(wt)]

    def delete_copies(self, unitstore: UnitStore, copies: list[tuple[str, str]]) -> None:
        drafts = Drafts.of(unitstore)
        for worktree_id, unit_id in copies:
            drafts.delete_draft(worktree_id, unit_id)

    def release(self, s: Session, ctx: RequestContext, operation_id: str,
                reason: PurgeReason, resource_ids: list[str], node_ids: list[str],
                settings: Settings) -> None:
        now = utcnow()
        for unit, wt in _units(s, resource_ids):
            # The row decides: a removal that committed meanwhile leaves nothing to do
            # (no event); nothing here runs twice (one transaction, the operation's commit).
            if not rowcount(s.execute(delete(WorktreeUnit).where(
                    WorktreeUnit.worktree_id == wt.id, WorktreeUnit.unit_id == unit.unit_id)
                    .execution_options(synchronize_session=False))):
                continue
            assets, uploads = dropped(
                s, wt.id, unit_id=unit.unit_id, reason=UNIT_PURGED,
                code=ProblemCode.NOT_FOUND,
                message="the unit's document was deleted permanently", now=now,
                idempotency_key_ttl=settings.idempotency_key_ttl)
            self._event(s, ctx, wt, WorktreeEventKind.UNIT_PURGED, unit.unit_id,
                        unit.resource_id, operation_id, reason, now,
                        {"assets_deleted": assets, "uploads_cancelled": uploads})
        for intent, wt in _intents(s, node_ids):
            self._event(s, ctx, wt, WorktreeEventKind.TARGET_PURGED, intent.unit_id,
                        None, operation_id, reason, now,
                        {"target_parent_id": intent.target_parent_id})

    @staticmethod
    def _event(s: Session, ctx: RequestContext, wt: Worktree, kind: WorktreeEventKind,
               unit_id: str, resource_id: str | None, operation_id: str,
               reason: PurgeReason, now: datetime, details: dict[str, object]) -> None:
        s.add(WorktreeEvent(id=new_id(), worktree_id=wt.id, kind=kind.value,
                            unit_id=unit_id, resource_id=resource_id,
                            operation_id=operation_id, reason=reason.value, at=now))
        wt.updated_at = now
        s.flush()
        audit.record(s, ctx, f"worktree.{kind.value}", "worktree", wt.id,
                     space_id=scope_of(s, wt),
                     details={"unit_id": unit_id, "resource_id": resource_id,
                              "reason": reason.value, **details})


#: The one instance ``wharf.worktrees`` registers in ``trash.PURGE_BLOCKERS``.
worktree_reference = WorktreeReferences()
