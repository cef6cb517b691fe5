"""Sharing (grants, link sharing), trash (trash, batches, restore, permanent delete) and
recent files."""
from __future__ import annotations

from typing import Any, TypeVar

import falcon
import msgspec

from api import contract
from api.resources.operations import resource_body
from api.schemas.common import PageQuery
from api.schemas.lifecycle import Grant as GrantBody
from api.schemas.lifecycle import (
    GrantList,
    GrantListItem,
    LinkSharingRequest,
    LinkSharingState,
    PutGrantRequest,
    RecentItem,
    RecentList,
    RestoreResult,
    TrashBatch,
    TrashBatchList,
    TrashBatchListItem,
)
from api.schemas.operations import Resource
from api.serialize import timestamp
from storage.db import Database
from storage.enums import ShareRole
from storage.models import TrashBatch as TrashBatchRow
from wharf.recent import service as recent
from wharf.sharing import service as sharing
from wharf.trash import service as trash

B = TypeVar("B", bound=TrashBatch)


def batch_as(cls: type[B], b: TrashBatchRow, **extra: Any) -> B:
    """A trash batch row as ``cls`` (``TrashBatch`` or one that adds ``extra`` fields)."""
    return cls(id=b.id, space_id=b.space_id, root_node_id=b.root_node_id,
               created_by=b.created_by, node_count=b.node_count,
               created_at=timestamp(b.created_at), **extra)


class Grants:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="listGrants", summary="Direct grants on a node",
                 tags=["sharing"], responses={200: GrantList})
    def on_get(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        with self.db.read() as s:
            resp.media = GrantList(items=[
                GrantListItem(node_id=g.node_id, user_id=g.user_id, role=ShareRole(g.role),
                              created_at=timestamp(g.created_at), username=u.username)
                for g, u in sharing.list_grants(s, req.context.ctx, node_id)])


class Grant:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="putGrant", summary="Grant a user editor or viewer",
                 tags=["sharing"],
                 description="Personal spaces only (409 `grants_not_allowed`); 409 "
                             "`owner_not_grantee`. 201 when created, 200 when changed.",
                 body=PutGrantRequest,
                 responses={200: contract.Answer(GrantBody, "changed"),
                            201: contract.Answer(GrantBody, "granted")},
                 problems=(409,))
    def on_put(self, req: falcon.Request, resp: falcon.Response, node_id: str,
               user_id: str) -> None:
        body = contract.read_body(req, PutGrantRequest)
        with self.db.write() as s:
            grant, created = sharing.put_grant(s, req.context.ctx, node_id, user_id,
                                               str(body.role))
            resp.media = GrantBody(node_id=grant.node_id, user_id=grant.user_id,
                                   role=ShareRole(grant.role),
                                   created_at=timestamp(grant.created_at))
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200

    @contract.op(operation_id="deleteGrant", summary="Revoke a grant", tags=["sharing"],
                 responses={204: contract.Answer(None, "revoked")})
    def on_delete(self, req: falcon.Request, resp: falcon.Response, node_id: str,
                  user_id: str) -> None:
        with self.db.write() as s:
            sharing.delete_grant(s, req.context.ctx, node_id, user_id)
        resp.status = falcon.HTTP_204


class LinkSharing:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="getLinkSharing", summary="Link sharing state",
                 tags=["sharing"], responses={200: LinkSharingState})
    def on_get(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        from wharf.spaces.access import require_share
        with self.db.read() as s:
            node, _ = require_share(s, req.context.principal, node_id)
            resp.media = msgspec.convert(sharing.get_link_sharing(s, node.id),
                                         LinkSharingState)

    @contract.op(operation_id="putLinkSharing", summary="Turn link sharing on or off",
                 tags=["sharing"], body=LinkSharingRequest,
                 responses={200: LinkSharingState}, problems=(409,))
    def on_put(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        body = contract.read_body(req, LinkSharingRequest)
        with self.db.write() as s:
            state = sharing.put_link_sharing(s, req.context.ctx, node_id, body.enabled,
                                             None if body.role is None else str(body.role))
            resp.media = msgspec.convert(state, LinkSharingState)


class NodeTrash:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="trashNode",
                 summary="Move a node and its descendants to a new trash batch",
                 tags=["trash"], responses={200: TrashBatch}, problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        with self.db.write() as s:
            resp.media = batch_as(TrashBatch, trash.trash_node(s, req.context.ctx, node_id))


class SpaceTrash:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="listTrash", summary="Trash batches of a space",
                 tags=["trash"], query=PageQuery, responses={200: TrashBatchList})
    def on_get(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        q = contract.read_query(req, PageQuery)
        with self.db.read() as s:
            items, nxt = trash.list_batches(s, req.context.ctx, space_id, q.limit, q.cursor)
            nesting = trash.nesting(s, items)
            resp.media = TrashBatchList(items=[
                batch_as(TrashBatchListItem, b, **nesting[b.id]) for b in items],
                next_cursor=nxt)


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
        with self.db.write() as s:
            batch, restored = trash.restore_batch(s, req.context.ctx, batch_id)
            resp.media = batch_as(RestoreResult, batch, restored_nodes=restored)


class ResourceOpen:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="openResource", summary="Open a resource",
                 tags=["recent"], description="Records it in my recent files.",
                 responses={200: contract.Answer(Resource, "The resource.")})
    def on_post(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        with self.db.write() as s:
            res, node, access, unit = recent.open_resource(s, req.context.ctx, resource_id)
            resp.media = resource_body(s, res, node, access, unit)


class MyRecent:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="myRecent", summary="My recently opened resources",
                 tags=["recent"], query=PageQuery, responses={200: RecentList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, PageQuery)
        with self.db.read() as s:
            items, nxt = recent.list_recent(s, req.context.ctx, q.limit, q.cursor)
            resp.media = RecentList(items=[msgspec.convert(i, RecentItem) for i in items],
                                    next_cursor=nxt)
