"""TEMPORARY: the hand-built OpenAPI entries of the endpoints not yet migrated to the typed
contract (operations, units, blobs). ``api.contract`` documents a responder without
contract metadata from ``PATHS``/``SCHEMAS`` here, and ``api.body.read_json`` validates
their bodies against ``SCHEMAS``. The document itself is generated: ``api.contract``."""
from __future__ import annotations

from typing import Any

from wharf.ids import ID_PATTERN

ID = {"type": "string", "pattern": ID_PATTERN}
TS = {"type": "string", "format": "date-time"}
TS_N = {"type": ["string", "null"], "format": "date-time"}


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def obj(props: dict, required: list[str] | None = None, *, extra: bool = True) -> dict:
    out: dict[str, Any] = {"type": "object", "properties": props,
                           "required": list(props) if required is None else required}
    if not extra:
        out["additionalProperties"] = False
    return out


def page_of(item: str) -> dict:
    return obj({"items": {"type": "array", "items": ref(item)},
                "next_cursor": {"type": ["string", "null"]}})


# Hand-built components of the endpoints not yet migrated (registered by their modules).
SCHEMAS: dict[str, Any] = {}

PARAM_LIMIT = {"name": "limit", "in": "query", "required": False,
               "schema": {"type": "integer", "minimum": 1, "maximum": 200}}
PARAM_CURSOR = {"name": "cursor", "in": "query", "required": False,
                "schema": {"type": "string", "maxLength": 1024}}


def path_param(name: str) -> dict:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def problem(*statuses: int) -> dict:
    return {str(s): {"description": "problem", "content": {
        "application/problem+json": {"schema": ref("Problem")}}} for s in statuses}


def json_resp(status: int, schema: str | None, description: str = "ok",
              headers: dict | None = None) -> dict:
    body: dict[str, Any] = {"description": description}
    if schema:
        body["content"] = {"application/json": {"schema": ref(schema)}}
    if headers:
        body["headers"] = headers
    return {str(status): body}


def op(op_id: str, summary: str, responses: dict, *, body: str | None = None,
       params: list | None = None, security: bool = True) -> dict:
    out: dict[str, Any] = {"operationId": op_id, "summary": summary,
                           "responses": {**problem(400, 401, 403, 404, 413, 503), **responses}}
    if body:
        out["requestBody"] = {"required": True, "content": {
            "application/json": {"schema": ref(body)}}}
        out["responses"].update(problem(413, 415))
    if params:
        out["parameters"] = params
    if not security:
        out["security"] = []
    return out


def rate_limited() -> dict:
    """429 ``rate_limited`` with ``Retry-After`` (login and registration throttles)."""
    out = problem(429)
    out["429"]["description"] = "too many attempts; retry after Retry-After seconds"
    out["429"]["headers"] = {"Retry-After": {"schema": {"type": "string"},
                                             "description": "seconds to wait"}}
    return out


# Hand-built path items of the endpoints not yet migrated.
PATHS: dict[str, Any] = {}


def register(paths: dict[str, Any], schemas: dict[str, Any]) -> None:
    """Capabilities added later (operations, units, blobs) extend the document here."""
    PATHS.update(paths)
    SCHEMAS.update(schemas)


# Entries of later capabilities register themselves into the document.
import api.openapi_operations  # noqa: E402,F401
import api.openapi_blobs  # noqa: E402,F401
