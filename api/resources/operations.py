"""Operations (read, long-poll, list, retry, cancel) and the operation-creating endpoints
for unit resources; units (snapshot, changesets)."""
from __future__ import annotations

import falcon

from api import serialize
from api.body import read_json
from storage.db import Database
from storage.models import Operation
from storage.unitstore import UnitStore
from wharf import nodes, resources, units
from wharf.clock import iso
from wharf.errors import ValidationFailed
from wharf.operations.service import DONE, Operations, Submission
from wharf.pagination import parse_limit

MAX_WAIT = 60.0
RETRY_AFTER = "1"


def operation_json(op: Operation) -> dict:
    return {"id": op.id, "kind": op.kind, "status": op.status, "done": op.status in DONE,
            "attempts": op.attempts, "max_attempts": op.max_attempts,
            "created_at": iso(op.created_at), "updated_at": iso(op.updated_at),
            "completed_at": iso(op.completed_at), "next_attempt_at": iso(op.next_attempt_at),
            "result": op.result, "error": op.error}


def write_operation(resp: falcon.Response, op: Operation, status: int = 200) -> None:
    resp.media = operation_json(op)
    resp.status = status
    resp.location = f"/api/operations/{op.id}"
    if op.status not in DONE:
        resp.set_header("Retry-After", RETRY_AFTER)


def answer_submission(resp: falcon.Response, sub: Submission) -> None:
    """202 while the operation is not done (first request or replay); 200 once it is."""
    op = sub.operation
    write_operation(resp, op, 200 if (not sub.created and op.status in DONE) else 202)


def parse_wait(raw: str | None) -> float:
    if raw is None or raw == "":
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        raise ValidationFailed("wait must be a number of seconds", details={"field": "wait"}) from None
    if not 0 <= value <= 3600 or value != value:
        raise ValidationFailed("wait must be between 0 and 60 seconds", details={"field": "wait"})
    return min(value, MAX_WAIT)


class OperationItem:
    def __init__(self, db: Database, ops: Operations, notifier):
        self.db, self.ops, self.notifier = db, ops, notifier

    def _load(self, req, operation_id) -> Operation:
        with self.db.read() as s:
            return self.ops.get(s, req.context.ctx, operation_id)

    def on_get(self, req, resp, operation_id):
        wait = parse_wait(req.get_param("wait"))
        op = self._load(req, operation_id)
        if wait > 0 and op.status not in DONE and self.notifier is not None:
            state = {"op": op}

            def is_done() -> bool:
                state["op"] = self._load(req, operation_id)
                return state["op"].status in DONE

            self.notifier.wait(op.id, wait, is_done)
            op = state["op"]
        write_operation(resp, op)


class OperationAttempts:
    def __init__(self, db: Database, ops: Operations):
        self.db, self.ops = db, ops

    def on_get(self, req, resp, operation_id):
        with self.db.read() as s:
            rows = self.ops.attempts(s, req.context.ctx, operation_id)
            resp.media = {"items": [{"number": a.number, "worker_id": a.worker_id,
                                     "started_at": iso(a.started_at),
                                     "finished_at": iso(a.finished_at),
                                     "outcome": a.outcome, "error": a.error} for a in rows]}


class OperationList:
    def __init__(self, db: Database, ops: Operations):
        self.db, self.ops = db, ops

    def on_get(self, req, resp):
        limit = parse_limit(req.get_param("limit"))
        with self.db.read() as s:
            items, nxt = self.ops.list(s, req.context.ctx, status=req.get_param("status"),
                                       kind=req.get_param("kind"), limit=limit,
                                       cursor=req.get_param("cursor"))
            resp.media = {"items": [operation_json(o) for o in items], "next_cursor": nxt}


class OperationRetry:
    def __init__(self, ops: Operations):
        self.ops = ops

    def on_post(self, req, resp, operation_id):
        write_operation(resp, self.ops.retry(req.context.ctx, operation_id))


class OperationCancel:
    def __init__(self, ops: Operations):
        self.ops = ops

    def on_post(self, req, resp, operation_id):
        write_operation(resp, self.ops.cancel(req.context.ctx, operation_id))


class Resources:
    def __init__(self, ops: Operations):
        self.ops = ops

    def on_post(self, req, resp):
        body = read_json(req, "CreateResourceRequest")
        sub = resources.submit_create_resource(self.ops, req.context.ctx,
                                               req.get_header("Idempotency-Key"), body)
        answer_submission(resp, sub)


def resource_json(s, res, node, access, unit) -> dict:
    node_ref = nodes.resources_for(s, [node.id]).get(node.id)
    return {"id": res.id, "kind": res.kind, "node_id": node.id,
            "created_by": res.created_by, "created_at": iso(res.created_at),
            "unit": ({"unit_id": unit.unit_id, "unit_type": unit.unit_type} if unit else None),
            "node": serialize.node(node, access, node_ref)}


class ResourceItem:
    anonymous_get = True

    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp, resource_id):
        with self.db.read() as s:
            res, node, access, unit = resources.get_resource(s, req.context.ctx, resource_id)
            resp.media = resource_json(s, res, node, access, unit)


class UnitItem:
    anonymous_get = True

    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    def on_get(self, req, resp, unit_id):
        unit, info = units.read_unit(self.db, self.store, req.context.ctx, unit_id)
        resp.media = {"unit_id": unit.id, "unit_type": unit.unit_type, "revision": unit.revision,
                      "snapshot": unit.snapshot, "resource_id": info["resource_id"],
                      "node_id": info["node_id"], "updated_at": iso(unit.updated_at)}


class UnitChangesets:
    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    def on_post(self, req, resp, unit_id):
        body = read_json(req, "ChangesetRequest")
        unit = units.apply_changeset(self.db, self.store, req.context.ctx, unit_id,
                                     body.get("base_revision"), body.get("changes"))
        resp.media = {"unit_id": unit.id, "revision": unit.revision, "snapshot": unit.snapshot}
