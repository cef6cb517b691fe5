"""Recent files: open a resource, list my recent ones (``wharf.recent``)."""
from __future__ import annotations

import falcon
import msgspec

from api import contract
from api.resources.operations import resource_body
from api.schemas.common import PageQuery
from api.schemas.operations import Resource
from api.schemas.recent import RecentItem, RecentList
from storage.db import Database
from wharf.recent import service as recent


class ResourceOpen:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="openResource", summary="Open a resource",
                 tags=["recent"], description="Records it in my recent files.",
                 responses={200: contract.Answer(Resource, "The resource.")})
    def on_post(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        with self.db.write() as s:
            res, node, access, unit = recent.open_resource(s, req.context.ctx, resource_id)
            resp.media = resource_body(s, res, node, access, unit)


class MyRecent:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="myRecent", summary="My recently opened resources",
                 tags=["recent"], query=PageQuery, responses={200: RecentList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, PageQuery)
        with self.db.read() as s:
            items, nxt = recent.list_recent(s, req.context.ctx, q.limit, q.cursor)
            resp.media = RecentList(items=[msgspec.convert(i, RecentItem) for i in items],
                                    next_cursor=nxt)
