"""Deleting a team space (issue 41 item 2), on SQLite and PostgreSQL: ``DELETE
/api/spaces/{id}`` with the space's name → the ``delete_space`` operation purges it in
bounded batches through the account deletion's purge (``wharf.accounts.tree``), objects
deleted through the outbox. The owner only, team spaces only, refused while worktrees are
open on it (named), read-only while pending, idempotent; afterwards no row refers to the
space and the blob store holds none of its objects."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select, update

from storage.blobstore import FileBlobStore
from storage.models import (
    AuditLog,
    Base,
    Node,
    Operation,
    Resource,
    Space,
    UnitResource,
    Worktree,
)
from tests.accounts.test_deletion import Env, key, submit_resource, upload
from tests.conftest import make_settings
from tests.support.foundation import add_member, assert_problem, make_node, team_space
from wharf.infra.clock import utcnow

pytestmark = pytest.mark.both_databases

#: Columns that name a space, a node, a resource or a unit (``audit_logs`` keeps its history).
REFERENCES = {"space_id": "space", "team_space_id": "space", "target_space_id": "space",
              "scope_id": "space", "node_id": "node", "parent_id": "node",
              "root_node_id": "node", "target_parent_id": "node", "resource_id": "resource", "unit_id": "unit"}


@pytest.fixture
def env(tmp_path, database_url, unitstore_url, db):
    # batches of 10: the tree below takes several
    settings = make_settings(tmp_path, database_url, unitstore_url, account_deletion_batch=10)
    e = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    yield e
    e.close()


class Team:
    """alice owns "Atlas" where bob is admin, carol editor, dave viewer; erin is a stranger."""

    def __init__(self, env: Env, name: str = "Atlas"):
        w = env.world
        self.alice, self.bob, self.carol = w.user("alice"), w.user("bob"), w.user("carol")
        self.dave, self.erin = w.user("dave"), w.user("erin")
        self.sid = team_space(self.alice, name)["id"]
        self.name = name
        for who, role in ((self.bob, "admin"), (self.carol, "editor"), (self.dave, "viewer")):
            add_member(self.alice, self.sid, who.user_id, role)
        self.url = f"/api/spaces/{self.sid}"

    def delete(self, client, confirm: str | None = None, idem: str | None = None):
        return client.delete(self.url, json_body={"confirm_name": confirm or self.name},
                             headers={"Idempotency-Key": idem or key()})


def deletions(env: Env) -> int:
    with env.db.read() as s:
        return s.scalar(select(func.count()).select_from(Operation).where(
            Operation.kind == "delete_space")) or 0


def test_who_may_delete_what_and_the_pending_space(env):
    t = Team(env)
    make_node(t.carol, t.sid, "before")
    # admin, editor, viewer: 403; a stranger and anonymous: no space to see
    for who in (t.bob, t.carol, t.dave):
        assert_problem(t.delete(who), 403, "owner_required")
    assert_problem(t.delete(t.erin), 404)
    assert_problem(t.delete(env.world.anonymous()), 401)
    # the owner: a key, the name exactly, a team space
    assert_problem(t.alice.delete(t.url, json_body={"confirm_name": t.name}), 400,
                   "idempotency_key_required")
    for wrong in ("atlas", "Atlas ", "Other"):
        assert_problem(t.delete(t.alice, wrong), 400, "confirm_name_mismatch")
    for body in ({}, {"confirm_name": 5}, {"confirm_name": "x" * 5000}):
        assert_problem(t.alice.delete(t.url, json_body=body,
                                      headers={"Idempotency-Key": key()}), 400)
    personal = f"/api/spaces/{t.alice.personal_space_id}"
    assert_problem(t.alice.delete(personal, json_body={"confirm_name": "alice"},
                                  headers={"Idempotency-Key": key()}), 409, "not_a_team_space")
    # nothing changed: no operation, the space writable
    assert deletions(env) == 0
    make_node(t.carol, t.sid, "still writable")

    idem = key()
    r = t.delete(t.alice, idem=idem)
    assert r.status_code == 202, r.text
    assert r.json["kind"] == "delete_space" and r.json["status"] == "pending"
    op_id = r.json["id"]
    # a replay is the same operation; the same key for another request is refused
    again = t.delete(t.alice, idem=idem)
    assert again.status_code == 202 and again.json["id"] == op_id
    assert_problem(t.delete(t.alice, "Other", idem=idem), 409, "idempotency_key_reused")
    assert_problem(t.delete(t.alice), 409, "space_deleting")
    assert deletions(env) == 1
    # pending: reads go on, every write is refused, the lifecycle waits
    got = t.carol.get(t.url)
    assert got.status_code == 200 and got.json["read_only"] is True
    r = t.carol.post("/api/nodes", json={"space_id": t.sid, "name": "during"})
    assert_problem(r, 403, "space_read_only")
    for path in ("archive", "unarchive"):
        assert_problem(t.alice.post(f"{t.url}/{path}"), 409, "space_deleting")
    assert_problem(t.alice.post(f"{t.url}/transfer", json={"user_id": t.bob.user_id}), 409,
                   "space_deleting")

    assert env.run(op_id)["status"] == "completed"
    done = t.delete(t.alice, idem=idem)  # the replay answers the finished operation
    assert done.status_code == 200 and done.json["id"] == op_id
    assert done.json["result"] == {"space_id": t.sid}
    for who in (t.alice, t.bob, t.carol):
        assert_problem(who.get(t.url), 404)
    assert t.sid not in {s["id"] for s in t.bob.get("/api/spaces").json["items"]}
    with env.db.read() as s:
        audited = list(s.scalars(select(AuditLog.action).where(AuditLog.target_id == t.sid)))
    assert {"space.delete", "space.deleted"} <= set(audited)


def test_open_worktrees_block_it_by_name(env):
    t = Team(env)
    r = t.carol.post("/api/worktrees", json={"kind": "team", "name": "draft",
                                             "team_space_id": t.sid},
                     headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    assert env.run(r.json["id"])["status"] == "completed"
    wt = r.json["result"]["worktree_id"] if r.json.get("result") else \
        t.carol.get(f"/api/operations/{r.json['id']}").json["result"]["worktree_id"]
    problem = assert_problem(t.delete(t.alice), 409, "worktree_reference")
    assert problem["details"]["worktree_ids"] == [wt]
    assert deletions(env) == 0
    make_node(t.carol, t.sid, "still writable")
    # discarded, it no longer holds the space: the deletion is accepted
    r = t.carol.post(f"/api/worktrees/{wt}/discard", headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    assert env.run(r.json["id"])["status"] == "completed"
    r = t.delete(t.alice)
    assert r.status_code == 202, r.text
    # the worker looks again: a worktree open now (as a race would leave it) fails the
    # deletion before anything is deleted, and the space is writable again
    with env.db.write() as s:
        s.execute(update(Worktree).where(Worktree.id == wt).values(
            processed_at=None, state="draft"))
    failed = env.run(r.json["id"])
    assert failed["status"] == "failed" and failed["error"]["code"] == "worktree_reference"
    assert failed["error"]["details"]["worktree_ids"] == [wt]
    assert t.alice.get(t.url).json["read_only"] is False
    make_node(t.carol, t.sid, "writable again")
    with env.db.read() as s:
        assert s.scalar(select(AuditLog.details).where(
            AuditLog.action == "space.delete_failed"))["code"] == "worktree_reference"
    with env.db.write() as s:
        s.execute(update(Worktree).where(Worktree.id == wt).values(
            processed_at=utcnow(), state="discarded"))
    # once more with a new key: the deletion takes the discarded worktree along
    r = t.delete(t.alice)
    assert r.status_code == 202, r.text
    assert env.run(r.json["id"])["status"] == "completed"
    assert_problem(t.carol.get(f"/api/worktrees/{wt}"), 404)
    with env.db.read() as s:
        assert s.get(Worktree, wt) is None


def test_a_deleted_space_leaves_no_rows_and_no_objects(env):
    t = Team(env)
    other = team_space(t.bob, "Kept")["id"]
    kept = make_node(t.bob, other, "kept")
    # a tree three levels deep, 3 x 4 x 2 nodes, documents and blobs in it
    folders = [make_node(t.carol, t.sid, f"f{i}") for i in range(3)]
    inner = [make_node(t.carol, t.sid, f"g{j}", f["id"]) for f in folders for j in range(4)]
    for g in inner:
        for k in range(2):
            make_node(t.carol, t.sid, f"h{k}", g["id"])
    docs = [submit_resource(t.carol, t.sid, f"doc {i}") for i in range(3)]
    for op in docs:
        assert env.run(op)["status"] == "completed"
    keys = [upload(env, t.carol, t.sid, f"bytes {i}".encode() * 50, inner[i]["id"])
            for i in range(3)]
    with env.db.read() as s:
        nodes = set(s.scalars(select(Node.id).where(Node.space_id == t.sid)))
        resources = set(s.scalars(select(Resource.id).join(Node, Node.id == Resource.node_id)
                                  .where(Node.space_id == t.sid)))
        units = set(s.scalars(select(UnitResource.unit_id).where(
            UnitResource.resource_id.in_(resources))))
        blob_resource = s.scalar(select(Resource.id).where(Resource.node_id.in_(
            list(nodes)), Resource.id.not_in(
            select(UnitResource.resource_id))).limit(1))
    # around the tree: a link, a star, a recent open, an issue naming a node, a
    # comment on a document, a trashed folder, an upload in flight, a queued operation
    r = t.alice.put(f"/api/nodes/{folders[1]['id']}/link-sharing",
                    json={"enabled": True, "role": "viewer"})
    assert r.status_code in (200, 201), r.text
    assert t.dave.put(f"/api/me/stars/{blob_resource}").status_code in (200, 201, 204)
    assert t.dave.post(f"/api/resources/{blob_resource}/open").status_code in (200, 204)
    issues = f"{t.url}/issues"
    r = t.carol.post(issues, json={"title": "fix it", "body": "now"})
    assert r.status_code == 201, r.text
    r = t.carol.put(f"{issues}/{r.json['number']}/node-refs/{folders[2]['id']}")
    assert r.status_code in (200, 201, 204), r.text
    unit = sorted(units)[0]
    r = t.carol.post(f"/api/units/{unit}/comments",
                     json={"body": "look", "anchor": {"block": "b1"}})
    assert r.status_code == 201, r.text
    r = t.carol.post(f"/api/nodes/{folders[2]['id']}/trash")
    assert r.status_code in (200, 201), r.text
    r = t.carol.post("/api/blob-upload-sessions",
                     json={"space_id": t.sid, "filename": "half.bin", "size": 4},
                     headers={"Idempotency-Key": key()})
    assert r.status_code == 201, r.text
    r = t.carol.request("PUT", f"/api/blob-upload-sessions/{r.json['id']}/content",
                        body=b"half", headers={"Content-Type": "application/octet-stream",
                                               "Content-Length": "4"})
    assert r.status_code == 200, r.text
    queued = submit_resource(t.carol, t.sid, "queued")
    assert len(env.stored()) == len(keys) + 1

    r = t.delete(t.alice)
    assert r.status_code == 202, r.text
    assert env.run(r.json["id"])["status"] == "completed"
    env.run_deletions()

    ids = {"space": {t.sid}, "node": nodes, "resource": resources, "unit": units}
    with env.db.read() as s:
        queued_op = s.get(Operation, queued)  # its submitter reads why
        assert queued_op.status == "failed" and queued_op.error["code"] == "space_deleted"
        for table in Base.metadata.sorted_tables:
            if table.name == "audit_logs":
                continue
            for column, what in REFERENCES.items():
                if column in table.c:
                    left = s.scalar(select(func.count()).select_from(table).where(
                        table.c[column].in_(ids[what])))
                    assert left == 0, (table.name, column, left)
        assert s.get(Space, t.sid) is None
        assert s.get(Node, kept["id"]) is not None  # another space is untouched
    assert env.stored() == set()  # no object of it is left
    for unit_id in units:
        assert not env.components.unitstore.exists(unit_id)
