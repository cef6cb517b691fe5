"""What one user's worktrees may hold: how many are open at once (per user and per team
space) and how many bytes their drafts store (per user).

A worktree is *open* from its ``create_worktree`` submission until it is merged or
discarded (``processed_at``): the submission counts the open worktrees and the
``create_worktree`` operations still pending or running, so a burst of submissions is
refused as one at a time would be (409 ``worktree_limit``, nothing recorded); the
completion transaction counts again under the creator's row lock (and, for a team
worktree, an advisory lock on the team space: not its row, which every node create there
reads with a share lock), so concurrent submissions that slipped past each other cannot
all commit. Worktrees of a read-only team space count against neither the per-user limit
nor the draft quota (nobody may discard them until the space has an owner again); they
still count against the space's own limit.

Draft bytes are the sizes of each draft's two documents (base and head, compact UTF-8
JSON) as the unit store keeps them (``Drafts.draft_bytes``), over the drafts of the
worktrees a user created that are still open (only a worktree's creator adds units to it
and edits its drafts; a merged or discarded worktree's drafts are kept until
``WHARF_WORKTREE_RETENTION`` and do not count). A request that would store past
``WHARF_WORKTREE_DRAFT_QUOTA_BYTES`` is refused with 409 ``draft_quota_exceeded``:
an addition at submission (with the size it would store) and again at commit (with the
draft it stored, which its compensation then deletes), a draft changeset by the unit
store before it writes."""
from __future__ import annotations

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from storage.enums import OPEN_STATUSES
from storage.models import Operation, Space, Worktree
from storage.unitstore import UnitStore
from wharf.infra.errors import Conflict, ProblemCode
from wharf.infra.limits import lock_name, lock_user
from wharf.infra.settings import Settings
from wharf.worktrees.drafts import Drafts
from wharf.worktrees.kinds import CREATE_WORKTREE


class WorktreeLimit(Conflict):
    """Too many open worktrees (``details``: ``scope`` ``user`` or ``team_space``,
    ``limit``)."""

    code = ProblemCode.WORKTREE_LIMIT.value
    title = "Worktree limit"


class DraftQuotaExceeded(Conflict):
    """The user's open worktrees' drafts would hold more than their quota (``details``:
    ``quota``, ``used``, ``requested``)."""

    code = ProblemCode.DRAFT_QUOTA_EXCEEDED.value
    title = "Draft quota exceeded"


#: A worktree of a read-only team space (its owner's account deleted) counts against
#: neither its creator's open worktrees nor their draft quota: nobody may discard it
#: until an operator gives the space an owner (``wharf space-owner``).
_COUNTED = or_(Worktree.team_space_id.is_(None), Worktree.team_space_id.not_in(
    select(Space.id).where(Space.read_only.is_(True))))


def _open_worktrees(s: Session, *where: object) -> int:
    return s.scalar(select(func.count()).select_from(Worktree).where(
        Worktree.processed_at.is_(None), *where)) or 0  # type: ignore[arg-type]


def _creating(s: Session, *where: object) -> int:
    return s.scalar(select(func.count()).select_from(Operation).where(
        Operation.kind == CREATE_WORKTREE, Operation.status.in_(OPEN_STATUSES),
        *where)) or 0  # type: ignore[arg-type]


def check_open(s: Session, settings: Settings, user_id: str, team_space_id: str | None, *,
               committing: bool = False) -> None:
    """409 ``worktree_limit`` when ``user_id`` (and, for a team worktree, the team space)
    has as many open worktrees as allowed. At submission the ``create_worktree``
    operations not yet done count too; ``committing`` (the operation's own completion
    transaction) counts the created worktrees only, under the rows' locks."""
    if committing:
        lock_user(s, user_id)
        if team_space_id is not None:  # not the space's row: node creates there share it
            lock_name(s, f"worktrees:{team_space_id}")
    mine = _open_worktrees(s, Worktree.creator_id == user_id, _COUNTED)
    if not committing:
        mine += _creating(s, Operation.actor_id == user_id)
    if mine >= settings.worktree_max_open_per_user:
        raise _limit("user", settings.worktree_max_open_per_user)
    if team_space_id is None:
        return
    team = _open_worktrees(s, Worktree.team_space_id == team_space_id)
    if not committing:
        team += _creating(s, Operation.scope_id == team_space_id)
    if team >= settings.worktree_max_open_per_team_space:
        raise _limit("team_space", settings.worktree_max_open_per_team_space)


def _limit(scope: str, limit: int) -> WorktreeLimit:
    whose = "You have" if scope == "user" else "This team space has"
    return WorktreeLimit(f"{whose} {limit} open worktrees, the most allowed: merge or "
                         "discard one first.", details={"scope": scope, "limit": limit})


def draft_usage(s: Session, store: UnitStore, user_id: str) -> int:
    """Bytes the drafts of ``user_id``'s open worktrees hold."""
    ids = list(s.scalars(select(Worktree.id).where(Worktree.creator_id == user_id,
                                                   Worktree.processed_at.is_(None),
                                                   _COUNTED)))
    return Drafts.of(store).draft_bytes(ids)


def check_draft_quota(s: Session, store: UnitStore, settings: Settings, user_id: str,
                      requested: int) -> None:
    """409 ``draft_quota_exceeded`` when ``requested`` more bytes would take the user's
    drafts past their quota (``requested`` 0: when they are past it already)."""
    quota = settings.worktree_draft_quota_bytes
    used = draft_usage(s, store, user_id)
    if used + requested > quota:
        raise DraftQuotaExceeded(
            f"Your open worktrees' drafts hold {used} bytes; {requested} more would pass "
            f"your quota of {quota}. Merge or discard a worktree, or remove units.",
            details={"quota": quota, "used": used, "requested": requested})


def draft_room(s: Session, store: UnitStore, settings: Settings, user_id: str) -> int:
    """Bytes the user's drafts may still grow by (negative when past the quota)."""
    return settings.worktree_draft_quota_bytes - draft_usage(s, store, user_id)


__all__ = ["DraftQuotaExceeded", "WorktreeLimit", "check_draft_quota", "check_open",
           "draft_room", "draft_usage"]
