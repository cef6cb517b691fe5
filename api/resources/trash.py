"""Trash: trash a node, list a space's batches, restore a batch (``wharf.trash``)."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, TypeVar

import falcon

from api import contract
from api.schemas.common import PageQuery
from api.schemas.trash import (
    RestoreResult,
    TrashBatch,
    TrashBatchList,
    TrashBatchListItem,
)
from api.serialize import timestamp
from storage.db import Database
from wharf.trash import service as trash

B = TypeVar("B", bound=TrashBatch)


class TrashBatchRow(Protocol):
    """What the API reads of a trash batch (``wharf.trash``'s row)."""

    id: str
    space_id: str
    root_node_id: str
    created_by: str
    node_count: int
    created_at: datetime


def batch_as(cls: type[B], b: TrashBatchRow, **extra: Any) -> B:
    """A trash batch row as ``cls`` (``TrashBatch`` or one that adds ``extra`` fields)."""
    return cls(id=b.id, space_id=b.space_id, root_node_id=b.root_node_id,
               created_by=b.created_by, node_count=b.node_count,
               created_at=timestamp(b.created_at), **extra)


class NodeTrash:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="trashNode",
                 summary="Move a node and its descendants to a new trash batch",
                 tags=["trash"], responses={200: TrashBatch}, problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        resp.media = batch_as(TrashBatch, trash.trash_node(self.db, req.context.ctx, node_id))


class SpaceTrash:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="listTrash", summary="Trash batches of a space",
                 tags=["trash"], query=PageQuery, responses={200: TrashBatchList})
    def on_get(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        q = contract.read_query(req, PageQuery)
        items, nxt = trash.list_batches(self.db, req.context.ctx, space_id, q.limit, q.cursor)
        resp.media = TrashBatchList(items=[batch_as(TrashBatchListItem, b, **nesting)
                                           for b, nesting in items], next_cursor=nxt)


class BatchRestore:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="restoreTrash", summary="Restore exactly this batch",
                 tags=["trash"],
                 description="409 `ancestor_trashed` while a batch enclosing it is in the "
                             "trash (`details.enclosing_batch_id`), 409 `purge_in_progress` "
                             "while its permanent delete is queued or running, 409 "
                             "`batch_restored`.",
                 responses={200: RestoreResult}, problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response, batch_id: str) -> None:
        batch, restored = trash.restore_batch(self.db, req.context.ctx, batch_id)
        resp.media = batch_as(RestoreResult, batch, restored_nodes=restored)
