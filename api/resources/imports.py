"""Imports of Office and CSV files into new unit resources (operation ``import_file``,
``wharf.exchange``)."""
from __future__ import annotations

import falcon

from api import contract
from api.resources.operations import SUBMISSION_HEADERS, answer_submission, submission_answers
from api.schemas.imports import ImportRequest
from wharf.exchange import importer
from wharf.operations.service import Operations


class Imports:
    def __init__(self, ops: Operations):
        self.ops = ops

    @contract.op(operation_id="createImport",
                 summary="Import a file as a unit resource (operation import_file)",
                 tags=["resources"],
                 description="Starts an `import_file` operation: a worker reads the file "
                             "of a blob resource, or of the caller's `uploaded` upload "
                             "session, which the import consumes (409 "
                             "`upload_session_state` for a session in another state): "
                             "XLSX, XLS, XLSB, ODS, CSV, TSV, DOCX, PPTX; DOC and PPT "
                             "when LibreOffice is configured. It creates a `sheet`, `doc` "
                             "or `slide` unit resource in the target folder. Its result "
                             "names the new node, resource and unit; a failure's "
                             "`error.code` is `unsupported_format`, `file_too_complex`, "
                             "`corrupt_file` or `conversion_timeout`. 404 for a blob, "
                             "session or target the caller cannot see, 403 without the "
                             "right to create there.",
                 body=ImportRequest, headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(403, 404, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, ImportRequest)
        request = {"blob_resource_id": body.blob_resource_id,
                   "upload_session_id": body.upload_session_id, "space_id": body.space_id,
                   "parent_id": body.parent_id, "name": body.name,
                   "unit_type": body.unit_type}
        sub = importer.submit_import(self.ops, req.context.ctx,
                                     req.get_header("Idempotency-Key"), request)
        answer_submission(resp, sub)


def mount(app: contract.App, ops: Operations) -> None:
    app.add_route("/api/imports", Imports(ops))
