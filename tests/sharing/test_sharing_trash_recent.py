"""Sharing, trash, permanent delete and recent files (issue: access model and lifecycle)."""
from __future__ import annotations

import uuid

import dramatiq
import pytest
from sqlalchemy import func, select

from storage.models import (
    BlobResource,
    Node,
    NodeGrant,
    Operation,
    RecentOpen,
    Resource,
    TrashBatch,
    UnitResource,
)
from wharf.deletion import service as deletion
from wharf.trash import service as trash


def key() -> str:
    return uuid.uuid4().hex


def wait(client, op_id):
    r = client.get(f"/api/operations/{op_id}", params={"wait": "30"})
    assert r.status_code == 200, r.text
    return r.json


def upload_blob(client, space_id, parent_id, data=b"blob bytes", name="file.txt"):
    r = client.post("/api/blob-upload-sessions",
                    json={"space_id": space_id, "parent_id": parent_id, "filename": name,
                          "size": len(data)}, headers={"Idempotency-Key": key()})
    assert r.status_code == 201, r.text
    sid = r.json["id"]
    assert client.request("PUT", f"/api/blob-upload-sessions/{sid}/content", body=data,
                          headers={"Content-Type": "application/octet-stream",
                                   "Content-Length": str(len(data))}).status_code == 200
    r = client.post(f"/api/blob-upload-sessions/{sid}/complete",
                    headers={"Idempotency-Key": key()})
    done = wait(client, r.json["id"])
    assert done["status"] == "completed", done
    return done["result"]["resource_id"]


def node(client, space_id, name, parent_id=None):
    r = client.post("/api/nodes", json={"space_id": space_id, "name": name,
                                        **({"parent_id": parent_id} if parent_id else {})})
    assert r.status_code == 201, r.text
    return r.json["id"]


class Scene:
    """One shared folder per kind of access, each with a child, a spare child and a blob."""

    def __init__(self, world):
        self.world = world
        self.alice = alice = world.user("alice")
        team = alice.post("/api/spaces", json={"name": "Team"}).json["id"]
        public = alice.post("/api/spaces", json={"name": "Public"}).json["id"]
        alice.patch(f"/api/spaces/{public}", json={"public_read": True})
        self.users = {name: world.user(name) for name in
                      ("ann", "edd", "vic", "gre", "grv", "lnk", "out")}
        for name, role in (("ann", "admin"), ("edd", "editor"), ("vic", "viewer")):
            r = alice.put(f"/api/spaces/{team}/members/{self.users[name].user_id}",
                          json={"role": role})
            assert r.status_code == 201
        personal = alice.personal_space_id
        self.folders = {}
        for label, space in (("team", team), ("granted", personal), ("linked", personal),
                             ("public", public)):
            f = node(alice, space, f"{label}-folder")
            self.folders[label] = {
                "space": space, "folder": f, "child": node(alice, space, "child", f),
                "other": node(alice, space, "other", f),
                "blob": upload_blob(alice, space, f)}
        g = self.folders["granted"]["folder"]
        for name, role in (("gre", "editor"), ("grv", "viewer")):
            r = alice.put(f"/api/nodes/{g}/grants/{self.users[name].user_id}", json={"role": role})
            assert r.status_code == 201, r.text
        r = alice.put(f"/api/nodes/{self.folders['linked']['folder']}/link-sharing",
                      json={"enabled": True, "role": "viewer"})
        assert r.status_code == 200

    def client(self, who):
        if who == "owner":
            return self.alice
        if who.startswith("anon"):
            return self.world.anonymous()
        return self.users[who]


# who, where, and the expected status per action
ALLOW_ALL = dict(read=200, children=200, create=201, rename=200, move=200, trash=200,
                 restore=200, share=200, blob=200, replace=202)
EDITOR = {**ALLOW_ALL, "share": 403}
VIEWER = dict(read=200, children=200, create=403, rename=403, move=403, trash=403,
              restore=403, share=403, blob=200, replace=403)
ANON_READER = dict(read=200, children=200, create=401, rename=401, move=401, trash=401,
                   restore=401, share=401, blob=200, replace=401)
HIDDEN = dict(read=404, children=404, create=404, rename=404, move=404, trash=404,
              restore=404, share=404, blob=404, replace=404)
ANON_HIDDEN = {**{k: 401 for k in HIDDEN}, "read": 404, "children": 404, "blob": 404}

MATRIX = [
    ("owner", "team", ALLOW_ALL), ("ann", "team", ALLOW_ALL), ("edd", "team", EDITOR),
    ("vic", "team", VIEWER), ("out", "team", HIDDEN), ("anon", "team", ANON_HIDDEN),
    ("gre", "granted", EDITOR), ("grv", "granted", VIEWER), ("out", "granted", HIDDEN),
    ("lnk", "linked", VIEWER), ("anon", "linked", ANON_READER),
    ("out", "public", VIEWER), ("anon", "public", ANON_READER),
]


@pytest.fixture
def scene(world, worker):
    return Scene(world)


def test_role_matrix(scene):
    failures = []
    for who, where, expected in MATRIX:
        c = scene.client(who)
        f = scene.folders[where]
        got = {}
        got["read"] = c.get(f"/api/nodes/{f['folder']}").status_code
        got["children"] = c.get(f"/api/nodes/{f['folder']}/children").status_code
        got["create"] = c.post("/api/nodes", json={"space_id": f["space"], "parent_id": f["folder"],
                                                   "name": f"by-{who}"}).status_code
        got["rename"] = c.patch(f"/api/nodes/{f['child']}", json={"name": f"child-{who}"}).status_code
        got["move"] = c.patch(f"/api/nodes/{f['child']}", json={"parent_id": f["other"]}).status_code
        if got["move"] == 200:
            c.patch(f"/api/nodes/{f['child']}", json={"parent_id": f["folder"]})
        victim = node(scene.alice, f["space"], f"victim-{who}", f["folder"])
        got["trash"] = c.post(f"/api/nodes/{victim}/trash").status_code
        if got["trash"] != 200:
            scene.alice.post(f"/api/nodes/{victim}/trash")
        with_batch = scene.alice.get(f"/api/spaces/{f['space']}/trash").json["items"]
        batch = next(b for b in with_batch if b["root_node_id"] == victim)
        got["restore"] = c.post(f"/api/trash-batches/{batch['id']}/restore").status_code
        got["share"] = c.put(f"/api/nodes/{f['folder']}/link-sharing",
                             json={"enabled": where == "linked", "role": "viewer"}).status_code
        blob_url = f"/api/blob-resources/{f['blob']}/content"
        got["blob"] = c.get(blob_url).status_code
        etag = scene.alice.get(blob_url).headers["etag"]
        got["replace"] = c.request("PUT", blob_url, body=b"new", headers={
            "Content-Type": "application/octet-stream", "Idempotency-Key": key(),
            "If-Match": etag, "Content-Length": "3"}).status_code
        if got["replace"] == 202:
            wait(c, c.get("/api/operations").json["items"][0]["id"])
        for action, status in expected.items():
            if got[action] != status:
                failures.append(f"{who}@{where} {action}: expected {status}, got {got[action]}")
    assert not failures, "\n".join(failures)


def test_capabilities_in_node_responses(scene):
    team = scene.folders["team"]["folder"]
    caps = scene.client("vic").get(f"/api/nodes/{team}").json["capabilities"]
    assert caps["can_read"] and not caps["can_edit"] and not caps["can_share"]
    caps = scene.client("ann").get(f"/api/nodes/{team}").json["capabilities"]
    assert caps["can_edit"] and caps["can_share"]
    granted = scene.folders["granted"]["folder"]
    caps = scene.client("gre").get(f"/api/nodes/{granted}").json["capabilities"]
    assert caps["can_edit"] and not caps["can_share"]


def test_grants_are_refused_on_team_spaces_and_for_the_owner(scene):
    alice = scene.alice
    team = scene.folders["team"]["folder"]
    r = alice.put(f"/api/nodes/{team}/grants/{scene.users['out'].user_id}", json={"role": "viewer"})
    assert r.status_code == 409 and r.json["code"] == "grants_not_allowed"
    granted = scene.folders["granted"]["folder"]
    r = alice.put(f"/api/nodes/{granted}/grants/{alice.user_id}", json={"role": "viewer"})
    assert r.status_code == 409
    assert scene.client("gre").put(f"/api/nodes/{granted}/grants/{scene.users['out'].user_id}",
                                   json={"role": "viewer"}).status_code == 403


def test_grant_inheritance_and_grantee_cannot_move_to_root(scene):
    gre = scene.client("gre")
    f = scene.folders["granted"]
    deep = node(scene.alice, f["space"], "deep", f["child"])
    assert gre.get(f"/api/nodes/{deep}").json["role"] == "editor"
    r = gre.patch(f"/api/nodes/{deep}", json={"parent_id": None})
    assert r.status_code == 403
    assert gre.get(f"/api/spaces/{f['space']}/nodes").status_code == 404


def test_revoking_a_grant_takes_effect_now_and_on_queued_operations(world, components, db):
    alice, bob = world.user("alice"), world.user("bob")
    folder = node(alice, alice.personal_space_id, "shared")
    alice.put(f"/api/nodes/{folder}/grants/{bob.user_id}", json={"role": "editor"})
    assert bob.get(f"/api/nodes/{folder}").status_code == 200
    op = bob.post("/api/resources", json={"space_id": alice.personal_space_id,
                                          "parent_id": folder, "name": "Doc",
                                          "unit_type": "doc"},
                  headers={"Idempotency-Key": key()}).json
    assert alice.delete(f"/api/nodes/{folder}/grants/{bob.user_id}").status_code == 204
    assert bob.get(f"/api/nodes/{folder}").status_code == 404
    w = dramatiq.Worker(components.broker, worker_threads=1, worker_timeout=50)
    w.start()
    try:
        done = wait(bob, op["id"])
    finally:
        w.stop()
    assert done["status"] == "failed" and done["error"]["code"] == "permission_revoked"
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(Resource)) == 0


def tree_rows(db):
    with db.read() as s:
        return sorted(s.execute(select(Node.id, Node.parent_id, Node.name, Node.trash_batch_id)).all())


def test_trash_restore_round_trip_and_nested_batches(world, worker, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    a = node(alice, sp, "A")
    b = node(alice, sp, "B", a)
    c = node(alice, sp, "C", b)
    node(alice, sp, "D", c)
    before = tree_rows(db)
    inner = alice.post(f"/api/nodes/{c}/trash").json
    assert inner["node_count"] == 2
    outer = alice.post(f"/api/nodes/{a}/trash").json
    assert outer["node_count"] == 2  # A and B; C's subtree stays in its own batch
    assert alice.get(f"/api/nodes/{a}").status_code == 404
    assert alice.get(f"/api/spaces/{sp}/nodes").json["items"] == []
    assert alice.post(f"/api/nodes/{a}/trash").status_code == 404
    assert [x["id"] for x in alice.get(f"/api/spaces/{sp}/trash").json["items"]] == \
        [outer["id"], inner["id"]]
    r = alice.post(f"/api/trash-batches/{outer['id']}/restore")
    assert r.status_code == 200 and r.json["restored_nodes"] == 2
    assert alice.get(f"/api/nodes/{b}/children").json["items"] == []  # C still trashed
    assert alice.post(f"/api/trash-batches/{inner['id']}/restore").status_code == 200
    assert tree_rows(db) == before
    assert alice.post(f"/api/trash-batches/{inner['id']}/restore").status_code == 404
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(TrashBatch)) == 0


def test_purge_leaves_no_rows_and_no_objects(world, worker, components, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    top = node(alice, sp, "Top")
    sub = node(alice, sp, "Sub", top)
    upload_blob(alice, sp, top, b"one")
    upload_blob(alice, sp, sub, b"two")
    unit_op = alice.post("/api/resources", json={"space_id": sp, "parent_id": sub, "name": "U",
                                                 "unit_type": "sheet"},
                         headers={"Idempotency-Key": key()}).json
    unit_id = wait(alice, unit_op["id"])["result"]["unit_id"]
    alice.post(f"/api/nodes/{sub}/trash")  # a nested batch below
    r = alice.delete(f"/api/nodes/{top}", headers={"Idempotency-Key": key()})
    assert r.status_code == 409 and r.json["code"] == "not_trashed"
    alice.post(f"/api/nodes/{top}/trash")
    assert alice.delete(f"/api/nodes/{top}").status_code == 400  # Idempotency-Key required
    r = alice.delete(f"/api/nodes/{top}", headers={"Idempotency-Key": key()})
    assert r.status_code == 202
    done = wait(alice, r.json["id"])
    assert done["status"] == "completed", done
    assert done["result"]["nodes_deleted"] == 5 and done["result"]["objects_queued"] == 2
    with db.read() as s:
        for model in (Node, Resource, BlobResource, UnitResource, TrashBatch):
            assert s.scalar(select(func.count()).select_from(model)) == 0, model
    assert components.unitstore.get(unit_id) is None
    components.broker.join("maintenance", timeout=10_000)
    deletion.run_due(db, components.blob_store)
    assert list(components.blob_store.list_keys()) == []


def test_purge_is_refused_while_a_worktree_references_a_resource(world, worker, monkeypatch):
    alice = world.user("alice")
    sp = alice.personal_space_id
    top = node(alice, sp, "Top")
    alice.post(f"/api/nodes/{top}/trash")

    class Blocking:
        def blocked(self, s, actor, resource_ids, node_ids):
            return trash.Blocked("an active worktree references a resource below", ("w1",))

    monkeypatch.setattr(trash, "PURGE_BLOCKERS", [Blocking()])
    r = alice.delete(f"/api/nodes/{top}", headers={"Idempotency-Key": key()})
    assert r.status_code == 409 and r.json["code"] == "worktree_reference"
    assert r.json["details"] == {"worktree_ids": ["w1"]}


def test_trash_retention_purges_old_batches_once(world, worker, components, settings):
    from datetime import timedelta

    from wharf.infra.clock import utcnow
    db = components.db  # the database whose committed outbox rows go to the broker
    alice = world.user("alice")
    top = node(alice, alice.personal_space_id, "Old")
    batch = alice.post(f"/api/nodes/{top}/trash").json
    later = utcnow() + timedelta(seconds=settings.trash_retention + 1)
    assert trash.submit_due_purges(db, settings, utcnow()) == 0
    assert trash.submit_due_purges(db, settings, later) == 1
    assert trash.submit_due_purges(db, settings, later) == 0  # once per batch
    with db.read() as s:
        op_id = s.scalar(select(Operation.id).where(Operation.kind == "purge_trash"))
    assert wait(alice, op_id)["status"] == "completed"
    assert alice.post(f"/api/trash-batches/{batch['id']}/restore").status_code == 404


def test_recent_lists_current_names_and_drops_what_is_gone(world, worker, db):
    alice, bob = world.user("alice"), world.user("bob")
    sp = alice.personal_space_id
    folder = node(alice, sp, "Shared")
    rid = upload_blob(alice, sp, folder, b"x", "report.txt")
    other = upload_blob(alice, sp, None, b"y", "notes.txt")
    assert alice.post(f"/api/resources/{rid}/open").status_code == 200
    assert alice.post(f"/api/resources/{other}/open").status_code == 200
    items = alice.get("/api/me/recent").json["items"]
    assert [i["resource_id"] for i in items] == [other, rid]
    nid = items[1]["node_id"]
    alice.patch(f"/api/nodes/{nid}", json={"name": "renamed.txt"})
    assert alice.get("/api/me/recent").json["items"][1]["name"] == "renamed.txt"
    page1 = alice.get("/api/me/recent", params={"limit": "1"}).json
    page2 = alice.get("/api/me/recent", params={"limit": "1",
                                                "cursor": page1["next_cursor"]}).json
    assert [i["resource_id"] for i in page1["items"] + page2["items"]] == [other, rid]
    alice.post(f"/api/nodes/{nid}/trash")
    assert [i["resource_id"] for i in alice.get("/api/me/recent").json["items"]] == [other]
    # bob opens through a grant, then loses it
    alice.put(f"/api/nodes/{folder}/grants/{bob.user_id}", json={"role": "viewer"})
    rid2 = upload_blob(alice, sp, folder, b"z", "z.txt")
    assert bob.post(f"/api/resources/{rid2}/open").status_code == 200
    assert len(bob.get("/api/me/recent").json["items"]) == 1
    alice.delete(f"/api/nodes/{folder}/grants/{bob.user_id}")
    assert bob.get("/api/me/recent").json["items"] == []
    # failed opens and anonymous opens record nothing
    assert bob.post(f"/api/resources/{rid2}/open").status_code == 404
    assert world.anonymous().post(f"/api/resources/{rid2}/open").status_code == 401
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(RecentOpen).where(
            RecentOpen.user_id == bob.user_id)) == 1


def test_anonymous_reads_write_nothing(world, worker, db):
    alice = world.user("alice")
    folder = node(alice, alice.personal_space_id, "Open")
    rid = upload_blob(alice, alice.personal_space_id, folder, b"hello")
    alice.put(f"/api/nodes/{folder}/link-sharing", json={"enabled": True, "role": "editor"})
    anon = world.anonymous()
    node_json = anon.get(f"/api/nodes/{folder}").json
    assert node_json["role"] == "viewer"  # link editor → anonymous viewer at most
    r = anon.get(f"/api/blob-resources/{rid}/content")
    assert r.status_code == 200 and r.content == b"hello"
    assert r.headers["cache-control"] == "public, no-cache"
    assert "set-cookie" not in r.headers
    assert anon.get(f"/api/resources/{rid}").status_code == 200
    assert anon.post("/api/nodes", json={"space_id": alice.personal_space_id,
                                         "parent_id": folder, "name": "x"}).status_code == 401
    bob = world.user("bob")
    assert bob.get(f"/api/nodes/{folder}").json["role"] == "editor"  # logged-in link user
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(RecentOpen)) == 0
        assert s.scalar(select(func.count()).select_from(NodeGrant)) == 0
