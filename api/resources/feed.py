"""``POST /api/feed-tickets``: a one-use pass into the live change feed (``GET /api/feed``,
served by ``wharf feed``: api.feed, docs/feed.md)."""
from __future__ import annotations

import falcon

from api import contract, serialize
from api.schemas.feed import FeedTicket
from storage.db import Database
from wharf.feed import tickets


class FeedTickets:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="createFeedTicket", summary="A ticket into the live feed",
                 tags=["feed"],
                 description="Good once, for 30 seconds, as `GET /api/feed?ticket=...` (a "
                             "WebSocket, or Server-Sent Events): the feed admits the login "
                             "session or API token that asked, while it is still valid "
                             "(docs/feed.md).",
                 responses={201: FeedTicket})
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        ticket, expires_at = tickets.issue(self.db, req.context.principal)
        resp.media = FeedTicket(ticket=ticket, expires_at=serialize.timestamp(expires_at))
        resp.status = falcon.HTTP_201
