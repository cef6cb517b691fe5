"""Office exports of trunk units (operation ``export_unit``), takeouts of a space or of the
caller's spaces (operation ``export_takeout``), and their download (the requester's right
re-checked on every request, 404 once expired)."""
from __future__ import annotations

import falcon

from api import contract
from api.content import send_content
from api.resources.blobs import DOWNLOAD, READ_HEADERS, head_answers
from api.resources.operations import SUBMISSION_HEADERS, answer_submission, submission_answers
from api.schemas.operations import ExportRequest
from storage.blobstore import BlobStore
from storage.db import Database
from storage.unitstore import UnitStore
from wharf.exchange import exports, takeout
from wharf.operations.service import Operations


class UnitExports:
    def __init__(self, ops: Operations, unitstore: UnitStore):
        self.ops, self.unitstore = ops, unitstore

    @contract.op(operation_id="exportUnit",
                 summary="Export a trunk unit to an Office file (operation export_unit)",
                 tags=["exports"],
                 description="View right on the unit. The unit is read at its revision at "
                             "submission; the result names the file's `content_url`, its "
                             "size and SHA-256, and when it expires (WHARF_EXPORT_TTL). 400 "
                             "`validation_failed` when the format does not fit the unit "
                             "type; 409 `idempotency_key_reused` for a different request.",
                 body=ExportRequest, headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(404, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        body = contract.read_body(req, ExportRequest)
        answer_submission(resp, exports.submit_export(
            self.ops, self.unitstore, req.context.ctx, req.get_header("Idempotency-Key"),
            unit_id, body.format, body.sheet))


_TAKEOUT = ("The result names the zip's `content_url`, its size and SHA-256, and when it "
            "expires (WHARF_EXPORT_TTL). The archive holds one file per node at its path "
            "(units as `<name>.<type>.json` and as an Office file, blobs and assets as "
            "their bytes) and `manifest.json` (paths, sizes, SHA-256); trashed nodes are "
            "left out; units are read at their revision when the job starts. More files "
            "than WHARF_TAKEOUT_MAX_FILES fails the operation with `file_too_complex`.")


class SpaceTakeouts:
    def __init__(self, ops: Operations):
        self.ops = ops

    @contract.op(operation_id="exportSpace",
                 summary="Take out a space as a zip (operation export_takeout)",
                 tags=["exports"],
                 description="The owner, or an admin of a team space. " + _TAKEOUT,
                 headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(403, 404, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        answer_submission(resp, takeout.submit_space_takeout(
            self.ops, req.context.ctx, req.get_header("Idempotency-Key"), space_id))


class MyTakeouts:
    def __init__(self, ops: Operations):
        self.ops = ops

    @contract.op(operation_id="exportMine",
                 summary="Take out every space you own as a zip (operation export_takeout)",
                 tags=["exports"],
                 description="Each space you own is a top folder of the archive. " + _TAKEOUT,
                 headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        answer_submission(resp, takeout.submit_user_takeout(
            self.ops, req.context.ctx, req.get_header("Idempotency-Key")))


class ExportContent:
    def __init__(self, db: Database, store: BlobStore):
        self.db, self.store = db, store

    def _read(self, req: falcon.Request, resp: falcon.Response, export_id: str) -> None:
        with self.db.read() as s:
            export = exports.export_for_download(s, req.context.ctx, export_id)
        send_content(req, resp, self.store, object_key=export.object_key, size=export.size,
                     etag=exports.etag_header(export), media_type=exports.media_type(export),
                     cache_control="private, no-store", attachment=export.filename)

    @contract.op(operation_id="getExportContent",
                 summary="An export's file: strong ETag, single Range, as an attachment",
                 tags=["exports"],
                 description="The requester only, while they may view the unit (a "
                             "space's takeout: while they own or administer the space), "
                             "until `expires_at`; 404 otherwise.",
                 headers=READ_HEADERS, responses=DOWNLOAD)
    def on_get(self, req: falcon.Request, resp: falcon.Response, export_id: str) -> None:
        self._read(req, resp, export_id)

    @contract.op(operation_id="getExportContentHead", summary="getExportContent without the body",
                 tags=["exports"], headers=READ_HEADERS, responses=head_answers(DOWNLOAD))
    def on_head(self, req: falcon.Request, resp: falcon.Response, export_id: str) -> None:
        self._read(req, resp, export_id)
