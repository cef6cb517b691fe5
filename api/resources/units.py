"""Unit resources and units: creating a unit resource (operation ``create_resource``),
reading a resource, a unit's snapshot and revision, applying a changeset
(``wharf.units``)."""
from __future__ import annotations

import re

import falcon
import msgspec

from api import contract, serialize
from api.resources.operations import SUBMISSION_HEADERS, answer_submission, submission_answers
from api.schemas.operations import (
    ChangesetRequest,
    ChangesetResult,
    CreateResourceRequest,
    Resource,
    Unit,
)
from api.serialize import timestamp
from storage.db import Database
from storage.enums import UnitType
from storage.unitpatch import InvalidChangeset
from storage.unitstore import UnitStore
from wharf.infra.errors import ValidationFailed
from wharf.operations.service import Operations
from wharf.units import resources
from wharf.units import service as units


class Resources:
    def __init__(self, ops: Operations):
        self.ops = ops

    @contract.op(operation_id="createResource",
                 summary="Create a unit resource (operation create_resource)",
                 tags=["resources"],
                 description="Starts a `create_resource` operation; its result names the "
                             "new node, resource and unit. 409 `idempotency_key_reused` "
                             "when the key was used for a different request.",
                 body=CreateResourceRequest, headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(404, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, CreateResourceRequest)
        # The request as the idempotency fingerprint has always seen it (field order and
        # an absent parent_id as null included).
        request = {"space_id": body.space_id, "parent_id": body.parent_id,
                   "name": body.name, "unit_type": str(body.unit_type)}
        sub = resources.submit_create_resource(self.ops, req.context.ctx,
                                               req.get_header("Idempotency-Key"), request)
        answer_submission(resp, sub)


class ResourceItem:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="getResource", summary="A resource", tags=["resources"],
                 description="Visitors may read resources of public or link-shared nodes.",
                 responses={200: Resource}, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        e = resources.read_resource(self.db, req.context.ctx, resource_id)
        resp.media = serialize.resource(e.resource, e.node, e.access, e.unit, e.node_resource)


class UnitItem:
    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    @contract.op(operation_id="getUnit", summary="A unit's snapshot and revision",
                 tags=["units"], responses={200: Unit}, auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        unit, info = units.read_unit(self.db, self.store, req.context.ctx, unit_id)
        resp.media = Unit(unit_id=unit.id, unit_type=UnitType(unit.unit_type),
                          revision=unit.revision, snapshot=unit.snapshot,
                          resource_id=info["resource_id"], node_id=info["node_id"],
                          updated_at=timestamp(unit.updated_at))


CHANGESET_PROBLEMS = (
    "Problems (besides the common ones): 400 `invalid_changeset` (malformed operation or "
    "JSON Pointer, a pointer that does not resolve, a failed `test`; `details.op_index`), "
    "400 `unit_too_deep` (an inserted value would nest below WHARF_UNIT_MAX_DEPTH levels), "
    "400 `malformed_json` (also for NaN, Infinity and numbers that overflow a double), "
    "409 `revision_conflict`, 413 `changeset_too_large` (more operations than "
    "WHARF_UNIT_MAX_CHANGESET_OPS), 413 `unit_too_large` (the changeset copies, or the "
    "document would grow to, more than WHARF_UNIT_MAX_SNAPSHOT_BYTES). Nothing is stored "
    "on any of them.")
_IN_OPERATION = re.compile(r"^/changes/(\d+)/")


def read_changeset(req: falcon.Request) -> ChangesetRequest:
    """The body as a ChangesetRequest; a malformed patch operation is 400
    ``invalid_changeset`` with its ``details.op_index`` (as the patch engine reports
    the operations it cannot apply)."""
    try:
        return contract.read_body(req, ChangesetRequest)
    except ValidationFailed as exc:
        pointer = (exc.details.get("errors") or [{}])[0].get("pointer", "")
        inside = _IN_OPERATION.match(pointer)
        if inside is None:
            raise
        index = int(inside.group(1))
        raise InvalidChangeset(f"operation {index}: {exc.message}"[:500],
                               details={"op_index": index}) from None


class UnitChangesets:
    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    @contract.op(operation_id="applyChangeset",
                 summary="Apply an RFC 6902 JSON Patch against a base revision",
                 tags=["units"], description=CHANGESET_PROBLEMS, body=ChangesetRequest,
                 responses={200: ChangesetResult}, problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        body = read_changeset(req)
        unit = units.apply_changeset(self.db, self.store, req.context.ctx, unit_id,
                                     body.base_revision, msgspec.to_builtins(body.changes))
        resp.media = ChangesetResult(unit_id=unit.id, revision=unit.revision,
                                     snapshot=unit.snapshot)
