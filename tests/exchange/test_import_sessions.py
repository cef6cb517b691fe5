"""Imports from an upload session's bytes (issue 38): ``POST /api/imports`` with
``upload_session_id`` instead of a blob. The import takes the session (``uploaded`` →
``importing`` with the operation's record), so it can no longer be completed, aborted,
uploaded to or imported again; when the import is done the session is ``imported`` (or
``failed`` with the import's code) and its object is queued for deletion: no blob
resource, and nothing left in the store. The expiry sweep leaves a session an import is
reading alone. On the filesystem and S3 (moto over HTTP) stores; SQLite and PostgreSQL
where the database is touched differently (the taking, the completion and failure
transactions, a replay)."""
from __future__ import annotations

import threading
from datetime import timedelta
from types import SimpleNamespace

import pytest
from sqlalchemy import select, update

from storage.blobstore import BlobNotFound, FileBlobStore
from storage.enums import OperationStatus
from storage.models import (
    BlobResource,
    BlobUploadSession,
    Node,
    ObjectDeletionJob,
    Operation,
    UnitResource,
)
from tests.conftest import World
from tests.engine.test_operations import wait_done
from tests.exchange.test_imports import _env, key, xlsx_bytes
from wharf.blobs import recover_interrupted_sessions
from wharf.deletion import service as deletion
from wharf.infra.clock import utcnow
from wharf.operations.executor import Hooks
from wharf.retention.sweeps import SweepContext, expire_upload_sessions
from wharfd.runtime import Components

both = pytest.mark.both_databases
CSV = b"name,age\nAda,36\nAlan,41\n"


@pytest.fixture(params=["file", "s3"])
def env(request, settings, db, tmp_path):
    return _env(request, settings, db, tmp_path, request.param)


@pytest.fixture
def fs_env(request, settings, db, tmp_path):
    return _env(request, settings, db, tmp_path, "file")


def new_session(env, data: bytes, filename: str, client=None, put: bool = True) -> str:
    """An upload session in the client's personal space, its content PUT (``uploaded``)
    unless ``put`` is false (``waiting_for_upload``)."""
    client = client or env.alice
    r = client.post("/api/blob-upload-sessions",
                    json={"space_id": client.personal_space_id, "filename": filename,
                          "size": len(data)}, headers={"Idempotency-Key": key()})
    assert r.status_code == 201, r.text
    sid = r.json["id"]
    if put:
        r = put_content(client, sid, data)
        assert r.status_code == 200, r.text
        assert session(client, sid)["state"] == "uploaded"
    return sid


def put_content(client, sid: str, data: bytes):
    return client.request("PUT", f"/api/blob-upload-sessions/{sid}/content", body=data,
                          headers={"Content-Type": "application/octet-stream",
                                   "Content-Length": str(len(data))})


def session(client, sid: str) -> dict:
    r = client.get(f"/api/blob-upload-sessions/{sid}")
    assert r.status_code == 200, r.text
    return r.json


def submit(env, sid: str, client=None, k: str | None = None, **extra):
    client = client or env.alice
    body = {"upload_session_id": sid, "space_id": env.space, "name": "Imported", **extra}
    return client.post("/api/imports", json=body, headers={"Idempotency-Key": k or key()})


def object_key(env, sid: str) -> str:
    with env.db.read() as s:
        return s.get(BlobUploadSession, sid).object_key


def gone(env, object_key: str) -> bool:
    deletion.run_due(env.db, env.store)  # (the worker may have run the job already)
    try:
        env.store.head(object_key)
    except BlobNotFound:
        return True
    return False


def refused(r, state: str) -> None:
    assert r.status_code == 409, r.text
    assert r.json["code"] == "upload_session_state", r.json
    assert r.json["details"]["state"] == state, r.json


# -- imports from a session ----------------------------------------------------------------

@both
def test_an_xlsx_and_a_csv_import_from_their_sessions_and_the_uploads_are_deleted(env):
    blobs = env.count(BlobResource)
    for data, filename, check in (
            (xlsx_bytes(), "budget.xlsx",
             lambda body: [body["sheets"][s]["name"] for s in body["sheetOrder"]]
             == ["Budget", "Second"]),
            (CSV, "people.csv",
             lambda body: body["sheets"]["s1"]["cellData"]["1"]["1"] == {"v": 36, "t": 2})):
        sid = new_session(env, data, filename)
        stored = object_key(env, sid)
        r = submit(env, sid, name=filename)
        assert r.status_code == 202, r.text
        assert r.json["kind"] == "import_file"
        op = wait_done(env.alice, r.json["id"])
        assert op["status"] == "completed", op
        unit = env.alice.get(f"/api/units/{op['result']['unit_id']}").json
        assert unit["unit_type"] == "sheet" and check(unit["snapshot"]["body"]), unit
        node = env.alice.get(f"/api/resources/{op['result']['resource_id']}").json["node"]
        assert node["name"] == filename and node["parent_id"] is None
        shown = session(env.alice, sid)
        assert shown["state"] == "imported", shown
        # the unit holds the content: the upload's object goes, through the outbox
        with env.db.read() as s:
            assert s.scalar(select(ObjectDeletionJob.reason).where(
                ObjectDeletionJob.object_key == stored)) in ("upload_imported", None)
        assert gone(env, stored)
    assert env.count(BlobResource) == blobs  # no blob resource was ever made
    assert env.count(UnitResource) == 2


@both
def test_a_taken_session_cannot_be_completed_aborted_uploaded_or_imported_again(fs_env):
    sid = new_session(fs_env, CSV, "x.csv")
    k = key()
    first = submit(fs_env, sid, k=k)
    assert first.status_code == 202, first.text
    # while the import may still be running, and after it: refused with the state
    for _ in range(2):
        state = session(fs_env.alice, sid)["state"]
        assert state in ("importing", "imported")
        r = fs_env.alice.post(f"/api/blob-upload-sessions/{sid}/complete",
                              headers={"Idempotency-Key": key()})
        assert r.status_code == 409 and r.json["code"] == "upload_session_state", r.text
        r = fs_env.alice.delete(f"/api/blob-upload-sessions/{sid}")
        assert r.status_code == 409 and r.json["code"] == "upload_session_state", r.text
        r = put_content(fs_env.alice, sid, CSV)
        assert r.status_code == 409 and r.json["code"] == "upload_session_state", r.text
        again = submit(fs_env, sid)
        assert again.status_code == 409 and again.json["code"] == "upload_session_state"
        assert again.json["details"]["state"] in ("importing", "imported")
        done = wait_done(fs_env.alice, first.json["id"])
        assert done["status"] == "completed", done
    refused(submit(fs_env, sid), "imported")
    # the same key replays the same operation, its result included
    replay = submit(fs_env, sid, k=k)
    assert replay.json["id"] == first.json["id"], replay.text
    assert replay.json["result"] == done["result"]
    other = submit(fs_env, sid, k=k, name="Another name")
    assert other.status_code == 409 and other.json["code"] == "idempotency_key_reused"
    assert fs_env.count(UnitResource) == 1


@both
def test_someone_elses_session_is_404_and_a_session_not_uploaded_is_409(fs_env):
    bob = fs_env.world.user("bob")
    theirs = new_session(fs_env, CSV, "bob.csv", client=bob)
    r = submit(fs_env, theirs)
    assert r.status_code == 404, r.text
    r = submit(fs_env, "f" * 32)
    assert r.status_code == 404, r.text
    assert session(bob, theirs)["state"] == "uploaded"  # untouched
    # bob may not import his own session into alice's space either (404: he cannot see it)
    r = submit(fs_env, theirs, client=bob)
    assert r.status_code == 404, r.text
    assert session(bob, theirs)["state"] == "uploaded"
    waiting = new_session(fs_env, CSV, "w.csv", put=False)
    refused(submit(fs_env, waiting), "waiting_for_upload")
    aborted = new_session(fs_env, CSV, "a.csv")
    assert fs_env.alice.delete(f"/api/blob-upload-sessions/{aborted}").status_code == 204
    refused(submit(fs_env, aborted), "aborted")
    late = new_session(fs_env, CSV, "late.csv")
    with fs_env.db.write() as s:
        s.execute(update(BlobUploadSession).where(BlobUploadSession.id == late)
                  .values(expires_at=utcnow() - timedelta(seconds=1)))
    refused(submit(fs_env, late), "expired")
    completed = new_session(fs_env, CSV, "c.csv")
    r = fs_env.alice.post(f"/api/blob-upload-sessions/{completed}/complete",
                          headers={"Idempotency-Key": key()})
    assert wait_done(fs_env.alice, r.json["id"])["status"] == "completed"
    refused(submit(fs_env, completed), "completed")
    assert fs_env.count(UnitResource) == 0


def test_exactly_one_source_is_required(fs_env):
    sid = new_session(fs_env, CSV, "x.csv")
    blob = fs_env.upload(CSV, "b.csv")
    for body in ({"upload_session_id": sid, "blob_resource_id": blob}, {}):
        r = fs_env.alice.post("/api/imports", json={"space_id": fs_env.space, "name": "x",
                                                    **body},
                              headers={"Idempotency-Key": key()})
        assert r.status_code == 400 and r.json["code"] == "validation_failed", r.text
    assert session(fs_env.alice, sid)["state"] == "uploaded"


@both
def test_a_failed_import_leaves_nothing_and_consumed_the_session(env):
    nodes, units = env.count(Node), env.count(UnitResource)
    sid = new_session(env, b"%PDF-1.7\n\x00\x01\x02\x03 binary", "paper.pdf")
    stored = object_key(env, sid)
    r = submit(env, sid)
    assert r.status_code == 202, r.text
    op = wait_done(env.alice, r.json["id"])
    assert op["status"] == "failed" and op["error"]["code"] == "unsupported_format", op
    assert op["can_retry"] is False  # its input is gone
    r = env.alice.post(f"/api/operations/{op['id']}/retry")
    assert r.status_code == 409 and r.json["code"] == "retry_not_possible", r.text
    assert (env.count(Node), env.count(UnitResource)) == (nodes, units)
    shown = session(env.alice, sid)
    assert shown["state"] == "failed", shown
    with env.db.read() as s:
        assert s.get(BlobUploadSession, sid).error_code == "unsupported_format"
    assert gone(env, stored)
    refused(submit(env, sid), "failed")
    r = env.alice.post(f"/api/blob-upload-sessions/{sid}/complete",
                       headers={"Idempotency-Key": key()})
    assert r.status_code == 409, r.text


class HoldBeforeReading(Hooks):
    """The import_file attempt waits before it reads the object, until released."""

    def __init__(self):
        self.waiting, self.release = threading.Event(), threading.Event()

    def before_perform(self, op):
        if op.kind == "import_file":
            self.waiting.set()
            assert self.release.wait(60)


@both
def test_the_expiry_sweep_leaves_a_session_an_import_is_reading(request, settings, db,
                                                                 tmp_path):
    hooks = HoldBeforeReading()
    e = _env(request, settings, db, tmp_path, "file", hooks=hooks)
    request.addfinalizer(hooks.release.set)
    sid = new_session(e, CSV, "x.csv")
    stored = object_key(e, sid)
    r = submit(e, sid)
    assert r.status_code == 202, r.text
    assert hooks.waiting.wait(30)
    # past its deadline while the worker is about to read it: the sweep leaves it alone
    later = utcnow() + timedelta(seconds=settings.upload_session_ttl + 60)
    ctx = SweepContext(db=e.db, settings=e.settings, now=later, blob_store=e.store)
    assert expire_upload_sessions(ctx) == {"expired": 0, "operations_failed": 0}
    assert session(e.alice, sid)["state"] == "importing"
    deletion.run_due(e.db, e.store)
    e.store.head(stored)  # still there
    hooks.release.set()
    op = wait_done(e.alice, r.json["id"])
    assert op["status"] == "completed", op
    assert session(e.alice, sid)["state"] == "imported"
    assert gone(e, stored)
    assert expire_upload_sessions(ctx) == {"expired": 0, "operations_failed": 0}


@both
def test_an_import_failed_without_its_hook_still_releases_its_session(settings, db, tmp_path):
    """The recovery sweep's safety net: a session left ``importing`` by an import that a
    finisher failed without the kind's failure hook becomes ``failed`` and its object is
    queued for deletion, as the hook would have done."""
    components = Components(settings, db=db, blob_store=FileBlobStore(tmp_path / "blobs"))
    try:  # no worker: the import stays pending
        world = World(components.api_app())
        alice = world.user("alice")
        e = SimpleNamespace(alice=alice, db=db, space=alice.personal_space_id)
        sid = new_session(e, CSV, "x.csv")
        r = submit(e, sid)
        assert r.status_code == 202, r.text
        assert session(alice, sid)["state"] == "importing"
        assert recover_interrupted_sessions(db) == 0  # its operation is still open
        with db.write() as s:
            s.execute(update(Operation).where(Operation.id == r.json["id"])
                      .values(status=OperationStatus.FAILED))
        assert recover_interrupted_sessions(db) == 1
        assert session(alice, sid)["state"] == "failed"
        with db.read() as s:
            assert s.get(BlobUploadSession, sid).error_code == "import_interrupted"
            assert s.scalar(select(ObjectDeletionJob.reason).where(
                ObjectDeletionJob.object_key == object_key(e, sid))) == "import_failed"
        assert recover_interrupted_sessions(db) == 0
    finally:
        components.close()


@both
def test_racing_imports_and_a_completion_take_the_session_once(fs_env):
    """Two imports (different keys) and a completion of one session at the same moment:
    the session row is locked by whichever records its operation first; the others see
    it taken (409) and exactly one operation exists."""
    from concurrent.futures import ThreadPoolExecutor
    sid = new_session(fs_env, CSV, "x.csv")
    start = threading.Barrier(3)

    def imp():
        start.wait()
        return submit(fs_env, sid)

    def complete():
        start.wait()
        return fs_env.alice.post(f"/api/blob-upload-sessions/{sid}/complete",
                                 headers={"Idempotency-Key": key()})

    with ThreadPoolExecutor(3) as pool:
        answers = [f.result() for f in [pool.submit(imp), pool.submit(imp),
                                        pool.submit(complete)]]
    won = [r for r in answers if r.status_code == 202]
    assert len(won) == 1, [(r.status_code, r.text) for r in answers]
    for r in answers:
        if r.status_code != 202:
            assert r.status_code == 409 and r.json["code"] == "upload_session_state", r.text
    done = wait_done(fs_env.alice, won[0].json["id"])
    assert done["status"] == "completed", done
    state = session(fs_env.alice, sid)["state"]
    assert state == ("imported" if done["kind"] == "import_file" else "completed")
    assert fs_env.count(UnitResource) + fs_env.count(BlobResource) == 1
