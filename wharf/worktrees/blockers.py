"""The purge blocker of worktrees (§10): a trash batch cannot be deleted permanently
while an active worktree (not merged, not discarded) holds a unit whose resource lies
below it, or a waiting node intent whose target folder lies below it."""
from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.models import Worktree, WorktreeNodeIntent, WorktreeUnit

CHUNK = 500


def _chunks(ids: Sequence[str]) -> list[list[str]]:
    return [list(ids[i:i + CHUNK]) for i in range(0, len(ids), CHUNK)]


def referencing_worktrees(s: Session, resource_ids: Sequence[str],
                          node_ids: Sequence[str]) -> tuple[set[str], set[str]]:
    """Ids of the active worktrees holding one of these resources, and of those whose
    waiting node intents target one of these nodes."""
    by_unit: set[str] = set()
    for chunk in _chunks(resource_ids):
        by_unit.update(s.scalars(
            select(WorktreeUnit.worktree_id).distinct()
            .join(Worktree, Worktree.id == WorktreeUnit.worktree_id)
            .where(Worktree.processed_at.is_(None), WorktreeUnit.resource_id.in_(chunk))))
    by_intent: set[str] = set()
    for chunk in _chunks(node_ids):
        by_intent.update(s.scalars(
            select(WorktreeNodeIntent.worktree_id).distinct()
            .join(Worktree, Worktree.id == WorktreeNodeIntent.worktree_id)
            .where(Worktree.processed_at.is_(None),
                   WorktreeNodeIntent.activated_at.is_(None),
                   WorktreeNodeIntent.discarded_at.is_(None),
                   WorktreeNodeIntent.target_parent_id.in_(chunk))))
    return by_unit, by_intent


def worktree_reference(s: Session, resource_ids: list[str], node_ids: list[str]) -> str | None:
    """A ``PURGE_BLOCKERS`` hook: why the purge must wait, or None."""
    by_unit, by_intent = referencing_worktrees(s, resource_ids, node_ids)
    reasons = []
    if by_unit:
        reasons.append(f"{len(by_unit)} active worktree(s) reference a resource below "
                       "this node")
    if by_intent:
        reasons.append(f"{len(by_intent)} active worktree(s) will create a document below "
                       "this node")
    if not reasons:
        return None
    return "; ".join(reasons) + ": merge or discard them first."
