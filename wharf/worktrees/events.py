"""What a permanent delete of trash did to a worktree (``worktree_events``, written by
``wharf.worktrees.blockers``): ``GET /api/worktrees/{id}/events``, oldest first, for
those who may review the worktree's units. ``read_events`` is what the API calls: in one
read transaction of its own."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.models import WorktreeEvent
from wharf.infra.context import RequestContext
from wharf.infra.pagination import decode_cursor, page
from wharf.infra.transactions import in_read
from wharf.worktrees import access

KIND = "worktree_events"


def list_events(s: Session, ctx: RequestContext, worktree_id: str, limit: int,
                cursor: str | None) -> tuple[list[WorktreeEvent], str | None]:
    """One page of the worktree's events (404 when the caller cannot discover the
    worktree, 403 when they may not review its units)."""
    view = access.find(s, ctx.principal, worktree_id)
    access.require(view, "review", units=False)
    after = decode_cursor(KIND, cursor, 1)
    q = select(WorktreeEvent).where(WorktreeEvent.worktree_id == view.worktree.id)
    if after:
        q = q.where(WorktreeEvent.id > after[0])
    rows = list(s.scalars(q.order_by(WorktreeEvent.id).limit(limit + 1)))
    return page(rows, limit, KIND, lambda e: [e.id])


read_events = in_read(list_events)
