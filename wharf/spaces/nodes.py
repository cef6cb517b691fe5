"""The node tree: organisational nodes, rename, move (cycle-checked), listings.

Depth: a root is at depth 1 and nothing may sit deeper than ``MAX_TREE_DEPTH``. Every path
that creates a node under a parent goes through :func:`resolve_parent`, which refuses a
parent already at the limit; a move refuses when the new parent's depth plus the height of
the moved subtree (trashed descendants included: they come back on restore) exceeds it.
Both answer 409 ``tree_too_deep``.

The service functions (create, get, update, the listings) take the ``Database`` and run in
one transaction of their own; each answers :class:`NodeEntry` values, read inside it."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, Select, exists, literal, select, tuple_
from sqlalchemy.orm import Session, aliased

from storage.db import Database
from storage.enums import Role
from storage.models import BlobResource, Node, Resource, Space, UnitResource
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, Forbidden, NotFound, ValidationFailed
from wharf.infra.ids import is_id
from wharf.infra.pagination import decode_cursor, page
from wharf.infra.validation import clean_name
from wharf.spaces.access import (
    MAX_TREE_DEPTH,
    Access,
    ChainLink,
    SpaceFacts,
    TreeTooDeep,
    ancestors,
    at_least,
    chain_access,
    chain_facts,
    check,
    depth_of,
    forget_tree,
    node_access,
    require_node,
    require_space,
    space_facts,
    space_of,
    space_role,
)


def resolve_parent(session: Session, ctx: RequestContext, space_id: object,
                   parent_id: object) -> tuple[SpaceFacts, ChainLink | None]:
    """The space and parent under which the caller wants to create something (editor+ on
    the parent node, which may come from a grant or a link; or on the space for roots).
    Each has the ``id`` of the row (``SpaceFacts``; ``ChainLink`` or None for the space
    root).

    In a write transaction the space row is locked first (FOR SHARE: creates run side by
    side, but not beside a move, trash, restore or purge, which take FOR UPDATE), so the
    depth and trash state checked here still hold when the caller inserts the node. Not
    in an unbundled session (``Database.unbundled``: a submission's checks, which insert
    no node; its executor checks again, locked, before it creates anything).

    Two statements at most, on the transaction's connection (no ORM): the space with the
    caller's membership (locked), then the parent's ancestor chain with the caller's grants
    and link roles on each link (read after the lock, so a move or trash that held it has
    committed). Same answers as :func:`wharf.spaces.access.require_space` /
    :func:`wharf.spaces.access.require_node`: 404 for what the caller cannot discover, 403 below
    editor, 400 ``parent_in_other_space``, 409 ``tree_too_deep``."""
    principal = ctx.principal
    lock = not session.info.get("readonly") and not session.info.get("unbundled")
    space: SpaceFacts | None = None
    if is_id(space_id):
        assert isinstance(space_id, str)
        space = space_facts(session, principal, space_id, lock=lock)
        if lock:
            forget_tree(session)  # what was read before the lock is read again
    if parent_id is None:
        if space is None:
            raise NotFound("No such space.")
        check(Access(space.role(principal), read_only=space.read_only), Role.EDITOR, "space")
        return space, None
    chain = chain_facts(session, principal, parent_id) \
        if is_id(parent_id) and isinstance(parent_id, str) else []
    if not chain:
        raise NotFound("No such node.")
    parent = chain[0]
    own = space if space is not None and space.id == parent.space_id \
        else space_facts(session, principal, parent.space_id)
    check(chain_access(principal, chain, own), Role.EDITOR, "node")
    assert own is not None  # chain_access grants nothing without the node's space
    if parent.space_id != space_id:
        raise ValidationFailed("parent_id is in another space", code="parent_in_other_space",
                               details={"field": "parent_id"})
    if len(chain) + 1 > MAX_TREE_DEPTH:
        raise TreeTooDeep(f"A node cannot sit deeper than {MAX_TREE_DEPTH} levels.",
                          details={"max_depth": MAX_TREE_DEPTH})
    return own, parent


@dataclass(frozen=True, slots=True)
class NodeEntry:
    """A node as the caller sees it: the row, the caller's access to it and the
    ``resource`` JSON of the resource it holds (:func:`resources_for`), if any."""

    node: Node
    access: Access
    resource: dict[str, object] | None
    has_children: bool = False


def _with_resource(session: Session, node: Node, access: Access) -> NodeEntry:
    return NodeEntry(node, access, resources_for(session, [node.id]).get(node.id))


def create_node(db: Database, ctx: RequestContext, space_id: object, parent_id: object,
                name: object) -> NodeEntry:
    """An organisational node (it holds no resource yet)."""
    with db.write() as session:
        name = clean_name(name, "name")
        space, parent = resolve_parent(session, ctx, space_id, parent_id)
        node = Node(space_id=space.id, parent_id=parent.id if parent else None, name=name,
                    created_by=ctx.principal.user_id)
        session.add(node)
        session.flush()
        audit.record(session, ctx, "node.create", "node", node.id, space_id=space.id)
        return NodeEntry(node, role_for(session, ctx, node), None)


def get_node(db: Database, ctx: RequestContext, node_id: str) -> NodeEntry:
    with db.read() as session:
        node, access = require_node(session, ctx.principal, node_id, Role.VIEWER)
        return _with_resource(session, node, access)


def _subtree_deeper_than(session: Session, node: Node, room: int) -> bool:
    """Whether the subtree rooted at ``node`` (trashed nodes included) has more than
    ``room`` levels (a leaf has 1). One recursive query in the database that never walks
    below level ``room + 1`` (a cycle in the data costs at most that many levels either)
    and stops at the first node found there."""
    n = Node.__table__
    sub = (select(n.c.id, literal(1).label("level")).where(n.c.id == node.id)
           .cte("subtree", recursive=True))
    sub = sub.union_all(
        select(n.c.id, sub.c.level + 1)
        .join(sub, n.c.parent_id == sub.c.id)
        .where(n.c.space_id == node.space_id, sub.c.level <= room))
    return bool(session.scalar(select(exists().where(sub.c.level > room))))


def update_node(db: Database, ctx: RequestContext, node_id: str,
                changes: dict[str, object]) -> NodeEntry:
    """Rename and/or move (``parent_id``) a node."""
    with db.write() as session:
        node, access = _update_node(session, ctx, node_id, changes)
        return _with_resource(session, node, access)


def _update_node(session: Session, ctx: RequestContext, node_id: str,
                 changes: dict[str, object]) -> tuple[Node, Access]:
    node, access = require_node(session, ctx.principal, node_id, Role.EDITOR)
    if not changes:
        raise ValidationFailed("nothing to change: send name and/or parent_id")
    done: dict[str, object] = {}
    if "parent_id" in changes:
        # Serialise moves within a space so two concurrent moves cannot build a cycle. The
        # space row is locked before this transaction writes anything (a rename flushed
        # first would lock the node before the space: the reverse of trash's order).
        session.get(Space, node.space_id, with_for_update=True)
    if "name" in changes:
        node.name = clean_name(changes["name"], "name")
        done["name"] = node.name
    if "parent_id" in changes:
        target = changes["parent_id"]
        parent = None
        if target is not None:
            parent, _ = require_node(session, ctx.principal, target, Role.EDITOR)
            if parent.space_id != node.space_id:
                raise Conflict("A node can only move within its space.",
                               code="cross_space_move")
            if node.id in [i for i, _ in ancestors(session, parent)]:
                raise Conflict("A node cannot move below itself.", code="move_cycle")
        else:
            # The space root is the space's: someone editing through a grant or a link
            # cannot move a node out of what was shared with them.
            space = space_of(session, node)
            if not at_least(space_role(session, ctx.principal, space), Role.EDITOR):
                raise Forbidden("Only space editors can move nodes to the space root.")
        room = MAX_TREE_DEPTH - depth_of(session, parent)
        if _subtree_deeper_than(session, node, room):
            raise TreeTooDeep(f"The moved subtree would reach deeper than {MAX_TREE_DEPTH} "
                              "levels.", details={"max_depth": MAX_TREE_DEPTH})
        done["parent_id"] = {"from": node.parent_id, "to": target}
        node.parent_id = parent.id if parent is not None else None
        forget_tree(session)
    node.updated_at = utcnow()
    session.flush()
    audit.record(session, ctx, "node.update", "node", node.id, space_id=node.space_id,
                 details=done)
    return node, access


def has_children() -> ColumnElement[bool]:
    """Whether the outer query's ``Node`` has a child not in the trash: a correlated
    ``EXISTS`` on ``ix_nodes_parent`` (space, parent), evaluated by the database inside
    the page's own SELECT (no statement per row). Trashed children do not count, as the
    listings leave them out; a child the caller can see through its parent's access is
    every child (access only widens down the tree)."""
    child = aliased(Node)
    return (select(child.id)
            .where(child.space_id == Node.space_id, child.parent_id == Node.id,
                   child.trash_batch_id.is_(None))
            .exists().label("has_children"))


def _listing(session: Session, q: Select[Node, bool], limit: int, cursor: str | None,
             kind: str) -> tuple[list[tuple[Node, bool]], str | None]:
    after = decode_cursor(kind, cursor, 2)
    if after:
        q = q.where(tuple_(Node.name, Node.id) > tuple_(*after))
    rows = [(n, bool(c)) for n, c in session.execute(
        q.where(Node.trash_batch_id.is_(None)).order_by(Node.name, Node.id).limit(limit + 1))]
    return page(rows, limit, kind, lambda r: [r[0].name, r[0].id])


def _entries(session: Session, ctx: RequestContext,
             items: list[tuple[Node, bool]]) -> list[NodeEntry]:
    """A page of nodes as the caller sees them: their resources (one query), then the
    caller's access to each."""
    res = resources_for(session, [n.id for n, _ in items])
    return [NodeEntry(n, role_for(session, ctx, n), res.get(n.id), children)
            for n, children in items]


def list_children(db: Database, ctx: RequestContext, node_id: str, limit: int,
                  cursor: str | None) -> tuple[list[NodeEntry], str | None]:
    """A page of a node's children (not trashed), by name."""
    with db.read() as session:
        node, _ = require_node(session, ctx.principal, node_id, Role.VIEWER)
        items, nxt = _listing(session, select(Node, has_children())
                              .where(Node.space_id == node.space_id, Node.parent_id == node.id),
                              limit, cursor, "children")
        return _entries(session, ctx, items), nxt


def list_roots(db: Database, ctx: RequestContext, space_id: str, limit: int,
               cursor: str | None) -> tuple[list[NodeEntry], str | None]:
    """A page of a space's root nodes (not trashed), by name."""
    with db.read() as session:
        space, _ = require_space(session, ctx.principal, space_id, Role.VIEWER)
        items, nxt = _listing(session, select(Node, has_children())
                              .where(Node.space_id == space.id, Node.parent_id.is_(None)),
                              limit, cursor, "roots")
        return _entries(session, ctx, items), nxt


def resources_for(session: Session, node_ids: list[str]) -> dict[str, dict[str, object]]:
    """The ``resource`` JSON of each node that has one."""
    if not node_ids:
        return {}
    rows = session.execute(
        select(Resource, UnitResource, BlobResource)
        .outerjoin(UnitResource, UnitResource.resource_id == Resource.id)
        .outerjoin(BlobResource, BlobResource.resource_id == Resource.id)
        .where(Resource.node_id.in_(node_ids))).all()
    out: dict[str, dict[str, object]] = {}
    for res, unit, blob in rows:
        data: dict[str, object] = {"id": res.id, "kind": res.kind}
        if unit is not None:
            data.update(unit_id=unit.unit_id, unit_type=unit.unit_type)
        if blob is not None:
            data.update(filename=blob.filename, size=blob.size, mime_type=blob.mime_type,
                        etag=f'"{blob.etag}"')
        out[res.node_id] = data
    return out


def role_for(session: Session, ctx: RequestContext, node: Node) -> Access:
    return node_access(session, ctx.principal, node)

