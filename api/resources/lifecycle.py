"""Sharing (grants, link sharing), trash (trash, batches, restore, permanent delete) and
recent files."""
from __future__ import annotations

import falcon

from api.body import read_json
from storage.db import Database
from storage.models import TrashBatch
from wharf import recent, sharing, trash
from wharf.clock import iso
from wharf.pagination import parse_limit


def batch_json(b: TrashBatch) -> dict:
    return {"id": b.id, "space_id": b.space_id, "root_node_id": b.root_node_id,
            "created_by": b.created_by, "node_count": b.node_count,
            "created_at": iso(b.created_at)}


class Grants:
    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp, node_id):
        with self.db.read() as s:
            resp.media = {"items": [{"node_id": g.node_id, "user_id": g.user_id,
                                     "username": u.username, "role": g.role,
                                     "created_at": iso(g.created_at)}
                                    for g, u in sharing.list_grants(s, req.context.ctx, node_id)]}


class Grant:
    def __init__(self, db: Database):
        self.db = db

    def on_put(self, req, resp, node_id, user_id):
        body = read_json(req, "PutGrantRequest")
        with self.db.write() as s:
            grant, created = sharing.put_grant(s, req.context.ctx, node_id, user_id,
                                               body.get("role"))
            resp.media = {"node_id": grant.node_id, "user_id": grant.user_id,
                          "role": grant.role, "created_at": iso(grant.created_at)}
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200

    def on_delete(self, req, resp, node_id, user_id):
        with self.db.write() as s:
            sharing.delete_grant(s, req.context.ctx, node_id, user_id)
        resp.status = falcon.HTTP_204


class LinkSharing:
    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp, node_id):
        from wharf.access import require_share
        with self.db.read() as s:
            node, _ = require_share(s, req.context.principal, node_id)
            resp.media = sharing.get_link_sharing(s, node.id)

    def on_put(self, req, resp, node_id):
        body = read_json(req, "LinkSharingRequest")
        with self.db.write() as s:
            resp.media = sharing.put_link_sharing(s, req.context.ctx, node_id,
                                                  body.get("enabled"), body.get("role"))


class NodeTrash:
    def __init__(self, db: Database):
        self.db = db

    def on_post(self, req, resp, node_id):
        with self.db.write() as s:
            resp.media = batch_json(trash.trash_node(s, req.context.ctx, node_id))


class SpaceTrash:
    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp, space_id):
        limit = parse_limit(req.get_param("limit"))
        with self.db.read() as s:
            items, nxt = trash.list_batches(s, req.context.ctx, space_id, limit,
                                            req.get_param("cursor"))
            nesting = trash.nesting(s, items)
            resp.media = {"items": [{**batch_json(b), **nesting[b.id]} for b in items],
                          "next_cursor": nxt}


class BatchRestore:
    def __init__(self, db: Database):
        self.db = db

    def on_post(self, req, resp, batch_id):
        with self.db.write() as s:
            batch, restored = trash.restore_batch(s, req.context.ctx, batch_id)
            resp.media = {**batch_json(batch), "restored_nodes": restored}


class ResourceOpen:
    def __init__(self, db: Database):
        self.db = db

    def on_post(self, req, resp, resource_id):
        from api.resources.operations import resource_json
        with self.db.write() as s:
            res, node, access, unit = recent.open_resource(s, req.context.ctx, resource_id)
            resp.media = resource_json(s, res, node, access, unit)


class MyRecent:
    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp):
        limit = parse_limit(req.get_param("limit"))
        with self.db.read() as s:
            items, nxt = recent.list_recent(s, req.context.ctx, limit, req.get_param("cursor"))
            resp.media = {"items": items, "next_cursor": nxt}
