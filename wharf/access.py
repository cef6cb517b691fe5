"""The access resolver: one place that answers "what may this principal do here?".

The effective role on a node is the highest of: space owner, team membership, direct
grants and link sharing on the node or any ancestor, and public read (viewer). Anonymous
visitors get at most viewer. A node that is trashed, or lies below a trashed node, has no
role at all (trash operations ask with ``include_trashed=True``).

A target the principal has no role on is *undiscoverable*: callers answer 404, never 403,
so ids leak nothing. A visible target the principal may not change is 403.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.models import LinkSharing, Node, NodeGrant, Space, SpaceMember
from wharf.context import Principal
from wharf.errors import Forbidden, NotFound
from wharf.ids import is_id

RANK = {None: 0, "viewer": 1, "editor": 2, "admin": 3, "owner": 4}
ROLES = ("viewer", "editor", "admin", "owner")
MAX_DEPTH = 256


def at_least(role: str | None, need: str) -> bool:
    return RANK[role] >= RANK[need]


def _best(*roles: str | None) -> str | None:
    return max(roles, key=lambda r: RANK[r])


@dataclass(frozen=True)
class Access:
    role: str | None
    can_share: bool = False

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
                "can_manage": self.can_manage, "can_share": self.can_share,
                "can_trash": self.can_edit}


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


def can_share(space: Space, space_role_: str | None) -> bool:
    """Personal spaces: only the owner shares. Team spaces: admins and the owner."""
    if space.type == "personal":
        return space_role_ == "owner"
    return at_least(space_role_, "admin")


def ancestors(session: Session, node: Node) -> list[tuple[str, str | None]]:
    """``[(id, trash_batch_id), ...]`` from ``node`` up to its root (memoised per session)."""
    memo: dict = session.info.setdefault("wharf_parents", {})
    chain = [(node.id, node.trash_batch_id)]
    memo[node.id] = (node.parent_id, node.trash_batch_id)
    parent_id = node.parent_id
    while parent_id is not None:
        if len(chain) > MAX_DEPTH:
            break
        if parent_id not in memo:
            row = session.execute(select(Node.parent_id, Node.trash_batch_id)
                                  .where(Node.id == parent_id)).first()
            if row is None:
                break
            memo[parent_id] = (row[0], row[1])
        next_parent, batch = memo[parent_id]
        chain.append((parent_id, batch))
        parent_id = next_parent
    return chain


def _chain_role(session: Session, principal: Principal, ids: list[str]) -> str | None:
    role: str | None = None
    if principal.is_user:
        for granted in session.scalars(select(NodeGrant.role).where(
                NodeGrant.node_id.in_(ids), NodeGrant.user_id == principal.user_id)):
            role = _best(role, granted)
    for linked in session.scalars(select(LinkSharing.role).where(LinkSharing.node_id.in_(ids))):
        role = _best(role, linked if principal.is_user else "viewer")
    return role


def node_access(session: Session, principal: Principal, node: Node,
                space: Space | None = None, *, include_trashed: bool = False) -> Access:
    chain = ancestors(session, node)
    if not include_trashed and any(batch is not None for _, batch in chain):
        return Access(None)
    space = space or session.get(Space, node.space_id)
    from_space = space_role(session, principal, space)
    role = _best(from_space, _chain_role(session, principal, [i for i, _ in chain]))
    return Access(role, can_share=can_share(space, from_space))


def node_role(session: Session, principal: Principal, node: Node,
              space: Space | None = None) -> str | None:
    return node_access(session, principal, node, space).role


def _check(access: Access, need: str, what: str) -> Access:
    if access.role is None:
        raise NotFound(f"No such {what}.")
    if not at_least(access.role, need):
        raise Forbidden(f"You may not do that to this {what}.")
    return access


def require_space(session: Session, principal: Principal, space_id: object,
                  need: str = "viewer", *, lock: bool = False) -> tuple[Space, Access]:
    space = session.get(Space, space_id, with_for_update=lock) if is_id(space_id) else None
    if space is None:
        raise NotFound("No such space.")
    role = space_role(session, principal, space)
    return space, _check(Access(role, can_share=can_share(space, role)), need, "space")


def require_node(session: Session, principal: Principal, node_id: object,
                 need: str = "viewer", *, lock: bool = False,
                 include_trashed: bool = False) -> tuple[Node, Access]:
    node = session.get(Node, node_id, with_for_update=lock) if is_id(node_id) else None
    if node is None:
        raise NotFound("No such node.")
    access = node_access(session, principal, node, include_trashed=include_trashed)
    return node, _check(access, need, "node")


def require_share(session: Session, principal: Principal, node_id: object) -> tuple[Node, Access]:
    """The node, if the principal may change its sharing (404 if undiscoverable, else 403)."""
    node, access = require_node(session, principal, node_id, "viewer")
    if not access.can_share:
        raise Forbidden("Only the owner (personal space) or an admin (team space) can share.")
    return node, access
