"""Stars: a user's starred resources."""
from __future__ import annotations

from api.schemas.common import Response, Timestamp
from api.schemas.recent import ResourceItem


class StarItem(ResourceItem):
    starred_at: Timestamp


class StarList(Response):
    items: list[StarItem]
    next_cursor: str | None
