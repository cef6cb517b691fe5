"""Spaces, members and the node tree."""
from __future__ import annotations

import falcon

from api import serialize
from api.body import read_json
from storage.db import Database
from storage.models import User
from wharf import nodes, spaces
from wharf.pagination import parse_limit


def _node_page(s, ctx, items, nxt):
    res = nodes.resources_for(s, [n.id for n in items])
    return {"items": [serialize.node(n, nodes.role_for(s, ctx, n), res.get(n.id))
                      for n in items], "next_cursor": nxt}


class Spaces:
    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp):
        limit = parse_limit(req.get_param("limit"))
        with self.db.read() as s:
            items, nxt = spaces.list_spaces(s, req.context.ctx, limit, req.get_param("cursor"))
            resp.media = {"items": [serialize.space(sp, role) for sp, role in items],
                          "next_cursor": nxt}

    def on_post(self, req, resp):
        body = read_json(req, "CreateSpaceRequest")
        with self.db.write() as s:
            space = spaces.create_team_space(s, req.context.ctx, body.get("name"),
                                             body.get("type", "team"))
            resp.media = serialize.space(space, "owner")
        resp.status = falcon.HTTP_201
        resp.location = f"/api/spaces/{space.id}"


class Space:
    anonymous_get = True

    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp, space_id):
        with self.db.read() as s:
            space, access = spaces.get_space(s, req.context.ctx, space_id)
            resp.media = serialize.space(space, access.role)

    def on_patch(self, req, resp, space_id):
        body = read_json(req, "UpdateSpaceRequest")
        with self.db.write() as s:
            space, access = spaces.update_space(s, req.context.ctx, space_id, body)
            resp.media = serialize.space(space, access.role)


class SpaceRootNodes:
    anonymous_get = True

    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp, space_id):
        limit = parse_limit(req.get_param("limit"))
        with self.db.read() as s:
            ctx = req.context.ctx
            _, _, items, nxt = nodes.list_roots(s, ctx, space_id, limit, req.get_param("cursor"))
            resp.media = _node_page(s, ctx, items, nxt)


class Members:
    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp, space_id):
        with self.db.read() as s:
            resp.media = {"items": [serialize.member(m, u) for m, u in
                                    spaces.list_members(s, req.context.ctx, space_id)]}


class Member:
    def __init__(self, db: Database):
        self.db = db

    def on_put(self, req, resp, space_id, user_id):
        body = read_json(req, "PutMemberRequest")
        with self.db.write() as s:
            member, created = spaces.put_member(s, req.context.ctx, space_id, user_id,
                                                body.get("role"))
            resp.media = serialize.member(member, s.get(User, member.user_id))
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200

    def on_delete(self, req, resp, space_id, user_id):
        with self.db.write() as s:
            spaces.delete_member(s, req.context.ctx, space_id, user_id)
        resp.status = falcon.HTTP_204


class Nodes:
    def __init__(self, db: Database):
        self.db = db

    def on_post(self, req, resp):
        body = read_json(req, "CreateNodeRequest")
        with self.db.write() as s:
            ctx = req.context.ctx
            node = nodes.create_node(s, ctx, body.get("space_id"), body.get("parent_id"),
                                     body.get("name"))
            resp.media = serialize.node(node, nodes.role_for(s, ctx, node), None)
        resp.status = falcon.HTTP_201
        resp.location = f"/api/nodes/{node.id}"


class Node:
    anonymous_get = True

    def __init__(self, db: Database, ops=None):
        self.db = db
        self.ops = ops

    def on_delete(self, req, resp, node_id):
        """Permanent delete of a trashed batch root: an operation (``purge_trash``)."""
        from api.resources.operations import answer_submission
        from wharf import trash
        if self.ops is None:
            raise falcon.HTTPMethodNotAllowed(["GET", "PATCH"])
        answer_submission(resp, trash.submit_purge(self.ops, req.context.ctx,
                                                   req.get_header("Idempotency-Key"), node_id))

    def on_get(self, req, resp, node_id):
        with self.db.read() as s:
            node, access = nodes.get_node(s, req.context.ctx, node_id)
            resp.media = serialize.node(node, access, nodes.resources_for(s, [node.id]).get(node.id))

    def on_patch(self, req, resp, node_id):
        body = read_json(req, "UpdateNodeRequest")
        with self.db.write() as s:
            node, access = nodes.update_node(s, req.context.ctx, node_id, body)
            resp.media = serialize.node(node, access, nodes.resources_for(s, [node.id]).get(node.id))


class NodeChildren:
    anonymous_get = True

    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp, node_id):
        limit = parse_limit(req.get_param("limit"))
        with self.db.read() as s:
            ctx = req.context.ctx
            _, _, items, nxt = nodes.list_children(s, ctx, node_id, limit,
                                                   req.get_param("cursor"))
            resp.media = _node_page(s, ctx, items, nxt)
