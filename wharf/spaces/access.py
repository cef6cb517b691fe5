"""The access resolver: one place that answers "what may this principal do here?".

The effective role on a node is the highest of: space owner, team membership, direct
grants and link sharing on the node or any ancestor, and public read (viewer). Anonymous
visitors get at most viewer. A node that is trashed, or lies below a trashed node, has no
role at all (trash operations ask with ``include_trashed=True``).

A target the principal has no role on is *undiscoverable*: callers answer 404, never 403,
so ids leak nothing. A visible target the principal may not change is 403.

The tree is at most ``MAX_TREE_DEPTH`` levels deep (creates and moves are refused beyond
it, ``tree_too_deep``). The ancestor walk is bounded by the same limit and never truncates
silently: a chain that does not reach a root within it (deeper data, a broken parent link)
raises :class:`TreeTooDeep`, and the resolver answers "no role" for that node (fail closed).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Row, and_, bindparam, case, literal, null, select
from sqlalchemy.orm import Session

from storage.driver import DriverStatement
from storage.enums import Role, values
from storage.models import LinkSharing, Node, NodeGrant, Space, SpaceMember
from wharf.infra.context import Principal
from wharf.infra.errors import Conflict, Forbidden, NotFound
from wharf.infra.ids import is_id

ROLES = values(Role)  # weakest first
RANK: dict[str | None, int] = {None: 0, **{role: rank for rank, role in enumerate(ROLES, 1)}}
# The deepest a node may sit (a root is at depth 1). Declared once: creates and moves check
# it (wharf.spaces.nodes) and the ancestor walk below is bounded by it.
MAX_TREE_DEPTH = 256


class TreeTooDeep(Conflict):
    """A node would sit (or sits) deeper than ``MAX_TREE_DEPTH``, or its ancestor chain does
    not reach a root within that many steps."""

    code = "tree_too_deep"
    title = "Tree too deep"


_S = Space.__table__
_M = SpaceMember.__table__


class SpaceReadOnly(Forbidden):
    """A write in a read-only team space: archived (``/unarchive`` ends it), or its owner's
    account was deleted and no admin took it over (``wharf space-owner`` gives it an
    owner): read only for everyone."""

    code = "space_read_only"
    title = "Space read-only"

    def __init__(self, message: str | None = None, **kwargs: Any) -> None:
        super().__init__(message or "This team space is read-only: it is archived, or its "
                         "owner's account was deleted and it has no owner yet.", **kwargs)


def at_least(role: str | None, need: Role) -> bool:
    return RANK[role] >= RANK[need]


def _best(*roles: str | None) -> str | None:
    return max(roles, key=lambda r: RANK[r])


@dataclass(frozen=True)
class Access:
    role: str | None
    can_share: bool = False
    can_purge: bool = False
    read_only: bool = False  # the space is read-only: nobody writes, whatever their role

    @property
    def can_read(self) -> bool:
        return at_least(self.role, Role.VIEWER)

    @property
    def can_edit(self) -> bool:
        return not self.read_only and at_least(self.role, Role.EDITOR)

    @property
    def can_create_children(self) -> bool:
        return self.can_edit

    @property
    def can_manage(self) -> bool:
        return not self.read_only and at_least(self.role, Role.ADMIN)

    def capabilities(self) -> dict[str, bool]:
        return {"can_read": self.can_read, "can_edit": self.can_edit,
                "can_create_children": self.can_create_children,
                "can_manage": self.can_manage, "can_share": self.can_share,
                "can_trash": self.can_edit, "can_purge": self.can_purge}


def team_role_column(user_id: Any) -> ColumnElement[Any]:
    """The role ``user_id`` has in the space of the enclosing ``spaces`` row from the space
    itself, as a SQL expression: ``owner`` for its owner; in a team space their membership
    role, at most ``viewer`` while the space is read-only (its owner's account was deleted
    and no admin took it over, wharf.accounts.service); NULL otherwise. Neither public read nor
    node grants count here.

    This is the one definition of "your role in this space": :func:`space_role`,
    :func:`space_facts`, :func:`standing` (worktrees, issues) and the worktree listing's
    statement all read it."""
    member = (select(_M.c.role).where(_M.c.space_id == _S.c.id, _M.c.user_id == user_id)
              .correlate(_S).scalar_subquery())
    return case((_S.c.owner_id == user_id, literal(Role.OWNER.value)),
                (_S.c.type != "team", null()),
                (and_(_S.c.read_only, member.is_not(None)), literal(Role.VIEWER.value)),
                else_=member)


@dataclass(frozen=True, slots=True)
class Standing:
    """A user's standing in a space from the space itself (no public read, no grants):
    their role (:func:`team_role_column`) and whether the space is read-only."""

    role: str | None
    read_only: bool = False

    @property
    def writes(self) -> bool:
        """They may write as the space's owner or member: they have a role in it and it
        is not read-only (where nobody writes, whatever their role was)."""
        return self.role is not None and not self.read_only


#: No standing: not a user, no such space, a user worktree.
NO_STANDING = Standing(None)


def standing(session: Session, principal: Principal, space_id: str | None) -> Standing:
    """The principal's :class:`Standing` in the space ``space_id`` (one query)."""
    if space_id is None or not principal.is_user:
        return NO_STANDING
    row = session.execute(select(team_role_column(principal.user_id), _S.c.read_only)
                          .where(_S.c.id == space_id)).first()
    return NO_STANDING if row is None else Standing(row[0], bool(row[1]))


def space_role(session: Session, principal: Principal, space: Space) -> str | None:
    """The principal's role in ``space``: :func:`team_role_column`, then public read
    (viewer). The owner and a personal space need no query (the column's first two
    branches)."""
    role: str | None = None
    if principal.is_user:
        if space.owner_id == principal.user_id:
            return Role.OWNER
        if space.type == "team":
            role = session.scalar(select(team_role_column(principal.user_id))
                                  .where(_S.c.id == space.id))
    return _public(role, space.public_read)


def _public(role: str | None, public_read: bool) -> str | None:
    """``role`` with what public read gives everyone (viewer)."""
    return _best(role, Role.VIEWER) if public_read else role


@dataclass(frozen=True, slots=True)
class SpaceFacts:
    """What the role of a principal in a space depends on, read in one statement
    (:func:`space_facts`): the space's columns and the principal's role from the space
    itself (:func:`team_role_column`)."""

    id: str
    type: str
    owner_id: str
    public_read: bool
    team_role: str | None
    read_only: bool = False

    def role(self, principal: Principal) -> str | None:
        """:func:`space_role`, from these facts."""
        return _public(self.team_role if principal.is_user else None, self.public_read)


_SPACE_FACTS = (select(_S.c.id, _S.c.type, _S.c.owner_id, _S.c.public_read,
                       team_role_column(bindparam("uid")), _S.c.read_only)
                .where(_S.c.id == bindparam("sid")))
# FOR SHARE OF spaces on PostgreSQL; SQLite (whose write transactions hold the database's
# one write lock from BEGIN IMMEDIATE) renders no locking clause.
_SPACE_FACTS_LOCKED = _SPACE_FACTS.with_for_update(read=True, of=_S)
# Run on every create and every claimed batch's permission check: on the driver.
_SPACE_FACTS_RUN = {False: DriverStatement(_SPACE_FACTS),
                    True: DriverStatement(_SPACE_FACTS_LOCKED)}


def space_facts(session: Session, principal: Principal, space_id: str, *,
                lock: bool = False) -> SpaceFacts | None:
    """The space ``space_id`` and the principal's membership in it, in one statement on
    the transaction's connection; ``lock`` takes the space row FOR SHARE (see
    ``wharf.spaces.nodes.resolve_parent``). None when there is no such space."""
    row = _SPACE_FACTS_RUN[lock].first(
        session.connection(),
        {"sid": space_id, "uid": principal.user_id if principal.is_user else None})
    if row is None:
        return None
    return SpaceFacts(row[0], row[1], row[2], bool(row[3]), row[4], bool(row[5]))


def can_share(space: Space | SpaceFacts, space_role_: str | None) -> bool:
    """Personal spaces: only the owner shares. Team spaces: admins and the owner."""
    if space.type == "personal":
        return space_role_ == Role.OWNER
    return at_least(space_role_, Role.ADMIN)


def can_purge(space: Space | SpaceFacts, space_role_: str | None) -> bool:
    """Permanent delete (purge) needs a role that comes from the space itself: the owner of
    a personal space, the owner or an admin of a team space. A direct grant or a link
    (editor at most) can trash and restore, never destroy the owner's content."""
    return at_least(space_role_, Role.ADMIN)


def _access(space: Space | SpaceFacts, role: str | None, from_space: str | None) -> Access:
    """The effective ``role`` with the capabilities only a role from the space grants
    (none in a read-only space)."""
    writes = not space.read_only
    return Access(role, can_share=writes and can_share(space, from_space),
                  can_purge=writes and can_purge(space, from_space),
                  read_only=space.read_only)


def _chain_above(session: Session, start_id: str,
                 budget: int) -> list[Row[str, str | None, str | None]]:
    """``(id, parent_id, trash_batch_id)`` of ``start_id`` and up to ``budget - 1`` of its
    ancestors, nearest first, in one recursive query bounded by ``budget`` (so a cycle or
    an over-deep chain costs at most ``budget`` rows)."""
    n = Node.__table__
    chain = (select(n.c.id, n.c.parent_id, n.c.trash_batch_id, literal(1).label("depth"))
             .where(n.c.id == start_id).cte("chain", recursive=True))
    chain = chain.union_all(
        select(n.c.id, n.c.parent_id, n.c.trash_batch_id, chain.c.depth + 1)
        .join(chain, n.c.id == chain.c.parent_id).where(chain.c.depth < budget))
    return list(session.execute(select(chain.c.id, chain.c.parent_id, chain.c.trash_batch_id)
                                .order_by(chain.c.depth)))




@dataclass(frozen=True, slots=True)
class ChainLink:
    """One node of an ancestor chain (:func:`chain_facts`) with the roles granted on it:
    the principal's direct grant and the link-sharing role."""

    id: str
    parent_id: str | None
    space_id: str
    trash_batch_id: str | None
    grant_role: str | None
    link_role: str | None


def _chain_facts_statement() -> Any:
    n = Node.__table__
    g = NodeGrant.__table__
    ln = LinkSharing.__table__
    chain = (select(n.c.id, n.c.parent_id, n.c.space_id, n.c.trash_batch_id,
                    literal(1).label("depth"))
             .where(n.c.id == bindparam("nid")).cte("chain", recursive=True))
    chain = chain.union_all(
        select(n.c.id, n.c.parent_id, n.c.space_id, n.c.trash_batch_id, chain.c.depth + 1)
        .join(chain, n.c.id == chain.c.parent_id)
        .where(chain.c.depth < MAX_TREE_DEPTH))
    grant = (select(g.c.role).where(g.c.node_id == chain.c.id, g.c.user_id == bindparam("uid"))
             .scalar_subquery())
    link = select(ln.c.role).where(ln.c.node_id == chain.c.id).scalar_subquery()
    return (select(chain.c.id, chain.c.parent_id, chain.c.space_id, chain.c.trash_batch_id,
                   grant, link).order_by(chain.c.depth))


_CHAIN_FACTS = _chain_facts_statement()


def chain_facts(session: Session, principal: Principal, node_id: str) -> list[ChainLink]:
    """``node_id`` and its ancestors, nearest first, each with the principal's grant and
    its link role, in one recursive statement bounded by ``MAX_TREE_DEPTH`` rows (a cycle
    or an over-deep chain costs at most that many). Empty when there is no such node.

    The chain is whole when its last link is a root (``parent_id`` None); otherwise it is
    too deep or broken and grants nothing (:func:`chain_access`). The links also seed the
    session's memo of parent links (see :func:`ancestors`)."""
    rows = session.connection().execute(
        _CHAIN_FACTS, {"nid": node_id,
                       "uid": principal.user_id if principal.is_user else None}).all()
    links = [ChainLink(*row) for row in rows]
    memo: dict[str, tuple[str | None, str | None]] = session.info.setdefault(
        "wharf_parents", {})
    for link in links:
        memo[link.id] = (link.parent_id, link.trash_batch_id)
    return links


def chain_access(principal: Principal, chain: list[ChainLink], space: SpaceFacts | None,
                 *, include_trashed: bool = False) -> Access:
    """:func:`node_access` from what :func:`chain_facts` and :func:`space_facts` read
    (``space``: the facts of the node's own space). Fails closed the same way: a chain
    that does not end at a root within ``MAX_TREE_DEPTH`` links, a trashed link (unless
    ``include_trashed``), or a missing space grants nothing."""
    if not chain or chain[-1].parent_id is not None:
        return Access(None)  # deeper than MAX_TREE_DEPTH, a cycle or a broken link
    if not include_trashed and any(link.trash_batch_id is not None for link in chain):
        return Access(None)
    if space is None or space.id != chain[0].space_id:
        return Access(None)
    from_space = space.role(principal)
    role = from_space
    for link in chain:
        if principal.is_user and link.grant_role is not None:
            role = _best(role, link.grant_role)
        if link.link_role is not None:
            role = _best(role, link.link_role if principal.is_user else Role.VIEWER)
    return _access(space, role, from_space)


def ancestors(session: Session, node: Node) -> list[tuple[str, str | None]]:
    """``[(id, trash_batch_id), ...]`` from ``node`` up to its root (memoised per session).

    At most ``MAX_TREE_DEPTH`` entries; a chain that does not end at a root within that
    many (too deep, a cycle, a missing parent) raises :class:`TreeTooDeep` — never a
    truncated chain, which would hide a trashed ancestor or a grant above the cut."""
    memo: dict[str, tuple[str | None, str | None]] = session.info.setdefault(
        "wharf_parents", {})
    chain = [(node.id, node.trash_batch_id)]
    memo[node.id] = (node.parent_id, node.trash_batch_id)
    parent_id = node.parent_id
    while parent_id is not None:
        if len(chain) >= MAX_TREE_DEPTH:
            raise TreeTooDeep(f"The node lies deeper than {MAX_TREE_DEPTH} levels.")
        if parent_id not in memo:
            rows = _chain_above(session, parent_id, MAX_TREE_DEPTH - len(chain))
            if not rows:
                raise TreeTooDeep("The node's ancestor chain is broken.")
            for id_, parent, batch in rows:
                memo[id_] = (parent, batch)
        next_parent, batch = memo[parent_id]
        chain.append((parent_id, batch))
        parent_id = next_parent
    return chain


def forget_tree(session: Session) -> None:
    """Drop the memoised parent links (after a move, trash or restore in this session)."""
    session.info.pop("wharf_parents", None)


def depth_of(session: Session, node: Node | None) -> int:
    """The depth of ``node`` (a root is 1; ``None``, the space root, is 0)."""
    return 0 if node is None else len(ancestors(session, node))


def _chain_role(session: Session, principal: Principal, ids: list[str]) -> str | None:
    role: str | None = None
    if principal.is_user:
        for granted in session.scalars(select(NodeGrant.role).where(
                NodeGrant.node_id.in_(ids), NodeGrant.user_id == principal.user_id)):
            role = _best(role, granted)
    for linked in session.scalars(select(LinkSharing.role).where(LinkSharing.node_id.in_(ids))):
        role = _best(role, linked if principal.is_user else Role.VIEWER)
    return role


def node_access(session: Session, principal: Principal, node: Node,
                space: Space | None = None, *, include_trashed: bool = False) -> Access:
    try:
        chain = ancestors(session, node)
    except TreeTooDeep:
        return Access(None)  # fail closed: a chain we cannot walk grants nothing
    if not include_trashed and any(batch is not None for _, batch in chain):
        return Access(None)
    space = space or session.get(Space, node.space_id)
    if space is None:  # the foreign key forbids it; fail closed all the same
        return Access(None)
    from_space = space_role(session, principal, space)
    role = _best(from_space, _chain_role(session, principal, [i for i, _ in chain]))
    return _access(space, role, from_space)


def space_of(session: Session, node: Node) -> Space:
    """The space ``node`` lies in. The foreign key guarantees one; if it is gone all the
    same, the node is as undiscoverable as everything else in it (404)."""
    space = session.get(Space, node.space_id)
    if space is None:
        raise NotFound("No such node.")
    return space


def node_role(session: Session, principal: Principal, node: Node,
              space: Space | None = None) -> str | None:
    return node_access(session, principal, node, space).role


def check(access: Access, need: Role, what: str) -> Access:
    """``access`` if it allows ``need``: 404 ``No such <what>`` without a role (the target
    is undiscoverable), 403 ``space_read_only`` for a write in a read-only space, 403 with
    a role below ``need``."""
    if access.role is None:
        raise NotFound(f"No such {what}.")
    if access.read_only and RANK[need] > RANK[Role.VIEWER]:
        raise SpaceReadOnly()
    if not at_least(access.role, need):
        raise Forbidden(f"You may not do that to this {what}.")
    return access


def require_space(session: Session, principal: Principal, space_id: object,
                  need: Role = Role.VIEWER, *, lock: bool = False) -> tuple[Space, Access]:
    space = session.get(Space, space_id, with_for_update=lock) if is_id(space_id) else None
    if space is None:
        raise NotFound("No such space.")
    role = space_role(session, principal, space)
    return space, check(_access(space, role, role), need, "space")


def require_node(session: Session, principal: Principal, node_id: object,
                 need: Role = Role.VIEWER, *, lock: bool = False,
                 include_trashed: bool = False) -> tuple[Node, Access]:
    node = session.get(Node, node_id, with_for_update=lock) if is_id(node_id) else None
    if node is None:
        raise NotFound("No such node.")
    access = node_access(session, principal, node, include_trashed=include_trashed)
    return node, check(access, need, "node")


def require_purge(session: Session, principal: Principal, node_id: object) -> tuple[Node, Access]:
    """The node, trashed or not, if the principal may delete it permanently (404 if
    undiscoverable, 403 ``purge_forbidden`` when they may edit but not purge)."""
    node, access = require_node(session, principal, node_id, Role.EDITOR, include_trashed=True)
    if not access.can_purge:
        raise Forbidden("Only the space owner or a team admin can delete permanently.",
                        code="purge_forbidden")
    return node, access


def require_share(session: Session, principal: Principal, node_id: object) -> tuple[Node, Access]:
    """The node, if the principal may change its sharing (404 if undiscoverable, else 403)."""
    node, access = require_node(session, principal, node_id, Role.VIEWER)
    if access.read_only:
        raise SpaceReadOnly()
    if not access.can_share:
        raise Forbidden("Only the owner (personal space) or an admin (team space) can share.")
    return node, access
