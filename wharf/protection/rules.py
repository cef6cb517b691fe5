"""Who may do what with a protected object: the one place it is decided (the seed's V8
rules, docs/protection.md "Who may do what").

Everything is intersected with the caller's right on the file (the unit's resource):

- **manage** (change, delete, set collaborators): the resource's owner or admin by their
  current role in its space (:attr:`Access.can_purge`, the takeover), or the object's
  creator while they may edit the file;
- **edit** (a changeset touching the target): whoever manages it, and with the file's edit
  right an explicit ``editor`` collaborator when the edit scope is ``specified`` (with
  ``one_self`` only the creator and the takeover edit);
- **view**: whoever manages it; with the file's view right everyone when the read scope is
  ``all_collaborators``, else only the explicit collaborators (either role);
- **copy / print / export**: the object's strategy names the least right needed:
  ``reader`` (view), ``editor`` (edit) or ``owner`` (manage). Defaults: copy ``reader``,
  print and export ``editor``.

Advisory for reading: snapshots, history and exports are not filtered by object scope
(protection is not confidentiality).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from storage.enums import EditScope, ObjectRole, ReadScope, StrategyLevel, values

READ_SCOPES = values(ReadScope)
EDIT_SCOPES = values(EditScope)
ROLES = values(ObjectRole)
LEVELS = values(StrategyLevel)
ACTIONS = ("copy", "print", "export")
DEFAULT_STRATEGIES = {"copy": "reader", "print": "editor", "export": "editor"}


@dataclass(frozen=True)
class Standing:
    """The caller's standing on one unit's file, and their explicit roles on its objects."""

    user_id: str | None
    can_view: bool
    can_edit: bool
    takeover: bool  # owner or admin of the resource's space, by current role
    roles: Mapping[str, str]  # object id -> "editor" | "viewer"


@dataclass(frozen=True)
class ObjectFacts:
    """What the rules read of an object."""

    id: str
    creator_id: str
    read_scope: str
    edit_scope: str
    strategies: Mapping[str, Any]


@dataclass(frozen=True)
class Rights:
    view: bool
    edit: bool
    copy: bool
    print: bool
    export: bool
    manage: bool

    def as_dict(self) -> dict[str, bool]:
        return {"view": self.view, "edit": self.edit, "copy": self.copy,
                "print": self.print, "export": self.export, "manage": self.manage}


def rights(who: Standing, obj: ObjectFacts) -> Rights:
    """Every right of ``who`` on ``obj``."""
    creator = who.user_id is not None and who.user_id == obj.creator_id
    manage = who.can_edit and (who.takeover or creator)
    role = who.roles.get(obj.id)
    edit = manage or (who.can_edit and obj.edit_scope == "specified" and role == "editor")
    view = manage or (who.can_view and (obj.read_scope == "all_collaborators"
                                        or role is not None))
    have = {"reader": view, "editor": edit, "owner": manage}

    def allowed(action: str) -> bool:
        level = obj.strategies.get(action) or DEFAULT_STRATEGIES[action]
        return have.get(level, False)

    return Rights(view=view, edit=edit, copy=allowed("copy"), print=allowed("print"),
                  export=allowed("export"), manage=manage)


def may_edit(who: Standing, obj: ObjectFacts) -> bool:
    """May ``who`` change anything under ``obj``'s target: what every changeset check
    (trunk, draft, restore, merge) asks."""
    return rights(who, obj).edit
