"""gzip for large JSON answers, when the client accepts it (``Accept-Encoding``).

A unit's document can be tens of megabytes of JSON, which compresses several times over.
Only bodies held in memory (``resp.data``, ``resp.text``, ``resp.media``) of at least
:data:`MIN_BYTES` are compressed; streamed answers (blob and asset bytes, which have
their own media types and ranges) never are. zlib level 1: most of the gain for a small
part of the CPU of the default level.
"""
from __future__ import annotations

import gzip

import falcon

#: Bodies smaller than this go as they are (the header would eat the gain).
MIN_BYTES = 1024
LEVEL = 1
_COMPRESSIBLE = ("application/json", "application/problem+json")


def accepts_gzip(header: str | None) -> bool:
    """Whether ``Accept-Encoding`` (RFC 9110 §12.5.3) admits gzip: listed (or ``*``)
    with a non-zero quality."""
    if not header:
        return False
    chosen: dict[str, float] = {}
    for item in header.split(",")[:32]:
        coding, _, params = item.strip().partition(";")
        quality = 1.0
        name, _, value = params.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                quality = float(value)
            except ValueError:
                quality = 0.0
        chosen[coding.strip().lower()] = quality
    quality = chosen.get("gzip", chosen.get("x-gzip", chosen.get("*", 0.0)))
    return quality > 0


class CompressionMiddleware:
    """Compress in-memory JSON answers of :data:`MIN_BYTES` or more with gzip."""

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: object,
                         req_succeeded: bool) -> None:
        if resp.stream is not None or resp.get_header("Content-Encoding"):
            return
        content_type = (resp.content_type or "").split(";")[0].strip()
        if content_type not in _COMPRESSIBLE:
            return
        resp.append_header("Vary", "Accept-Encoding")
        if not accepts_gzip(req.get_header("Accept-Encoding")):
            return
        body = resp.render_body()
        if body is None or len(body) < MIN_BYTES:
            return
        resp.text = None  # Falcon sends ``text`` ahead of ``data`` (problem answers use it)
        resp.media = None
        resp.data = gzip.compress(body, compresslevel=LEVEL, mtime=0)
        resp.set_header("Content-Encoding", "gzip")
        etag = resp.get_header("ETag")
        if etag and not etag.startswith("W/"):  # the bytes differ from the identity's
            resp.set_header("ETag", f"W/{etag}")
