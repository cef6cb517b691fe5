"""Uploaded files end to end, on the filesystem and S3 (moto over HTTP) stores, on SQLite
and PostgreSQL: upload sessions, streamed content, verification, ranged reads, replace,
and the deletion outbox leaving no unreferenced object."""
from __future__ import annotations

import hashlib
import io
import os
import struct
import uuid
import zipfile
import zlib

import dramatiq
import pytest
from sqlalchemy import func, select

from storage.blobstore import BlobStoreUnavailable, FileBlobStore
from storage.models import BlobResource, BlobUploadSession, Node, ObjectDeletionJob, Operation
from tests.conftest import World
from wharf.deletion import service as deletion
from wharfd.runtime import Components

MiB = 1024 * 1024


def key() -> str:
    return uuid.uuid4().hex


class Env:
    def __init__(self, settings, db, store, *, wrap=None):
        self.db = db
        self.real_store = store
        self.store = wrap(store) if wrap else store
        self.components = Components(settings, db=db, blob_store=self.store)
        self.world = World(self.components.api_app())
        self.worker = dramatiq.Worker(self.components.broker, worker_threads=2,
                                      worker_timeout=50)
        self.worker.start()

    def close(self):
        self.worker.stop(timeout=5000)
        self.components.close()

    def run_deletions(self):
        self.components.broker.join("maintenance", timeout=10_000)
        deletion.run_due(self.db, self.real_store)

    def referenced_keys(self) -> set[str]:
        with self.db.read() as s:
            blobs = set(s.scalars(select(BlobResource.object_key)))
            live = set(s.scalars(select(BlobUploadSession.object_key).where(
                BlobUploadSession.state.in_(("waiting_for_upload", "uploaded", "verifying")))))
        return blobs | live

    def stored_keys(self) -> set[str]:
        return set(self.real_store.list_keys())


@pytest.fixture(params=["file", "s3"])
def store_kind(request):
    return request.param


@pytest.fixture
def env(store_kind, settings, db, tmp_path, request):
    store = FileBlobStore(tmp_path / "blobs") if store_kind == "file" \
        else request.getfixturevalue("s3_store")
    e = Env(settings, db, store)
    yield e
    e.close()


def start_upload(client, space_id, filename="file.bin", size=0, parent_id=None):
    r = client.post("/api/blob-upload-sessions",
                    json={"space_id": space_id, "filename": filename, "size": size,
                          **({"parent_id": parent_id} if parent_id else {})},
                    headers={"Idempotency-Key": key()})
    assert r.status_code == 201, r.text
    return r.json


def put_bytes(client, session_id, data: bytes, headers=None):
    return client.request("PUT", f"/api/blob-upload-sessions/{session_id}/content", body=data,
                          headers={"Content-Type": "application/octet-stream",
                                   "Content-Length": str(len(data)), **(headers or {})})


def wait(client, op_id):
    r = client.get(f"/api/operations/{op_id}", params={"wait": "30"})
    assert r.status_code == 200
    return r.json


def upload(client, space_id, data: bytes, filename="file.bin"):
    sess = start_upload(client, space_id, filename, len(data))
    r = put_bytes(client, sess["id"], data)
    assert r.status_code == 200, r.text
    r = client.post(f"/api/blob-upload-sessions/{sess['id']}/complete",
                    headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    return sess, wait(client, r.json["id"])


@pytest.mark.parametrize("size", [0, 1, 5 * MiB + 1, 64 * MiB])
def test_byte_exact_round_trip(env, size):
    alice = env.world.user("alice")
    data = os.urandom(size)
    _sess, op = upload(alice, alice.personal_space_id, data, "data.bin")
    assert op["status"] == "completed", op
    rid = op["result"]["resource_id"]
    r = alice.get(f"/api/blob-resources/{rid}/content")
    assert r.status_code == 200
    assert hashlib.sha256(r.content).hexdigest() == hashlib.sha256(data).hexdigest()
    assert int(r.headers["content-length"]) == size
    assert r.headers["cache-control"] == "private, no-store"
    assert r.headers["x-content-type-options"] == "nosniff"
    node = alice.get(f"/api/nodes/{op['result']['node_id']}").json
    assert node["resource"]["kind"] == "blob" and node["name"] == "data.bin"
    meta = alice.get(f"/api/blob-resources/{rid}").json
    assert meta["size"] == size and meta["sha256"] == hashlib.sha256(data).hexdigest()
    assert env.stored_keys() == env.referenced_keys()


def test_ranges_etags_and_download(env):
    alice = env.world.user("alice")
    data = bytes(range(256)) * 40  # 10240 bytes
    _, op = upload(alice, alice.personal_space_id, data, "Résumé 2026.txt")
    rid = op["result"]["resource_id"]
    url = f"/api/blob-resources/{rid}/content"
    full = alice.get(url)
    etag = full.headers["etag"]
    assert etag.startswith('"') and not etag.startswith('W/')
    cases = {"bytes=0-9": (0, 9), "bytes=10240-": None, "bytes=100-": (100, 10239),
             "bytes=-5": (10235, 10239), "bytes=10239-10239": (10239, 10239),
             "bytes=0-999999": (0, 10239)}
    for header, expected in cases.items():
        r = alice.get(url, headers={"Range": header})
        if expected is None:
            assert r.status_code == 416, header
            assert r.headers["content-range"] == "bytes */10240"
            assert r.headers["content-type"].startswith("application/problem+json")
            continue
        a, b = expected
        assert r.status_code == 206, header
        assert r.content == data[a:b + 1], header
        assert r.headers["content-range"] == f"bytes {a}-{b}/10240"
    assert alice.get(url, headers={"Range": "bytes=5-2"}).status_code == 200  # ignored
    assert alice.get(url, headers={"Range": "bytes=0-1,4-5"}).status_code == 200
    r = alice.get(url, headers={"If-None-Match": etag})
    assert r.status_code == 304 and r.content == b""
    assert alice.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
    r = alice.get(f"/api/blob-resources/{rid}/download")
    assert r.status_code == 200 and r.content == data
    cd = r.headers["content-disposition"]
    assert cd.startswith("attachment;") and "filename*=UTF-8''R%C3%A9sum%C3%A9%202026.txt" in cd
    bob = env.world.user("bob")
    assert bob.get(url).status_code == 404
    assert env.world.anonymous().get(url).status_code == 404  # undiscoverable, not 401


def _png() -> bytes:
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = b"\x00\xff\x00\x00"
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _zip(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return buf.getvalue()


SAMPLES = {
    "image.png": (_png(), "image/png"),
    "doc.pdf": (b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< >>\n%%EOF\n",
                "application/pdf"),
    "archive.zip": (_zip({"a.txt": "hello"}), "application/zip"),
    "letter.docx": (_zip({
        "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.'
                               'openxmlformats.org/package/2006/content-types"><Override '
                               'PartName="/word/document.xml" ContentType="application/vnd.'
                               'openxmlformats-officedocument.wordprocessingml.document.main'
                               '+xml"/></Types>',
        "_rels/.rels": '<?xml version="1.0"?><Relationships/>',
        "word/document.xml": '<?xml version="1.0"?><w:document/>'}),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    "notes.txt": (b"Just some plain notes.\nSecond line.\n", "text/plain"),
    "table.csv": (b"name,qty,price\napple,3,0.5\npear,7,0.25\nplum,1,1.0\n", "text/csv"),
    # The declared name says PNG; the bytes are a PDF: the server believes the bytes.
    "liar.png": (b"%PDF-1.4\n%%EOF\n", "application/pdf"),
}


@pytest.mark.parametrize("filename", sorted(SAMPLES))
def test_mime_type_is_detected_from_the_bytes(env, filename):
    alice = env.world.user("alice")
    data, expected = SAMPLES[filename]
    sess = start_upload(alice, alice.personal_space_id, filename, len(data))
    r = put_bytes(alice, sess["id"], data)
    assert r.status_code == 200
    assert r.json["mime_type"] == expected
    assert r.json["sha256"] == hashlib.sha256(data).hexdigest()


def test_length_mismatch_keeps_nothing_and_session_stays_reuploadable(env):
    alice = env.world.user("alice")
    sess = start_upload(alice, alice.personal_space_id, "a.bin", 6 * MiB)
    r = put_bytes(alice, sess["id"], b"x" * 100)
    assert r.status_code == 400 and r.json["code"] == "size_mismatch"
    # A body shorter than its own Content-Length (the client went away mid-upload).
    r = put_bytes(alice, sess["id"], b"x" * (5 * MiB), headers={"Content-Length": str(6 * MiB)})
    assert r.status_code == 400 and r.json["code"] == "size_mismatch"
    assert env.stored_keys() == set()
    assert alice.get(f"/api/blob-upload-sessions/{sess['id']}").json["state"] == "waiting_for_upload"
    data = os.urandom(6 * MiB)
    assert put_bytes(alice, sess["id"], data).status_code == 200
    # A second PUT replaces the first.
    data2 = os.urandom(6 * MiB)
    assert put_bytes(alice, sess["id"], data2).json["sha256"] == hashlib.sha256(data2).hexdigest()
    r = alice.post(f"/api/blob-upload-sessions/{sess['id']}/complete",
                   headers={"Idempotency-Key": key()})
    op = wait(alice, r.json["id"])
    got = alice.get(f"/api/blob-resources/{op['result']['resource_id']}/content").content
    assert got == data2


def test_upload_session_validation(env, settings):
    alice = env.world.user("alice")
    base = {"space_id": alice.personal_space_id, "filename": "ok.bin", "size": 1}
    cases = [({**base, "size": settings.max_upload_size + 1}, 413),
             ({**base, "filename": "a/b.txt"}, 400), ({**base, "filename": "a\x00b"}, 400),
             ({**base, "filename": "x" * 256}, 400), ({**base, "size": -1}, 400),
             ({**base, "size": "1"}, 400), ({**base, "space_id": uuid.uuid4().hex}, 404)]
    for body, status in cases:
        r = alice.post("/api/blob-upload-sessions", json=body, headers={"Idempotency-Key": key()})
        assert r.status_code == status, (body, r.text)
    r = alice.post("/api/blob-upload-sessions", json=base)
    assert r.status_code == 400 and r.json["code"] == "idempotency_key_required"
    k = key()
    a = alice.post("/api/blob-upload-sessions", json=base, headers={"Idempotency-Key": k})
    b = alice.post("/api/blob-upload-sessions", json=base, headers={"Idempotency-Key": k})
    assert (a.status_code, b.status_code) == (201, 200) and a.json["id"] == b.json["id"]
    c = alice.post("/api/blob-upload-sessions", json={**base, "size": 2},
                   headers={"Idempotency-Key": k})
    assert c.status_code == 409
    r = alice.request("PUT", f"/api/blob-upload-sessions/{a.json['id']}/content", body=None,
                      headers={"Content-Type": "application/octet-stream"})
    assert r.status_code in (400, 411)
    r = alice.post(f"/api/blob-upload-sessions/{a.json['id']}/complete",
                   headers={"Idempotency-Key": key()})
    assert r.status_code == 409 and r.json["code"] == "upload_not_received"
    assert env.world.user("bob").get(f"/api/blob-upload-sessions/{a.json['id']}").status_code == 404
    with env.db.read() as s:
        assert s.scalar(select(func.count()).select_from(BlobUploadSession)) == 1


def test_abort_queues_the_object_and_deletion_removes_it(env):
    alice = env.world.user("alice")
    sess = start_upload(alice, alice.personal_space_id, "a.bin", 10)
    put_bytes(alice, sess["id"], b"0123456789")
    assert len(env.stored_keys()) == 1
    assert alice.delete(f"/api/blob-upload-sessions/{sess['id']}").status_code == 204
    assert alice.delete(f"/api/blob-upload-sessions/{sess['id']}").status_code == 204
    assert alice.get(f"/api/blob-upload-sessions/{sess['id']}").json["state"] == "aborted"
    r = put_bytes(alice, sess["id"], b"0123456789")
    assert r.status_code == 409
    env.run_deletions()
    assert env.stored_keys() == set() == env.referenced_keys()


class CorruptingStore:
    """Fault injection: stores the bytes with one flipped, reporting the corrupt ETag."""

    def __init__(self, real):
        self.real = real

    def put_stream(self, key, chunks):
        first = [True]

        def corrupt():
            for chunk in chunks:
                if first[0] and chunk:
                    chunk = bytes([chunk[0] ^ 0xFF]) + chunk[1:]
                    first[0] = False
                yield chunk
        return self.real.put_stream(key, corrupt())

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_hash_mismatch_quarantines_and_leaves_no_object(settings, db, tmp_path):
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"), wrap=CorruptingStore)
    try:
        alice = env.world.user("alice")
        _, op = upload(alice, alice.personal_space_id, b"important bytes")
        assert op["status"] == "failed" and op["error"]["code"] == "verification_failed"
        sessions = alice.get(f"/api/operations/{op['id']}").json
        with db.read() as s:
            upload_row = s.scalar(select(BlobUploadSession))
            assert upload_row.state == "failed" and upload_row.error_code == "verification_failed"
            assert s.scalar(select(func.count()).select_from(Node)) == 0
        env.run_deletions()
        assert env.stored_keys() == set()
        assert sessions["done"] is True
    finally:
        env.close()


def test_object_changed_after_upload_fails_verification(env):
    alice = env.world.user("alice")
    sess = start_upload(alice, alice.personal_space_id, "a.bin", 8)
    put_bytes(alice, sess["id"], b"original")
    with env.db.read() as s:
        object_key = s.get(BlobUploadSession, sess["id"]).object_key
    env.real_store.put_stream(object_key, [b"tampered"])  # same size, other bytes
    r = alice.post(f"/api/blob-upload-sessions/{sess['id']}/complete",
                   headers={"Idempotency-Key": key()})
    op = wait(alice, r.json["id"])
    assert op["status"] == "failed" and op["error"]["code"] == "verification_failed"
    env.run_deletions()
    assert env.stored_keys() == set()


class FlakyHeadStore:
    """Fault injection: the store is unreachable for the first ``n`` HEADs or whole
    reads (a verification's first request: a small object is re-read in one GET)."""

    def __init__(self, real, n=2):
        self.real, self.n = real, n

    def _flake(self):
        if self.n > 0:
            self.n -= 1
            raise BlobStoreUnavailable("connection refused")

    def head(self, key):
        self._flake()
        return self.real.head(key)

    def read_whole(self, key, limit):
        self._flake()
        return self.real.read_whole(key, limit)

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_storage_unreachable_during_complete_is_retried(settings, db, tmp_path):
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"), wrap=FlakyHeadStore)
    try:
        alice = env.world.user("alice")
        _, op = upload(alice, alice.personal_space_id, b"payload")
        assert op["status"] == "completed" and op["attempts"] == 3
        outcomes = [a["outcome"] for a in
                    alice.get(f"/api/operations/{op['id']}/attempts").json["items"]]
        assert outcomes == ["retry", "retry", "completed"]
    finally:
        env.close()


def test_s3_at_an_unreachable_endpoint_is_a_retryable_error():
    from storage.blobstore import S3BlobStore
    from tests.support.waiting import free_port
    store = S3BlobStore("bucket", endpoint_url=f"http://127.0.0.1:{free_port()}")
    store.client.meta.config.retries = {"max_attempts": 1}
    with pytest.raises(BlobStoreUnavailable):
        store.head("k")


# --- replace ---------------------------------------------------------------------------

def replace(client, rid, data, if_match, k=None):
    headers = {"Content-Type": "application/octet-stream", "Idempotency-Key": k or key()}
    if if_match is not None:
        headers["If-Match"] = if_match
    return client.request("PUT", f"/api/blob-resources/{rid}/content", body=data,
                          headers=headers)


def test_replace_switches_content_and_retires_the_old_object(env):
    alice = env.world.user("alice")
    _, op = upload(alice, alice.personal_space_id, b"version one")
    rid = op["result"]["resource_id"]
    url = f"/api/blob-resources/{rid}/content"
    etag = alice.get(url).headers["etag"]
    assert replace(alice, rid, b"v2", None).status_code == 428
    r = replace(alice, rid, b"v2", '"nope"')
    assert r.status_code == 412 and r.json["code"] == "precondition_failed"
    k = key()
    r = replace(alice, rid, b"version two!", etag, k)
    assert r.status_code == 202
    done = wait(alice, r.json["id"])
    assert done["status"] == "completed"
    assert done["result"]["etag"] != etag
    got = alice.get(url)
    assert got.content == b"version two!" and got.headers["etag"] == done["result"]["etag"]
    assert replace(alice, rid, b"version two!", etag, k).status_code == 200  # replay
    bob = env.world.user("bob")
    assert replace(bob, rid, b"x", etag).status_code == 404
    env.run_deletions()
    assert env.stored_keys() == env.referenced_keys()
    assert len(env.stored_keys()) == 1


@pytest.mark.both_databases  # concurrency: the database decides
def test_two_concurrent_replaces_with_the_same_if_match_one_wins(env):
    alice = env.world.user("alice")
    _, op = upload(alice, alice.personal_space_id, b"base")
    rid = op["result"]["resource_id"]
    etag = alice.get(f"/api/blob-resources/{rid}/content").headers["etag"]
    env.worker.stop(timeout=5000)  # let both be accepted before either runs
    a = replace(alice, rid, b"AAAA", etag)
    b = replace(alice, rid, b"BBBBBB", etag)
    assert a.status_code == b.status_code == 202
    env.worker = dramatiq.Worker(env.components.broker, worker_threads=2, worker_timeout=50)
    env.worker.start()
    results = [wait(alice, a.json["id"]), wait(alice, b.json["id"])]
    statuses = sorted(r["status"] for r in results)
    assert statuses == ["completed", "failed"]
    loser = next(r for r in results if r["status"] == "failed")
    assert loser["error"]["code"] == "precondition_failed"
    content = alice.get(f"/api/blob-resources/{rid}/content").content
    assert content in (b"AAAA", b"BBBBBB")
    env.run_deletions()
    assert env.stored_keys() == env.referenced_keys()


def test_failed_replace_keeps_old_content_and_no_orphan(settings, db, tmp_path):
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    try:
        alice = env.world.user("alice")
        _, op = upload(alice, alice.personal_space_id, b"keep me")
        rid = op["result"]["resource_id"]
        etag = alice.get(f"/api/blob-resources/{rid}/content").headers["etag"]
        env.worker.stop(timeout=5000)  # hold execution while the new object is tampered with
        r = replace(alice, rid, b"new bytes", etag)
        with db.read() as s:
            new_key = s.get(Operation, r.json["id"]).payload["object_key"]
        env.real_store.put_stream(new_key, [b"new bytez"])
        env.worker = dramatiq.Worker(env.components.broker, worker_threads=2, worker_timeout=50)
        env.worker.start()
        done = wait(alice, r.json["id"])
        assert done["status"] == "failed" and done["error"]["code"] == "verification_failed"
        assert alice.get(f"/api/blob-resources/{rid}/content").content == b"keep me"
        env.run_deletions()
        assert env.stored_keys() == env.referenced_keys()
    finally:
        env.close()


def test_reservation_deletes_an_upload_that_was_never_claimed(env):
    """An interrupted replace (process died after streaming) converges: once the
    reservation comes due, the new object is deleted and the old content stays."""
    from datetime import timedelta

    from wharf.infra.clock import utcnow
    alice = env.world.user("alice")
    _, _op = upload(alice, alice.personal_space_id, b"old")
    key_ = "objects/" + uuid.uuid4().hex
    with env.db.write() as s:
        deletion.schedule(s, key_, "upload_reservation",
                          not_before=utcnow() + timedelta(hours=1))
    env.real_store.put_stream(key_, [b"half-finished"])
    env.run_deletions()
    assert key_ in env.stored_keys()  # not due yet
    with env.db.write() as s:
        job = s.scalar(select(ObjectDeletionJob).where(ObjectDeletionJob.object_key == key_))
        job.next_attempt_at = utcnow()
    env.run_deletions()
    assert env.stored_keys() == env.referenced_keys()


def test_deletion_job_backs_off_and_404_counts_as_deleted(settings, db, tmp_path):
    class BrokenDelete:
        def __init__(self, real):
            self.real, self.fail = real, True

        def delete(self, key):
            if self.fail:
                raise BlobStoreUnavailable("down")
            return self.real.delete(key)

        def __getattr__(self, name):
            return getattr(self.real, name)

    store = BrokenDelete(FileBlobStore(tmp_path / "blobs"))
    with db.write() as s:
        deletion.schedule(s, "objects/missing", "test")
    with db.read() as s:
        job_id = s.scalar(select(ObjectDeletionJob.id))
    assert deletion.run_job(db, store, job_id) == "retry"
    with db.read() as s:
        job = s.get(ObjectDeletionJob, job_id)
        assert job.attempts == 1 and "down" in job.last_error
        delay = (job.next_attempt_at - job.last_attempt_at).total_seconds()
        assert 1.5 <= delay <= 2.5  # 1 s * 2**1
    assert deletion.run_job(db, store, job_id) == "not_due"
    assert deletion.backoff(30) == 3600
    store.fail = False
    with db.write() as s:
        s.get(ObjectDeletionJob, job_id).next_attempt_at = s.get(
            ObjectDeletionJob, job_id).created_at
    assert deletion.run_job(db, store, job_id) == "deleted"  # missing object = deleted


def test_session_left_verifying_by_a_cancelled_completion_is_reopened(settings, db, tmp_path):
    """A completion cancelled while queued runs the kind's failure hook, as a failed one
    does: the session is back to waiting_for_upload at once (nothing left for the recovery
    sweep), no node or blob is created, and once the session is aborted its object is
    deleted: a cancelled create_blob_resource leaves no orphan."""
    from wharf.infra.clock import utcnow
    from wharf.retention.runner import run_sweep
    from wharf.retention.sweeps import SweepContext
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    try:
        env.worker.stop(timeout=5000)
        alice = env.world.user("alice")
        sess = start_upload(alice, alice.personal_space_id, "a.bin", 3)
        put_bytes(alice, sess["id"], b"abc")
        op = alice.post(f"/api/blob-upload-sessions/{sess['id']}/complete",
                        headers={"Idempotency-Key": key()}).json
        assert alice.get(f"/api/blob-upload-sessions/{sess['id']}").json["state"] == "verifying"
        assert alice.post(f"/api/operations/{op['id']}/cancel").status_code == 200
        state = alice.get(f"/api/blob-upload-sessions/{sess['id']}").json
        assert state["state"] == "waiting_for_upload"
        assert state["error_code"] == "upload_interrupted"
        ctx = SweepContext(db=db, settings=settings, now=utcnow(),
                           send=env.components.dispatcher.send, blob_store=env.store)
        assert run_sweep(ctx, "recover_operations")["sessions_reset"] == 0
        with db.read() as s:
            assert s.scalar(select(func.count()).select_from(BlobResource)) == 0
            assert s.scalar(select(func.count()).select_from(Node)) == 0
        assert put_bytes(alice, sess["id"], b"xyz").status_code == 200  # re-uploadable
        assert alice.delete(f"/api/blob-upload-sessions/{sess['id']}").status_code == 204
        env.worker = dramatiq.Worker(env.components.broker, worker_threads=2, worker_timeout=50)
        env.worker.start()
        env.run_deletions()
        assert env.stored_keys() == set() == env.referenced_keys()
    finally:
        env.close()


def _queued_replace(env, db, alice) -> tuple[str, str, str, str]:
    """Alice's blob ``original`` and a replace queued with no worker running: returns
    (content url, its ETag, the replace operation id, the staged object's key)."""
    _, op = upload(alice, alice.personal_space_id, b"original")
    url = f"/api/blob-resources/{op['result']['resource_id']}/content"
    etag = alice.get(url).headers["etag"]
    env.worker.stop(timeout=5000)
    r = replace(alice, op["result"]["resource_id"], b"staged bytes", etag)
    assert r.status_code == 202, r.text
    with db.read() as s:
        staged = s.get(Operation, r.json["id"]).payload["object_key"]
    assert staged in env.stored_keys()
    return url, etag, r.json["id"], staged


def test_cancelled_replace_deletes_its_staged_object(settings, db, tmp_path):
    """Cancelling a queued replace_blob_content runs the same failure hook as a failed
    one, in the same transaction: the staged object is queued for deletion (not left to
    leak), the deletion jobs remove it, and the original content is unchanged."""
    from wharf.infra.clock import utcnow
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    try:
        alice = env.world.user("alice")
        url, etag, op_id, staged = _queued_replace(env, db, alice)
        c = alice.post(f"/api/operations/{op_id}/cancel")
        assert c.status_code == 200 and c.json["error"]["code"] == "cancelled"
        with db.read() as s:  # queued now, not only when a reservation comes due
            job = s.scalar(select(ObjectDeletionJob).where(
                ObjectDeletionJob.object_key == staged))
            assert job is not None and job.reason == "replace_failed"
            assert job.next_attempt_at <= utcnow()
        env.worker = dramatiq.Worker(env.components.broker, worker_threads=2, worker_timeout=50)
        env.worker.start()
        env.run_deletions()
        assert staged not in env.stored_keys()
        assert env.stored_keys() == env.referenced_keys()
        got = alice.get(url)
        assert got.content == b"original" and got.headers["etag"] == etag
    finally:
        env.close()


def test_replace_failed_by_recovery_on_its_last_attempt_deletes_its_staged_object(
        settings, db, tmp_path):
    """A worker that dies on a replace's last attempt: the recovery sweep fails the
    operation (``lease_expired``) and runs the kind's failure hook like the executor
    does, so the staged object is queued for deletion instead of leaking."""
    from datetime import timedelta

    from sqlalchemy import update

    from wharf.infra.clock import utcnow
    from wharf.retention.sweeps import SweepContext, recover_operations
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    try:
        alice = env.world.user("alice")
        url, etag, op_id, staged = _queued_replace(env, db, alice)
        with db.write() as s:  # the worker that held its last attempt died
            s.execute(update(Operation).where(Operation.id == op_id).values(
                status="running", attempts=Operation.max_attempts, lease_owner="dead",
                lease_expires_at=utcnow() - timedelta(seconds=1)))
        ctx = SweepContext(db=db, settings=settings, now=utcnow(),
                           send=env.components.dispatcher.send,
                           blob_store=env.components.blob_store,
                           handlers=env.components.handlers)
        assert recover_operations(ctx)["expired"] == 1
        done = alice.get(f"/api/operations/{op_id}").json
        assert done["status"] == "failed" and done["error"]["code"] == "lease_expired"
        with db.read() as s:
            job = s.scalar(select(ObjectDeletionJob).where(
                ObjectDeletionJob.object_key == staged))
            assert job is not None and job.reason == "replace_failed"
        env.worker = dramatiq.Worker(env.components.broker, worker_threads=2, worker_timeout=50)
        env.worker.start()
        env.run_deletions()
        assert staged not in env.stored_keys()
        got = alice.get(url)
        assert got.content == b"original" and got.headers["etag"] == etag
    finally:
        env.close()


def test_documented_s3_url_stores_objects_under_its_prefix_once(settings, db, s3_server):
    """``WHARF_BLOB_STORE_URL=s3://bucket/objects`` (the form in deploy/): the object lands
    at ``objects/<id>`` in the bucket, not ``objects/objects/<id>``."""
    import re

    from storage.blobstore import blob_store_from_url
    bucket = f"wharf-{uuid.uuid4().hex[:12]}"
    store = blob_store_from_url(f"s3://{bucket}/objects", endpoint_url=s3_server.endpoint)
    store.ensure_bucket()
    env = Env(settings, db, store)
    try:
        alice = env.world.user("alice")
        _, op = upload(alice, alice.personal_space_id, b"where am I?")
        assert op["status"] == "completed", op
        listed = store.client.list_objects_v2(Bucket=bucket)
        keys = [o["Key"] for o in listed.get("Contents", [])]
        assert len(keys) == 1 and re.fullmatch(r"objects/[0-9a-f]{32}", keys[0]), keys
        rid = op["result"]["resource_id"]
        assert alice.get(f"/api/blob-resources/{rid}/content").content == b"where am I?"
    finally:
        env.close()


@pytest.mark.parametrize("token", [None, "metrics-" + "t" * 24])
def test_health_details_names_a_missing_bucket_to_the_metrics_token_only(
        settings, db, s3_server, token):
    """The bucket's name is shown only to holders of the metrics token: without one
    configured, ``/healthz/details`` is public and says only the error's type."""
    import dataclasses

    from storage.blobstore import S3BlobStore
    store = S3BlobStore("wharf-missing-bucket", "objects", endpoint_url=s3_server.endpoint)
    components = Components(dataclasses.replace(settings, metrics_token=token), db=db,
                            blob_store=store)
    try:
        visitor = World(components.api_app()).anonymous()
        assert visitor.get("/readyz").status_code == 200  # readiness is the database alone
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        r = visitor.get("/healthz/details", headers=headers)
        assert r.status_code == 200 and r.json["status"] == "degraded"
        check = r.json["checks"]["blob_store"]
        assert check["status"] == "down"
        if token:
            assert check["error"].startswith("BucketNotFound: ")
            assert "wharf-missing-bucket" in check["error"]
        else:
            assert check["error"] == "BucketNotFound"
    finally:
        components.close()


def test_retry_of_a_replace_that_failed_is_refused_at_once(settings, db, tmp_path):
    """A replace that failed (here: permission revoked before it ran) has already queued
    its staged object for deletion; retrying it could only fail, or publish an object about
    to be deleted. The retry is refused at once with 409 retry_not_possible and changes
    nothing; a new request with a new key works."""
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    try:
        alice, bob = env.world.user("alice"), env.world.user("bob")
        team = alice.post("/api/spaces", json={"name": "Team"}).json
        alice.put(f"/api/spaces/{team['id']}/members/{bob.user_id}", json={"role": "editor"})
        _, op = upload(alice, team["id"], b"original")
        rid = op["result"]["resource_id"]
        url = f"/api/blob-resources/{rid}/content"
        etag = bob.get(url).headers["etag"]
        env.worker.stop(timeout=5000)
        r = replace(bob, rid, b"bob's bytes", etag)
        assert r.status_code == 202
        assert alice.delete(f"/api/spaces/{team['id']}/members/{bob.user_id}").status_code == 204
        env.worker = dramatiq.Worker(env.components.broker, worker_threads=2, worker_timeout=50)
        env.worker.start()
        failed = wait(bob, r.json["id"])
        assert failed["status"] == "failed" and failed["error"]["code"] == "permission_revoked"
        alice.put(f"/api/spaces/{team['id']}/members/{bob.user_id}", json={"role": "editor"})
        retry = bob.post(f"/api/operations/{failed['id']}/retry")
        assert retry.status_code == 409, retry.text
        assert retry.json["code"] == "retry_not_possible"
        assert retry.json["details"]["reason"] == "input_consumed"
        assert bob.get(f"/api/operations/{failed['id']}").json["status"] == "failed"
        assert alice.get(url).content == b"original"
        env.run_deletions()
        assert env.stored_keys() == env.referenced_keys()
        again = replace(bob, rid, b"bob's bytes", etag)
        assert wait(bob, again.json["id"])["status"] == "completed"
        assert alice.get(url).content == b"bob's bytes"
    finally:
        env.close()


def test_replace_replay_with_different_bytes_of_the_same_size_is_409(env):
    """The replay of a replace is identified by its body too: the same key, If-Match and
    size with other bytes is 409 idempotency_key_reused (not the first request's answer),
    changes nothing and leaves no object behind; the same bytes answer the operation."""
    alice = env.world.user("alice")
    _, op = upload(alice, alice.personal_space_id, b"first content")
    rid = op["result"]["resource_id"]
    url = f"/api/blob-resources/{rid}/content"
    etag = alice.get(url).headers["etag"]
    k = key()
    first = replace(alice, rid, b"AAAAAAAA", etag, k)
    assert first.status_code == 202
    done = wait(alice, first.json["id"])
    assert done["status"] == "completed"
    r = replace(alice, rid, b"BBBBBBBB", etag, k)
    assert r.status_code == 409, r.text
    assert r.json["code"] == "idempotency_key_reused"
    assert r.json["details"]["operation_id"] == first.json["id"]
    same = replace(alice, rid, b"AAAAAAAA", etag, k)
    assert same.status_code == 200 and same.json["id"] == first.json["id"]
    assert replace(alice, rid, b"AAAAAAAAA", etag, k).status_code == 409  # other size
    assert replace(alice, rid, b"AAAAAAAA", '"other"', k).status_code == 409  # other If-Match
    assert alice.get(url).content == b"AAAAAAAA"
    env.run_deletions()
    assert env.stored_keys() == env.referenced_keys()
    assert len(env.stored_keys()) == 1


def test_a_part_left_by_a_killed_write_is_removed_once_stale(tmp_path):
    """A process killed between a write's first byte and its rename leaves a temporary
    part behind (CI caught one after a kill -9 of a worker mid-write): a store opening the
    directory deletes parts older than a day, never a younger one a live write holds."""
    from storage.blobstore.files import STALE_PART_SECONDS, FileBlobStore
    store = FileBlobStore(tmp_path / "blobs")
    store.put_stream("kept", [b"object"])
    old, fresh = store.tmp / "old.part", store.tmp / "fresh.part"
    for part in (old, fresh):
        part.write_bytes(b"half a write")
    long_ago = old.stat().st_mtime - STALE_PART_SECONDS - 60
    os.utime(old, (long_ago, long_ago))
    FileBlobStore(tmp_path / "blobs")
    assert not old.exists() and fresh.exists()
    assert list(store.list_keys()) == ["kept"]
