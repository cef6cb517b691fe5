"""What the comment tests share: a unit made through the API (its operation run by the
worker) and the comment routes' paths."""
from __future__ import annotations

import uuid

from tests.engine.test_operations import wait_done


def new_unit(client, space_id: str, parent_id: str | None = None) -> dict:
    """``{node_id, resource_id, unit_id}`` of a new doc (needs the ``worker`` fixture)."""
    body = {"space_id": space_id, "name": f"Doc {uuid.uuid4().hex[:6]}", "unit_type": "doc"}
    if parent_id:
        body["parent_id"] = parent_id
    r = client.post("/api/resources", json=body, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    op = wait_done(client, r.json["id"])
    assert op["status"] == "completed", op
    return op["result"]


def comments(unit_id: str) -> str:
    return f"/api/units/{unit_id}/comments"


def solved(thread_id: str) -> str:
    return f"/api/comment-threads/{thread_id}/solved"


def start(client, unit_id: str, body: str = "Is this right?", anchor=None) -> dict:
    r = client.post(comments(unit_id), json={"anchor": anchor or {"block": "b1"}, "body": body})
    assert r.status_code == 201, r.text
    return r.json


def reply(client, unit_id: str, thread_id: str, body: str = "Yes.") -> dict:
    r = client.post(comments(unit_id), json={"thread_id": thread_id, "body": body})
    assert r.status_code == 201, r.text
    return r.json
