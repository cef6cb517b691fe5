"""Unit resources and units: creating a unit resource (operation ``create_resource``),
reading a resource, a unit's snapshot and revision, applying a changeset
(``wharf.units``)."""
from __future__ import annotations

import re

import falcon
import msgspec

from api import contract, serialize
from api.headers import not_modified, preferences
from api.resources.operations import (
    SUBMISSION_HEADERS,
    answer_submission,
    submission_answers,
)
from api.schemas.operations import (
    ChangesetItem,
    ChangesetList,
    ChangesetQuery,
    ChangesetRequest,
    ChangesetResult,
    CreateResourceRequest,
    ProtectedRange,
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
from wharf.protection import service as protection
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


def unit_etag(revision: int) -> str:
    """The strong ETag of a unit's representation: its revision is the validator."""
    return f'"rev-{revision}"'


def write_json(resp: falcon.Response, body: msgspec.Struct) -> None:
    """``body`` (which may hold a document as ``msgspec.Raw`` JSON) as the answer."""
    resp.data = msgspec.json.encode(body)
    resp.content_type = falcon.MEDIA_JSON


class UnitItem:
    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    @contract.op(operation_id="getUnit", summary="A unit's snapshot and revision",
                 tags=["units"],
                 description="The ETag is the revision: with `If-None-Match` naming it the "
                             "answer is 304 and the document is not read. A client that "
                             "holds an older revision may fetch just the changesets after "
                             "it (`GET /api/units/{unit_id}/changesets?after=N`).",
                 headers=("If-None-Match",),
                 responses={200: contract.Answer(Unit, "The unit.", headers=("ETag",)),
                            304: contract.Answer(None, "Not modified (`If-None-Match`).",
                                                 headers=("ETag",))},
                 auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        view = units.read_unit(self.db, self.store, req.context.ctx, unit_id,
                               current=lambda revision: not_modified(req, unit_etag(revision)))
        resp.set_header("ETag", unit_etag(view.head.revision))
        if view.document_json is None:
            resp.status = falcon.HTTP_304
            return
        ranges = [ProtectedRange(object_id=v.obj.id, name=v.obj.name, target=v.target,
                                 **v.rights.as_dict())
                  for v in protection.capabilities(self.db, self.store, req.context.ctx,
                                                   unit_id)]
        write_json(resp, Unit(unit_id=view.head.unit_id, unit_type=UnitType(view.head.unit_type),
                              revision=view.head.revision,
                              snapshot=msgspec.Raw(view.document_json),  # type: ignore[arg-type]
                              resource_id=view.resource_id, node_id=view.node_id,
                              updated_at=timestamp(view.head.updated_at),
                              protected_ranges=ranges or msgspec.UNSET))


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


def wants_minimal(req: falcon.Request) -> bool:
    """``Prefer: return=minimal`` (RFC 7240 §4.2) among the request's preferences."""
    return any(p.split(";")[0].strip().lower().replace(" ", "") == "return=minimal"
               for p in preferences(req.get_header("Prefer")))


class UnitChangesets:
    def __init__(self, db: Database, store: UnitStore):
        self.db, self.store = db, store

    @contract.op(operation_id="applyChangeset",
                 summary="Apply an RFC 6902 JSON Patch against a base revision",
                 tags=["units"],
                 description="The answer carries the new document (`snapshot`), or, with "
                             "`Prefer: return=minimal`, only the new revision (its cost "
                             "then follows the changeset, not the document). "
                             + CHANGESET_PROBLEMS,
                 body=ChangesetRequest, headers=("Prefer",),
                 responses={200: contract.Answer(ChangesetResult, "Applied.",
                                                 headers=("ETag", "Preference-Applied"))},
                 problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        body = read_changeset(req)
        minimal = wants_minimal(req)
        unit = units.apply_changeset(self.db, self.store, req.context.ctx, unit_id,
                                     body.base_revision, msgspec.to_builtins(body.changes),
                                     with_document=not minimal)
        resp.set_header("ETag", unit_etag(unit.revision))
        if minimal:
            resp.set_header("Preference-Applied", "return=minimal")
        write_json(resp, ChangesetResult(
            unit_id=unit.id, revision=unit.revision,
            snapshot=None if unit.document_json is None
            else msgspec.Raw(unit.document_json)))  # type: ignore[arg-type]

    @contract.op(operation_id="listChangesets",
                 summary="The changesets after a revision, oldest first",
                 tags=["units"],
                 description="What a client holding revision `after` applies, in order, to "
                             "reach the current revision (each as it was posted or merged): "
                             "keyset pages of at most `limit`; `next_after` is the `after` "
                             "of the next page (null on the last). Readers of the unit. "
                             "410 `history_pruned` when history retention deleted some of "
                             "them: read the unit again.",
                 query=ChangesetQuery, responses={200: ChangesetList}, auth="optional",
                 problems=(410,))
    def on_get(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        q = contract.read_query(req, ChangesetQuery)
        revisions = units.read_changesets(self.db, self.store, req.context.ctx, unit_id,
                                          q.after, q.limit + 1)
        page = revisions[:q.limit]
        resp.media = ChangesetList(
            items=[ChangesetItem(revision=r.revision, changes=r.changeset,
                                 author_id=r.author_id, origin=r.origin,
                                 created_at=timestamp(r.created_at)) for r in page],
            next_after=page[-1].revision if len(revisions) > q.limit else None)
