"""The OpenAPI document's fixed vocabulary: tags, response headers, request header
parameters, problem responses, security schemes, path parameter descriptions."""
from __future__ import annotations

from typing import Any

from api.schemas.operations import MAX_WAIT
from wharf.assets.upload import SHA256_PATTERN
from wharf.operations.idempotency import IDEMPOTENCY_KEY_PATTERN

REF = "#/components/schemas/{name}"

TAGS = {
    "system": "Liveness, readiness, dependency status, metrics and this document.",
    "identity": "Registration, login sessions, the current principal and API tokens.",
    "spaces": "Personal and team spaces and team membership.",
    "nodes": "The node tree: folders and the nodes that hold resources.",
    "sharing": "Direct grants and link sharing on nodes of personal spaces.",
    "trash": "Trash batches, restore and permanent deletion.",
    "recent": "Recently opened resources.",
    "search": "Finding nodes by name and units by content.",
    "resources": "Unit resources, created by operations.",
    "units": "Unit snapshots and JSON Patch changesets.",
    "operations": "Durable, idempotent operations: read, long-poll, retry, cancel.",
    "blobs": "Upload sessions, blob content, ranged reads and downloads.",
    "assets": "Files embedded in units (images in a doc): uploaded, published by a "
              "worker, served through a permission gate.",
    "worktrees": "Isolated drafts of units, merged back into trunk by operations: "
                 "create, list, rename, ready/reopen, discard.",
    "dashboard": "The operator dashboard (WHARF_OPERATORS only): its page, its numbers.",
    "issues": "Team-space issues: #N per space, comments and events, labels, assignees "
              "and node references.",
    "comments": "Comment threads on trunk units: anchored in the document, replies, a "
                "solved state and a concurrency generation.",
    "exports": "Trunk units exported to Office files (XLSX, CSV, DOCX, PPTX) by "
               "operations; the files are temporary (WHARF_EXPORT_TTL).",
    "feed": "The live change feed's tickets (the feed, `GET /api/feed`, is a WebSocket "
            "or Server-Sent Events served by `wharf feed`: docs/feed.md).",
}

#: Response headers the server sends, declared once and referenced by name.
HEADERS: dict[str, dict[str, Any]] = {
    "Location": {"description": "The URL of the created or tracked resource.",
                 "schema": {"type": "string"}},
    "ETag": {"description": "Strong entity tag of the representation.",
             "schema": {"type": "string"}},
    "Set-Cookie": {"description": "`wharf_session=<secret>; HttpOnly; SameSite=Lax; Path=/` "
                                  "(login) or its removal (logout).",
                   "schema": {"type": "string"}},
    "Retry-After": {"description": "Seconds to wait before trying again.",
                    "schema": {"type": "string", "pattern": "^[0-9]+$"}},
    "Accept-Ranges": {"description": "`bytes`: single byte ranges are served (`Range`).",
                      "schema": {"type": "string", "enum": ["bytes"]}},
    "Content-Range": {"description": "`bytes <first>-<last>/<size>` of a 206, or "
                                     "`bytes */<size>` of a 416.",
                      "schema": {"type": "string"}},
    "Content-Disposition": {"description": "`attachment; filename=\"<ASCII fallback>\"; "
                                           "filename*=UTF-8''<percent-encoded name>` "
                                           "(RFC 6266).",
                            "schema": {"type": "string"}},
    "Preference-Applied": {"description": "`wait=<seconds>` (the wait the server "
                                          "allowed: the request's, at most the server's "
                                          "limit): the request's `Prefer: wait` was "
                                          "honoured and the answer is the finished "
                                          "operation (RFC 7240).",
                           "schema": {"type": "string"}},
    "X-Request-Id": {"description": "The request's id (the client's `X-Request-Id` when "
                                    "it is 1-128 of `[A-Za-z0-9._:-]`); logs carry it.",
                     "schema": {"type": "string"}},
}
#: Sent with every answer.
ALWAYS = ("X-Request-Id",)

#: Request header parameters, declared once (components/parameters).
HEADER_PARAMETERS: dict[str, dict[str, Any]] = {
    "Idempotency-Key": {
        "name": "Idempotency-Key", "in": "header", "required": True,
        "description": "Repeating a request with the same key (and body) answers with the "
                       "same operation instead of starting another one.",
        "schema": {"type": "string", "pattern": IDEMPOTENCY_KEY_PATTERN},
        "example": "create-q3-plans-2026-01-31"},
    "Prefer": {
        "name": "Prefer", "in": "header", "required": False,
        "description": "`wait=<seconds>` (RFC 7240): wait up to that long (at most "
                       f"{MAX_WAIT:g} s) for the operation to be done and answer 200 with it (and "
                       "`Preference-Applied`) instead of 202 at once: one request instead of "
                       "a POST and a long-poll. Still 202 if it is not done by then, if "
                       "the server's long-poll slots are taken, or if the operation could "
                       "not be read while waiting (the submission stands either way). "
                       "On a changeset (`POST /api/units/{unit_id}/changesets`), "
                       "`return=minimal` leaves the document out of the answer. "
                       "Other preferences, and a malformed one, are ignored.",
        "schema": {"type": "string"}, "example": "wait=10"},
    "If-Match": {
        "name": "If-Match", "in": "header", "required": True,
        "description": "The current strong ETag (as sent in `ETag`); 412 if it changed.",
        "schema": {"type": "string"}, "example": '"5d41402abc4b2a76b9719d911017c592"'},
    "If-None-Match": {
        "name": "If-None-Match", "in": "header", "required": False,
        "description": "ETags of the copy the client has (or `*`): 304 if one is current.",
        "schema": {"type": "string"}},
    "Range": {
        "name": "Range", "in": "header", "required": False,
        "description": "One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with "
                       "that part; a range beyond the end is 416. Several ranges or a "
                       "malformed value: the whole content (200).",
        "schema": {"type": "string"}, "example": "bytes=0-1023"},
    "Content-SHA256": {
        "name": "Content-SHA256", "in": "header", "required": False,
        "description": "The SHA-256 of the body (64 hex digits): the upload fails 400 "
                       "`checksum_mismatch` if the bytes differ, and a replay of the same "
                       "Idempotency-Key naming other bytes is 409 `idempotency_key_reused`.",
        "schema": {"type": "string", "pattern": SHA256_PATTERN}},
    "If-Range": {
        "name": "If-Range", "in": "header", "required": False,
        "description": "Serve `Range` only if the ETag still matches (else the whole "
                       "content).",
        "schema": {"type": "string"}},
}

#: Problem responses (components/responses), by status.
PROBLEM_RESPONSES: dict[int, tuple[str, str, tuple[str, ...]]] = {
    400: ("BadRequest", "The request is malformed or fails validation "
                        "(`malformed_json`, `validation_failed`, `invalid_cursor`, ...).", ()),
    401: ("Unauthenticated", "No valid credentials (`unauthenticated`, `invalid_token`, ...).",
          ()),
    403: ("Forbidden", "Not allowed (`forbidden`, `insufficient_scope`, `cross_origin`, "
                       "`account_disabled`: an operator disabled the account, ...).", ()),
    404: ("NotFound", "No such target, or the caller may not see it.", ()),
    409: ("Conflict", "The request conflicts with the current state.", ()),
    410: ("Gone", "It existed, and retention deleted it (`draft_purged`).", ()),
    411: ("LengthRequired", "Send `Content-Length`.", ()),
    412: ("PreconditionFailed", "A precondition (`If-Match`) did not hold.", ()),
    413: ("PayloadTooLarge", "The body is larger than the configured limit.", ()),
    415: ("UnsupportedMediaType", "Send `application/json`.", ()),
    416: ("RangeNotSatisfiable", "The range is outside the content.", ()),
    428: ("PreconditionRequired", "Send `If-Match`.", ()),
    429: ("TooManyRequests", "Too many attempts (`rate_limited`), or a quota is used up "
                             "(`quota_exceeded`: `details` name the `quota`, its `limit` "
                             "and the `current` count); retry after `Retry-After` seconds.",
          ("Retry-After",)),
    503: ("ServiceUnavailable", "A dependency is busy or down; retry after `Retry-After`.",
          ("Retry-After",)),
}

SECURITY_SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer",
               "description": "An API token (`wharf_...`); scopes `read` (safe methods) "
                              "and `write` (the rest)."},
    "session": {"type": "apiKey", "in": "cookie", "name": "wharf_session",
                "description": "The login session cookie. Cookie-authenticated writes must "
                               "come from the server's own origin."},
    "metricsToken": {"type": "http", "scheme": "bearer",
                     "description": "`WHARF_METRICS_TOKEN`, when one is configured."},
}

PATH_PARAMETER_DESCRIPTION = "An id (32 lowercase hex digits); unknown ids are 404."
#: Path parameters that are not ids.
PATH_PARAMETER_DESCRIPTIONS = {
    "number": "An issue's `#N` in its space (digits); an unknown number is 404.",
    "provider": "A sign-in provider: `oidc` (OpenID Connect) or `github`; one not "
                "configured is 404.",
}
