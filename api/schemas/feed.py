"""The live change feed's ticket (``POST /api/feed-tickets``; the feed itself,
``GET /api/feed``, is served by the feed processes: docs/feed.md)."""
from __future__ import annotations

from typing import Annotated

import msgspec

from api.schemas.common import Response, Timestamp


class FeedTicket(Response):
    ticket: Annotated[str, msgspec.Meta(
        description="Good once, until `expires_at`, for `GET /api/feed?ticket=...`.")]
    expires_at: Timestamp
