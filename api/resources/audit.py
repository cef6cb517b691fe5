"""Reading the audit trail: a space's (owner and admins), one's own, and the operators'."""
from __future__ import annotations

import falcon

from api import contract
from api.contract import App
from api.schemas.audit import (
    Actor,
    AuditEntry,
    AuditPage,
    MyAuditQuery,
    OperatorAuditQuery,
    SpaceAuditQuery,
)
from storage.db import Database
from wharf.audittrail import reading
from wharf.audittrail.reading import TrailFilter, TrailRow
from wharf.infra.clock import iso
from wharf.infra.settings import Settings

PAGING = ("Newest first, keyset-paged. `action` and `actor_id` filter the rows walked, at "
          "most 1,000 a request: a page may be short (even empty) with a `next_cursor`; "
          "only the last page has none.")


def entry(t: TrailRow) -> AuditEntry:
    r = t.row
    return AuditEntry(id=r.id, at=iso(r.at) or "", action=r.action,
                      actor=Actor(type=r.actor_type, id=r.actor_id, username=t.actor_username),
                      target_type=r.target_type, target_id=r.target_id, space_id=r.space_id,
                      request_id=r.request_id, details=r.details,
                      client_ip=r.client_ip if t.private else None,
                      user_agent=r.user_agent if t.private else None)


def _page(rows: list[TrailRow], nxt: str | None) -> AuditPage:
    return AuditPage(items=[entry(t) for t in rows], next_cursor=nxt)


class SpaceAudit:
    def __init__(self, db: Database) -> None:
        self.db = db

    @contract.op(operation_id="spaceAudit", summary="A space's audit trail", tags=["audit"],
                 description="Who did what in the space: its owner and admins only (403 to "
                             "other members, 404 to whoever cannot see the space). Addresses "
                             "and user agents are not shown. " + PAGING,
                 query=SpaceAuditQuery, responses={200: AuditPage}, problems=(403, 404))
    def on_get(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        q = contract.read_query(req, SpaceAuditQuery)
        resp.media = _page(*reading.space_trail(
            self.db, req.context.ctx, space_id,
            TrailFilter(action=q.action, actor_id=q.actor_id, since=q.since, until=q.until),
            q.limit, q.cursor))


class MyAudit:
    def __init__(self, db: Database) -> None:
        self.db = db

    @contract.op(operation_id="myAudit", summary="My audit trail", tags=["audit"],
                 description="The caller's own actions (logins, refused writes included) and "
                             "the failed logins against their username, with address and "
                             "user agent. " + PAGING,
                 query=MyAuditQuery, responses={200: AuditPage})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, MyAuditQuery)
        resp.media = _page(*reading.my_trail(
            self.db, req.context.ctx, TrailFilter(action=q.action, since=q.since,
                                                  until=q.until), q.limit, q.cursor))


class OperatorAudit:
    def __init__(self, db: Database, settings: Settings) -> None:
        self.db, self.settings = db, settings

    @contract.op(operation_id="operatorAudit", summary="The whole audit trail (operators)",
                 tags=["audit", "dashboard"],
                 description="Every row and field, optionally of one space. Operators only "
                             "(WHARF_OPERATORS): 404 to anyone else. " + PAGING,
                 query=OperatorAuditQuery, responses={200: AuditPage}, problems=(404,))
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, OperatorAuditQuery)
        resp.media = _page(*reading.operator_trail(
            self.db, self.settings, req.context.ctx,
            TrailFilter(action=q.action, actor_id=q.actor_id, space_id=q.space_id,
                        since=q.since, until=q.until), q.limit, q.cursor))


def mount(app: App, db: Database, settings: Settings) -> None:
    app.add_route("/api/spaces/{space_id}/audit", SpaceAudit(db))
    app.add_route("/api/me/audit", MyAudit(db))
    app.add_route("/api/ops/audit", OperatorAudit(db, settings))
