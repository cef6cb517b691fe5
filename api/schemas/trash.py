"""Trash batches."""
from __future__ import annotations

from api.schemas.common import Id, Response, Timestamp


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
