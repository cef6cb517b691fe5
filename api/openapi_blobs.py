"""OpenAPI entries for upload sessions and blob resources (registered into the SPEC)."""
from __future__ import annotations

from api.openapi import ID, TS, json_resp, obj, op, path_param, problem, register
from api.openapi_operations import IDEMPOTENCY_KEY, _op_resp

NULL_STR = {"type": ["string", "null"]}
NULL_INT = {"type": ["integer", "null"]}

SCHEMAS = {
    "UploadSession": obj({
        "id": ID, "state": {"type": "string", "enum": [
            "waiting_for_upload", "uploaded", "verifying", "completed", "failed", "expired",
            "aborted"]},
        "space_id": ID, "parent_id": {"anyOf": [ID, {"type": "null"}]},
        "filename": {"type": "string"}, "size": {"type": "integer"},
        "received_size": NULL_INT, "sha256": NULL_STR, "mime_type": NULL_STR,
        "operation_id": {"anyOf": [ID, {"type": "null"}]}, "error_code": NULL_STR,
        "node_id": ID, "resource_id": ID, "created_at": TS, "updated_at": TS,
        "expires_at": TS}),
    "UploadResult": obj({"size": {"type": "integer"},
                         "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                         "mime_type": {"type": "string"}}),
    "BlobResource": obj({"resource_id": ID, "node_id": ID, "filename": {"type": "string"},
                         "mime_type": {"type": "string"}, "size": {"type": "integer"},
                         "sha256": {"type": "string"}, "etag": {"type": "string"},
                         "state": {"type": "string", "enum": ["ready", "quarantined"]},
                         "created_at": TS, "updated_at": TS}),
    "CreateUploadSessionRequest": obj({
        "space_id": {"type": "string", "maxLength": 64},
        "parent_id": {"type": ["string", "null"], "maxLength": 64},
        "filename": {"type": "string", "minLength": 1, "maxLength": 255},
        "size": {"type": "integer", "minimum": 0}},
        ["space_id", "filename", "size"], extra=False),
}

BYTES = {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}
ANY_BYTES = {"*/*": {"schema": {"type": "string", "format": "binary"}}}
SID = [path_param("session_id")]
RID = [path_param("resource_id")]


def _content_get(op_id: str, summary: str) -> dict:
    return op(op_id, summary, {
        "200": {"description": "the bytes", "content": ANY_BYTES},
        "206": {"description": "one byte range", "content": ANY_BYTES},
        "304": {"description": "not modified (If-None-Match)"},
        **problem(416)},
        params=[{"name": "Range", "in": "header", "required": False,
                 "schema": {"type": "string"}},
                {"name": "If-None-Match", "in": "header", "required": False,
                 "schema": {"type": "string"}}])


PATHS = {
    "/api/blob-upload-sessions": {"post": {
        **op("createUploadSession", "Start an upload: reserves node, resource and object ids",
             {**json_resp(201, "UploadSession"), **json_resp(200, "UploadSession"),
              **problem(409)}, body="CreateUploadSessionRequest"),
        "parameters": [IDEMPOTENCY_KEY]}},
    "/api/blob-upload-sessions/{session_id}": {
        "parameters": SID,
        "get": op("getUploadSession", "An upload session", json_resp(200, "UploadSession")),
        "delete": op("abortUploadSession", "Abort; the object is queued for deletion",
                     {"204": {"description": "aborted"}, **problem(409)})},
    "/api/blob-upload-sessions/{session_id}/content": {
        "parameters": SID,
        "put": {**op("uploadContent", "Stream the bytes (Content-Length required)",
                     {**json_resp(200, "UploadResult"), **problem(409, 411, 413, 415)}),
                "requestBody": {"required": True, "content": BYTES}}},
    "/api/blob-upload-sessions/{session_id}/complete": {
        "parameters": SID,
        "post": {**op("completeUpload", "Verify and publish (operation create_blob_resource)",
                      {**_op_resp(202, "accepted"), **_op_resp(200, "replay of a finished "
                                                                   "operation"),
                       **problem(409)}),
                 "parameters": [IDEMPOTENCY_KEY]}},
    "/api/blob-resources/{resource_id}": {
        "parameters": RID,
        "get": op("getBlobResource", "Blob metadata", json_resp(200, "BlobResource"))},
    "/api/blob-resources/{resource_id}/content": {
        "parameters": RID,
        "get": _content_get("getBlobContent", "The bytes: strong ETag, single Range"),
        "put": {**op("replaceBlobContent", "Replace the bytes (operation replace_blob_content)",
                     {**_op_resp(202, "accepted"), **_op_resp(200, "replay of a finished "
                                                                  "operation"),
                      **problem(409, 411, 412, 413, 428)}),
                "parameters": [IDEMPOTENCY_KEY,
                               {"name": "If-Match", "in": "header", "required": True,
                                "schema": {"type": "string"}}],
                "requestBody": {"required": True, "content": BYTES}}},
    "/api/blob-resources/{resource_id}/download": {
        "parameters": RID,
        "get": _content_get("downloadBlob", "The bytes as an attachment (RFC 6266 filename*)")},
}

register(PATHS, SCHEMAS)
