"""The access resolver: one place that answers "what may this principal do here?".

The effective role is the highest of: space owner, team membership, public read (viewer).
Direct grants and link sharing on the node or an ancestor slot in at ``_node_roles``.
A target the principal has no role on is *undiscoverable*: callers answer 404, never 403,
so ids leak nothing. A visible target the principal may not change is 403.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.models import Node, Space, SpaceMember
from wharf.context import Principal
from wharf.errors import Forbidden, NotFound
from wharf.ids import is_id

RANK = {None: 0, "viewer": 1, "editor": 2, "admin": 3, "owner": 4}
ROLES = ("viewer", "editor", "admin", "owner")


def at_least(role: str | None, need: str) -> bool:
    return RANK[role] >= RANK[need]


def _best(*roles: str | None) -> str | None:
    return max(roles, key=lambda r: RANK[r])


@dataclass(frozen=True)
class Access:
    role: str | None

    @property
    def can_read(self) -> bool:
        return at_least(self.role, "viewer")

    @property
    def can_edit(self) -> bool:
        return at_least(self.role, "editor")

    @property
    def can_create_children(self) -> bool:
        return at_least(self.role, "editor")

    @property
    def can_manage(self) -> bool:
        return at_least(self.role, "admin")

    def capabilities(self) -> dict[str, bool]:
        return {"can_read": self.can_read, "can_edit": self.can_edit,
                "can_create_children": self.can_create_children,
                "can_manage": self.can_manage}


def space_role(session: Session, principal: Principal, space: Space) -> str | None:
    role: str | None = None
    if principal.is_user:
        if space.owner_id == principal.user_id:
            return "owner"
        if space.type == "team":
            role = session.scalar(select(SpaceMember.role).where(
                SpaceMember.space_id == space.id, SpaceMember.user_id == principal.user_id))
    if space.public_read:
        role = _best(role, "viewer")
    return role


def _node_roles(session: Session, principal: Principal, node: Node) -> str | None:
    """Roles that come from the node or its ancestors (grants, link sharing): none yet."""
    return None


def node_role(session: Session, principal: Principal, node: Node,
              space: Space | None = None) -> str | None:
    if node.trash_batch_id is not None:
        return None
    space = space or session.get(Space, node.space_id)
    return _best(space_role(session, principal, space), _node_roles(session, principal, node))


def _check(role: str | None, need: str, what: str) -> Access:
    if role is None:
        raise NotFound(f"No such {what}.")
    if not at_least(role, need):
        raise Forbidden(f"You may not do that to this {what}.")
    return Access(role)


def require_space(session: Session, principal: Principal, space_id: object,
                  need: str = "viewer", *, lock: bool = False) -> tuple[Space, Access]:
    space = session.get(Space, space_id, with_for_update=lock) if is_id(space_id) else None
    if space is None:
        raise NotFound("No such space.")
    return space, _check(space_role(session, principal, space), need, "space")


def require_node(session: Session, principal: Principal, node_id: object,
                 need: str = "viewer", *, lock: bool = False) -> tuple[Node, Access]:
    node = session.get(Node, node_id, with_for_update=lock) if is_id(node_id) else None
    if node is None:
        raise NotFound("No such node.")
    return node, _check(node_role(session, principal, node), need, "node")
