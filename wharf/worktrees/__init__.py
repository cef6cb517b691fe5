"""Worktrees: isolated drafts of units, merged back into trunk by operations
(specs/assets-worktrees.md). This package holds their lifecycle: creating one
(``create_worktree``), listing and reading them, renaming and visibility, ready/reopen,
discarding (``discard_worktree``), and the purge blocker that keeps trash a worktree
still needs.

- ``access``: discoverability and the capability matrix (§5);
- ``errors``: ``worktree_state`` and ``worktree_busy``;
- ``service``: the requests; ``detail``: a worktree with its units, as the API reads it;
- ``handlers``: the operation handlers;
- ``drafts``, ``records``: the drafts and the merge records (and merge commits), in the
  unit store's database on storage's tables;
- ``units``, ``unit_changes``, ``unit_handlers``: units inside a worktree (add, create,
  read; changesets, rename or re-target, remove) and their operation handlers;
- ``merging``, ``merge_review``: the merge operation; a unit's merge preview, conflicts
  and rebase;
- ``blockers``: the ``PURGE_BLOCKERS`` hook (which worktrees a permanent delete of trash
  waits for, and what it does to the others), registered on import;
- ``events``: what such a purge did to a worktree, as its readers see it.
"""
from __future__ import annotations

from wharf.infra.hooks import register
from wharf.trash import service as trash
from wharf.worktrees import kinds  # noqa: F401  (registers its operation kinds)
from wharf.worktrees.blockers import worktree_reference
from wharf.worktrees.detail import update_worktree_detail, worktree_detail
from wharf.worktrees.errors import WorktreeBusy, WorktreeStateConflict
from wharf.worktrees.handlers import CreateWorktree, DiscardWorktree
from wharf.worktrees.service import (
    Summary,
    get_worktree,
    list_worktrees,
    mark_ready,
    mark_worktree_ready,
    read_worktrees,
    reopen,
    reopen_worktree,
    submit_create_worktree,
    submit_discard,
    update_worktree,
)
from wharf.worktrees.unit_handlers import AddWorktreeUnit, CreateWorktreeUnit

# Whoever runs operations or serves the API imports this package (its handlers and
# resources), so every process that purges trash knows the blocker.
register(trash.PURGE_BLOCKERS, worktree_reference)

__all__ = [
    "AddWorktreeUnit",
    "CreateWorktree",
    "CreateWorktreeUnit",
    "DiscardWorktree",
    "Summary",
    "WorktreeBusy",
    "WorktreeStateConflict",
    "get_worktree",
    "list_worktrees",
    "mark_ready",
    "mark_worktree_ready",
    "read_worktrees",
    "reopen",
    "reopen_worktree",
    "submit_create_worktree",
    "submit_discard",
    "update_worktree",
    "update_worktree_detail",
    "worktree_detail",
]
