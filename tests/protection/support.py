"""What the protected-range tests share: a doc made through the API (its operation run
in this thread), a changeset at the unit's current revision, and the routes' paths."""
from __future__ import annotations

import uuid


def key() -> str:
    return uuid.uuid4().hex


def run(components, client, r) -> dict:
    """Execute the operation a 202 answer named, in this thread; its final JSON."""
    assert r.status_code == 202, r.text
    components.executor.execute(r.json["id"])
    return client.get(f"/api/operations/{r.json['id']}").json


def make_doc(components, client, space_id: str, body: dict) -> dict:
    """``{node_id, resource_id, unit_id}`` of a new doc whose body is ``body``."""
    op = run(components, client, client.post(
        "/api/resources", json={"space_id": space_id, "parent_id": None,
                                "name": f"Doc {key()[:6]}", "unit_type": "doc"},
        headers={"Idempotency-Key": key()}))
    assert op["status"] == "completed", op
    r = client.post(f"/api/units/{op['result']['unit_id']}/changesets",
                    json={"base_revision": 0,
                          "changes": [{"op": "replace", "path": "/body", "value": body}]})
    assert r.status_code == 200, r.text
    return op["result"]


def revision(client, unit_id: str) -> int:
    r = client.get(f"/api/units/{unit_id}")
    assert r.status_code == 200, r.text
    return r.json["revision"]


def change(client, unit_id: str, *ops: dict):
    """A trunk changeset of ``ops`` at the unit's current revision (the answer)."""
    return client.post(f"/api/units/{unit_id}/changesets",
                       json={"base_revision": revision(client, unit_id), "changes": list(ops)})


def protect(client, unit_id: str, target: str, **fields) -> dict:
    body = {"name": f"Range {key()[:4]}", "object_type": "range", "target": target, **fields}
    r = client.post(f"/api/units/{unit_id}/permission-objects", json=body)
    assert r.status_code == 201, r.text
    assert r.json["bound"] and r.json["target"] == target
    return r.json


def collaborator(client, object_id: str, user_id: str, role: str) -> dict:
    r = client.put(f"/api/permission-objects/{object_id}/collaborators/{user_id}",
                   json={"role": role})
    assert r.status_code == 200, r.text
    return r.json
