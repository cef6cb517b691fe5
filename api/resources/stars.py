"""Stars: star and unstar a resource, list mine (``wharf.recent.stars``)."""
from __future__ import annotations

import falcon
import msgspec

from api import contract
from api.schemas.common import PageQuery
from api.schemas.stars import StarItem, StarList
from storage.db import Database
from wharf.recent import stars


class MyStars:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="myStars", summary="My starred resources", tags=["recent"],
                 description="Newest star first, keyset-paged. Resources I can no longer "
                             "discover (access revoked, trashed) are left out, as in "
                             "`GET /api/me/recent`; their stars come back with the access.",
                 query=PageQuery, responses={200: StarList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, PageQuery)
        items, nxt = stars.list_stars(self.db, req.context.ctx, q.limit, q.cursor)
        resp.media = StarList(items=[msgspec.convert(i, StarItem) for i in items],
                              next_cursor=nxt)


class MyStar:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="starResource", summary="Star a resource", tags=["recent"],
                 description="Idempotent: starring again changes nothing. 404 for a "
                             "resource I cannot discover; 409 `star_limit` past "
                             f"{stars.MAX_STARS_PER_USER} stars.",
                 responses={204: contract.Answer(None, "starred")}, problems=(404, 409))
    def on_put(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        stars.star(self.db, req.context.ctx, resource_id)
        resp.status = falcon.HTTP_204

    @contract.op(operation_id="unstarResource", summary="Remove my star from a resource",
                 tags=["recent"],
                 description="Idempotent: 204 whether or not the resource was starred, or "
                             "can still be seen.",
                 responses={204: contract.Answer(None, "not starred")})
    def on_delete(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        stars.unstar(self.db, req.context.ctx, resource_id)
        resp.status = falcon.HTTP_204
