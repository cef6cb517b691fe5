"""Spaces, members and the node tree (``wharf.spaces``)."""
from __future__ import annotations

import falcon
import msgspec

from api import contract, serialize
from api.resources.operations import SUBMISSION_HEADERS, answer_submission, submission_answers
from api.schemas.common import PageQuery
from api.schemas.spaces import (
    CreateNodeRequest,
    CreateSpaceRequest,
    MemberList,
    NodeList,
    NodeListItem,
    PutMemberByNameRequest,
    PutMemberRequest,
    SpaceList,
    UpdateNodeRequest,
    UpdateSpaceRequest,
    changes,
)
from api.schemas.spaces import Member as MemberBody
from api.schemas.spaces import Node as NodeBody
from api.schemas.spaces import Space as SpaceBody
from storage.db import Database
from storage.enums import Role
from wharf.identity import people
from wharf.operations.service import Operations
from wharf.spaces import nodes
from wharf.spaces import service as spaces


def _node(entry: nodes.NodeEntry) -> NodeBody:
    return serialize.node(entry.node, entry.access, entry.resource)


def _node_page(page: tuple[list[nodes.NodeEntry], str | None]) -> NodeList:
    entries, nxt = page
    return NodeList(items=[NodeListItem(**msgspec.structs.asdict(_node(e)),
                                        has_children=e.has_children) for e in entries],
                    next_cursor=nxt)


class Spaces:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="listSpaces", summary="Spaces I own or belong to",
                 tags=["spaces"], query=PageQuery, responses={200: SpaceList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, PageQuery)
        items, nxt = spaces.list_spaces(self.db, req.context.ctx, q.limit, q.cursor)
        resp.media = SpaceList(items=[serialize.space(sp, role) for sp, role in items],
                               next_cursor=nxt)

    @contract.op(operation_id="createSpace", summary="Create a team space", tags=["spaces"],
                 body=CreateSpaceRequest,
                 responses={201: contract.Answer(SpaceBody, "created", headers=("Location",))})
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, CreateSpaceRequest)
        space = spaces.create_team_space(self.db, req.context.ctx, body.name, str(body.type))
        resp.media = serialize.space(space, Role.OWNER)
        resp.status = falcon.HTTP_201
        resp.location = f"/api/spaces/{space.id}"


class Space:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="getSpace", summary="A space", tags=["spaces"],
                 description="Visitors may read a space with `public_read`.",
                 responses={200: SpaceBody}, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        space, access = spaces.get_space(self.db, req.context.ctx, space_id)
        resp.media = serialize.space(space, access.role)

    @contract.op(operation_id="updateSpace",
                 summary="Rename a space, set its description or public_read",
                 tags=["spaces"],
                 description="Owner or admin. 400 `validation_failed` naming the field (a "
                             "name over 128 characters, a description over 4,096); 403 "
                             "`space_read_only` while the space is read-only.",
                 body=UpdateSpaceRequest, responses={200: SpaceBody})
    def on_patch(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        body = contract.read_body(req, UpdateSpaceRequest)
        space, access = spaces.update_space(self.db, req.context.ctx, space_id, changes(body))
        resp.media = serialize.space(space, access.role)


class SpaceRootNodes:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="listRootNodes", summary="Root nodes of a space",
                 tags=["nodes"], query=PageQuery, responses={200: NodeList}, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        q = contract.read_query(req, PageQuery)
        resp.media = _node_page(nodes.list_roots(self.db, req.context.ctx, space_id, q.limit,
                                                 q.cursor))


class Members:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="listMembers", summary="Team members", tags=["spaces"],
                 description="Keyset-paged by user id (`?limit=&cursor=`); the owner is "
                             "not a member.",
                 query=PageQuery, responses={200: MemberList})
    def on_get(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        q = contract.read_query(req, PageQuery)
        items, nxt = spaces.list_members(self.db, req.context.ctx, space_id, q.limit,
                                         q.cursor)
        resp.media = MemberList(items=[serialize.member(m, u) for m, u in items],
                                next_cursor=nxt)

    @contract.op(operation_id="putMemberByUsername",
                 summary="Add a member by username, or change their role", tags=["spaces"],
                 description="`PUT /api/spaces/{space_id}/members/{user_id}` naming the user "
                             "by `username` (exact, any case): 201 when the user joins, 200 "
                             "when their role changes. 404 `user_not_found`; 409 "
                             "`not_a_team_space`, `owner_not_member`; 403 `owner_required`; "
                             "429 `rate_limited` (counted with `GET /api/users?username=`).",
                 body=PutMemberByNameRequest,
                 responses={200: contract.Answer(MemberBody, "role changed"),
                            201: contract.Answer(MemberBody, "added")},
                 problems=(409, 429))
    def on_put(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        body = contract.read_body(req, PutMemberByNameRequest)
        people.take_lookup(self.db, req.context.ctx)
        member, user, created = spaces.put_member(self.db, req.context.ctx, space_id, None,
                                                  str(body.role), username=body.username)
        resp.media = serialize.member(member, user)
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200


class Member:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="putMember", summary="Add a member or change their role",
                 tags=["spaces"],
                 description="201 when the user joins, 200 when their role changes. 409 "
                             "`not_a_team_space`, `owner_not_member`; 403 `owner_required`.",
                 body=PutMemberRequest,
                 responses={200: contract.Answer(MemberBody, "role changed"),
                            201: contract.Answer(MemberBody, "added")},
                 problems=(409,))
    def on_put(self, req: falcon.Request, resp: falcon.Response, space_id: str,
               user_id: str) -> None:
        body = contract.read_body(req, PutMemberRequest)
        member, user, created = spaces.put_member(self.db, req.context.ctx, space_id, user_id,
                                                  str(body.role))
        resp.media = serialize.member(member, user)
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200

    @contract.op(operation_id="deleteMember", summary="Remove a member, or leave (your own id)",
                 tags=["spaces"], responses={204: contract.Answer(None, "removed")},
                 problems=(409,))
    def on_delete(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                  user_id: str) -> None:
        spaces.delete_member(self.db, req.context.ctx, space_id, user_id)
        resp.status = falcon.HTTP_204


class Nodes:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="createNode", summary="Create an organisational node",
                 tags=["nodes"],
                 description="409 on a duplicate name among siblings; 400 "
                             "`parent_in_other_space`.",
                 body=CreateNodeRequest,
                 responses={201: contract.Answer(NodeBody, "created", headers=("Location",))},
                 problems=(404, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, CreateNodeRequest)
        entry = nodes.create_node(self.db, req.context.ctx, body.space_id, body.parent_id,
                                  body.name)
        resp.media = _node(entry)
        resp.status = falcon.HTTP_201
        resp.location = f"/api/nodes/{entry.node.id}"


class Node:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="getNode", summary="A node", tags=["nodes"],
                 responses={200: NodeBody}, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        resp.media = _node(nodes.get_node(self.db, req.context.ctx, node_id))

    @contract.op(operation_id="updateNode", summary="Rename and/or move a node",
                 tags=["nodes"],
                 description="`parent_id: null` moves the node to the root. 409 on a "
                             "duplicate name, `move_cycle`, `cross_space_move`.",
                 body=UpdateNodeRequest, responses={200: NodeBody}, problems=(409,))
    def on_patch(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        body = contract.read_body(req, UpdateNodeRequest)
        resp.media = _node(nodes.update_node(self.db, req.context.ctx, node_id, changes(body)))


class NodeWithPurge(Node):
    """A node where operations run: DELETE permanently deletes a trashed batch root."""

    def __init__(self, db: Database, ops: Operations):
        super().__init__(db)
        self.ops = ops

    @contract.op(operation_id="purgeNode", summary="Permanently delete a trashed batch root",
                 tags=["trash"],
                 description="Deletes the batch rooted here and every batch nested below it "
                             "(operation `purge_trash`); space owner or team admin only. 409 "
                             "`not_trashed`; 409 `worktree_reference` while a worktree you "
                             "may discard, or one being merged, holds a unit below "
                             "(`details.worktree_ids`: those you may see). Other users' "
                             "worktrees give way: their drafts of the deleted units are "
                             "discarded (`GET /api/worktrees/{id}/events`).",
                 headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(409,))
    def on_delete(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        from wharf.trash import service as trash
        answer_submission(resp, trash.submit_purge(self.ops, req.context.ctx,
                                                   req.get_header("Idempotency-Key"), node_id))


class NodeChildren:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="listChildren", summary="Children of a node", tags=["nodes"],
                 query=PageQuery, responses={200: NodeList}, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, node_id: str) -> None:
        q = contract.read_query(req, PageQuery)
        resp.media = _node_page(nodes.list_children(self.db, req.context.ctx, node_id, q.limit,
                                                    q.cursor))
