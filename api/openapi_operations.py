"""OpenAPI entries for operations, unit resources and units (registered into the SPEC)."""
from __future__ import annotations

from api.openapi import (ID, PARAM_CURSOR, PARAM_LIMIT, TS, TS_N, json_resp, obj, op, page_of,
                         path_param, problem, ref, register)

IDEMPOTENCY_KEY = {"name": "Idempotency-Key", "in": "header", "required": True,
                   "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{16,200}$"}}
RETRY_AFTER = {"Retry-After": {"schema": {"type": "string"},
                               "description": "present while the operation is not done"}}
LOCATION = {"Location": {"schema": {"type": "string"}}}

SCHEMAS = {
    "OperationError": obj({"code": {"type": "string"}, "message": {"type": "string"},
                           "retryable": {"type": "boolean"}, "details": {"type": "object"}},
                          ["code", "message", "retryable"]),
    "Operation": obj({
        "id": ID, "kind": {"type": "string"},
        "status": {"type": "string", "enum": ["pending", "running", "completed", "failed"]},
        "done": {"type": "boolean"}, "attempts": {"type": "integer", "minimum": 0},
        "max_attempts": {"type": "integer"}, "created_at": TS, "updated_at": TS,
        "completed_at": TS_N, "next_attempt_at": TS_N,
        "result": {"type": ["object", "null"]},
        "error": {"anyOf": [ref("OperationError"), {"type": "null"}]}}),
    "OperationList": page_of("Operation"),
    "OperationAttempt": obj({"number": {"type": "integer"}, "worker_id": {"type": "string"},
                             "started_at": TS, "finished_at": TS_N,
                             "outcome": {"type": ["string", "null"],
                                         "enum": ["completed", "failed", "retry", "lost", None]},
                             "error": {"type": ["object", "null"]}}),
    "OperationAttemptList": obj({"items": {"type": "array", "items": ref("OperationAttempt")}}),
    "Resource": obj({"id": ID, "kind": {"type": "string", "enum": ["unit", "blob"]},
                     "node_id": ID, "created_by": ID, "created_at": TS,
                     "unit": {"type": ["object", "null"],
                              "properties": {"unit_id": ID, "unit_type": {"type": "string"}}},
                     "node": ref("Node")}),
    "Unit": obj({"unit_id": ID, "unit_type": {"type": "string"},
                 "revision": {"type": "integer", "minimum": 0}, "snapshot": {"type": "object"},
                 "resource_id": ID, "node_id": ID, "updated_at": TS}),
    "ChangesetResult": obj({"unit_id": ID, "revision": {"type": "integer"},
                            "snapshot": {"type": "object"}}),
    "CreateResourceRequest": obj({
        "space_id": {"type": "string", "maxLength": 64},
        "parent_id": {"type": ["string", "null"], "maxLength": 64},
        "name": {"type": "string", "minLength": 1, "maxLength": 255},
        "unit_type": {"type": "string", "enum": ["sheet", "doc", "slide", "board", "base"]}},
        ["space_id", "name", "unit_type"], extra=False),
    "ChangesetRequest": obj({
        "base_revision": {"type": "integer", "minimum": 0},
        "changes": {"type": "array", "minItems": 1, "maxItems": 10000,
                    "items": {"type": "object"}}}, extra=False),
}


CHANGESET_PROBLEMS = (
    "Problems (besides the common ones): 400 `invalid_changeset` (malformed operation or "
    "JSON Pointer, a pointer that does not resolve, a failed `test`; `details.op_index`), "
    "400 `unit_too_deep` (an inserted value would nest below WHARF_UNIT_MAX_DEPTH levels), "
    "400 `malformed_json` (also for NaN, Infinity and numbers that overflow a double), "
    "409 `revision_conflict`, 413 `changeset_too_large` (more operations than "
    "WHARF_UNIT_MAX_CHANGESET_OPS), 413 `unit_too_large` (the changeset copies, or the "
    "document would grow to, more than WHARF_UNIT_MAX_SNAPSHOT_BYTES). Nothing is stored "
    "on any of them.")


def _op_resp(status: int, description: str) -> dict:
    return json_resp(status, "Operation", description, headers={**RETRY_AFTER, **LOCATION})


OP_ID = [path_param("operation_id")]

PATHS = {
    "/api/resources": {"post": {
        **op("createResource", "Create a unit resource (operation create_resource)",
             {**_op_resp(202, "accepted (or replayed while not done)"),
              **_op_resp(200, "replay of a finished operation"), **problem(409)},
             body="CreateResourceRequest"),
        "parameters": [IDEMPOTENCY_KEY]}},
    "/api/resources/{resource_id}": {
        "parameters": [path_param("resource_id")],
        "get": op("getResource", "A resource", json_resp(200, "Resource"))},
    "/api/units/{unit_id}": {
        "parameters": [path_param("unit_id")],
        "get": op("getUnit", "A unit's snapshot and revision", json_resp(200, "Unit"))},
    "/api/units/{unit_id}/changesets": {
        "parameters": [path_param("unit_id")],
        "post": {**op("applyChangeset", "Apply an RFC 6902 JSON Patch against a base revision",
                      {**json_resp(200, "ChangesetResult"), **problem(409)},
                      body="ChangesetRequest"),
                 "description": CHANGESET_PROBLEMS}},
    "/api/operations": {"get": op(
        "listOperations", "My operations, newest first", json_resp(200, "OperationList"),
        params=[PARAM_LIMIT, PARAM_CURSOR,
                {"name": "status", "in": "query", "required": False,
                 "schema": {"type": "string",
                            "enum": ["pending", "running", "completed", "failed"]}},
                {"name": "kind", "in": "query", "required": False,
                 "schema": {"type": "string", "maxLength": 40}}])},
    "/api/operations/{operation_id}": {
        "parameters": OP_ID,
        "get": op("getOperation", "An operation; ?wait=N long-polls up to 60 s",
                  _op_resp(200, "the operation"),
                  params=[{"name": "wait", "in": "query", "required": False,
                           "schema": {"type": "number", "minimum": 0, "maximum": 60}}])},
    "/api/operations/{operation_id}/attempts": {
        "parameters": OP_ID,
        "get": op("listOperationAttempts", "Execution attempts of an operation",
                  json_resp(200, "OperationAttemptList"))},
    "/api/operations/{operation_id}/retry": {
        "parameters": OP_ID,
        "post": op("retryOperation", "Retry a failed operation",
                   {**_op_resp(200, "pending again"), **problem(409)})},
    "/api/operations/{operation_id}/cancel": {
        "parameters": OP_ID,
        "post": op("cancelOperation", "Cancel a pending operation",
                   {**_op_resp(200, "cancelled (failed, code cancelled)"), **problem(409)})},
}

register(PATHS, SCHEMAS)
