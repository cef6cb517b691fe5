"""The OpenAPI 3.1 document: the contract. Request bodies are validated against the
schemas here (``api.body``), and the test suite checks every real response against it."""
from __future__ import annotations

from typing import Any

ID = {"type": "string", "pattern": "^[0-9a-f]{32}$"}
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


SCHEMAS: dict[str, Any] = {
    "Problem": obj({"type": {"type": "string"}, "title": {"type": "string"},
                    "status": {"type": "integer"}, "code": {"type": "string"},
                    "detail": {"type": "string"}, "request_id": {"type": "string"},
                    "details": {"type": "object"}},
                   ["title", "status", "code"]),
    "User": obj({"id": ID, "username": {"type": "string"}, "created_at": TS}),
    "Me": obj({"id": ID, "username": {"type": "string"}, "created_at": TS,
               "personal_space_id": ID,
               "auth": {"type": "string", "enum": ["session", "token"]},
               "scopes": {"type": "array", "items": {"type": "string"}}}),
    "RegisterResult": obj({"id": ID, "username": {"type": "string"}, "created_at": TS,
                           "personal_space_id": ID}),
    "LoginResult": obj({"session_id": ID, "expires_at": TS, "user": ref("User")}),
    "ApiToken": obj({"id": ID, "name": {"type": "string"}, "prefix": {"type": "string"},
                     "scopes": {"type": "array", "items": {"type": "string",
                                                           "enum": ["read", "write"]}},
                     "created_at": TS, "expires_at": TS_N, "last_used_at": TS_N}),
    "ApiTokenCreated": {"allOf": [ref("ApiToken"),
                                  obj({"token": {"type": "string"}})]},
    "ApiTokenList": obj({"items": {"type": "array", "items": ref("ApiToken")}}),
    "Space": obj({"id": ID, "type": {"type": "string", "enum": ["personal", "team"]},
                  "name": {"type": "string"}, "owner_id": ID, "public_read": {"type": "boolean"},
                  "role": {"type": ["string", "null"],
                           "enum": ["owner", "admin", "editor", "viewer", None]},
                  "created_at": TS, "updated_at": TS}),
    "SpaceList": page_of("Space"),
    "Member": obj({"space_id": ID, "user_id": ID, "username": {"type": "string"},
                   "role": {"type": "string", "enum": ["admin", "editor", "viewer"]},
                   "created_at": TS, "updated_at": TS}),
    "MemberList": obj({"items": {"type": "array", "items": ref("Member")}}),
    "ResourceRef": {"type": ["object", "null"],
                    "properties": {"id": ID, "kind": {"type": "string", "enum": ["unit", "blob"]},
                                   "unit_id": ID, "unit_type": {"type": "string"},
                                   "filename": {"type": "string"}, "size": {"type": "integer"},
                                   "mime_type": {"type": "string"}, "etag": {"type": "string"}},
                    "required": ["id", "kind"]},
    "Capabilities": obj({"can_read": {"type": "boolean"}, "can_edit": {"type": "boolean"},
                         "can_create_children": {"type": "boolean"},
                         "can_manage": {"type": "boolean"}, "can_share": {"type": "boolean"},
                         "can_trash": {"type": "boolean"}, "can_purge": {"type": "boolean"}}),
    "Node": obj({"id": ID, "space_id": ID, "parent_id": {"anyOf": [ID, {"type": "null"}]},
                 "name": {"type": "string"}, "created_by": ID, "created_at": TS,
                 "updated_at": TS, "resource": ref("ResourceRef"),
                 "role": {"type": ["string", "null"]},
                 "capabilities": ref("Capabilities")}),
    "NodeList": page_of("Node"),
    "Health": obj({"status": {"type": "string"}, "checks": {"type": "object"}}, ["status"]),
    "HealthDetails": obj({
        "status": {"type": "string", "enum": ["ok", "degraded", "unavailable"]},
        "checks": {"type": "object", "additionalProperties": obj(
            {"status": {"type": "string", "enum": ["ok", "down"]},
             "error": {"type": "string"}}, ["status"])}}),
    # --- request bodies (self-contained: validated directly) ---
    "RegisterRequest": obj({"username": {"type": "string", "minLength": 3, "maxLength": 64},
                            "password": {"type": "string", "minLength": 12, "maxLength": 1024}},
                           extra=False),
    "LoginRequest": obj({"username": {"type": "string", "maxLength": 64},
                         "password": {"type": "string", "maxLength": 1024}}, extra=False),
    "CreateTokenRequest": obj({"name": {"type": "string", "minLength": 1, "maxLength": 100},
                               "scopes": {"type": "array", "minItems": 1, "uniqueItems": True,
                                          "items": {"type": "string",
                                                    "enum": ["read", "write"]}},
                               "expires_in_days": {"type": ["integer", "null"], "minimum": 1,
                                                   "maximum": 3650}},
                              ["name", "scopes"], extra=False),
    "CreateSpaceRequest": obj({"name": {"type": "string", "minLength": 1, "maxLength": 100},
                               "type": {"type": "string", "enum": ["team"]}},
                              ["name"], extra=False),
    "UpdateSpaceRequest": {**obj({"name": {"type": "string", "minLength": 1, "maxLength": 100},
                                  "public_read": {"type": "boolean"}}, [], extra=False),
                           "minProperties": 1},
    "PutMemberRequest": obj({"role": {"type": "string", "enum": ["admin", "editor", "viewer"]}},
                            extra=False),
    "CreateNodeRequest": obj({"space_id": {"type": "string", "maxLength": 64},
                              "parent_id": {"type": ["string", "null"], "maxLength": 64},
                              "name": {"type": "string", "minLength": 1, "maxLength": 255}},
                             ["space_id", "name"], extra=False),
    "UpdateNodeRequest": {**obj({"name": {"type": "string", "minLength": 1, "maxLength": 255},
                                 "parent_id": {"type": ["string", "null"], "maxLength": 64}},
                                [], extra=False),
                          "minProperties": 1},
}

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


def _not_ready(path: dict, schema: str) -> dict:
    """Readiness answers 503 with its JSON report (not a problem document)."""
    path["get"]["responses"]["503"] = {
        "description": "not ready (the database does not answer)",
        "content": {"application/json": {"schema": ref(schema)}}}
    return path


PATHS: dict[str, Any] = {
    "/healthz": {"get": op("healthz", "Liveness", json_resp(200, "Health"), security=False)},
    "/readyz": _not_ready({"get": op("readyz", "Readiness: the database answers",
                                     {**json_resp(200, "Health")}, security=False)}, "Health"),
    "/healthz/details": _not_ready({"get": op(
        "healthDetails", "Every dependency (database, broker, blob store, unit store) with its "
        "status; needs 'Authorization: Bearer <WHARF_METRICS_TOKEN>' when that is set",
        {**json_resp(200, "HealthDetails")}, security=False)}, "HealthDetails"),
    "/metrics": {"get": op("metrics", "Prometheus metrics; needs 'Authorization: Bearer "
                           "<WHARF_METRICS_TOKEN>' when that is set",
                           {"200": {"description": "text exposition format",
                                    "content": {"text/plain": {"schema": {"type": "string"}}}}},
                           security=False)},
    "/api/openapi.json": {"get": op("openapi", "This document",
                                    {"200": {"description": "the OpenAPI document",
                                             "content": {"application/json": {
                                                 "schema": {"type": "object"}}}}},
                                    security=False)},
    "/api/users": {"post": op("registerUser", "Register a user (creates the personal space)",
                              {**json_resp(201, "RegisterResult"), **problem(409),
                               **rate_limited()},
                              body="RegisterRequest", security=False)},
    "/api/login-sessions": {"post": op("login", "Log in; sets the wharf_session cookie",
                                       {**json_resp(201, "LoginResult"), **rate_limited()},
                                       body="LoginRequest",
                                       security=False)},
    "/api/login-sessions/current": {"delete": op("logout", "Log out",
                                                 {"204": {"description": "logged out"}})},
    "/api/me": {"get": op("me", "The current principal", json_resp(200, "Me"))},
    "/api/api-tokens": {
        "post": op("createApiToken", "Create an API token (shown once)",
                   json_resp(201, "ApiTokenCreated"), body="CreateTokenRequest"),
        "get": op("listApiTokens", "My active API tokens", json_resp(200, "ApiTokenList")),
    },
    "/api/api-tokens/{token_id}": {
        "parameters": [path_param("token_id")],
        "delete": op("revokeApiToken", "Revoke an API token",
                     {"204": {"description": "revoked"}}),
    },
    "/api/spaces": {
        "get": op("listSpaces", "Spaces I own or belong to", json_resp(200, "SpaceList"),
                  params=[PARAM_LIMIT, PARAM_CURSOR]),
        "post": op("createSpace", "Create a team space", json_resp(201, "Space"),
                   body="CreateSpaceRequest"),
    },
    "/api/spaces/{space_id}": {
        "parameters": [path_param("space_id")],
        "get": op("getSpace", "A space", json_resp(200, "Space")),
        "patch": op("updateSpace", "Rename a space or set public_read", json_resp(200, "Space"),
                    body="UpdateSpaceRequest"),
    },
    "/api/spaces/{space_id}/nodes": {
        "parameters": [path_param("space_id")],
        "get": op("listRootNodes", "Root nodes of a space", json_resp(200, "NodeList"),
                  params=[PARAM_LIMIT, PARAM_CURSOR]),
    },
    "/api/spaces/{space_id}/members": {
        "parameters": [path_param("space_id")],
        "get": op("listMembers", "Team members", json_resp(200, "MemberList")),
    },
    "/api/spaces/{space_id}/members/{user_id}": {
        "parameters": [path_param("space_id"), path_param("user_id")],
        "put": op("putMember", "Add a member or change their role",
                  {**json_resp(200, "Member"), **json_resp(201, "Member"), **problem(409)},
                  body="PutMemberRequest"),
        "delete": op("deleteMember", "Remove a member, or leave (your own id)",
                     {"204": {"description": "removed"}, **problem(409)}),
    },
    "/api/nodes": {"post": op("createNode", "Create an organisational node",
                              {**json_resp(201, "Node"), **problem(409)},
                              body="CreateNodeRequest")},
    "/api/nodes/{node_id}": {
        "parameters": [path_param("node_id")],
        "get": op("getNode", "A node", json_resp(200, "Node")),
        "patch": op("updateNode", "Rename and/or move a node",
                    {**json_resp(200, "Node"), **problem(409)}, body="UpdateNodeRequest"),
    },
    "/api/nodes/{node_id}/children": {
        "parameters": [path_param("node_id")],
        "get": op("listChildren", "Children of a node", json_resp(200, "NodeList"),
                  params=[PARAM_LIMIT, PARAM_CURSOR]),
    },
}

SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Wharf", "version": "0.1.0",
             "description": "Document workspace backend. Errors are RFC 9457 problem+json "
                            "with a stable `code`."},
    "paths": PATHS,
    "components": {
        "schemas": SCHEMAS,
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer"},
            "session": {"type": "apiKey", "in": "cookie", "name": "wharf_session"},
        },
    },
    "security": [{"bearer": []}, {"session": []}],
}


def register(paths: dict[str, Any], schemas: dict[str, Any]) -> None:
    """Capabilities added later (operations, units, blobs) extend the document here."""
    PATHS.update(paths)
    SCHEMAS.update(schemas)


# Entries of later capabilities register themselves into the document.
import api.openapi_operations  # noqa: E402,F401
import api.openapi_blobs  # noqa: E402,F401
import api.openapi_lifecycle  # noqa: E402,F401  (registers its entries)
