"""Whose permission an asset inherits: its trunk unit's, or its worktree scope's.

- trunk: upload and delete need *edit* on the unit, reading needs *read* (trash-aware:
  a trashed unit is not discoverable, 404);
- worktree (``worktree_id`` set): the worktree must be discoverable (404), the unit must
  be in it (404), and the caller needs the worktree's *edit draft* right (upload, in
  state ``draft`` unless ``check_state`` is off: a publish delayed past "ready" is not
  refused) or *review* right (read), plus the unit's own permission: *edit* / *read* on
  a trunk (or activated) unit, and for a local unit not yet activated, create / read on
  its target space or folder.

Each check returns the space the asset belongs to (the audit scope).
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from storage.enums import Role, WorktreeUnitSource
from storage.models import WorktreeNodeIntent, WorktreeUnit
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Forbidden, NotFound
from wharf.infra.ids import is_id
from wharf.spaces.access import require_space
from wharf.spaces.nodes import resolve_parent
from wharf.units.resources import find_unit

#: Asset actions and the unit permission each needs.
EDIT, READ = "edit", "read"
_NODE_NEED = {EDIT: Role.EDITOR, READ: Role.VIEWER}
_WORKTREE_RIGHT = {EDIT: "edit_draft", READ: "review"}


def trunk(s: Session, principal: Principal, unit_id: str, action: str) -> str:
    """The trunk unit's permission; its space id."""
    _unit, _res, node, _access = find_unit(s, RequestContext(principal=principal), unit_id,
                                           _NODE_NEED[action])
    return node.space_id


def worktree(s: Session, principal: Principal, worktree_id: str, unit_id: str,
             action: str, *, check_state: bool = True) -> str | None:
    """The worktree scope's permission for this unit; the worktree's space id (a user
    worktree: its creator's personal space)."""
    from wharf.worktrees import access
    view = access.find(s, principal, worktree_id)
    wu = s.get(WorktreeUnit, (worktree_id, unit_id)) if is_id(unit_id) else None
    if wu is None:
        raise NotFound("No such unit in this worktree.")
    right = _WORKTREE_RIGHT[action]
    if not view.rights[right]:
        raise Forbidden(f"You may not {right.replace('_', ' ')} this worktree.")
    if check_state:
        access.check_state(view.worktree, right)
    intent = s.get(WorktreeNodeIntent, (worktree_id, unit_id)) \
        if wu.source == WorktreeUnitSource.WORKTREE else None
    ctx = RequestContext(principal=principal)
    if intent is None or intent.activated_at is not None:
        find_unit(s, ctx, unit_id, _NODE_NEED[action])
    elif action == EDIT:
        resolve_parent(s, ctx, intent.target_space_id, intent.target_parent_id)
    else:
        require_space(s, principal, intent.target_space_id, Role.VIEWER)
    from wharf.worktrees.service import scope_of
    return scope_of(s, view.worktree)


def check(s: Session, principal: Principal, unit_id: str, worktree_id: str | None,
          action: str, *, check_state: bool = True) -> str | None:
    """The scope's permission for ``action`` on ``unit_id``; the asset's space id."""
    if worktree_id is None:
        return trunk(s, principal, unit_id, action)
    return worktree(s, principal, worktree_id, unit_id, action, check_state=check_state)
