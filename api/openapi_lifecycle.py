"""OpenAPI entries for sharing, trash and recent files (registered into the SPEC)."""
from __future__ import annotations

from api.openapi import (ID, PARAM_CURSOR, PARAM_LIMIT, TS, json_resp, obj, op, page_of,
                         path_param, problem, register)
from api.openapi_operations import IDEMPOTENCY_KEY, _op_resp

SCHEMAS = {
    "Grant": obj({"node_id": ID, "user_id": ID, "role": {"type": "string",
                                                         "enum": ["editor", "viewer"]},
                  "created_at": TS}, ["node_id", "user_id", "role", "created_at"]),
    "GrantList": obj({"items": {"type": "array", "items": {
        "allOf": [{"$ref": "#/components/schemas/Grant"},
                  obj({"username": {"type": "string"}})]}}}),
    "LinkSharingState": obj({"enabled": {"type": "boolean"},
                             "role": {"type": ["string", "null"],
                                      "enum": ["editor", "viewer", None]}}),
    "TrashBatch": obj({"id": ID, "space_id": ID, "root_node_id": ID, "created_by": ID,
                       "node_count": {"type": "integer"}, "created_at": TS}),
    # In the listing: the batch enclosing this one (its root lies below a node trashed
    # later; restore that first) and how many batches sit directly inside it (purging this
    # batch deletes them too).
    "TrashBatchListItem": {"allOf": [{"$ref": "#/components/schemas/TrashBatch"},
                                     obj({"enclosing_batch_id": {"anyOf": [ID, {"type": "null"}]},
                                          "nested_batches": {"type": "integer"}})]},
    "TrashBatchList": page_of("TrashBatchListItem"),
    "RestoreResult": {"allOf": [{"$ref": "#/components/schemas/TrashBatch"},
                                obj({"restored_nodes": {"type": "integer"}})]},
    "RecentItem": obj({"resource_id": ID, "kind": {"type": "string"}, "node_id": ID,
                       "name": {"type": "string"}, "space_id": ID,
                       "parent_id": {"anyOf": [ID, {"type": "null"}]}, "opened_at": TS}),
    "RecentList": page_of("RecentItem"),
    "PutGrantRequest": obj({"role": {"type": "string", "enum": ["editor", "viewer"]}},
                           extra=False),
    "LinkSharingRequest": obj({"enabled": {"type": "boolean"},
                               "role": {"type": ["string", "null"],
                                        "enum": ["editor", "viewer", None]}},
                              ["enabled"], extra=False),
}

NID = [path_param("node_id")]

PATHS = {
    "/api/nodes/{node_id}/grants": {
        "parameters": NID,
        "get": op("listGrants", "Direct grants on a node", json_resp(200, "GrantList"))},
    "/api/nodes/{node_id}/grants/{user_id}": {
        "parameters": NID + [path_param("user_id")],
        "put": op("putGrant", "Grant a user editor or viewer (personal spaces)",
                  {**json_resp(200, "Grant"), **json_resp(201, "Grant"), **problem(409)},
                  body="PutGrantRequest"),
        "delete": op("deleteGrant", "Revoke a grant", {"204": {"description": "revoked"}})},
    "/api/nodes/{node_id}/link-sharing": {
        "parameters": NID,
        "get": op("getLinkSharing", "Link sharing state", json_resp(200, "LinkSharingState")),
        "put": op("putLinkSharing", "Turn link sharing on or off",
                  json_resp(200, "LinkSharingState"), body="LinkSharingRequest")},
    "/api/nodes/{node_id}/trash": {
        "parameters": NID,
        "post": op("trashNode", "Move a node and its descendants to a new trash batch",
                   json_resp(200, "TrashBatch"))},
    "/api/spaces/{space_id}/trash": {
        "parameters": [path_param("space_id")],
        "get": op("listTrash", "Trash batches of a space", json_resp(200, "TrashBatchList"),
                  params=[PARAM_LIMIT, PARAM_CURSOR])},
    "/api/trash-batches/{batch_id}/restore": {
        "parameters": [path_param("batch_id")],
        "post": op("restoreTrash", "Restore exactly this batch (409 ancestor_trashed while a "
                   "batch enclosing it is in the trash, 409 purge_in_progress while its "
                   "permanent delete is queued or running)",
                   {**json_resp(200, "RestoreResult"), **problem(409)})},
    "/api/resources/{resource_id}/open": {
        "parameters": [path_param("resource_id")],
        "post": op("openResource", "Open a resource (records it in recent)",
                   json_resp(200, "Resource"))},
    "/api/me/recent": {"get": op("myRecent", "My recently opened resources",
                                 json_resp(200, "RecentList"),
                                 params=[PARAM_LIMIT, PARAM_CURSOR])},
}

# DELETE /api/nodes/{node_id} joins the existing path item.
DELETE_NODE = {**op("purgeNode", "Permanently delete a trashed batch root and every batch "
                    "nested below it (purge_trash); space owner or team admin only",
                    {**_op_resp(202, "accepted"), **_op_resp(200, "replay of a finished "
                                                                 "operation"),
                     **problem(409)}),
               "parameters": [IDEMPOTENCY_KEY]}

register(PATHS, SCHEMAS)
from api.openapi import PATHS as _ALL  # noqa: E402
_ALL["/api/nodes/{node_id}"]["delete"] = DELETE_NODE
