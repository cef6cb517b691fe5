"""A worktree as ``GET /api/worktrees/{id}`` answers it: its summary and the units the
caller may review (§6.1: each unit's ``change`` read from the unit store). Here, not in
:mod:`wharf.worktrees.service`, because the units' reading (:mod:`wharf.worktrees.units`)
builds on the service.

``worktree_detail`` and ``update_worktree_detail`` are what the API calls; each opens its
own transactions."""
from __future__ import annotations

from sqlalchemy.orm import Session

from storage.db import Database
from storage.unitstore import UnitStore
from wharf.infra.context import RequestContext
from wharf.infra.transactions import in_read
from wharf.worktrees import access
from wharf.worktrees.service import Summary, change_worktree, summarize
from wharf.worktrees.units import UnitView, list_units

Detail = tuple[Summary, list[UnitView]]


def read_detail(s: Session, store: UnitStore | None, ctx: RequestContext,
                worktree_id: str) -> Detail:
    """The summary and the units the caller may review (none without a unit store); the
    units' own permissions are read once for both."""
    view = access.find(s, ctx.principal, worktree_id)
    summary = summarize(s, ctx, view.worktree, view.units)
    units = [] if store is None else list_units(s, store, view)
    return summary, units


worktree_detail = in_read(read_detail)


def update_worktree_detail(db: Database, store: UnitStore | None, ctx: RequestContext,
                           worktree_id: str, changes: dict[str, object]) -> Detail:
    """Rename, re-summarise or change the visibility of a worktree (one write
    transaction), then read it back as ``GET`` answers it (a read transaction of its own,
    after the commit)."""
    change_worktree(db, ctx, worktree_id, changes)
    return worktree_detail(db, store, ctx, worktree_id)
