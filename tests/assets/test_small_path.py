"""The small-object path of asset uploads (``wharf.blobs.ingest.SMALL_OBJECT``), on SQLite
and PostgreSQL: an upload stores its bytes with one PUT and marks itself stored in one
statement (PostgreSQL) or one transaction; a worker's batch re-checks its objects with
one GET each (no HEAD), concurrently, and publishes the batch's trunk uploads in one
completion; one tampered object in a batch is quarantined alone."""
from __future__ import annotations

import collections
import os

import pytest
from sqlalchemy import select

from storage.models import (
    AuditLog,
    ObjectDeletionJob,
    Operation,
    OutboxMessage,
    UnitAsset,
    UnitAssetUpload,
)
from tests.assets.test_assets import Env, fs_env, new_unit, upload  # noqa: F401 (fixture)
from wharf.assets.kinds import PublishAssetPayload
from wharf.assets.stored import mark_stored
from wharf.assets.upload import fail_upload
from wharf.blobs.ingest import SMALL_OBJECT, Ingested
from wharf.operations.kinds import payload

pytestmark = pytest.mark.both_databases


@pytest.fixture
def s3_env(settings, db, s3_store):
    e = Env(settings, db, s3_store)
    yield e
    e.close()


def _calls(store) -> collections.Counter[str]:
    """The S3 requests ``store``'s client makes from now on, by operation name."""
    calls: collections.Counter[str] = collections.Counter()
    store.client.meta.events.register(
        "before-call.s3", lambda model, **_: calls.update([model.name]))
    return calls


def _queue(env: Env, alice, unit: str, bodies: list[bytes]) -> list[str]:
    """Upload ``bodies`` with the workers stopped: their operations wait, due."""
    ids = []
    for i, body in enumerate(bodies):
        r = upload(alice, unit, body, media_type="application/octet-stream",
                   filename=f"s{i}.bin")
        assert r.status_code == 202, r.text
        ids.append(r.json["id"])
    return ids


def test_small_assets_are_stored_with_one_put_and_published_with_one_get_each(s3_env):
    env = s3_env
    alice = env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    env.stop_worker()
    bodies = [os.urandom(64 * 1024 + i) for i in range(5)] + [os.urandom(SMALL_OBJECT)]
    calls = _calls(env.store)
    ids = _queue(env, alice, unit, bodies)
    assert dict(calls) == {"PutObject": len(bodies)}  # one PUT each, nothing more
    with env.db.read() as s:
        assert s.scalar(select(ObjectDeletionJob.id)) is None  # reservations released
    calls.clear()
    assert env.components.executor.run_batch(limit=32, worker_id="w") == len(bodies)
    assert dict(calls) == {"GetObject": len(bodies)}  # re-checked: no HEAD, one GET each
    for op_id, body in zip(ids, bodies, strict=True):
        op = alice.get(f"/api/operations/{op_id}").json
        assert op["status"] == "completed" and op["attempts"] == 1, op
        assert alice.get(op["result"]["content_url"]).content == body
    with env.db.read() as s:
        assert s.scalar(select(UnitAssetUpload.id)) is None
        assert len(s.scalars(select(UnitAsset.id)).all()) == len(bodies)
        published = s.scalars(select(AuditLog.target_id)
                              .where(AuditLog.action == "asset.publish")).all()
        assert sorted(published) == sorted(
            alice.get(f"/api/operations/{i}").json["result"]["asset_id"] for i in ids)
    assert env.stored_keys() == env.named_keys()


def test_a_larger_object_is_still_checked_with_a_head_and_a_streamed_read(s3_env):
    env = s3_env
    alice = env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    env.stop_worker()
    body = os.urandom(SMALL_OBJECT + 1)
    (op_id,) = _queue(env, alice, unit, [body])
    calls = _calls(env.store)
    assert env.components.executor.run_batch(limit=32, worker_id="w") == 1
    assert dict(calls) == {"HeadObject": 1, "GetObject": 1}
    assert alice.get(f"/api/operations/{op_id}").json["status"] == "completed"


def test_a_tampered_object_in_a_batch_is_quarantined_alone(s3_env):
    env = s3_env
    alice = env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    env.stop_worker()
    bodies = [os.urandom(4096) for _ in range(4)]
    ids = _queue(env, alice, unit, bodies)
    with env.db.read() as s:
        bad_key = payload(s.get(Operation, ids[2]), PublishAssetPayload).object_key
    env.store.put_stream(bad_key, [os.urandom(4096)])  # same size, other bytes
    assert env.components.executor.run_batch(limit=32, worker_id="w") == 4
    ops = [alice.get(f"/api/operations/{i}").json for i in ids]
    assert [op["status"] for op in ops] == ["completed", "completed", "failed", "completed"]
    assert ops[2]["error"]["code"] == "verification_failed"
    env.run_deletions()
    assert env.stored_keys() == env.named_keys()
    assert bad_key not in env.named_keys()


def _one_stored(env: Env, body: bytes) -> tuple[object, Operation, PublishAssetPayload]:
    """One upload, stored and waiting for a worker: (its user, operation, payload)."""
    alice = env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    env.stop_worker()
    (op_id,) = _queue(env, alice, unit, [body])
    with env.db.read() as s:
        op = s.get(Operation, op_id)
        s.expunge(op)
    return alice, op, payload(op, PublishAssetPayload)


def test_the_stored_mark_changes_nothing_once_the_upload_is_no_longer_receiving(fs_env):  # noqa: F811
    env = fs_env
    _, op, p = _one_stored(env, b"x" * 100)
    with env.db.read() as s:
        outbox = len(s.scalars(select(OutboxMessage.id)).all())
        before = s.get(UnitAssetUpload, p.upload_id)
        stored = (before.state, before.sha256, before.etag)
    # A late second mark (e.g. after the upload was abandoned and re-created as stored
    # elsewhere): nothing is written, nothing rung.
    assert not mark_stored(env.db, op, p, Ingested(100, "0" * 64, "text/plain", "etag"))
    with env.db.read() as s:
        after = s.get(UnitAssetUpload, p.upload_id)
        assert (after.state, after.sha256, after.etag) == stored
        assert len(s.scalars(select(OutboxMessage.id)).all()) == outbox


def test_a_mark_finding_its_upload_abandoned_queues_the_object_in_its_transaction(fs_env):  # noqa: F811
    """The upload was abandoned while its bytes streamed in, and its deletion job ran
    before they existed. The mark that finds it abandoned queues the object again in its
    own transaction: once it has returned, a process killed there leaves nothing behind
    (the object used to be queued in a second transaction, and was left to fsck)."""
    env = fs_env
    alice, op, p = _one_stored(env, b"z" * 100)
    op_id = op.id
    with env.db.write() as s:  # abandoned (as the sweep does at the deadline), deleted now
        assert fail_upload(s, op_id, p.upload_id, p.object_key, "upload_abandoned", "late",
                           idempotency_key_ttl=60)
    env.run_deletions()
    assert p.object_key not in env.stored_keys()
    env.store.put_stream(p.object_key, [b"z" * 100])  # the request's bytes land after it
    assert not mark_stored(env.db, op, p, Ingested(100, "0" * 64, "text/plain", "etag"))
    # (the request would end here: killed, nothing more runs for it)
    with env.db.read() as s:
        assert s.scalars(select(ObjectDeletionJob.reason).where(
            ObjectDeletionJob.object_key == p.object_key)).all() == ["asset_upload_abandoned"]
    env.run_deletions()
    assert p.object_key not in env.stored_keys()
    assert env.stored_keys() == env.named_keys() == set()
    assert alice.get(f"/api/operations/{op_id}").json["status"] == "failed"


def test_the_stored_mark_of_a_receiving_upload_makes_it_due_and_rings_it(fs_env):  # noqa: F811
    """The one statement (PostgreSQL) does what the transaction did: the row stored, the
    reservation released, the operation due, an outbox row."""
    env = fs_env
    alice = env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    env.stop_worker()
    (op_id,) = _queue(env, alice, unit, [b"y" * 100])
    with env.db.write() as s:  # back to receiving, not due, reserved, as before its bytes
        op = s.get(Operation, op_id)
        p = payload(op, PublishAssetPayload)
        s.get(UnitAssetUpload, p.upload_id).state = "receiving"
        op.next_attempt_at = op.created_at.replace(year=op.created_at.year + 1)
        s.add(ObjectDeletionJob(id="0" * 32, object_key=p.object_key,
                                reason="asset_upload_reservation",
                                next_attempt_at=op.next_attempt_at))
        s.flush()
        s.expunge(op)
        outbox = len(s.scalars(select(OutboxMessage.id)).all())
    assert mark_stored(env.db, op, p, Ingested(100, "a" * 64, "text/plain", "tag"))
    with env.db.read() as s:
        row = s.get(UnitAssetUpload, p.upload_id)
        assert (row.state, row.received_size, row.sha256, row.etag,
                row.detected_media_type) == ("stored", 100, "a" * 64, "tag", "text/plain")
        assert s.get(Operation, op_id).next_attempt_at is None
        assert s.scalar(select(ObjectDeletionJob.id)) is None
        rows = s.scalars(select(OutboxMessage).where(OutboxMessage.subject_id == op_id)).all()
        assert len(s.scalars(select(OutboxMessage.id)).all()) == outbox + 1 and rows
