"""Quarantine and release of a published blob (issue 41 item 4): who may, what readers
then get (409 ``quarantined``), idempotence and the audit trail. On both databases."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select

from storage.models import AuditLog, BlobResource
from tests.conftest import make_settings
from tests.support.foundation import add_member, assert_problem, team_space

pytestmark = pytest.mark.both_databases


@pytest.fixture
def settings(tmp_path, database_url, unitstore_url):
    return make_settings(tmp_path, database_url, unitstore_url, operators=("carol",))


def key() -> str:
    return uuid.uuid4().hex


def upload_blob(client, space_id, data=b"blob bytes", name="file.txt") -> str:
    r = client.post("/api/blob-upload-sessions",
                    json={"space_id": space_id, "parent_id": None, "filename": name,
                          "size": len(data)}, headers={"Idempotency-Key": key()})
    assert r.status_code == 201, r.text
    sid = r.json["id"]
    assert client.request("PUT", f"/api/blob-upload-sessions/{sid}/content", body=data,
                          headers={"Content-Type": "application/octet-stream",
                                   "Content-Length": str(len(data))}).status_code == 200
    r = client.post(f"/api/blob-upload-sessions/{sid}/complete",
                    headers={"Idempotency-Key": key()})
    done = client.get(f"/api/operations/{r.json['id']}", params={"wait": "30"}).json
    assert done["status"] == "completed", done
    return str(done["result"]["resource_id"])


def actions(db, resource_id: str) -> list[tuple[str, str]]:
    with db.read() as s:
        return [(a.action, a.actor_id) for a in s.scalars(
            select(AuditLog).where(AuditLog.target_id == resource_id,
                                   AuditLog.action.in_(("blob.quarantine", "blob.release")))
            .order_by(AuditLog.at, AuditLog.id))]


def test_quarantine_withholds_the_bytes_until_release(world, worker, db):
    alice = world.user("alice")
    team = team_space(alice)["id"]
    users = {name: world.user(name) for name in ("ann", "edd", "vic", "eve")}
    for name, role in (("ann", "admin"), ("edd", "editor"), ("vic", "viewer")):
        add_member(alice, team, users[name].user_id, role)
    rid = upload_blob(alice, team, b"hello")
    base = f"/api/blob-resources/{rid}"
    # who may not: members below admin (403), outsiders (404), visitors (401)
    for name in ("edd", "vic"):
        assert_problem(users[name].post(f"{base}/quarantine"), 403, "forbidden")
    assert_problem(users["eve"].post(f"{base}/quarantine"), 404)
    assert_problem(world.anonymous().post(f"{base}/quarantine"), 401)
    assert_problem(alice.post(f"/api/blob-resources/{'0' * 32}/quarantine"), 404)
    assert_problem(alice.post("/api/blob-resources/nope/quarantine"), 404)
    assert actions(db, rid) == []
    # an admin quarantines; again changes nothing and is not audited twice
    r = users["ann"].post(f"{base}/quarantine")
    assert r.status_code == 200, r.text
    assert (r.json["resource_id"], r.json["state"]) == (rid, "quarantined")
    assert users["ann"].post(f"{base}/quarantine").json["state"] == "quarantined"
    assert actions(db, rid) == [("blob.quarantine", users["ann"].user_id)]
    with db.read() as s:
        assert s.get(BlobResource, rid).state == "quarantined"
    # readers: 409 quarantined for the bytes, metadata still readable; outsiders still 404
    for who in (alice, users["vic"]):
        for path in ("content", "download"):
            problem = assert_problem(who.get(f"{base}/{path}"), 409, "quarantined")
            assert problem["details"] == {"resource_id": rid}
        assert who.head(f"{base}/content").status_code == 409
        assert who.get(base).json["state"] == "quarantined"
    assert_problem(users["eve"].get(f"{base}/content"), 404)
    # nor can an import read them
    assert_problem(alice.post("/api/imports", json={"blob_resource_id": rid, "space_id": team,
                                                    "name": "x"},
                              headers={"Idempotency-Key": key()}), 409, "quarantined")
    # an operator who is no member releases it
    carol = world.user("carol")
    r = carol.post(f"{base}/release")
    assert r.status_code == 200 and r.json["state"] == "ready"
    assert carol.post(f"{base}/release").json["state"] == "ready"
    assert actions(db, rid) == [("blob.quarantine", users["ann"].user_id),
                                ("blob.release", carol.user_id)]
    r = users["vic"].get(f"{base}/content")
    assert r.status_code == 200 and r.content == b"hello"
    # the owner may too
    assert alice.post(f"{base}/quarantine").json["state"] == "quarantined"
    assert alice.post(f"{base}/release").json["state"] == "ready"


def test_in_a_personal_space_only_its_owner_or_an_operator_quarantines(world, worker, db):
    alice, bob = world.user("alice"), world.user("bob")
    sp = alice.personal_space_id
    rid = upload_blob(alice, sp)
    assert bob.get(f"/api/blob-resources/{rid}").status_code == 404
    node_id = alice.get(f"/api/blob-resources/{rid}").json["node_id"]
    alice.put(f"/api/nodes/{node_id}/grants/{bob.user_id}", json={"role": "editor"})
    assert_problem(bob.post(f"/api/blob-resources/{rid}/quarantine"), 403, "forbidden")
    assert alice.post(f"/api/blob-resources/{rid}/quarantine").json["state"] == "quarantined"
    assert_problem(bob.get(f"/api/blob-resources/{rid}/download"), 409, "quarantined")
    # an operator reaches it even in the trash (where its owner cannot)
    assert alice.post(f"/api/nodes/{node_id}/trash").status_code == 200
    assert_problem(alice.post(f"/api/blob-resources/{rid}/release"), 404)
    assert world.user("carol").post(f"/api/blob-resources/{rid}/release"
                                    ).json["state"] == "ready"


def test_a_takeout_leaves_a_quarantined_blob_out(world, worker):
    import io
    import zipfile
    alice = world.user("alice")
    sp = alice.personal_space_id
    upload_blob(alice, sp, b"kept", "kept.txt")
    held = upload_blob(alice, sp, b"held", "held.txt")
    assert alice.post(f"/api/blob-resources/{held}/quarantine").status_code == 200
    r = alice.post(f"/api/spaces/{sp}/exports", headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    done = alice.get(f"/api/operations/{r.json['id']}", params={"wait": "30"}).json
    assert done["status"] == "completed", done
    z = zipfile.ZipFile(io.BytesIO(alice.get(done["result"]["content_url"]).content))
    assert set(z.namelist()) == {"kept.txt", "manifest.json"}
    assert z.read("kept.txt") == b"kept"
