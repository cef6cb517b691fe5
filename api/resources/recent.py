"""Recent files: open a resource, list my recent ones (``wharf.recent``)."""
from __future__ import annotations

import falcon
import msgspec

from api import contract, serialize
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
        resp.media = serialize.resource(*recent.open_resource(self.db, req.context.ctx,
                                                               resource_id))


class MyRecent:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="myRecent", summary="My recently opened resources",
                 tags=["recent"], query=PageQuery, responses={200: RecentList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, PageQuery)
        items, nxt = recent.list_recent(self.db, req.context.ctx, q.limit, q.cursor)
        resp.media = RecentList(items=[msgspec.convert(i, RecentItem) for i in items],
                                next_cursor=nxt)
