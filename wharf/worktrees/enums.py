"""The worktrees' closed vocabularies (their rows in the product database store them as
plain strings; storage needs none of them). A member is the very string stored, as in
:mod:`storage.enums`, which keeps the vocabularies the storage layer itself constrains to
(the unit store's ``DraftSource``, ``DraftRevisionKind``, ``MergeOutcome``).
"""
from __future__ import annotations

from enum import StrEnum


class WorktreeKind(StrEnum):
    """A user worktree is private to its creator; a team worktree belongs to a team space."""

    USER = "user"
    TEAM = "team"


class WorktreeVisibility(StrEnum):
    PRIVATE = "private"
    SPACE = "space"


class WorktreeState(StrEnum):
    """``draft`` → ``ready`` → ``merging`` → ``merged`` (or back to ``draft`` after a
    partial merge); ``draft|ready`` → ``discarding`` → ``discarded``."""

    DRAFT = "draft"
    READY = "ready"
    MERGING = "merging"
    DISCARDING = "discarding"
    MERGED = "merged"
    DISCARDED = "discarded"


#: States a worktree never leaves (``processed_at`` is set exactly in these).
PROCESSED_WORKTREE_STATES: tuple[WorktreeState, ...] = (WorktreeState.MERGED,
                                                        WorktreeState.DISCARDED)


class WorktreeUnitSource(StrEnum):
    """``trunk``: a copy of an existing unit; ``worktree``: a unit new in the worktree,
    created in trunk (with its node) when the worktree is merged."""

    TRUNK = "trunk"
    WORKTREE = "worktree"


class MergeState(StrEnum):
    """A worktree unit's last merge outcome (``pending``: never merged, or changed since)."""

    PENDING = "pending"
    UNCHANGED = "unchanged"
    FAST_FORWARD = "fast_forward"
    MERGED = "merged"
    CREATED = "created"
    CONFLICT = "conflict"
    ACTIVATION_BLOCKED = "activation_blocked"


class WorktreeEventKind(StrEnum):
    """What a permanent delete of trash did to a worktree it did not wait for."""

    UNIT_PURGED = "unit_purged"  # the unit's trunk document was deleted: its draft is gone
    TARGET_PURGED = "target_purged"  # a new unit's target folder was deleted
