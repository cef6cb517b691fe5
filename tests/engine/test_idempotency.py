"""One idempotency algorithm (``wharf.operations.idempotency``) for both places a request
is recorded under an ``Idempotency-Key``: operations (``Operations.submit``) and upload
sessions (``blobs.create_session``). A key names its request: the same request is a
replay, answered by what it recorded; a different one is 409 ``idempotency_key_reused``
naming what the key is bound to. A key is released ``WHARF_IDEMPOTENCY_KEY_TTL`` after
its request is done, and then names nothing."""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from wharf.infra.clock import utcnow
from wharf.operations import idempotency
from wharf.operations.errors import IdempotencyKeyRequired, InvalidIdempotencyKey
from wharf.retention.sweeps import SWEEPS, SweepContext


def key() -> str:
    return uuid.uuid4().hex


def sweep(components, name: str, *, later: float = 0) -> dict[str, int]:
    ctx = SweepContext(db=components.db, settings=components.settings,
                       now=utcnow() + timedelta(seconds=later),
                       send=components.dispatcher.send, blob_store=components.blob_store,
                       handlers=components.handlers)
    return SWEEPS[name](ctx)


def start_session(client, space_id: str, k: str, filename: str = "a.txt", size: int = 3):
    return client.post("/api/blob-upload-sessions",
                       json={"space_id": space_id, "parent_id": None, "filename": filename,
                             "size": size}, headers={"Idempotency-Key": k})


def create_resource(client, space_id: str, k: str, name: str = "Doc"):
    return client.post("/api/resources", json={"space_id": space_id, "name": name,
                                               "unit_type": "doc"},
                       headers={"Idempotency-Key": k})


def test_a_key_is_checked_and_a_request_fingerprinted_once():
    with pytest.raises(IdempotencyKeyRequired):
        idempotency.check_key(None)
    with pytest.raises(InvalidIdempotencyKey):
        idempotency.check_key("short")
    assert idempotency.check_key("k" * 16) == "k" * 16
    a = idempotency.fingerprint("k", {"a": 1, "b": [1, 2]})
    assert a == idempotency.fingerprint("k", {"b": [1, 2], "a": 1})
    assert a != idempotency.fingerprint("other", {"a": 1, "b": [1, 2]})


def test_a_different_request_under_a_bound_key_names_what_the_key_is_bound_to(world):
    """Operations answered 409 with ``details.operation_id``, upload sessions with no
    details: both now name what the key is bound to."""
    alice = world.user("alice")
    space = alice.personal_space_id
    k = key()
    first = start_session(alice, space, k)
    assert first.status_code == 201, first.text
    replay = start_session(alice, space, k)
    assert replay.status_code == 200 and replay.json["id"] == first.json["id"]
    other = start_session(alice, space, k, filename="b.txt")
    assert other.status_code == 409 and other.json["code"] == "idempotency_key_reused"
    assert other.json["details"] == {"upload_session_id": first.json["id"]}

    k = key()
    op = create_resource(alice, space, k)
    assert op.status_code == 202, op.text
    other = create_resource(alice, space, k, name="Other")
    assert other.status_code == 409 and other.json["code"] == "idempotency_key_reused"
    assert other.json["details"] == {"operation_id": op.json["id"]}


def test_a_session_key_is_released_its_ttl_after_the_session_is_done(world, components):
    """As an operation's (tests/engine/test_finishers.py): bound while the session is open and
    for the TTL after it is done, then free for a new request."""
    alice = world.user("alice")
    space = alice.personal_space_id
    k = key()
    first = start_session(alice, space, k).json
    ttl = components.settings.idempotency_key_ttl
    # open: not released, however old
    assert sweep(components, "release_idempotency_keys", later=ttl + 1)["upload_sessions"] == 0
    assert alice.delete(f"/api/blob-upload-sessions/{first['id']}").status_code == 204
    assert sweep(components, "release_idempotency_keys")["upload_sessions"] == 0
    assert start_session(alice, space, k).json["id"] == first["id"]  # still a replay
    assert sweep(components, "release_idempotency_keys", later=ttl + 1)["upload_sessions"] == 1
    again = start_session(alice, space, k, filename="b.txt")
    assert again.status_code == 201, again.text
    assert again.json["id"] != first["id"]
