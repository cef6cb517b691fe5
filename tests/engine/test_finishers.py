"""Every way an operation ends goes through one terminal writer (``wharf.operations.finish``):
whoever finishes it (a worker, a cancel, the recovery sweep, an expired upload session, an
abandoned asset upload), its Idempotency-Key is released after ``WHARF_IDEMPOTENCY_KEY_TTL``,
it is counted in ``wharf_operations_finished_total`` and a long-poll waiting for it answers
at once."""
from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from storage.blobstore import FileBlobStore
from storage.models import Operation
from tests.engine.test_long_poll_notices import long_poll
from tests.engine.test_operations import create
from wharf.infra.clock import utcnow
from wharf.observability.metrics import REGISTRY
from wharf.operations import notify
from wharf.retention.sweeps import SWEEPS, SweepContext


def finished(kind: str, status: str, code: str) -> float:
    return REGISTRY.get_sample_value("wharf_operations_finished_total",
                                     {"kind": kind, "status": status, "code": code}) or 0.0


def sweep(components, name: str, *, later: float = 0) -> dict[str, int]:
    """One sweep as the sweep actors run it (on the process's database)."""
    ctx = SweepContext(db=components.db, settings=components.settings,
                       now=utcnow() + timedelta(seconds=later),
                       send=components.dispatcher.send, blob_store=components.blob_store,
                       handlers=components.handlers)
    return SWEEPS[name](ctx)


def orphan_on_its_last_attempt(db, op_id: str) -> None:
    """Its worker died on its last attempt: running, lease long expired."""
    with db.write() as s:
        s.execute(update(Operation).where(Operation.id == op_id).values(
            status="running", attempts=5, max_attempts=5, lease_owner="dead",
            lease_expires_at=utcnow().replace(year=2000)))


def test_the_key_of_an_operation_the_recovery_sweep_failed_is_released_after_its_ttl(
        world, components, db):
    alice = world.user("alice")
    k = "recovered-key-0123456789"
    op = create(alice, alice.personal_space_id, name="First", k=k).json
    orphan_on_its_last_attempt(db, op["id"])
    before = finished("create_resource", "failed", "lease_expired")
    assert sweep(components, "recover_operations")["expired"] == 1
    # Within the key's TTL the key still answers the failed operation ...
    ttl = components.settings.idempotency_key_ttl
    assert sweep(components, "release_idempotency_keys")["operations"] == 0
    again = create(alice, alice.personal_space_id, name="First", k=k)
    assert again.json["id"] == op["id"]
    # ... after it, the key is free for a new request (not only once the row is deleted).
    assert sweep(components, "release_idempotency_keys", later=ttl + 1)["operations"] == 1
    other = create(alice, alice.personal_space_id, name="Second", k=k)
    assert other.status_code == 202, other.text
    assert other.json["id"] != op["id"]
    assert finished("create_resource", "failed", "lease_expired") == before + 1


def test_a_cancel_is_counted(world, components):
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id).json  # no worker: it stays pending
    before = finished("create_resource", "failed", "cancelled")
    assert alice.post(f"/api/operations/{op['id']}/cancel").status_code == 200
    assert finished("create_resource", "failed", "cancelled") == before + 1
    with components.db.read() as s:
        assert s.get(Operation, op["id"]).key_expires_at is not None


def test_an_expired_upload_session_wakes_the_long_poll_of_its_completion(
        settings, db, tmp_path, monkeypatch):
    from tests.blobs.test_blobs import Env, key, put_bytes, start_upload
    monkeypatch.setattr(notify, "CONFIRM_SECONDS", 60)
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    try:
        env.worker.stop(timeout=5000)  # the completion stays queued
        alice = env.world.user("alice")
        sess = start_upload(alice, alice.personal_space_id, "a.bin", 3)
        put_bytes(alice, sess["id"], b"abc")
        op = alice.post(f"/api/blob-upload-sessions/{sess['id']}/complete",
                        headers={"Idempotency-Key": key()}).json
        before = finished("create_blob_resource", "failed", "upload_expired")
        t, answers = long_poll(alice, op["id"], env.components.notifier)
        counts = sweep(env.components, "expire_upload_sessions",
                       later=settings.upload_session_ttl + 60)
        assert counts["operations_failed"] == 1
        t.join(40)
        answer, waited = answers[0]
        assert answer["status"] == "failed" and answer["error"]["code"] == "upload_expired"
        assert waited < 10  # woken by the sweep, not at the end of its 30 s
        assert finished("create_blob_resource", "failed", "upload_expired") == before + 1
    finally:
        env.close()


def test_an_abandoned_asset_upload_wakes_the_long_poll_of_its_operation(
        settings, db, tmp_path, monkeypatch):
    from tests.assets.test_assets import PNG, Env, new_unit, upload
    from wharf.assets import upload as upload_mod
    monkeypatch.setattr(notify, "CONFIRM_SECONDS", 60)
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    try:
        alice = env.world.user("alice")
        unit = new_unit(alice, alice.personal_space_id)["unit_id"]

        class Died(BaseException):
            pass

        def dying(store, key, read, size, filename):
            store.put_stream(key, iter([b"partial"]))
            raise Died()

        with monkeypatch.context() as m:  # the request's process died mid-stream
            m.setattr(upload_mod, "_abandon", lambda *a, **kw: None)
            m.setattr(upload_mod, "ingest", dying)
            with pytest.raises(Died):
                upload(alice, unit, PNG)
        with env.db.read() as s:
            op_id = s.query(Operation.id).filter(Operation.kind == "publish_asset").scalar()
        before = finished("publish_asset", "failed", "upload_abandoned")
        t, answers = long_poll(alice, op_id, env.components.notifier)
        assert sweep(env.components, "sweep_asset_uploads",
                     later=settings.asset_upload_ttl + 1)["abandoned"] == 1
        t.join(40)
        answer, waited = answers[0]
        assert answer["status"] == "failed" and answer["error"]["code"] == "upload_abandoned"
        assert waited < 10
        assert finished("publish_asset", "failed", "upload_abandoned") == before + 1
    finally:
        env.close()
