"""The problems the worktree capability raises (each leaves as an RFC 9457 problem)."""
from __future__ import annotations

from collections.abc import Iterable

from wharf.infra.errors import Conflict, WharfError


class WorktreeStateConflict(Conflict):
    """The worktree is not in a state that accepts this request (``details``: its
    ``state`` and the states that would, ``allowed``)."""

    code = "worktree_state"
    title = "Worktree state"

    def __init__(self, state: str, allowed: Iterable[str], action: str) -> None:
        allowed = list(allowed)
        super().__init__(f"A {state} worktree does not accept {action} (allowed in: "
                         f"{', '.join(allowed)}).",
                         details={"state": state, "allowed": allowed})


class WorktreeBusy(Conflict):
    """A merge or discard of the worktree is under way (``details.operation_id``): every
    state-changing request waits for it."""

    code = "worktree_busy"
    title = "Worktree busy"

    def __init__(self, state: str, operation_id: str | None) -> None:
        super().__init__(f"The worktree is {state}; wait for operation {operation_id}.",
                         details={"state": state, "operation_id": operation_id})


class DraftPurged(WharfError):
    """The worktree was processed long enough ago that retention deleted its drafts
    (``details.drafts_purged_at``): the unit list stays, its documents are gone."""

    status = 410
    code = "draft_purged"
    title = "Draft purged"
