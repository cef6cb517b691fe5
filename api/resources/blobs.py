"""Upload sessions, blob content (ranged reads, downloads) and content replacement."""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol

import falcon

from api import contract
from api.content import send_content
from api.errors import PROBLEM
from api.resources.operations import SUBMISSION_HEADERS, answer_submission, submission_answers
from api.schemas.blobs import BINARY, BlobResource, CreateUploadSessionRequest, UploadResult
from api.schemas.blobs import UploadSession as UploadSessionBody
from api.serialize import timestamp
from storage.blobstore import BlobStore
from storage.db import Database
from storage.enums import BlobState, UploadState
from wharf import blobs
from wharf.infra.settings import Settings
from wharf.operations.service import Operations

OCTETS = "application/octet-stream"
#: Headers of a content answer (200/206); 206 adds Content-Range.
CONTENT_HEADERS = ("ETag", "Accept-Ranges")



class UploadSessionRow(Protocol):
    id: str
    state: str
    space_id: str
    parent_id: str | None
    filename: str
    declared_size: int
    received_size: int | None
    sha256: str | None
    mime_type: str | None
    operation_id: str | None
    error_code: str | None
    node_id: str
    resource_id: str
    created_at: datetime
    updated_at: datetime
    expires_at: datetime


def session_body(u: UploadSessionRow) -> UploadSessionBody:
    return UploadSessionBody(
        id=u.id, state=UploadState(blobs.visible_state(u)), space_id=u.space_id,
        parent_id=u.parent_id, filename=u.filename, size=u.declared_size,
        received_size=u.received_size, sha256=u.sha256, mime_type=u.mime_type,
        operation_id=u.operation_id, error_code=u.error_code, node_id=u.node_id,
        resource_id=u.resource_id, created_at=timestamp(u.created_at),
        updated_at=timestamp(u.updated_at), expires_at=timestamp(u.expires_at))


def body_reader(req: falcon.Request) -> Callable[[int], bytes]:
    read: Callable[[int], bytes] = req.bounded_stream.read
    return read


class UploadSessions:
    def __init__(self, db: Database, settings: Settings):
        self.db, self.settings = db, settings

    @contract.op(operation_id="createUploadSession",
                 summary="Start an upload: reserves node, resource and object ids",
                 tags=["blobs"],
                 description="Then PUT the bytes to `/content` and POST `/complete`. 201 "
                             "when created, 200 for a replay (same Idempotency-Key and "
                             "body); 409 `idempotency_key_reused` for a different body.",
                 body=CreateUploadSessionRequest, headers=("Idempotency-Key",),
                 responses={201: contract.Answer(UploadSessionBody, "Created.",
                                                 headers=("Location",)),
                            200: contract.Answer(UploadSessionBody, "A replay.",
                                                 headers=("Location",))},
                 problems=(404, 409))
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, CreateUploadSessionRequest)
        request = {"space_id": body.space_id, "parent_id": body.parent_id,
                   "filename": body.filename, "size": body.size}
        upload, created = blobs.create_session(self.db, self.settings, req.context.ctx,
                                               req.get_header("Idempotency-Key"), request)
        resp.media = session_body(upload)
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200
        resp.location = f"/api/blob-upload-sessions/{upload.id}"


class UploadSession:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="getUploadSession", summary="An upload session",
                 tags=["blobs"], responses={200: UploadSessionBody})
    def on_get(self, req: falcon.Request, resp: falcon.Response, session_id: str) -> None:
        resp.media = session_body(blobs.read_session(self.db, req.context.ctx, session_id))

    @contract.op(operation_id="abortUploadSession",
                 summary="Abort; the object is queued for deletion", tags=["blobs"],
                 description="Idempotent. 409 `upload_session_state` while verifying or "
                             "importing, or once completed or imported.",
                 responses={204: contract.Answer(None, "Aborted.")}, problems=(409,))
    def on_delete(self, req: falcon.Request, resp: falcon.Response, session_id: str) -> None:
        blobs.abort_session(self.db, req.context.ctx, session_id)
        resp.status = falcon.HTTP_204


class UploadSessionContent:
    def __init__(self, db: Database, store: BlobStore, settings: Settings):
        self.db, self.store, self.settings = db, store, settings
        self.max_body_bytes = settings.max_upload_size

    @contract.op(operation_id="uploadContent",
                 summary="Stream the bytes (Content-Length required)", tags=["blobs"],
                 description="Exactly the declared size (400 `size_mismatch`, 411 "
                             "`length_required`). A second PUT replaces the first. 409 "
                             "`upload_session_state` / `upload_session_expired`.",
                 raw_body=(OCTETS, BINARY), responses={200: UploadResult},
                 problems=(409, 411, 413))
    def on_put(self, req: falcon.Request, resp: falcon.Response, session_id: str) -> None:
        result = blobs.put_content(self.db, self.store, self.settings, req.context.ctx,
                                   session_id, req.content_length, body_reader(req))
        resp.media = UploadResult(size=result.size, sha256=result.sha256,
                                  mime_type=result.mime_type)


class UploadSessionComplete:
    def __init__(self, ops: Operations):
        self.ops = ops

    @contract.op(operation_id="completeUpload",
                 summary="Verify and publish (operation create_blob_resource)",
                 tags=["blobs"],
                 description="409 `upload_not_received` before the content PUT; 409 "
                             "`upload_session_state` / `upload_session_expired`.",
                 headers=SUBMISSION_HEADERS,
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response, session_id: str) -> None:
        answer_submission(resp, blobs.complete_session(
            self.ops, req.context.ctx, req.get_header("Idempotency-Key"), session_id))


class BlobMeta:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="getBlobResource", summary="Blob metadata", tags=["blobs"],
                 responses={200: contract.Answer(BlobResource, "The metadata.",
                                                 headers=("ETag",))},
                 auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        blob, node, _access = blobs.describe_blob(self.db, req.context.ctx, resource_id)
        resp.media = blob_body(blob, node.id)
        resp.set_header("ETag", blobs.etag_header(blob))


class BlobRow(Protocol):
    resource_id: str
    filename: str
    mime_type: str
    size: int
    sha256: str
    etag: str
    state: str
    created_at: datetime
    updated_at: datetime


def blob_body(blob: BlobRow, node_id: str) -> BlobResource:
    """A blob's metadata as the API answers it."""
    return BlobResource(
        resource_id=blob.resource_id, node_id=node_id, filename=blob.filename,
        mime_type=blob.mime_type, size=blob.size, sha256=blob.sha256,
        etag=f'"{blob.etag}"', state=BlobState(blob.state),
        created_at=timestamp(blob.created_at), updated_at=timestamp(blob.updated_at))


def _content_answers(whole: str, *, attachment: bool) -> dict[int, contract.Answer]:
    """The bytes: 200 whole, 206 one range, 304 not modified, 416 a range beyond the end.

    The server sends the blob's detected ``mime_type`` as Content-Type (any type, ``*/*``;
    ``application/octet-stream`` when nothing was detected). ``application/octet-stream``
    is declared first so generated clients keep the body as bytes."""
    bytes_headers = (*CONTENT_HEADERS, "Content-Disposition") if attachment \
        else CONTENT_HEADERS
    return {200: contract.Answer(None, whole, headers=bytes_headers, content_type=OCTETS,
                                 schema=BINARY, also=("*/*",)),
            206: contract.Answer(None, "One byte range (`Range`).",
                                 headers=(*bytes_headers, "Content-Range"),
                                 content_type=OCTETS, schema=BINARY, also=("*/*",)),
            304: contract.Answer(None, "Not modified (`If-None-Match`).",
                                 headers=CONTENT_HEADERS),
            416: contract.Answer(None, "The range starts beyond the content.",
                                 headers=("Content-Range",), content_type=PROBLEM,
                                 schema={"$ref": contract.REF.format(name="Problem")})}


def head_answers(answers: dict[int, contract.Answer]) -> dict[int, contract.Answer]:
    """HEAD: the headers of GET, no body."""
    return {status: contract.Answer(None, a.description, headers=a.headers)
            for status, a in answers.items()}


CONTENT = _content_answers("The bytes.", attachment=False)
DOWNLOAD = _content_answers("The bytes as an attachment.", attachment=True)
READ_HEADERS = ("Range", "If-Range", "If-None-Match")


class _BlobReader:
    """Strong ETag, If-None-Match → 304, one byte range → 206, streamed from storage."""

    attachment = False

    def __init__(self, db: Database, store: BlobStore, ops: Operations, settings: Settings):
        self.db, self.store, self.ops, self.settings = db, store, ops, settings
        self.max_body_bytes = settings.max_upload_size

    def _read(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        # Cacheable by shared caches only when everyone may read it anyway.
        blob, space_public = blobs.blob_for_download(self.db, req.context.ctx, resource_id)
        send_content(req, resp, self.store, object_key=blob.object_key, size=blob.size,
                     etag=blobs.etag_header(blob), media_type=blob.mime_type,
                     cache_control="public, no-cache" if space_public else "private, no-store",
                     attachment=blob.filename if self.attachment else None)


class BlobDownload(_BlobReader):
    """The same bytes as ``/content``, as an attachment with an RFC 6266 ``filename*``."""

    attachment = True

    @contract.op(operation_id="downloadBlob",
                 summary="The bytes as an attachment (RFC 6266 filename*)", tags=["blobs"],
                 description="409 `quarantined` while the blob is quarantined.",
                 headers=READ_HEADERS, responses=DOWNLOAD, auth="optional",
                 problems=(409,))
    def on_get(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        self._read(req, resp, resource_id)

    @contract.op(operation_id="downloadBlobHead", summary="downloadBlob without the body",
                 tags=["blobs"], headers=READ_HEADERS, responses=head_answers(DOWNLOAD),
                 auth="optional", problems=(409,))
    def on_head(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        self._read(req, resp, resource_id)


class BlobContent(_BlobReader):
    @contract.op(operation_id="getBlobContent", summary="The bytes: strong ETag, single Range",
                 description="409 `quarantined` while the blob is quarantined.",
                 tags=["blobs"], headers=READ_HEADERS, responses=CONTENT, auth="optional",
                 problems=(409,))
    def on_get(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        self._read(req, resp, resource_id)

    @contract.op(operation_id="getBlobContentHead", summary="getBlobContent without the body",
                 tags=["blobs"], headers=READ_HEADERS, responses=head_answers(CONTENT),
                 auth="optional", problems=(409,))
    def on_head(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        self._read(req, resp, resource_id)

    @contract.op(operation_id="replaceBlobContent",
                 summary="Replace the bytes (operation replace_blob_content)", tags=["blobs"],
                 description="Send `If-Match` with the current ETag (428 without it, 412 when "
                             "it changed) and exactly Content-Length bytes. A replay with "
                             "the same key and headers is answered once its bytes hash the "
                             "same (else 409 `idempotency_key_reused`).",
                 headers=(*SUBMISSION_HEADERS, "If-Match"), raw_body=(OCTETS, BINARY),
                 responses=submission_answers("Accepted (or a replay while not done)."),
                 problems=(409, 411, 412, 413, 428))
    def on_put(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        sub = blobs.replace_content(self.ops, self.db, self.store, self.settings,
                                    req.context.ctx, resource_id,
                                    req.get_header("Idempotency-Key"),
                                    req.get_header("If-Match"), req.content_length,
                                    body_reader(req))
        answer_submission(resp, sub)

