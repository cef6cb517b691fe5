"""Sharing: direct grants and link sharing (``wharf.sharing``)."""
from __future__ import annotations

import falcon
import msgspec

from api import contract
from api.schemas.sharing import Grant as GrantBody
from api.schemas.sharing import (
    GrantList,
    GrantListItem,
    LinkSharingRequest,
    LinkSharingState,
    PutGrantByNameRequest,
    PutGrantRequest,
)
from api.serialize import timestamp
from storage.db import Database
from storage.enums import ShareRole
from wharf.identity import people
from wharf.sharing import service as sharing


class Grants:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="listGrants", summary="Direct grants on a node",
                 tags=["sharing"], responses={200: GrantList})
    def on_get(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        resp.media = GrantList(items=[
            GrantListItem(node_id=g.node_id, user_id=g.user_id, role=ShareRole(g.role),
                          created_at=timestamp(g.created_at), username=u.username)
            for g, u in sharing.list_grants(self.db, req.context.ctx, node_id)])

    @contract.op(operation_id="putGrantByUsername",
                 summary="Grant a user, named by username, editor or viewer", tags=["sharing"],
                 description="`PUT /api/nodes/{node_id}/grants/{user_id}` naming the user by "
                             "`username` (exact, any case): 201 when created, 200 when "
                             "changed. 404 `user_not_found`; 409 `grants_not_allowed`, "
                             "`owner_not_grantee`; 429 `rate_limited` (counted with `GET "
                             "/api/users?username=`).",
                 body=PutGrantByNameRequest,
                 responses={200: contract.Answer(GrantBody, "changed"),
                            201: contract.Answer(GrantBody, "granted")},
                 problems=(409, 429))
    def on_put(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        body = contract.read_body(req, PutGrantByNameRequest)
        people.take_lookup(self.db, req.context.ctx)
        grant, created = sharing.put_grant(self.db, req.context.ctx, node_id, None,
                                           str(body.role), username=body.username)
        resp.media = GrantBody(node_id=grant.node_id, user_id=grant.user_id,
                               role=ShareRole(grant.role), created_at=timestamp(grant.created_at))
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200


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
        grant, created = sharing.put_grant(self.db, req.context.ctx, node_id, user_id,
                                           str(body.role))
        resp.media = GrantBody(node_id=grant.node_id, user_id=grant.user_id,
                               role=ShareRole(grant.role), created_at=timestamp(grant.created_at))
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200

    @contract.op(operation_id="deleteGrant", summary="Revoke a grant", tags=["sharing"],
                 responses={204: contract.Answer(None, "revoked")})
    def on_delete(self, req: falcon.Request, resp: falcon.Response, node_id: str,
                  user_id: str) -> None:
        sharing.delete_grant(self.db, req.context.ctx, node_id, user_id)
        resp.status = falcon.HTTP_204


class LinkSharing:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="getLinkSharing", summary="Link sharing state",
                 tags=["sharing"], responses={200: LinkSharingState})
    def on_get(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        resp.media = msgspec.convert(sharing.get_link_sharing(self.db, req.context.ctx, node_id),
                                     LinkSharingState)

    @contract.op(operation_id="putLinkSharing", summary="Turn link sharing on or off",
                 tags=["sharing"], body=LinkSharingRequest,
                 responses={200: LinkSharingState}, problems=(409,))
    def on_put(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        body = contract.read_body(req, LinkSharingRequest)
        state = sharing.put_link_sharing(self.db, req.context.ctx, node_id, body.enabled,
                                         None if body.role is None else str(body.role))
        resp.media = msgspec.convert(state, LinkSharingState)
