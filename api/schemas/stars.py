"""Stars: a user's starred resources."""
from __future__ import annotations

from api.schemas.common import Id, Response, Timestamp
from storage.enums import ResourceKind


class StarItem(Response):
    resource_id: Id
    kind: ResourceKind
    node_id: Id
    name: str
    space_id: Id
    parent_id: Id | None
    starred_at: Timestamp


class StarList(Response):
    items: list[StarItem]
    next_cursor: str | None
