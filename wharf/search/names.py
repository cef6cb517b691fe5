"""Name search (issue 41 item 1): ``GET /api/search?kind=name`` over node names.

Matching is case-insensitive. A query of ``MIN_SUBSTRING`` (3) characters or more matches
anywhere in a name; a shorter one matches name prefixes only. When the caller's spaces hold
at most ``SCOPE_SCAN_MAX`` nodes they are read by space (``ix_nodes_parent``) with a plain
substring test; larger scopes go through the trigram index (PostgreSQL: ``pg_trgm`` GIN on
``lower(name)`` with ``LIKE '%q%'``; SQLite: the FTS5 ``trigram`` table ``node_name_fts``
with a phrase query). See docs/search.md.

Only what the caller can discover right now is returned, decided in two steps:

1. In SQL, candidates are restricted to the spaces the caller can stand in: spaces they
   own or are a member of, and spaces holding a node granted to them; a public-read space
   only when ``space_id`` names it. So the scan never walks other spaces' matches.
2. Each candidate is confirmed in a bounded scan (``pagination.scan_page``): not trashed
   and no trashed ancestor, and a role from the space (owner, membership, or public read
   of the named space) or from a grant on it or an ancestor. Link sharing does not make a
   node searchable: a link is for whoever holds it, and search must not hand it out.

Ranked exact match first, then prefix, then substring; within a rank by name, then id
(the keyset: ``(rank, name, id)``). Each item's ``snippet`` is the name with the first
match between ``«`` and ``»``, and ``match`` its ``[start, end)`` offsets in characters.

A read: no transaction writes, nothing audited (like listing recent files)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Row,
    and_,
    case,
    column,
    func,
    literal,
    literal_column,
    or_,
    select,
    text,
    union,
)
from sqlalchemy.orm import Session

from storage.db import Database
from storage.models import Node, NodeGrant, Resource, Space, SpaceMember
from storage.patterns import escape_like
from wharf.infra.context import RequestContext
from wharf.infra.errors import InvalidCursor, ValidationFailed
from wharf.infra.ids import is_id
from wharf.infra.pagination import decode_cursor, scan_page
from wharf.spaces.access import SpaceFacts, TreeTooDeep, ancestors, space_facts

KINDS = ("name", "content")
MAX_QUERY = 200
MIN_SUBSTRING = 3
# Searched spaces holding at most this many nodes are scanned by space, not by name index.
SCOPE_SCAN_MAX = 20_000
CURSOR_KIND = "search-name"
MARK_OPEN, MARK_CLOSE = "«", "»"
_RANKS = ("0", "1", "2")  # exact, prefix, substring


def check_query(q: str | None, kind: str | None) -> tuple[str, str]:
    """``(q, kind)`` as searched: 400 ``validation_failed`` for a missing, blank, over-long
    (``MAX_QUERY``) or NUL-bearing ``q`` or an unknown kind."""
    kind = kind or "name"
    if kind not in KINDS:
        raise ValidationFailed("kind must be name or content", details={"field": "kind"})
    if q is None or not q.strip():
        raise ValidationFailed("q is required", details={"field": "q"})
    if len(q) > MAX_QUERY:
        raise ValidationFailed(f"q is longer than {MAX_QUERY} characters",
                               details={"field": "q"})
    if "\x00" in q or any(0xD800 <= ord(c) <= 0xDFFF for c in q):
        raise ValidationFailed("q holds a character that cannot be searched",
                               details={"field": "q"})
    return q, kind


def fts_phrase(value: str) -> str:
    """``value`` as one FTS5 phrase (a string: no operator in it is read as one)."""
    return '"' + value.replace('"', '""') + '"'


def snippet(name: str, q: str) -> tuple[str, list[int] | None]:
    """The name with its first case-insensitive match of ``q`` marked, and its offsets
    (None, name unmarked, where lower-casing changes the length and offsets would lie, or
    where the database's folding found a match Python's does not)."""
    lowered, needle = name.lower(), q.lower()
    at = lowered.find(needle) if len(lowered) == len(name) else -1
    if at < 0:
        return name, None
    end = at + len(q)
    return name[:at] + MARK_OPEN + name[at:end] + MARK_CLOSE + name[end:], [at, end]


def search_names(db: Database, ctx: RequestContext, q: str, space_id: str | None,
                 limit: int, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the nodes named like ``q`` the caller can discover (see the module)."""
    with db.read() as s:
        return _search(s, ctx, q, space_id, limit, cursor)


def space_ids(s: Session, user_id: str, space_id: str | None) -> list[str]:
    """The spaces to search: the caller's own (owned, member, holding a grant to them),
    or only ``space_id`` if it is one of them or public-read."""
    owned = select(Space.id).where(Space.owner_id == user_id)
    member = select(SpaceMember.space_id).where(SpaceMember.user_id == user_id)
    granted = (select(Node.space_id).join(NodeGrant, NodeGrant.node_id == Node.id)
               .where(NodeGrant.user_id == user_id))
    if space_id is None:
        return sorted(set(s.scalars(union(owned, member, granted))))
    if not is_id(space_id):
        return []
    public = select(Space.id).where(Space.id == space_id, Space.public_read)
    return [space_id] if space_id in set(s.scalars(union(owned, member, granted, public))) \
        else []


def _small_scope(s: Session, spaces: list[str]) -> bool:
    """Whether the spaces hold at most ``SCOPE_SCAN_MAX`` nodes (counted on
    ``ix_nodes_parent``, at most that many index entries read)."""
    capped = select(literal(1)).where(Node.space_id.in_(spaces)).limit(SCOPE_SCAN_MAX + 1)
    return (s.scalar(select(func.count()).select_from(capped.subquery())) or 0) \
        <= SCOPE_SCAN_MAX


def _matches(s: Session, q: str, spaces: list[str]) -> ColumnElement[bool]:
    """The name predicate. Short queries: a prefix ``LIKE``. Otherwise, over a small scope
    (``_small_scope``): a plain substring test on each of its names, read through the space
    index (a common word's trigram postings would cost more than the scope); over a large
    one: the trigram index."""
    lowered, needle = func.lower(Node.name), func.lower(literal(q))
    sqlite = s.get_bind().dialect.name == "sqlite"
    if len(q) < MIN_SUBSTRING:
        return lowered.like(func.lower(literal(escape_like(q) + "%")), escape="\\")
    if _small_scope(s, spaces):
        return (func.instr(lowered, needle) if sqlite else func.strpos(lowered, needle)) > 0
    if sqlite:
        hits = text("SELECT rowid FROM node_name_fts WHERE node_name_fts MATCH :phrase"
                    ).bindparams(phrase=fts_phrase(q)).columns(column("rowid"))
        return literal_column("nodes.rowid").in_(hits)
    return lowered.like(func.lower(literal("%" + escape_like(q) + "%")), escape="\\")


def untrashed(s: Session) -> ColumnElement[bool]:
    """``trash_batch_id IS NULL``; on SQLite written ``+trash_batch_id`` so that its planner,
    which takes ``IS NULL`` on ``ix_nodes_trash`` for selective (almost every node matches
    it), reads by space or by the name index instead."""
    if s.get_bind().dialect.name == "sqlite":
        return literal_column("+nodes.trash_batch_id").is_(None)
    return Node.trash_batch_id.is_(None)


def _search(s: Session, ctx: RequestContext, q: str, space_id: str | None, limit: int,
            cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    after = decode_cursor(CURSOR_KIND, cursor, 3)
    if after is not None and after[0] not in _RANKS:
        raise InvalidCursor("The cursor is not valid for this listing.")
    user_id = ctx.principal.user_id
    if user_id is None or not ctx.principal.is_user:
        return [], None
    spaces = space_ids(s, user_id, space_id)
    if not spaces:
        return [], None
    lowered, needle = func.lower(Node.name), func.lower(literal(q))
    rank = case((lowered == needle, 0),
                (func.substr(lowered, 1, len(q)) == needle, 1), else_=2)
    base = (select(Node, Resource.id, Resource.kind, rank.label("rank"))
            .outerjoin(Resource, Resource.node_id == Node.id)
            .where(Node.space_id.in_(spaces), untrashed(s), _matches(s, q, spaces))
            .order_by(rank, Node.name, Node.id))

    def fetch(key: list[Any] | None, n: int) -> list[Row[Any]]:
        stmt = base
        if key:
            r, name, nid = int(key[0]), key[1], key[2]
            stmt = stmt.where(or_(rank > r, and_(rank == r, Node.name > name),
                                  and_(rank == r, Node.name == name, Node.id > nid)))
        return list(s.execute(stmt.limit(n)).all())

    keep = discoverable(s, ctx, named=space_id)
    rows, next_cursor = scan_page(fetch, after, limit, CURSOR_KIND,
                                  lambda row: [str(row[3]), row[0].name, row[0].id],
                                  lambda row: keep(row[0]))
    items = []
    for node, resource_id, kind, _rank in rows:
        marked, match = snippet(node.name, q)
        items.append({"node_id": node.id, "name": node.name, "space_id": node.space_id,
                      "parent_id": node.parent_id, "resource_id": resource_id,
                      "kind": kind, "snippet": marked, "match": match})
    return items, next_cursor


def discoverable(s: Session, ctx: RequestContext, named: str | None
                  ) -> Callable[[Node], bool]:
    """Whether the caller may find ``node`` by search: no trash on its chain, and a role
    from its space (public read only in the space named by ``space_id``) or a grant on it
    or an ancestor. The ancestor chains and each space's facts are read once per request."""
    principal = ctx.principal
    facts: dict[str, SpaceFacts | None] = {}

    def keep(node: Node) -> bool:
        try:
            chain = ancestors(s, node)
        except TreeTooDeep:
            return False  # fail closed, as the access resolver does
        if any(batch is not None for _, batch in chain):
            return False
        if node.space_id not in facts:
            facts[node.space_id] = space_facts(s, principal, node.space_id)
        space = facts[node.space_id]
        if space is None:
            return False
        if space.team_role is not None or (space.public_read and node.space_id == named):
            return True
        return s.scalar(select(NodeGrant.node_id).where(
            NodeGrant.node_id.in_([i for i, _ in chain]),
            NodeGrant.user_id == principal.user_id).limit(1)) is not None

    return keep
