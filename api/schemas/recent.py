"""Recent files."""
from __future__ import annotations

from api.schemas.common import Id, Response, Timestamp
from storage.enums import ResourceKind


class ResourceItem(Response):
    """A resource in one of the caller's lists (recent files, stars), where it stands."""

    resource_id: Id
    kind: ResourceKind
    node_id: Id
    name: str
    space_id: Id
    parent_id: Id | None


class RecentItem(ResourceItem):
    opened_at: Timestamp


class RecentList(Response):
    items: list[RecentItem]
    next_cursor: str | None
