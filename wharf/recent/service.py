"""Recent: the last successful opens per user. Names and places come from the node at read
time (a join), so rename and move need no update; inaccessible or trashed ones are left out.

Each function takes the ``Database`` and runs in one transaction of its own."""
from __future__ import annotations

from typing import Any

from sqlalchemy import Row, and_, or_, select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.models import Node, RecentOpen, Resource, UnitResource
from wharf.infra.clock import iso, utcnow
from wharf.infra.context import RequestContext
from wharf.infra.pagination import TIMESTAMP, decode_cursor, scan_page
from wharf.spaces.access import Access, node_access
from wharf.spaces.nodes import resources_for
from wharf.units.resources import get_resource


def open_resource(db: Database, ctx: RequestContext, resource_id: str
                  ) -> tuple[Resource, Node, Access, UnitResource | None,
                             dict[str, object] | None]:
    """Resolve access (viewer) and record the open; only on success, only for users. The
    resource, its node, the caller's access, its unit (if it is one) and the node's
    ``resources_for`` entry."""
    with db.write() as s:
        res, node, access, unit = get_resource(s, ctx, resource_id)
        user_id = ctx.principal.user_id
        if user_id is not None:
            row = s.get(RecentOpen, (user_id, res.id))
            if row is None:
                s.add(RecentOpen(user_id=user_id, resource_id=res.id, opened_at=utcnow()))
            else:
                row.opened_at = utcnow()
            s.flush()
        return res, node, access, unit, resources_for(s, [node.id]).get(node.id)


def list_recent(db: Database, ctx: RequestContext, limit: int,
                cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """Newest first; rows the user can no longer read are skipped (a bounded scan, see
    ``pagination.scan_page``)."""
    with db.read() as s:
        return _list_recent(s, ctx, limit, cursor)


def _list_recent(s: Session, ctx: RequestContext, limit: int,
                 cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    return my_resources(s, ctx, RecentOpen, RecentOpen.opened_at, "recent", "opened_at",
                        limit, cursor)


def my_resources(s: Session, ctx: RequestContext, table: Any, at: Any, kind: str,
                 field: str, limit: int, cursor: str | None
                 ) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the caller's rows of ``table`` (a ``user_id``, ``resource_id`` and the
    time column ``at``), newest first, each with its resource and node; rows the caller can
    no longer discover are skipped (a bounded scan, ``pagination.scan_page``). Recent
    files and stars (``wharf.recent.stars``) are both this listing."""
    after = decode_cursor(kind, cursor, (TIMESTAMP, str))
    base = (select(at, Resource, Node)
            .join(Resource, Resource.id == table.resource_id)
            .join(Node, Node.id == Resource.node_id)
            .where(table.user_id == ctx.principal.user_id)
            .order_by(at.desc(), table.resource_id.desc()))

    def fetch(key: list[Any] | None, n: int) -> list[Row[Any]]:
        q = base
        if key:
            when, rid = key
            q = q.where(or_(at < when, and_(at == when, table.resource_id < rid)))
        return list(s.execute(q.limit(n)).all())

    rows, next_cursor = scan_page(
        fetch, after, limit, kind, lambda row: [row[0], row[1].id],
        lambda row: node_access(s, ctx.principal, row[2]).role is not None)
    return [{"resource_id": res.id, "kind": res.kind, "node_id": node.id, "name": node.name,
             "space_id": node.space_id, "parent_id": node.parent_id,
             field: iso(when)} for when, res, node in rows], next_cursor
