"""Sharing (grants, link sharing), trash batches and recent files."""
from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from api.schemas.common import Id, Request, Response, Timestamp
from storage.enums import ResourceKind, ShareRole


class Grant(Response):
    node_id: Id
    user_id: Id
    role: ShareRole
    created_at: Timestamp


class GrantListItem(Grant):
    username: str


class GrantList(Response):
    items: list[GrantListItem]


class LinkSharingState(Response):
    enabled: bool
    role: ShareRole | None


class TrashBatch(Response):
    id: Id
    space_id: Id
    root_node_id: Id
    created_by: Id
    node_count: int
    created_at: Timestamp


class TrashBatchListItem(TrashBatch):
    """In the listing: the batch enclosing this one (its root lies below a node trashed
    later; restore that first) and how many batches sit directly inside it (purging this
    batch deletes them too)."""

    enclosing_batch_id: Id | None
    nested_batches: int


class TrashBatchList(Response):
    items: list[TrashBatchListItem]
    next_cursor: str | None


class RestoreResult(TrashBatch):
    restored_nodes: int


class RecentItem(Response):
    resource_id: Id
    kind: ResourceKind
    node_id: Id
    name: str
    space_id: Id
    parent_id: Id | None
    opened_at: Timestamp


class RecentList(Response):
    items: list[RecentItem]
    next_cursor: str | None


class PutGrantRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"role": "viewer"}
    role: ShareRole


class LinkSharingRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"enabled": True, "role": "viewer"}
    enabled: bool
    role: Annotated[ShareRole | None, msgspec.Meta(
        description="The role a link gives (default viewer).")] = None
