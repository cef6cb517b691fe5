"""Upload sessions, blob content (ranged reads, downloads) and content replacement."""
from __future__ import annotations

import falcon

from api import headers
from api.body import read_json
from api.resources.operations import answer_submission
from storage.blobstore import BlobStore
from storage.db import Database
from storage.models import BlobUploadSession
from wharf import blobs
from wharf.clock import iso
from wharf.config import Settings
from wharf.operations.service import Operations


def session_json(u: BlobUploadSession) -> dict:
    return {"id": u.id, "state": blobs.visible_state(u), "space_id": u.space_id, "parent_id": u.parent_id,
            "filename": u.filename, "size": u.declared_size, "received_size": u.received_size,
            "sha256": u.sha256, "mime_type": u.mime_type, "operation_id": u.operation_id,
            "error_code": u.error_code, "node_id": u.node_id, "resource_id": u.resource_id,
            "created_at": iso(u.created_at), "updated_at": iso(u.updated_at),
            "expires_at": iso(u.expires_at)}


def _reader(req: falcon.Request):
    return req.bounded_stream.read


class UploadSessions:
    def __init__(self, db: Database, settings: Settings):
        self.db, self.settings = db, settings

    def on_post(self, req, resp):
        body = read_json(req, "CreateUploadSessionRequest")
        upload, created = blobs.create_session(self.db, self.settings, req.context.ctx,
                                               req.get_header("Idempotency-Key"), body)
        resp.media = session_json(upload)
        resp.status = falcon.HTTP_201 if created else falcon.HTTP_200
        resp.location = f"/api/blob-upload-sessions/{upload.id}"


class UploadSession:
    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp, session_id):
        with self.db.read() as s:
            resp.media = session_json(blobs.get_session(s, req.context.ctx, session_id))

    def on_delete(self, req, resp, session_id):
        blobs.abort_session(self.db, req.context.ctx, session_id)
        resp.status = falcon.HTTP_204


class UploadSessionContent:
    def __init__(self, db: Database, store: BlobStore, settings: Settings):
        self.db, self.store, self.settings = db, store, settings
        self.max_body_bytes = settings.max_upload_size

    def on_put(self, req, resp, session_id):
        result = blobs.put_content(self.db, self.store, self.settings, req.context.ctx,
                                   session_id, req.content_length, _reader(req))
        resp.media = {"size": result.size, "sha256": result.sha256,
                      "mime_type": result.mime_type}


class UploadSessionComplete:
    def __init__(self, ops: Operations):
        self.ops = ops

    def on_post(self, req, resp, session_id):
        answer_submission(resp, blobs.complete_session(
            self.ops, req.context.ctx, req.get_header("Idempotency-Key"), session_id))


class BlobMeta:
    anonymous_get = True

    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp, resource_id):
        with self.db.read() as s:
            blob, node, access = blobs.blob_for_read(s, req.context.ctx, resource_id)
            resp.media = {"resource_id": blob.resource_id, "node_id": node.id,
                          "filename": blob.filename, "mime_type": blob.mime_type,
                          "size": blob.size, "sha256": blob.sha256,
                          "etag": blobs.etag_header(blob), "state": blob.state,
                          "created_at": iso(blob.created_at), "updated_at": iso(blob.updated_at)}
        resp.set_header("ETag", blobs.etag_header(blob))


class _BlobReader:
    """Strong ETag, If-None-Match → 304, one byte range → 206, streamed from storage."""

    attachment = False
    anonymous_get = True
    anonymous_head = True

    def __init__(self, db: Database, store: BlobStore, ops: Operations, settings: Settings):
        self.db, self.store, self.ops, self.settings = db, store, ops, settings
        self.max_body_bytes = settings.max_upload_size

    def on_get(self, req, resp, resource_id):
        with self.db.read() as s:
            blob, node, access = blobs.blob_for_read(s, req.context.ctx, resource_id)
            # Cacheable by shared caches only when everyone may read it anyway.
            space_public = blobs.publicly_readable(s, node)
        etag = blobs.etag_header(blob)
        resp.set_header("ETag", etag)
        resp.set_header("Accept-Ranges", "bytes")
        resp.set_header("Cache-Control", "public, no-cache" if space_public
                        else "private, no-store")
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.set_header("Content-Security-Policy", "sandbox; default-src 'none'")
        if self.attachment:
            resp.set_header("Content-Disposition", headers.attachment(blob.filename))
        if headers.not_modified(req, etag):
            resp.status = falcon.HTTP_304
            return
        rng = headers.byte_range(req, etag, blob.size)
        resp.content_type = blob.mime_type
        if rng is None:
            resp.content_length = blob.size
            if req.method != "HEAD":
                resp.set_stream(self.store.open(blob.object_key), blob.size)
            return
        start, end = rng
        resp.status = falcon.HTTP_206
        resp.set_header("Content-Range", f"bytes {start}-{end}/{blob.size}")
        resp.content_length = end - start + 1
        if req.method != "HEAD":
            resp.set_stream(self.store.open(blob.object_key, start, end), end - start + 1)

    def on_head(self, req, resp, resource_id):
        self.on_get(req, resp, resource_id)



class BlobDownload(_BlobReader):
    """The same bytes as ``/content``, as an attachment with an RFC 6266 ``filename*``."""

    attachment = True


class BlobContent(_BlobReader):
    def on_put(self, req, resp, resource_id):
        sub = blobs.replace_content(self.ops, self.db, self.store, self.settings,
                                    req.context.ctx, resource_id,
                                    req.get_header("Idempotency-Key"),
                                    req.get_header("If-Match"), req.content_length,
                                    _reader(req))
        answer_submission(resp, sub)
