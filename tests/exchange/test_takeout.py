"""Takeouts end to end (issue 38, item 4): a space (or every space a user owns) taken out
by an ``export_takeout`` operation as a zip written part by part to the blob store,
downloaded and opened with ``zipfile``: one file per node at its path, units as JSON and
as Office files, blobs and assets byte for byte, trash left out, a manifest whose sizes
and SHA-256 match; a writer interrupted between parts resumes and the archive is still
whole; who may take out and download; the file limit; expiry. On the filesystem store
and on S3 (moto over HTTP)."""
from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import zipfile

import pytest
from python_calamine import CalamineWorkbook
from sqlalchemy import func, select

from storage.blobstore import BlobNotFound, FileBlobStore
from storage.models import Export, ObjectDeletionJob, TakeoutItem, TakeoutRun
from tests.assets.test_assets import PNG, published
from tests.engine.test_operations import wait_done
from tests.exchange.test_exports import WORKBOOK, Env, key, make_unit
from tests.sharing.test_sharing_trash_recent import node, upload_blob
from tests.support.foundation import add_member, team_space
from wharf.deletion import service as deletion
from wharf.exchange import formats as F
from wharf.exchange import takeout_writer
from wharf.infra.errors import TransientFailure

both = pytest.mark.both_databases
MiB = 1024 * 1024


@pytest.fixture(params=["file", "s3"])
def env(request, settings, db, tmp_path):
    if request.param == "file":
        store = FileBlobStore(tmp_path / "blobs")
    else:
        store = request.getfixturevalue("s3_store")
    e = Env(dataclasses.replace(settings, takeout_part_size=5 * MiB), db, store)
    yield e
    e.close()


@pytest.fixture
def file_env(settings, db, tmp_path):
    e = Env(dataclasses.replace(settings, takeout_part_size=5 * MiB), db,
            FileBlobStore(tmp_path / "blobs"))
    yield e
    e.close()


def takeout(client, url: str, idem: str | None = None) -> dict:
    r = client.post(url, headers={"Idempotency-Key": idem or key()})
    assert r.status_code == 202, r.text
    assert r.json["kind"] == "export_takeout"
    return wait_done(client, r.json["id"], 60)


def archive(client, op: dict) -> zipfile.ZipFile:
    assert op["status"] == "completed", op
    result = op["result"]
    r = client.get(result["content_url"])
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/zip"
    assert len(r.content) == result["size"]
    assert hashlib.sha256(r.content).hexdigest() == result["sha256"]
    z = zipfile.ZipFile(io.BytesIO(r.content))
    assert z.testzip() is None  # every member's CRC-32 right
    manifest = json.loads(z.read("manifest.json"))
    for entry in manifest["files"]:  # the manifest says what each file is
        data = z.read(entry["path"])
        assert len(data) == entry["size"], entry
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry
    assert sorted(e["path"] for e in manifest["files"]) == sorted(
        n for n in z.namelist() if n != "manifest.json")
    return z


def build_space(env, client, space_id: str) -> dict:
    """A tree: a folder with a blob and a sheet, a doc at the root, a trashed folder."""
    reports = node(client, space_id, "Reports")
    blob = os.urandom(12 * MiB + 123)  # past two parts: split across them
    upload_blob(client, space_id, reports, data=blob, name="raw.bin")
    sheet = make_unit(client, "sheet", "Budget", WORKBOOK, space_id)
    r = client.patch(f"/api/nodes/{unit_node(client, sheet)}", json={"parent_id": reports})
    assert r.status_code == 200, r.text
    doc = make_unit(client, "doc", "Plan", F.document("Plan", [([("Ship it", {})], 1)]),
                    space_id)
    published(client, doc, PNG, filename="diagram.png")
    gone = node(client, space_id, "Old")
    upload_blob(client, space_id, gone, data=b"old bytes", name="old.txt")
    assert client.post(f"/api/nodes/{gone}/trash").status_code in (200, 201, 202)
    return {"blob": blob, "sheet": sheet, "doc": doc}


def unit_node(client, unit_id: str) -> str:
    r = client.get(f"/api/units/{unit_id}")
    assert r.status_code == 200, r.text
    return r.json["node_id"]


def test_a_space_taken_out_holds_its_tree_byte_for_byte(env):
    alice = env.world.user("alice")
    space = alice.personal_space_id
    made = build_space(env, alice, space)
    op = takeout(alice, f"/api/spaces/{space}/exports")
    z = archive(alice, op)
    names = set(z.namelist())
    assert {"Reports/", "Reports/raw.bin", "Reports/Budget.sheet.json", "Reports/Budget.xlsx",
            "Plan.doc.json", "Plan.docx", "Plan.assets/",
            "Plan.assets/diagram.png", "manifest.json"} == names
    assert not any(n.startswith("Old") for n in names)  # trash is left out
    assert z.read("Reports/raw.bin") == made["blob"]
    assert z.read("Plan.assets/diagram.png") == PNG
    sheet_doc = json.loads(z.read("Reports/Budget.sheet.json"))
    assert sheet_doc["body"] == WORKBOOK
    wb = CalamineWorkbook.from_filelike(io.BytesIO(z.read("Reports/Budget.xlsx")))
    assert wb.sheet_names == ["2027", "Notes"]
    manifest = json.loads(z.read("manifest.json"))
    units = {e["path"]: e for e in manifest["files"] if e.get("unit_id")}
    assert units["Reports/Budget.sheet.json"]["unit_id"] == made["sheet"]
    assert units["Reports/Budget.sheet.json"]["revision"] == 1
    # the plan's rows are gone once it completed; the export row names the space
    with env.db.read() as s:
        assert s.scalar(select(func.count()).select_from(TakeoutItem)) == 0
        assert s.scalar(select(func.count()).select_from(TakeoutRun)) == 0
        row = s.get(Export, op["result"]["export_id"])
        assert (row.scope, row.space_id, row.unit_id) == ("space", space, None)
    assert list(env.store.list_keys("exports/")) == [f"exports/{op['id']}"]


@both
def test_a_writer_stopped_between_parts_resumes_and_the_archive_is_whole(file_env, monkeypatch):
    env = file_env
    alice = env.world.user("alice")
    space = alice.personal_space_id
    made = build_space(env, alice, space)
    real = takeout_writer.ArchiveWriter._flush
    calls = {"n": 0}

    def crash_after_second_part(self, st, *a, **kw):
        real(self, st, *a, **kw)
        calls["n"] += 1
        if calls["n"] == 2:  # two parts stored and recorded, then the worker dies
            raise TransientFailure("killed")

    monkeypatch.setattr(takeout_writer.ArchiveWriter, "_flush", crash_after_second_part)
    op = takeout(alice, f"/api/spaces/{space}/exports")
    assert op["attempts"] >= 2, op
    z = archive(alice, op)
    assert z.read("Reports/raw.bin") == made["blob"]
    # ~12 MiB in 5 MiB parts: three, two stored before the stop and the last after it;
    # none stored twice
    assert calls["n"] == 3


@both
def test_who_may_take_out_a_team_space_and_download_it(file_env):
    env = file_env
    alice, bob, carol = (env.world.user(n) for n in ("alice", "bob", "carol"))
    space = team_space(alice)["id"]
    make_unit(alice, "doc", "Notes", F.document("Notes", [([("x", {})], 1)]), space)
    add_member(alice, space, bob.user_id, "editor")
    r = bob.post(f"/api/spaces/{space}/exports", headers={"Idempotency-Key": key()})
    assert r.status_code == 403, r.text
    r = carol.post(f"/api/spaces/{space}/exports", headers={"Idempotency-Key": key()})
    assert r.status_code == 404, r.text
    add_member(alice, space, bob.user_id, "admin")
    op = takeout(bob, f"/api/spaces/{space}/exports")
    assert "Notes.docx" in archive(bob, op).namelist()
    url = op["result"]["content_url"]
    assert alice.get(url).status_code == 404  # the requester's only
    add_member(alice, space, bob.user_id, "viewer")  # no longer an admin: no longer theirs
    assert bob.get(url).status_code == 404


def test_my_takeout_holds_every_space_i_own_as_a_top_folder(file_env):
    env = file_env
    alice = env.world.user("alice")
    team = team_space(alice, name="Team")["id"]
    upload_blob(alice, alice.personal_space_id, None, data=b"mine", name="a.txt")
    upload_blob(alice, team, None, data=b"ours", name="a.txt")
    z = archive(alice, takeout(alice, "/api/me/exports"))
    assert z.read("alice/a.txt") == b"mine"
    assert z.read("Team/a.txt") == b"ours"


def test_past_the_file_limit_the_takeout_fails_and_leaves_nothing(settings, db, tmp_path):
    env = Env(dataclasses.replace(settings, takeout_max_files=2), db,
              FileBlobStore(tmp_path / "blobs"))
    try:
        alice = env.world.user("alice")
        for n in range(3):
            upload_blob(alice, alice.personal_space_id, None, data=b"x", name=f"{n}.txt")
        r = alice.post("/api/me/exports", headers={"Idempotency-Key": key()})
        op = wait_done(alice, r.json["id"])
        assert op["status"] == "failed" and op["error"]["code"] == "file_too_complex", op
        with env.db.read() as s:
            assert s.scalar(select(func.count()).select_from(Export)) == 0
            assert s.scalar(select(func.count()).select_from(TakeoutRun)) == 0
        assert list(env.store.list_keys("exports/")) == []
    finally:
        env.close()


def test_an_expired_takeout_is_deleted_from_the_store_and_answers_404(file_env):
    env = file_env
    alice = env.world.user("alice")
    upload_blob(alice, alice.personal_space_id, None, data=b"x", name="x.txt")
    op = takeout(alice, "/api/me/exports")
    url, object_key = op["result"]["content_url"], f"exports/{op['id']}"
    assert alice.get(url).status_code == 200
    assert env.sweep("expire_exports", later=env.settings.export_ttl + 1) == {"expired": 1}
    assert alice.get(url).status_code == 404
    with env.db.read() as s:
        assert s.scalar(select(ObjectDeletionJob.reason).where(
            ObjectDeletionJob.object_key == object_key)) == "export_expired"
    deletion.run_due(env.db, env.store)
    with pytest.raises(BlobNotFound):
        env.store.head(object_key)


def test_a_replay_answers_the_same_takeout(file_env):
    env = file_env
    alice = env.world.user("alice")
    k = key()
    first = takeout(alice, "/api/me/exports", k)
    r = alice.post("/api/me/exports", headers={"Idempotency-Key": k})
    assert r.status_code == 200, r.text  # done: the operation as it ended
    assert r.json["id"] == first["id"] and r.json["result"] == first["result"]
