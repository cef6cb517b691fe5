"""Recent: the last successful opens per user. Names and places come from the node at read
time (a join), so rename and move need no update; inaccessible or trashed ones are left out."""
from __future__ import annotations

from sqlalchemy import select, tuple_
from sqlalchemy.orm import Session

from storage.models import Node, RecentOpen, Resource
from wharf.access import node_access
from wharf.clock import iso, utcnow
from wharf.context import RequestContext
from wharf.pagination import decode_cursor, encode_cursor
from wharf.resources import get_resource


def open_resource(s: Session, ctx: RequestContext, resource_id: str):
    """Resolve access (viewer) and record the open; only on success, only for users."""
    res, node, access, unit = get_resource(s, ctx, resource_id)
    row = s.get(RecentOpen, (ctx.principal.user_id, res.id))
    if row is None:
        s.add(RecentOpen(user_id=ctx.principal.user_id, resource_id=res.id, opened_at=utcnow()))
    else:
        row.opened_at = utcnow()
    s.flush()
    return res, node, access, unit


def list_recent(s: Session, ctx: RequestContext, limit: int,
                cursor: str | None) -> tuple[list[dict], str | None]:
    after = decode_cursor("recent", cursor, 2)
    q = (select(RecentOpen, Resource, Node)
         .join(Resource, Resource.id == RecentOpen.resource_id)
         .join(Node, Node.id == Resource.node_id)
         .where(RecentOpen.user_id == ctx.principal.user_id))
    if after:
        from datetime import datetime
        when = datetime.fromisoformat(after[0].replace("Z", "+00:00"))
        q = q.where(tuple_(RecentOpen.opened_at, RecentOpen.resource_id) < tuple_(when, after[1]))
    q = q.order_by(RecentOpen.opened_at.desc(), RecentOpen.resource_id.desc())
    items: list[dict] = []
    next_cursor = None
    offset = 0
    while len(items) <= limit:
        rows = s.execute(q.offset(offset).limit(limit * 2 + 1)).all()
        if not rows:
            break
        offset += len(rows)
        for recent, res, node in rows:
            if node_access(s, ctx.principal, node).role is None:
                continue  # trashed or no longer accessible
            items.append({"resource_id": res.id, "kind": res.kind, "node_id": node.id,
                          "name": node.name, "space_id": node.space_id,
                          "parent_id": node.parent_id, "opened_at": iso(recent.opened_at),
                          "_key": [iso(recent.opened_at), res.id]})
            if len(items) > limit:
                break
    if len(items) > limit:
        items = items[:limit]
        next_cursor = encode_cursor("recent", items[-1]["_key"])
    for item in items:
        item.pop("_key")
    return items, next_cursor
