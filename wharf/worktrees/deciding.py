"""Deciding what merging one trunk unit's draft does (specs/assets-worktrees.md §8.2), for
the merge operation (:mod:`wharf.worktrees.merging`) and its preview and rebase
(:mod:`wharf.worktrees.merge_review`).

The three documents (the draft's base, trunk's head, the draft's head) differ only where
trunk's revisions since the draft's base revision and the draft's own revisions wrote:
:func:`changed_paths` reads those changesets, and the merge walks just those paths
(:mod:`wharf.worktrees.touched`), so deciding costs what the two sides changed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storage.enums import MergeOutcome
from storage.unitstore import Unit, UnitStore
from wharf.worktrees import merge as three_way
from wharf.worktrees.drafts import Draft, Drafts
from wharf.worktrees.touched import Touched, touched_paths


@dataclass(frozen=True, slots=True)
class Decision:
    """What merging a trunk unit's draft would do now (``outcome`` per §8.2)."""

    outcome: str
    trunk_revision: int
    merge: three_way.MergeResult | None = None

    @property
    def patch_ops(self) -> int:
        return len(self.merge.patch) if self.merge is not None else 0


def changed_paths(store: UnitStore, draft: Draft, trunk: Unit) -> Touched:
    """The paths where ``draft``'s base, its head and ``trunk`` may differ: those written
    by trunk's revisions after the draft's base revision up to ``trunk.revision``, and by
    the draft's revisions up to ``draft.revision`` (all of them: a rebase keeps the
    draft's own changes on the new base). The draft's base is always trunk's document at
    its base revision."""
    trunk_side = [r.changeset for r in store.revisions(draft.unit_id, after=draft.base_revision)
                  if r.revision <= trunk.revision]
    draft_side = [r.changeset for r in Drafts.of(store).draft_revisions(
        draft.worktree_id, draft.unit_id) if r.revision <= draft.revision]
    return touched_paths([*trunk_side, *draft_side])


def decide(draft: Draft, trunk: Unit, max_conflicts: int,
           touched: Touched = None) -> Decision:
    """The outcome of merging ``draft`` into ``trunk`` now; ``touched``: their
    :func:`changed_paths` (None: compare the whole documents)."""
    if three_way.same_within(draft.snapshot, draft.base_snapshot, touched):
        return Decision(MergeOutcome.UNCHANGED.value, trunk.revision)
    result = three_way.merge(draft.base_snapshot, trunk.snapshot, draft.snapshot,
                             max_conflicts=max_conflicts, touched=touched)
    if trunk.revision == draft.base_revision:
        return Decision(MergeOutcome.FAST_FORWARD.value, trunk.revision, result)
    return Decision(result.outcome, trunk.revision, result)


def listed_conflicts(result: three_way.MergeResult | None, limit: int) -> list[dict[str, Any]]:
    return [] if result is None else [c.to_json() for c in result.conflicts[:limit]]


__all__ = ["Decision", "changed_paths", "decide", "listed_conflicts"]
