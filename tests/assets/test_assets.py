"""Unit assets end to end, on the filesystem and S3 (moto over HTTP) stores, on SQLite and
PostgreSQL: upload → 202 → published by a worker; byte-exact ranged reads through the
permission gate; who may upload and read; a permission lost while the publish is queued;
trash and purge; deletion; the sweep of abandoned uploads. Each test checks that the
store ends up holding exactly the objects the database names."""
from __future__ import annotations

import hashlib
import struct
import uuid
import zlib
from datetime import timedelta

import dramatiq
import pytest
from sqlalchemy import func, select

from storage.blobstore import FileBlobStore
from storage.models import AuditLog, ObjectDeletionJob, Operation, UnitAsset, UnitAssetUpload
from tests.conftest import World
from tests.engine.test_operations import wait_done
from wharf.deletion import service as deletion
from wharf.infra.clock import utcnow
from wharf.retention.sweeps import SWEEPS, SweepContext
from wharfd.runtime import Components


def _png() -> bytes:
    """A valid 1x1 PNG padded with an ancillary chunk to 16 KiB and more (so ranges have
    room)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"tEXt", b"pad\x00" + bytes(range(32, 127)) * 180)
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


PNG = _png()


def key() -> str:
    return uuid.uuid4().hex


class Env:
    """The embedded wiring around a chosen blob store, with worker threads that can be
    stopped (to hold a publish in the queue) and started again."""

    def __init__(self, settings, db, store):
        self.settings, self.db, self.store = settings, db, store
        self.components = Components(settings, db=db, blob_store=store)
        self.world = World(self.components.api_app())
        self.worker: dramatiq.Worker | None = None
        self.start_worker()

    def start_worker(self):
        self.worker = dramatiq.Worker(self.components.broker, worker_threads=2,
                                      worker_timeout=50)
        self.worker.start()

    def stop_worker(self):
        assert self.worker is not None
        self.worker.stop(timeout=5000)
        self.worker = None

    def close(self):
        if self.worker is not None:
            self.stop_worker()
        self.components.close()

    def run_deletions(self):
        deletion.run_due(self.db, self.store)

    def sweep(self, name: str, *, later: float = 0) -> dict[str, int]:
        """Run one sweep as if ``later`` seconds from now."""
        ctx = SweepContext(db=self.db, settings=self.settings,
                           now=utcnow() + timedelta(seconds=later),
                           send=self.components.dispatcher.send, blob_store=self.store)
        return SWEEPS[name](ctx)

    def named_keys(self) -> set[str]:
        """Every object key the database still names (published or in flight)."""
        with self.db.read() as s:
            return set(s.scalars(select(UnitAsset.object_key))) | set(
                s.scalars(select(UnitAssetUpload.object_key)))

    def stored_keys(self) -> set[str]:
        return {k for k in self.store.list_keys() if "assets/" in k}

    def count(self, model, *where) -> int:
        with self.db.read() as s:
            return s.scalar(select(func.count()).select_from(model).where(*where))


@pytest.fixture(params=["file", "s3"])
def env(request, settings, db, tmp_path):
    store = FileBlobStore(tmp_path / "blobs") if request.param == "file" \
        else request.getfixturevalue("s3_store")
    e = Env(settings, db, store)
    yield e
    e.close()


@pytest.fixture
def fs_env(settings, db, tmp_path):
    e = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    yield e
    e.close()


def new_unit(client, space_id: str, parent_id: str | None = None) -> dict:
    body = {"space_id": space_id, "name": f"Doc {uuid.uuid4().hex[:6]}", "unit_type": "doc"}
    if parent_id:
        body["parent_id"] = parent_id
    r = client.post("/api/resources", json=body, headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    op = wait_done(client, r.json["id"])
    assert op["status"] == "completed", op
    return op["result"]


def upload(client, unit_id: str, data: bytes, *, media_type: str = "image/png",
           filename: str | None = "diagram.png", k: str | None = None,
           sha: str | None = None):
    headers = {"Idempotency-Key": k or key(), "Content-Type": media_type,
               "Content-Length": str(len(data))}
    if sha:
        headers["Content-SHA256"] = sha
    return client.request("POST", f"/api/units/{unit_id}/assets", body=data, headers=headers,
                          params={"filename": filename} if filename is not None else None)


def published(client, unit_id: str, data: bytes, **kw) -> dict:
    r = upload(client, unit_id, data, **kw)
    assert r.status_code == 202, r.text
    op = wait_done(client, r.json["id"])
    assert op["status"] == "completed", op
    return op


# --- round trip ---------------------------------------------------------------------------

def test_round_trip_byte_exact_with_ranges_etag_and_hardened_headers(env):
    alice = env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    op = published(alice, unit, PNG)
    result = op["result"]
    assert result["size"] == len(PNG) and result["sha256"] == hashlib.sha256(PNG).hexdigest()
    asset_id = result["asset_id"]
    assert result["content_url"] == f"/api/assets/{asset_id}/content"

    meta = alice.get(f"/api/assets/{asset_id}").json
    assert meta["unit_id"] == unit and meta["worktree_id"] is None
    assert meta["filename"] == "diagram.png" and meta["media_type"] == "image/png"
    assert meta["detected_media_type"] == "image/png"
    assert meta["published_at"] is not None

    r = alice.get(result["content_url"])
    assert r.status_code == 200 and r.content == PNG
    assert r.headers["content-type"] == "image/png"
    assert r.headers["cache-control"] == "private, no-store"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["content-security-policy"] == "sandbox; default-src 'none'"
    assert r.headers["cross-origin-resource-policy"] == "same-origin"
    assert "content-disposition" not in r.headers  # an image is shown inline
    etag = r.headers["etag"]
    assert etag == meta["etag"] == f'"{result["sha256"]}"'

    for rng, want in (("bytes=0-0", PNG[:1]), ("bytes=5-1000", PNG[5:1001]),
                      ("bytes=-100", PNG[-100:]), (f"bytes={len(PNG) - 3}-", PNG[-3:]),
                      ("bytes=16000-99999999", PNG[16000:])):
        part = alice.get(result["content_url"], headers={"Range": rng})
        assert part.status_code == 206 and part.content == want, rng
        first = len(PNG) - len(want) if rng.startswith("bytes=-") else int(rng[6:].split("-")[0])
        assert part.headers["content-range"] == \
            f"bytes {first}-{first + len(want) - 1}/{len(PNG)}"
    beyond = alice.get(result["content_url"], headers={"Range": f"bytes={len(PNG)}-"})
    assert beyond.status_code == 416 and beyond.headers["content-range"] == f"bytes */{len(PNG)}"
    assert alice.get(result["content_url"], headers={"If-None-Match": etag}).status_code == 304
    stale = alice.get(result["content_url"], headers={"Range": "bytes=0-9", "If-Range": '"x"'})
    assert stale.status_code == 200 and stale.content == PNG
    head = alice.request("HEAD", result["content_url"])
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(PNG))

    listing = alice.get(f"/api/units/{unit}/assets").json
    assert [a["id"] for a in listing["items"]] == [asset_id]
    with env.db.read() as s:
        assert s.scalar(select(func.count()).select_from(UnitAssetUpload)) == 0
    env.run_deletions()
    assert env.stored_keys() == env.named_keys() and len(env.stored_keys()) == 1


def test_listing_pages_in_upload_order(fs_env):
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    ids = [published(alice, unit, bytes([i]) * 10, filename=f"a{i}.bin",
                     media_type="application/octet-stream")["result"]["asset_id"]
           for i in range(5)]
    seen, cursor = [], None
    while True:
        page = alice.get(f"/api/units/{unit}/assets",
                         params={"limit": "2", **({"cursor": cursor} if cursor else {})}).json
        seen += [a["id"] for a in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == ids


def test_an_empty_asset_round_trips(fs_env):
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    op = published(alice, unit, b"", media_type="text/plain", filename="empty.txt")
    r = alice.get(op["result"]["content_url"])
    assert r.status_code == 200 and r.content == b""


def test_risky_content_is_served_as_an_attachment(fs_env):
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    html = b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>"
    declared = published(alice, unit, html, media_type="text/html", filename="x.html")
    disguised = published(alice, unit, html, media_type="image/png", filename="cat.png")
    xsl = published(alice, unit, b"<?xml version='1.0'?><x/>", media_type="text/xsl",
                    filename="s.xsl")
    for op in (declared, disguised, xsl):
        r = alice.get(op["result"]["content_url"])
        assert r.status_code == 200
        assert r.headers["content-disposition"].startswith("attachment;")
        assert r.headers["x-content-type-options"] == "nosniff"
    # The declared type is what is served; the detected one is reported beside it.
    meta = alice.get(f"/api/assets/{disguised['result']['asset_id']}").json
    assert meta["media_type"] == "image/png" and meta["detected_media_type"] == "text/html"


def test_a_publish_result_describes_the_asset_as_its_metadata_does(fs_env):
    """The result and the metadata are one description (``AssetDescription``): every
    field the result has, the detected type included, is the metadata's."""
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    html = b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>"
    for data, declared, detected in ((PNG, "image/png", "image/png"),
                                     (html, "image/png", "text/html")):
        result = published(alice, unit, data, media_type=declared)["result"]
        meta = alice.get(f"/api/assets/{result['asset_id']}").json
        assert result["detected_media_type"] == detected
        assert result["media_type"] == declared
        assert {k: meta[k] for k in result if k != "asset_id"} == \
            {k: v for k, v in result.items() if k != "asset_id"}
        assert meta["id"] == result["asset_id"]


# --- idempotency ----------------------------------------------------------------------------

def test_replay_answers_the_same_operation_and_different_bytes_are_409(fs_env):
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    k = key()
    sha = hashlib.sha256(PNG).hexdigest()
    first = published(alice, unit, PNG, k=k, sha=sha)
    again = upload(alice, unit, PNG, k=k, sha=sha)
    assert again.status_code == 200 and again.json["id"] == first["id"]
    other = bytes(reversed(PNG))  # same length, other bytes
    r = upload(alice, unit, other, k=k, sha=hashlib.sha256(other).hexdigest())
    assert r.status_code == 409 and r.json["code"] == "idempotency_key_reused"
    r = upload(alice, unit, PNG + b"x", k=k)
    assert r.status_code == 409 and r.json["code"] == "idempotency_key_reused"
    # Without a digest the replay's body is hashed (not stored) and compared.
    r = upload(alice, unit, other, k=k)
    assert r.status_code == 409 and r.json["code"] == "idempotency_key_reused"
    assert upload(alice, unit, PNG, k=k).json["id"] == first["id"]
    assert fs_env.count(UnitAsset) == 1
    assert fs_env.count(Operation, Operation.kind == "publish_asset") == 1


def test_a_replay_while_the_publish_is_queued_is_202_with_the_same_operation(fs_env):
    fs_env.stop_worker()
    alice = fs_env.world.user("alice")
    fs_env.start_worker()
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    fs_env.stop_worker()
    k = key()
    r1 = upload(alice, unit, PNG, k=k)
    r2 = upload(alice, unit, PNG, k=k)
    assert r1.status_code == r2.status_code == 202 and r1.json["id"] == r2.json["id"]
    fs_env.start_worker()
    assert wait_done(alice, r1.json["id"])["status"] == "completed"
    assert fs_env.count(UnitAsset) == 1


def test_checksum_mismatch_publishes_nothing_and_deletes_the_object(env):
    alice = env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    r = upload(alice, unit, PNG, sha=hashlib.sha256(b"other").hexdigest())
    assert r.status_code == 400 and r.json["code"] == "checksum_mismatch"
    with env.db.read() as s:
        op = s.scalars(select(Operation).where(Operation.kind == "publish_asset")).one()
        assert op.status == "failed" and op.error["code"] == "checksum_mismatch"
    assert env.count(UnitAsset) == 0 and env.count(UnitAssetUpload) == 0
    env.run_deletions()
    assert env.stored_keys() == set()


# --- permissions ----------------------------------------------------------------------------

@pytest.fixture
def team(fs_env):
    alice = fs_env.world.user("alice")
    space = alice.post("/api/spaces", json={"name": "Team"}).json["id"]
    users = {name: fs_env.world.user(name) for name in ("edd", "vic", "out")}
    for name, role in (("edd", "editor"), ("vic", "viewer")):
        assert alice.put(f"/api/spaces/{space}/members/{users[name].user_id}",
                         json={"role": role}).status_code == 201
    unit = new_unit(alice, space)
    return fs_env, alice, space, users, unit


def test_editor_uploads_viewer_403_outsider_404_anonymous_401(team):
    env, _alice, _space, users, unit = team
    uid = unit["unit_id"]
    op = published(users["edd"], uid, PNG)
    url = op["result"]["content_url"]
    r = upload(users["vic"], uid, PNG)
    assert r.status_code == 403 and r.json["code"] == "forbidden"
    r = upload(users["out"], uid, PNG)
    assert r.status_code == 404
    r = upload(env.world.anonymous(), uid, PNG)
    assert r.status_code == 401
    # Reading: members yes, outsiders and anonymous no (404, not discoverable).
    assert users["vic"].get(url).content == PNG
    assert users["vic"].get(f"/api/units/{uid}/assets").status_code == 200
    assert users["out"].get(url).status_code == 404
    assert users["out"].get(f"/api/assets/{op['result']['asset_id']}").status_code == 404
    assert users["out"].get(f"/api/units/{uid}/assets").status_code == 404
    assert env.world.anonymous().get(url).status_code == 404
    # Only the refused requests' nothing: one operation, one asset.
    assert env.count(Operation, Operation.kind == "publish_asset") == 1
    assert env.count(UnitAssetUpload) == 0


def test_anonymous_reads_an_asset_of_a_public_space_only(fs_env):
    alice = fs_env.world.user("alice")
    public = alice.post("/api/spaces", json={"name": "Public"}).json["id"]
    unit = new_unit(alice, public)["unit_id"]
    url = published(alice, unit, PNG)["result"]["content_url"]
    anon = fs_env.world.anonymous()
    assert anon.get(url).status_code == 404
    assert alice.patch(f"/api/spaces/{public}", json={"public_read": True}).status_code == 200
    r = anon.get(url)
    assert r.status_code == 200 and r.content == PNG
    assert r.headers["cache-control"] == "private, no-store"  # never cached, even public
    assert alice.patch(f"/api/spaces/{public}", json={"public_read": False}).status_code == 200
    assert anon.get(url).status_code == 404  # re-checked on every request


def test_member_removed_while_the_publish_is_queued_publishes_nothing(team):
    env, alice, space, users, unit = team
    env.stop_worker()
    r = upload(users["edd"], unit["unit_id"], PNG)
    assert r.status_code == 202
    assert env.count(UnitAssetUpload, UnitAssetUpload.state == "stored") == 1
    assert env.stored_keys() != set()  # the bytes are stored, waiting for the worker
    assert alice.delete(f"/api/spaces/{space}/members/{users['edd'].user_id}").status_code == 204
    env.start_worker()
    op = wait_done(users["edd"], r.json["id"])
    assert op["status"] == "failed" and op["error"]["code"] == "permission_revoked"
    assert env.count(UnitAsset) == 0 and env.count(UnitAssetUpload) == 0
    env.run_deletions()
    assert env.stored_keys() == set()
    # Its input is gone: a retry is refused rather than run into the same wall.
    r = users["edd"].post(f"/api/operations/{op['id']}/retry")
    assert r.status_code == 409 and r.json["code"] == "retry_not_possible"


# --- trash, purge, delete -------------------------------------------------------------------

def test_assets_of_a_trashed_unit_are_404_and_come_back_on_restore(fs_env):
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)
    op = published(alice, unit["unit_id"], PNG)
    url = op["result"]["content_url"]
    batch = alice.post(f"/api/nodes/{unit['node_id']}/trash").json
    assert alice.get(url).status_code == 404
    assert alice.get(f"/api/assets/{op['result']['asset_id']}").status_code == 404
    r = upload(alice, unit["unit_id"], PNG)
    assert r.status_code == 404  # no uploads into a trashed unit either
    assert alice.post(f"/api/trash-batches/{batch['id']}/restore").status_code == 200
    assert alice.get(url).content == PNG


def test_purging_a_unit_queues_its_assets_objects_for_deletion(env):
    alice = env.world.user("alice")
    folder = alice.post("/api/nodes", json={"space_id": alice.personal_space_id,
                                            "name": "F"}).json["id"]
    unit = new_unit(alice, alice.personal_space_id, parent_id=folder)
    keep = new_unit(alice, alice.personal_space_id)
    for i in range(3):
        published(alice, unit["unit_id"], PNG + bytes([i]))
    kept = published(alice, keep["unit_id"], PNG)
    alice.post(f"/api/nodes/{folder}/trash")
    r = alice.delete(f"/api/nodes/{folder}", headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    op = wait_done(alice, r.json["id"])
    assert op["status"] == "completed" and op["result"]["objects_queued"] == 3
    assert env.count(UnitAsset) == 1
    env.run_deletions()
    assert env.stored_keys() == env.named_keys()
    assert len(env.stored_keys()) == 1
    assert alice.get(kept["result"]["content_url"]).content == PNG


def test_deleting_an_asset(team):
    env, _alice, _space, users, unit = team
    op = published(users["edd"], unit["unit_id"], PNG)
    aid = op["result"]["asset_id"]
    assert users["vic"].delete(f"/api/assets/{aid}").status_code == 403
    assert users["out"].delete(f"/api/assets/{aid}").status_code == 404
    assert users["edd"].delete(f"/api/assets/{aid}").status_code == 204
    assert users["edd"].get(op["result"]["content_url"]).status_code == 404
    assert users["edd"].delete(f"/api/assets/{aid}").status_code == 404
    env.run_deletions()
    assert env.stored_keys() == set()


def make_jobs_due(db) -> None:
    """Time passes: every deletion job (reservations included) is due now."""
    from sqlalchemy import update
    with db.write() as s:
        s.execute(update(ObjectDeletionJob).values(next_attempt_at=utcnow()))


def test_a_publish_delayed_past_the_reservation_keeps_its_bytes(fs_env):
    """Stored bytes are named by their upload row: the reservation made while they
    streamed in is released, so a publish delayed (workers down) past the deadline and
    the reservation's grace still finds its object."""
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    fs_env.stop_worker()
    r = upload(alice, unit, PNG)
    assert r.status_code == 202
    assert fs_env.count(ObjectDeletionJob) == 0
    make_jobs_due(fs_env.db)
    fs_env.run_deletions()
    assert fs_env.sweep("sweep_asset_uploads", later=fs_env.settings.asset_upload_ttl + 400) \
        == {"abandoned": 0, "republished": 1}
    fs_env.start_worker()
    op = wait_done(alice, r.json["id"])
    assert op["status"] == "completed", op
    assert alice.get(op["result"]["content_url"]).content == PNG


def test_purging_a_unit_with_thousands_of_assets(fs_env):
    """The purge deletes assets in bounded batches (one statement for them all would
    exceed PostgreSQL's 65,535 parameters from ~11,000 assets)."""
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)
    from storage.models import UnitAsset as Row
    now = utcnow()
    with fs_env.db.write() as s:
        s.execute(Row.__table__.insert(), [
            {"id": uuid.uuid4().hex, "unit_id": unit["unit_id"], "worktree_id": None,
             "object_key": f"assets/{i:032x}", "filename": "a", "declared_media_type": "a/b",
             "detected_media_type": "a/b", "size": 1, "sha256": "0" * 64, "etag": "e",
             "created_by": alice.user_id, "created_at": now, "published_at": now}
            for i in range(2500)])
    alice.post(f"/api/nodes/{unit['node_id']}/trash")
    r = alice.delete(f"/api/nodes/{unit['node_id']}", headers={"Idempotency-Key": key()})
    op = wait_done(alice, r.json["id"])
    assert op["status"] == "completed" and op["result"]["objects_queued"] == 2500, op
    assert fs_env.count(UnitAsset) == 0
    assert fs_env.count(ObjectDeletionJob, ObjectDeletionJob.reason == "unit_purged_asset") \
        == 2500


# --- abandoned uploads ----------------------------------------------------------------------

def test_sweep_abandons_an_upload_whose_process_died_and_leaves_live_ones(fs_env, monkeypatch):
    """A request that died mid-stream leaves its upload ``receiving``: nothing happens to
    it before its deadline (another process may still be streaming), after it the sweep
    fails the operation, drops the row and deletes the partial object."""
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]

    class Died(BaseException):
        pass

    from wharf.assets import upload as upload_mod
    monkeypatch.setattr(upload_mod, "_abandon", lambda *a, **kw: None)  # the process died

    def dying(store, key, read, size, filename):
        store.put_stream(key, iter([b"partial"]))
        raise Died()

    monkeypatch.setattr(upload_mod, "ingest", dying)
    with pytest.raises(Died):
        upload(alice, unit, PNG)
    monkeypatch.undo()
    assert fs_env.count(UnitAssetUpload, UnitAssetUpload.state == "receiving") == 1
    assert fs_env.stored_keys() != set()
    assert fs_env.sweep("sweep_asset_uploads") == {"abandoned": 0, "republished": 0}
    assert fs_env.count(UnitAssetUpload) == 1  # still within its deadline: left alone

    ttl = fs_env.settings.asset_upload_ttl
    assert fs_env.sweep("sweep_asset_uploads", later=ttl + 1)["abandoned"] == 1
    with fs_env.db.read() as s:
        op = s.scalars(select(Operation).where(Operation.kind == "publish_asset")).one()
        assert op.status == "failed" and op.error["code"] == "upload_abandoned"
        job = s.scalars(select(ObjectDeletionJob)).one()  # the upload's reservation, kept
        # Not deleted at once (a request finishing its last write would race it): at
        # the reservation's time, five minutes after the deadline.
        assert job.next_attempt_at > utcnow() + timedelta(seconds=ttl)
    assert fs_env.count(UnitAssetUpload) == 0
    make_jobs_due(fs_env.db)
    fs_env.run_deletions()
    assert fs_env.stored_keys() == set()
    # A later upload with a fresh key works.
    published(alice, unit, PNG)


def test_a_stored_upload_whose_message_was_lost_is_published_by_the_sweeps(fs_env, monkeypatch):
    """The request stored the bytes and committed, but its message never reached the
    broker (e.g. the API died right after the commit): the sweeps ring it again."""
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    fs_env.stop_worker()
    from wharf.assets import stored as stored_mod  # (where the stored mark rings it)
    monkeypatch.setattr(stored_mod, "send_after_commit", lambda s, msg: None)
    monkeypatch.setattr(stored_mod, "announce_after_commit", lambda s, msg: None)
    r = upload(alice, unit, PNG)
    assert r.status_code == 202
    monkeypatch.undo()
    fs_env.start_worker()
    # Not at once: a message stored a moment ago is probably still queued.
    assert fs_env.sweep("sweep_asset_uploads")["republished"] == 0
    later = fs_env.settings.operation_lease_seconds + 6
    assert fs_env.sweep("sweep_asset_uploads", later=later)["republished"] == 1
    op = wait_done(alice, r.json["id"])
    assert op["status"] == "completed"
    assert alice.get(op["result"]["content_url"]).content == PNG


def test_cancel_while_queued_cleans_up(fs_env):
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    fs_env.stop_worker()
    r = upload(alice, unit, PNG)
    assert alice.post(f"/api/operations/{r.json['id']}/cancel").status_code == 200
    fs_env.start_worker()
    assert fs_env.count(UnitAsset) == 0 and fs_env.count(UnitAssetUpload) == 0
    fs_env.run_deletions()
    assert fs_env.stored_keys() == set()


def test_uploads_and_publishes_are_audited_and_counted(fs_env):
    alice = fs_env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]

    def stored_count() -> float:
        text = alice.get("/metrics").text
        for line in text.splitlines():
            if line.startswith('wharf_asset_uploads_total{result="stored"}'):
                return float(line.split()[-1])
        return 0.0

    before = stored_count()
    op = published(alice, unit, PNG)
    aid = op["result"]["asset_id"]
    assert stored_count() == before + 1
    with fs_env.db.read() as s:
        rows = s.execute(select(AuditLog.action, AuditLog.actor_type, AuditLog.details)
                         .where(AuditLog.target_id == aid).order_by(AuditLog.at)).all()
    assert [r.action for r in rows] == ["asset.upload", "asset.publish"]
    assert rows[0].actor_type == "user" and rows[0].details["size"] == len(PNG)
    assert rows[1].details["on_behalf_of"] == alice.user_id
    assert alice.delete(f"/api/assets/{aid}").status_code == 204
    with fs_env.db.read() as s:
        assert s.scalar(select(AuditLog.action).where(
            AuditLog.target_id == aid, AuditLog.action == "asset.delete")) == "asset.delete"


def test_an_asset_above_the_limit_is_413_asset_too_large_before_anything_is_recorded(
        settings, db, tmp_path):
    """The route's body limit is the asset limit, and its refusal is the asset one (not
    the generic ``payload_too_large``), before a byte is read or a row written."""
    from dataclasses import replace

    from wharfd.serving import max_request_body_size
    small = replace(settings, max_asset_size=1000)
    e = Env(small, db, FileBlobStore(tmp_path / "blobs"))
    try:
        alice = e.world.user("alice")
        unit = new_unit(alice, alice.personal_space_id)["unit_id"]
        r = upload(alice, unit, b"x" * 1001)
        assert r.status_code == 413 and r.json["code"] == "asset_too_large"
        assert r.json["details"]["limit"] == 1000
        assert e.count(Operation, Operation.kind == "publish_asset") == 0
        assert e.count(UnitAssetUpload) == 0 and e.stored_keys() == set()
        assert upload(alice, unit, b"x" * 1000).status_code == 202
    finally:
        e.close()
    # `wharf serve` (waitress) admits bodies up to the largest limit of any route.
    big = replace(settings, max_asset_size=settings.max_upload_size + 7, max_body_bytes=1024)
    assert max_request_body_size(big) > settings.max_upload_size + 7
