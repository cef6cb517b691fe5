"""Whose permission an asset inherits: its trunk unit's, or its worktree scope's.

- trunk: upload and delete need *edit* on the unit, reading needs *read* (trash-aware:
  a trashed unit is not discoverable, 404);
- worktree (``worktree_id`` set): the worktree must be discoverable (404), the unit must
  be in it (404), and the caller needs the worktree's *edit draft* right (upload, in
  state ``draft`` unless ``check_state`` is off: a publish delayed past "ready" is not
  refused) or *review* right (read), plus the unit's own permission as the worktree
  decides it (``wharf.worktrees.access.unit_access``): *edit* / *read* on a trunk (or
  activated) unit, and for a local unit not yet activated, create in / read on its
  target.

Each check returns the space the asset belongs to (the audit scope).
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from storage.enums import Role
from storage.models import WorktreeUnit
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Forbidden, NotFound
from wharf.infra.ids import is_id
from wharf.units.resources import find_unit
from wharf.worktrees import access
from wharf.worktrees.service import scope_of

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
    worktree: its creator's personal space). The unit's own permission is the
    worktree's answer (:func:`wharf.worktrees.access.unit_access`): 404 without read (or
    for a unit whose node or target is trashed or gone), 403 with read but no edit."""
    view = access.find(s, principal, worktree_id)
    wu = s.get(WorktreeUnit, (worktree_id, unit_id)) if is_id(unit_id) else None
    if wu is None:
        raise NotFound("No such unit in this worktree.")
    right = _WORKTREE_RIGHT[action]
    if not view.rights[right]:
        raise Forbidden(f"You may not {right.replace('_', ' ')} this worktree.")
    if check_state:
        access.check_state(view.worktree, right)
    rights = access.unit_access(s, principal, view.worktree, only=unit_id).get(
        unit_id, access.NOTHING)
    if not rights.read:
        raise NotFound("No such unit.")
    if action == EDIT and not rights.edit:
        raise Forbidden("You may not do that to this unit.")
    return scope_of(s, view.worktree)


def check(s: Session, principal: Principal, unit_id: str, worktree_id: str | None,
          action: str, *, check_state: bool = True) -> str | None:
    """The scope's permission for ``action`` on ``unit_id``; the asset's space id."""
    if worktree_id is None:
        return trunk(s, principal, unit_id, action)
    return worktree(s, principal, worktree_id, unit_id, action, check_state=check_state)
