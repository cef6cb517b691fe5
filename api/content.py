"""Serving a stored object's bytes: one helper for every content route (blobs, assets)."""
from __future__ import annotations

import falcon

from api import headers
from storage.blobstore import BlobStore


def send_content(req: falcon.Request, resp: falcon.Response, store: BlobStore, *,
                 object_key: str, size: int, etag: str, media_type: str,
                 cache_control: str, attachment: str | None = None) -> None:
    """The bytes of ``object_key``: strong ``etag``, ``If-None-Match`` → 304, one byte
    range → 206 (``If-Range`` honoured; beyond the end → 416), streamed from the store,
    headers only for HEAD. Always ``nosniff`` and a sandbox CSP; ``attachment`` (a file
    name) sends ``Content-Disposition: attachment``."""
    resp.set_header("ETag", etag)
    resp.set_header("Accept-Ranges", "bytes")
    resp.set_header("Cache-Control", cache_control)
    resp.set_header("X-Content-Type-Options", "nosniff")
    resp.set_header("Content-Security-Policy", "sandbox; default-src 'none'")
    if attachment is not None:
        resp.set_header("Content-Disposition", headers.attachment(attachment))
    if headers.not_modified(req, etag):
        resp.status = falcon.HTTP_304
        return
    rng = headers.byte_range(req, etag, size)
    resp.content_type = media_type
    if rng is None:
        resp.content_length = size
        if req.method != "HEAD":
            resp.set_stream(store.open(object_key), size)
        return
    start, end = rng
    resp.status = falcon.HTTP_206
    resp.set_header("Content-Range", f"bytes {start}-{end}/{size}")
    resp.content_length = end - start + 1
    if req.method != "HEAD":
        resp.set_stream(store.open(object_key, start, end), end - start + 1)
