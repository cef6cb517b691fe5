"""Worktree lifecycle end to end over HTTP, on SQLite and PostgreSQL: create (202 +
long-poll), the permission matrix of §5 (discover, rename, visibility, ready, reopen,
discard for the creator, the team's owner, admin, editor, viewer, a non-member and an
anonymous caller), the bad input of §13 (each answer changes nothing), listing scopes and
keyset pagination in one query, the state machine's 409s, discard (assets deleted,
uploads cancelled, intents discarded; a failed discard gives the state back), the purge
blocker of §10 and the audit rows."""
from __future__ import annotations

import copy
import threading
import uuid
from datetime import timedelta

from sqlalchemy import event, func, select, update

from storage.models import (
    AuditLog,
    ObjectDeletionJob,
    Operation,
    UnitAsset,
    UnitAssetUpload,
    Worktree,
    WorktreeNodeIntent,
    WorktreeUnit,
)
from tests.engine.test_operations import wait_done
from tests.support.foundation import (
    REFUSAL_ACTIONS,
    add_member,
    assert_problem,
    make_node,
    team_space,
)
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.ids import new_id

SUMMARY_KEYS = {"id", "kind", "name", "summary", "team_space", "visibility", "state",
                "creator", "unit_count", "busy_operation_id", "last_merge_operation_id",
                "processed_at", "created_at", "updated_at", "capabilities"}
CAPABILITIES = {"review", "edit_draft", "add_unit", "change_visibility", "mark_ready",
                "reopen", "merge", "discard"}


def key() -> str:
    return uuid.uuid4().hex


def submit_create(client, **body):
    return client.post("/api/worktrees", json=body, headers={"Idempotency-Key": key()})


def create(client, **body) -> dict:
    """A worktree created through the API (the operation waited for); its detail."""
    body.setdefault("kind", "user")
    body.setdefault("name", f"WT {uuid.uuid4().hex[:6]}")
    r = submit_create(client, **body)
    assert r.status_code == 202, r.text
    op = wait_done(client, r.json["id"])
    assert op["status"] == "completed", op
    got = client.get(f"/api/worktrees/{op['result']['worktree_id']}")
    assert got.status_code == 200, got.text
    return got.json


def discard(client, wt_id: str, k: str | None = None):
    return client.post(f"/api/worktrees/{wt_id}/discard", headers={"Idempotency-Key": k or key()})


def count(db, model, *where) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(model).where(*where))


def row(db, wt_id: str) -> Worktree:
    with db.read() as s:
        return s.get(Worktree, wt_id)


class Team:
    """A team space with one user per role, and a member who creates worktrees."""

    def __init__(self, world):
        self.owner = world.user("owner")
        self.admin = world.user("admin")
        self.editor = world.user("editor")
        self.viewer = world.user("viewer")
        self.creator = world.user("creator")
        self.outsider = world.user("outsider")
        self.anonymous = world.anonymous()
        self.space = team_space(self.owner, "Team")
        for who, role in ((self.admin, "admin"), (self.editor, "editor"),
                          (self.viewer, "viewer"), (self.creator, "editor")):
            add_member(self.owner, self.space["id"], who.user_id, role)

    def roles(self):
        return {"creator": self.creator, "owner": self.owner, "admin": self.admin,
                "editor": self.editor, "viewer": self.viewer, "outsider": self.outsider}


# --- create -------------------------------------------------------------------------------

def test_create_user_and_team_worktrees(world, worker, db):
    alice = world.user("alice")
    r = submit_create(alice, kind="user", name="  My draft ", summary="line one\nline two")
    assert r.status_code == 202, r.text
    assert r.json["kind"] == "create_worktree" and r.headers["location"].endswith(r.json["id"])
    op = wait_done(alice, r.json["id"])
    assert op["status"] == "completed" and set(op["result"]) == {"worktree_id"}
    wt = alice.get(f"/api/worktrees/{op['result']['worktree_id']}").json
    assert set(wt) == SUMMARY_KEYS | {"units"} and wt["units"] == []
    assert set(wt["capabilities"]) == CAPABILITIES
    assert wt["kind"] == "user" and wt["name"] == "My draft"
    assert wt["summary"] == "line one\nline two"
    assert wt["team_space"] is None and wt["visibility"] == "private"
    assert wt["state"] == "draft" and wt["unit_count"] == 0
    assert wt["creator"] == {"id": alice.user_id, "username": "alice"}
    assert wt["busy_operation_id"] is None and wt["processed_at"] is None
    assert wt["capabilities"] == {"review": True, "edit_draft": True, "add_unit": True,
                                  "change_visibility": False, "mark_ready": True,
                                  "reopen": False, "merge": False, "discard": True}
    with db.read() as s:
        stored = s.get(Operation, op["id"])
        assert stored.scope_id == alice.personal_space_id  # user worktree: personal space

    space = team_space(alice, "Design")
    team = create(alice, kind="team", name="Review", team_space_id=space["id"],
                  visibility="space")
    assert team["team_space"] == {"id": space["id"], "name": "Design"}
    assert team["visibility"] == "space" and team["kind"] == "team"
    assert team["capabilities"]["change_visibility"] is True
    default = create(alice, kind="team", name="Private one", team_space_id=space["id"])
    assert default["visibility"] == "private"


def test_replaying_a_create_returns_the_same_operation(world, worker, db):
    alice = world.user("alice")
    k = key()
    body = {"kind": "user", "name": "Once"}
    first = alice.post("/api/worktrees", json=body, headers={"Idempotency-Key": k})
    assert first.status_code == 202
    wait_done(alice, first.json["id"])
    again = alice.post("/api/worktrees", json=body, headers={"Idempotency-Key": k})
    assert again.status_code == 200 and again.json["id"] == first.json["id"]
    assert count(db, Worktree) == 1
    other = alice.post("/api/worktrees", json={**body, "name": "Twice"},
                       headers={"Idempotency-Key": k})
    assert_problem(other, 409, "idempotency_key_reused")
    assert count(db, Worktree) == 1


# --- permissions --------------------------------------------------------------------------

def test_team_worktree_discoverability_and_capabilities(world, worker, db):
    t = Team(world)
    wt = create(t.creator, kind="team", name="Private", team_space_id=t.space["id"])
    path = f"/api/worktrees/{wt['id']}"
    seen = {name: c.get(path).status_code for name, c in t.roles().items()}
    # private: the creator, the owner and admins; other members and outsiders: 404
    assert seen == {"creator": 200, "owner": 200, "admin": 200, "editor": 404,
                    "viewer": 404, "outsider": 404}
    assert t.anonymous.get(path).status_code == 401
    caps = {name: t.roles()[name].get(path).json["capabilities"]
            for name in ("creator", "owner", "admin")}
    assert caps["creator"] == {"review": True, "edit_draft": True, "add_unit": True,
                               "change_visibility": True, "mark_ready": True,
                               "reopen": False, "merge": False, "discard": True}
    # owner/admin of a private worktree: the summary, not the units; they manage it
    assert caps["owner"] == caps["admin"] == {
        "review": False, "edit_draft": False, "add_unit": False, "change_visibility": True,
        "mark_ready": False, "reopen": False, "merge": False, "discard": True}

    r = t.creator.patch(path, json={"visibility": "space"})
    assert r.status_code == 200 and r.json["visibility"] == "space"
    seen = {name: c.get(path).status_code for name, c in t.roles().items()}
    assert seen == {"creator": 200, "owner": 200, "admin": 200, "editor": 200,
                    "viewer": 200, "outsider": 404}
    editor = t.editor.get(path).json["capabilities"]
    assert editor == {"review": True, "edit_draft": False, "add_unit": False,
                      "change_visibility": False, "mark_ready": False, "reopen": False,
                      "merge": False, "discard": False}
    assert t.viewer.get(path).json["capabilities"] == dict.fromkeys(CAPABILITIES, False) | {
        "review": True}
    assert t.creator.post(f"{path}/ready").status_code == 200
    # ready: merge is for owner, admin and editors (the review flow), not viewers
    merge = {name: t.roles()[name].get(path).json["capabilities"]["merge"]
             for name in ("creator", "owner", "admin", "editor", "viewer")}
    assert merge == {"creator": True, "owner": True, "admin": True, "editor": True,
                     "viewer": False}


def test_team_worktree_writes_by_role(world, worker, db):
    t = Team(world)
    wt = create(t.creator, kind="team", name="Shared", team_space_id=t.space["id"],
                visibility="space")
    path = f"/api/worktrees/{wt['id']}"
    # rename: creator, owner, admin; other members 403; outsiders 404; anonymous 401
    expect = {"creator": 200, "owner": 200, "admin": 200, "editor": 403, "viewer": 403,
              "outsider": 404}
    for name, status in expect.items():
        r = t.roles()[name].patch(path, json={"name": f"by {name}"})
        assert r.status_code == status, (name, r.text)
    assert t.anonymous.patch(path, json={"name": "anon"}).status_code == 401
    assert row(db, wt["id"]).name == "by admin"
    for name, status in expect.items():
        r = t.roles()[name].patch(path, json={"visibility": "space"})
        assert r.status_code == status, (name, r.text)

    # mark ready: the creator alone (an editor of the team); the owner may not
    for name in ("owner", "admin", "editor", "viewer"):
        assert_problem(t.roles()[name].post(f"{path}/ready"), 403, "forbidden")
    assert t.outsider.post(f"{path}/ready").status_code == 404
    assert t.anonymous.post(f"{path}/ready").status_code == 401
    assert t.creator.post(f"{path}/ready").json["state"] == "ready"
    # reopen: creator, owner, admin
    for name in ("editor", "viewer"):
        assert_problem(t.roles()[name].post(f"{path}/reopen"), 403, "forbidden")
    assert t.outsider.post(f"{path}/reopen").status_code == 404
    assert t.anonymous.post(f"{path}/reopen").status_code == 401
    assert t.admin.post(f"{path}/reopen").json["state"] == "draft"
    assert t.creator.post(f"{path}/ready").status_code == 200
    assert t.owner.post(f"{path}/reopen").json["state"] == "draft"
    # discard: creator, owner, admin
    for name in ("editor", "viewer"):
        assert_problem(discard(t.roles()[name], wt["id"]), 403, "forbidden")
    assert discard(t.outsider, wt["id"]).status_code == 404
    assert discard(t.anonymous, wt["id"]).status_code == 401
    assert row(db, wt["id"]).state == "draft"  # nothing changed
    r = discard(t.owner, wt["id"])
    assert r.status_code == 202
    assert wait_done(t.owner, r.json["id"])["status"] == "completed"
    assert row(db, wt["id"]).state == "discarded"


def test_user_worktree_is_its_creators_alone(world, worker, db):
    alice, bob = world.user("alice"), world.user("bob")
    wt = create(alice, name="Mine")
    path = f"/api/worktrees/{wt['id']}"
    for r in (bob.get(path), bob.patch(path, json={"name": "x"}), bob.post(f"{path}/ready"),
              bob.post(f"{path}/reopen"), discard(bob, wt["id"])):
        assert_problem(r, 404, "not_found")
    anon = world.anonymous()
    for r in (anon.get(path), anon.get("/api/worktrees"), anon.patch(path, json={"name": "x"}),
              anon.post(f"{path}/ready"), anon.post(f"{path}/reopen"),
              discard(anon, wt["id"]), submit_create(anon, kind="user", name="x")):
        assert_problem(r, 401)
    assert [w["id"] for w in bob.get("/api/worktrees").json["items"]] == []
    # a user worktree's visibility is always private
    for vis in ("space", "private"):
        body = assert_problem(alice.patch(path, json={"visibility": vis}), 400,
                              "validation_failed")
        assert body["details"]["field"] == "visibility"
    assert alice.post(f"{path}/ready").json["state"] == "ready"
    assert alice.post(f"{path}/reopen").json["state"] == "draft"


def test_a_creator_who_loses_the_editor_role(world, worker, db):
    t = Team(world)
    wt = create(t.creator, kind="team", name="Mine", team_space_id=t.space["id"])
    path = f"/api/worktrees/{wt['id']}"
    add_member(t.owner, t.space["id"], t.creator.user_id, "viewer")
    caps = t.creator.get(path).json["capabilities"]
    assert caps["mark_ready"] is False and caps["edit_draft"] is False
    assert caps["discard"] is True  # still the creator
    assert_problem(t.creator.post(f"{path}/ready"), 403)
    assert t.creator.patch(path, json={"name": "Renamed"}).status_code == 200
    # no longer a member: the team's worktrees are gone for them
    assert t.creator.delete(f"/api/spaces/{t.space['id']}/members/{t.creator.user_id}"
                            ).status_code == 204
    assert t.creator.get(path).status_code == 404
    assert t.owner.get(path).status_code == 200


def test_create_team_worktree_permissions(world, worker, db):
    t = Team(world)
    sid = t.space["id"]
    for who in (t.owner, t.admin, t.editor):
        r = submit_create(who, kind="team", name="ok", team_space_id=sid)
        assert r.status_code == 202, r.text
        assert wait_done(who, r.json["id"])["status"] == "completed"
    before = (count(db, Worktree), count(db, Operation))
    assert_problem(submit_create(t.viewer, kind="team", name="no", team_space_id=sid), 403)
    assert_problem(submit_create(t.outsider, kind="team", name="no", team_space_id=sid), 404)
    assert (count(db, Worktree), count(db, Operation)) == before


def test_create_is_rechecked_by_the_worker(world, components, db):
    t = Team(world)
    r = submit_create(t.editor, kind="team", name="late", team_space_id=t.space["id"])
    assert r.status_code == 202
    add_member(t.owner, t.space["id"], t.editor.user_id, "viewer")
    assert components.executor.execute(r.json["id"]) == "failed"
    op = t.editor.get(f"/api/operations/{r.json['id']}").json
    assert op["error"]["code"] == "permission_revoked"
    assert count(db, Worktree) == 0


# --- bad input ----------------------------------------------------------------------------

def test_bad_create_requests_change_nothing(world, worker, db):
    alice, bob = world.user("alice"), world.user("bob")
    bobs = team_space(bob, "Bob's team")
    mine = team_space(alice, "Mine")

    def refused(r, status, code=None, field=None):
        body = assert_problem(r, status, code)
        if field is not None:
            assert body["details"]["field"] == field, body

    changes = AuditLog.action.not_in(REFUSAL_ACTIONS)  # a refusal's own row is no change
    before = (count(db, Worktree), count(db, Operation), count(db, AuditLog, changes))
    refused(alice.post("/api/worktrees", json={"kind": "user", "name": "x"}), 400,
            "idempotency_key_required")
    refused(alice.post("/api/worktrees", json={"kind": "user", "name": "x"},
                       headers={"Idempotency-Key": "short"}), 400, "invalid_idempotency_key")
    refused(submit_create(alice, kind="group", name="x"), 400, "validation_failed", "kind")
    for name in ("", "   ", "x" * 256, "a\x00b", "a\x07b", "a/b"):
        refused(submit_create(alice, kind="user", name=name), 400, "validation_failed", "name")
    refused(submit_create(alice, kind="user", name="x", summary="s" * 10_001), 400,
            "validation_failed", "summary")
    refused(submit_create(alice, kind="user", name="x", summary="a\x00b"), 400,
            "validation_failed", "summary")
    refused(submit_create(alice, kind="user", name="x", team_space_id=mine["id"]), 400,
            "validation_failed", "team_space_id")
    refused(submit_create(alice, kind="user", name="x", visibility="space"), 400,
            "validation_failed", "visibility")
    refused(submit_create(alice, kind="team", name="x"), 400, "validation_failed",
            "team_space_id")
    refused(submit_create(alice, kind="team", name="x", team_space_id=alice.personal_space_id),
            409, "not_a_team_space", "team_space_id")
    refused(submit_create(alice, kind="team", name="x", team_space_id=bobs["id"]), 404)
    refused(submit_create(alice, kind="team", name="x", team_space_id=new_id()), 404)
    refused(submit_create(alice, kind="team", name="x", team_space_id="../etc"), 404)
    refused(submit_create(alice, kind="team", name="x", team_space_id=mine["id"],
                          visibility="public"), 400, "validation_failed", "visibility")
    for field in ("worktree_id", "unit_id", "node_id", "state", "creator_id"):
        refused(submit_create(alice, kind="user", name="x", **{field: new_id()}), 400,
                "validation_failed", field)
    refused(alice.post("/api/worktrees", body=b"[1]", headers={
        "Idempotency-Key": key(), "Content-Type": "application/json"}), 400)
    assert (count(db, Worktree), count(db, Operation), count(db, AuditLog, changes)) == before


def test_bad_requests_on_a_worktree_change_nothing(world, worker, db):
    alice = world.user("alice")
    wt = create(alice, name="Target", summary="keep")
    path = f"/api/worktrees/{wt['id']}"
    for bad in (new_id(), "not-an-id", "0" * 32, "A" * 32):
        p = f"/api/worktrees/{bad}"
        for r in (alice.get(p), alice.patch(p, json={"name": "x"}), alice.post(f"{p}/ready"),
                  alice.post(f"{p}/reopen"), discard(alice, bad)):
            assert_problem(r, 404, "not_found")
    before = alice.get(path).json
    for body, field in (({}, None), ({"name": ""}, "name"), ({"name": "a/b"}, "name"),
                        ({"name": "x" * 256}, "name"), ({"summary": "s" * 10_001}, "summary"),
                        ({"visibility": "public"}, "visibility"),
                        ({"name": "ok", "state": "merged"}, "state"),
                        ({"name": None}, "name")):
        body_ = assert_problem(alice.patch(path, json=body), 400, "validation_failed")
        if field:
            assert body_["details"]["field"] == field, body_
    assert alice.get(path).json == before
    assert count(db, AuditLog, AuditLog.action == "worktree.update") == 0
    # summary null clears it
    r = alice.patch(path, json={"summary": None})
    assert r.status_code == 200 and r.json["summary"] is None
    assert set(r.json) == SUMMARY_KEYS | {"units"}


# --- listing ------------------------------------------------------------------------------

def test_listing_scopes_filters_and_pagination(world, worker, db):
    alice, bob = world.user("alice"), world.user("bob")
    space = team_space(alice, "T")
    add_member(alice, space["id"], bob.user_id, "editor")
    mine = [create(alice, name=f"u{i}")["id"] for i in range(5)]
    team = [create(alice, kind="team", name=f"t{i}", team_space_id=space["id"],
                   visibility="space" if i % 2 else "private")["id"] for i in range(3)]
    bobs = create(bob, kind="team", name="bob's", team_space_id=space["id"])["id"]
    create(bob, name="bob private")

    def walk(client, limit, **params):
        ids, cursor, pages = [], None, 0
        while True:
            q = {"limit": str(limit), **params}
            if cursor:
                q["cursor"] = cursor
            r = client.get("/api/worktrees", params=q)
            assert r.status_code == 200, r.text
            assert len(r.json["items"]) <= limit
            ids += [w["id"] for w in r.json["items"]]
            pages += 1
            cursor = r.json["next_cursor"]
            if cursor is None:
                return ids, pages

    everything, pages = walk(alice, 2)
    # alice: her own five, her three team worktrees, and bob's private team worktree
    # (she owns the space); not bob's user worktree
    assert sorted(everything) == sorted(mine + team + [bobs]) and pages == 5
    with db.read() as s:
        order = [w.id for w in s.scalars(select(Worktree).where(Worktree.id.in_(everything))
                                         .order_by(Worktree.updated_at.desc(),
                                                   Worktree.id.desc()))]
    assert everything == order
    seen_by_bob, _ = walk(bob, 3, kind="team")
    assert sorted(seen_by_bob) == sorted([team[1], bobs])  # the space-visible one and his
    assert walk(alice, 50, kind="user")[0] == [i for i in order if i in mine]
    assert sorted(walk(alice, 50, team_space_id=space["id"])[0]) == sorted([*team, bobs])
    assert walk(alice, 50, team_space_id=new_id())[0] == []

    # a rename moves it to the front; discarded ones are processed
    alice.patch(f"/api/worktrees/{mine[0]}", json={"name": "renamed"})
    assert walk(alice, 1)[0][0] == mine[0]
    r = discard(alice, mine[1])
    wait_done(alice, r.json["id"])
    active, _ = walk(alice, 50)
    processed, _ = walk(alice, 50, scope="processed")
    assert mine[1] not in active and processed == [mine[1]]
    item = alice.get("/api/worktrees", params={"scope": "processed"}).json["items"][0]
    assert item["state"] == "discarded" and item["processed_at"] is not None
    assert set(item) == SUMMARY_KEYS

    for params in ({"scope": "all"}, {"kind": "group"}, {"limit": "0"}, {"limit": "201"},
                   {"cursor": "garbage"}, {"limit": "-1"}):
        assert_problem(alice.get("/api/worktrees", params=params), 400)


def test_a_page_is_one_query(world, worker, db):
    from wharf import worktrees
    alice = world.user("alice")
    space = team_space(alice, "T")
    for i in range(6):
        create(alice, name=f"u{i}")
        create(alice, kind="team", name=f"t{i}", team_space_id=space["id"])
    statements: list[str] = []
    me = threading.get_ident()

    def on_execute(conn, cursor, statement, *args):
        if threading.get_ident() == me:
            statements.append(statement)

    engine = db.read_engine
    event.listen(engine, "before_cursor_execute", on_execute)
    try:
        with db.read() as s:
            ctx = RequestContext(principal=Principal(kind="user", user_id=alice.user_id))
            items, nxt = worktrees.list_worktrees(s, ctx, limit=10, cursor=None)
    finally:
        event.remove(engine, "before_cursor_execute", on_execute)
    assert len(items) == 10 and nxt is not None
    selects = [q for q in statements if q.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 1, selects


# --- state machine ------------------------------------------------------------------------

def test_state_machine_conflicts(world, worker, db):
    alice = world.user("alice")
    wt = create(alice, name="States")
    path = f"/api/worktrees/{wt['id']}"
    body = assert_problem(alice.post(f"{path}/reopen"), 409, "worktree_state")
    assert body["details"] == {"state": "draft", "allowed": ["ready"]}
    assert alice.post(f"{path}/ready").status_code == 200
    body = assert_problem(alice.post(f"{path}/ready"), 409, "worktree_state")
    assert body["details"] == {"state": "ready", "allowed": ["draft"]}
    caps = alice.get(path).json["capabilities"]
    assert caps["reopen"] and caps["merge"] and not caps["mark_ready"] and not caps["edit_draft"]
    # rename is allowed while ready
    assert alice.patch(path, json={"name": "Still ready"}).json["state"] == "ready"
    r = discard(alice, wt["id"])
    op = wait_done(alice, r.json["id"])
    assert op["status"] == "completed"
    assert op["result"] == {"worktree_id": wt["id"], "state": "discarded", "assets_deleted": 0,
                            "uploads_cancelled": 0, "intents_discarded": 0}
    final = alice.get(path).json
    assert final["state"] == "discarded" and final["processed_at"] is not None
    assert final["busy_operation_id"] is None
    assert final["capabilities"] == dict.fromkeys(CAPABILITIES, False) | {"review": True}
    for r in (alice.post(f"{path}/ready"), alice.post(f"{path}/reopen"),
              alice.patch(path, json={"name": "late"}), discard(alice, wt["id"])):
        body = assert_problem(r, 409, "worktree_state")
        assert body["details"]["state"] == "discarded"
    assert row(db, wt["id"]).name == "Still ready"


def test_discard_is_busy_until_done_and_replays(world, components, db):
    """No worker: the discard stays queued, the worktree ``discarding``."""
    alice = world.user("alice")
    r = submit_create(alice, kind="user", name="Busy")
    assert components.executor.execute(r.json["id"]) == "completed"
    wt_id = alice.get(f"/api/operations/{r.json['id']}").json["result"]["worktree_id"]
    path = f"/api/worktrees/{wt_id}"
    k = key()
    first = discard(alice, wt_id, k)
    assert first.status_code == 202
    op_id = first.json["id"]
    got = alice.get(path).json
    assert got["state"] == "discarding" and got["busy_operation_id"] == op_id
    assert got["capabilities"] == dict.fromkeys(CAPABILITIES, False) | {"review": True}
    # the same key: the same operation, nothing changes
    again = discard(alice, wt_id, k)
    assert again.status_code == 202 and again.json["id"] == op_id
    for r in (discard(alice, wt_id), alice.post(f"{path}/ready"), alice.post(f"{path}/reopen"),
              alice.patch(path, json={"name": "x"})):
        body = assert_problem(r, 409, "worktree_busy")
        assert body["details"]["operation_id"] == op_id
    assert count(db, Operation, Operation.kind == "discard_worktree") == 1
    assert components.executor.execute(op_id) == "completed"
    done = discard(alice, wt_id, k)
    assert done.status_code == 200 and done.json["id"] == op_id
    assert done.json["status"] == "completed"
    assert alice.get(path).json["state"] == "discarded"
    assert count(db, Operation, Operation.kind == "discard_worktree") == 1


def test_a_failed_discard_gives_the_state_back(world, components, db):
    t = Team(world)
    r = submit_create(t.creator, kind="team", name="Guarded", team_space_id=t.space["id"])
    components.executor.execute(r.json["id"])
    wt_id = t.creator.get(f"/api/operations/{r.json['id']}").json["result"]["worktree_id"]
    assert t.creator.post(f"/api/worktrees/{wt_id}/ready").status_code == 200
    # the admin submits, then leaves the team before the worker runs
    d = discard(t.admin, wt_id)
    assert d.status_code == 202
    assert row(db, wt_id).state == "discarding"
    assert t.admin.delete(f"/api/spaces/{t.space['id']}/members/{t.admin.user_id}"
                          ).status_code == 204
    assert components.executor.execute(d.json["id"]) == "failed"
    op = t.admin.get(f"/api/operations/{d.json['id']}").json
    assert op["error"]["code"] == "permission_revoked"
    back = row(db, wt_id)
    assert back.state == "ready" and back.busy_operation_id is None
    # a failed discard is not retried (it released the worktree): discard again
    assert_problem(t.admin.post(f"/api/operations/{d.json['id']}/retry"), 409,
                   "retry_not_possible")
    # a cancelled one too
    d2 = discard(t.creator, wt_id)
    assert row(db, wt_id).state == "discarding"
    assert t.creator.post(f"/api/operations/{d2.json['id']}/cancel").status_code == 200
    back = row(db, wt_id)
    assert back.state == "ready" and back.busy_operation_id is None and back.processed_at is None


def _insert_unit(s, wt_id: str, user_id: str, *, resource_id: str | None = None,
                 local: bool = False, ordinal: int = 0) -> str:
    unit_id = new_id()
    s.add(WorktreeUnit(worktree_id=wt_id, unit_id=unit_id, resource_id=resource_id or new_id(),
                       source="worktree" if local else "trunk", unit_type="doc",
                       ordinal=ordinal, added_by=user_id))
    s.flush()
    return unit_id


def _insert_intent(s, wt_id: str, unit_id: str, user_id: str, space_id: str,
                   parent_id: str | None, **extra) -> None:
    s.add(WorktreeNodeIntent(worktree_id=wt_id, unit_id=unit_id, node_id=new_id(),
                             target_space_id=space_id, target_parent_id=parent_id,
                             name="New doc", unit_type="doc", created_by=user_id, **extra))
    s.flush()


def test_discard_deletes_assets_cancels_uploads_and_discards_intents(world, components, db):
    alice, bob = world.user("alice"), world.user("bob")
    wt = create_without_worker(components, alice, name="With assets")
    other = create_without_worker(components, bob, name="Bob's")
    now = utcnow()
    with db.write() as s:
        local = _insert_unit(s, wt, alice.user_id, local=True)
        trunk = _insert_unit(s, wt, alice.user_id, ordinal=1)
        _insert_intent(s, wt, local, alice.user_id, alice.personal_space_id, None)
        for i, (owner, unit) in enumerate(((wt, local), (wt, trunk), (other, new_id()))):
            s.add(UnitAsset(id=new_id(), unit_id=unit, worktree_id=owner,
                            object_key=f"assets/wt-{i}", filename="a.png",
                            declared_media_type="image/png", detected_media_type="image/png",
                            size=1, sha256="ab" * 32, etag='"e"', created_by=alice.user_id,
                            created_at=now))
        pending_op, running_op = new_id(), new_id()
        for op_id, status in ((pending_op, "pending"), (running_op, "running")):
            s.add(Operation(id=op_id, kind="publish_asset", status=status,
                            actor_id=alice.user_id, idempotency_key=key(),
                            request_fingerprint="f", payload={}, attempts=0, max_attempts=5,
                            created_at=now, updated_at=now))
        s.flush()
        for op_id, name in ((pending_op, "pending"), (running_op, "running")):
            s.add(UnitAssetUpload(id=new_id(), operation_id=op_id, asset_id=new_id(),
                                  object_key=f"assets/up-{name}", unit_id=trunk,
                                  worktree_id=wt, actor_id=alice.user_id, filename="b.png",
                                  declared_media_type="image/png", expected_size=1,
                                  state="receiving", created_at=now, updated_at=now,
                                  expires_at=now + timedelta(hours=1)))
    r = discard(alice, wt)
    assert components.executor.execute(r.json["id"]) == "completed"
    op = alice.get(f"/api/operations/{r.json['id']}").json
    assert op["result"] == {"worktree_id": wt, "state": "discarded", "assets_deleted": 2,
                            "uploads_cancelled": 1, "intents_discarded": 1}
    with db.read() as s:
        assert s.scalars(select(UnitAsset.object_key)).all() == ["assets/wt-2"]  # bob's kept
        jobs = {k: reason for k, reason in s.execute(
            select(ObjectDeletionJob.object_key, ObjectDeletionJob.reason))}
        assert jobs["assets/wt-0"] == jobs["assets/wt-1"] == "worktree_discarded"
        assert "assets/up-pending" in jobs
        assert s.get(Operation, pending_op).status == "failed"
        assert s.get(Operation, pending_op).error["code"] == "worktree_discarded"
        assert s.get(Operation, running_op).status == "running"  # fails itself
        assert s.scalars(select(UnitAssetUpload.object_key)).all() == ["assets/up-running"]
        intent = s.scalars(select(WorktreeNodeIntent)).one()
        assert intent.discarded_at is not None and intent.activated_at is None
        # the units stay (history); the worktree is processed
        assert s.scalar(select(func.count()).select_from(WorktreeUnit)) == 2
    assert alice.get(f"/api/worktrees/{wt}").json["unit_count"] == 2


def create_without_worker(components, client, **body) -> str:
    body.setdefault("kind", "user")
    r = submit_create(client, **body)
    assert r.status_code == 202, r.text
    assert components.executor.execute(r.json["id"]) == "completed"
    return client.get(f"/api/operations/{r.json['id']}").json["result"]["worktree_id"]


# --- the purge blocker --------------------------------------------------------------------

def _doc(client, space_id: str, parent_id: str) -> dict:
    r = client.post("/api/resources", json={"space_id": space_id, "parent_id": parent_id,
                                            "name": f"Doc {uuid.uuid4().hex[:6]}",
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    op = wait_done(client, r.json["id"])
    assert op["status"] == "completed", op
    return op["result"]


def _purge(client, node_id: str):
    return client.delete(f"/api/nodes/{node_id}", headers={"Idempotency-Key": key()})


def test_purge_is_blocked_by_an_active_worktree_unit(world, worker, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    top = make_node(alice, sp, "Top")["id"]
    mid = make_node(alice, sp, "Mid", top)["id"]
    doc = _doc(alice, sp, mid)
    wt = create(alice, name="Uses the doc")["id"]
    with db.write() as s:
        _insert_unit(s, wt, alice.user_id, resource_id=doc["resource_id"])
    # trashing is allowed; purging is not
    assert alice.post(f"/api/nodes/{top}/trash").status_code == 200
    before = count(db, Operation)
    body = assert_problem(_purge(alice, top), 409, "worktree_reference")
    assert "1 active worktree(s) reference a resource below" in body["detail"]
    assert count(db, Operation) == before
    # once the worktree is processed, it no longer blocks
    wait_done(alice, discard(alice, wt).json["id"])
    r = _purge(alice, top)
    assert r.status_code == 202, r.text
    assert wait_done(alice, r.json["id"])["status"] == "completed"
    assert alice.get(f"/api/nodes/{top}").status_code == 404


def test_purge_is_blocked_by_a_waiting_node_intent(world, worker, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    top = make_node(alice, sp, "Top")["id"]
    target = make_node(alice, sp, "Target", top)["id"]
    wt = create(alice, name="Will create below")["id"]
    with db.write() as s:
        unit = _insert_unit(s, wt, alice.user_id, local=True)
        _insert_intent(s, wt, unit, alice.user_id, sp, target)
    assert alice.post(f"/api/nodes/{top}/trash").status_code == 200
    assert_problem(_purge(alice, top), 409, "worktree_reference")
    # an activated intent does not block (nor does a processed worktree)
    with db.write() as s:
        s.execute(update(WorktreeNodeIntent).values(activated_at=utcnow()))
    r = _purge(alice, top)
    assert r.status_code == 202, r.text
    assert wait_done(alice, r.json["id"])["status"] == "completed"


def test_purge_blocker_is_rechecked_by_the_worker(world, components, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    top = make_node(alice, sp, "Top")["id"]
    wt = create_without_worker(components, alice, name="Late")
    assert alice.post(f"/api/nodes/{top}/trash").status_code == 200
    r = _purge(alice, top)
    assert r.status_code == 202
    # a node intent targeting the folder appears before the worker runs
    with db.write() as s:
        unit = _insert_unit(s, wt, alice.user_id, local=True)
        _insert_intent(s, wt, unit, alice.user_id, sp, top)
    assert components.executor.execute(r.json["id"]) == "failed"
    op = alice.get(f"/api/operations/{r.json['id']}").json
    assert op["error"]["code"] == "worktree_reference"
    assert alice.get(f"/api/nodes/{top}").status_code == 404  # still trashed, still there
    with db.read() as s:
        from storage.models import Node
        assert s.get(Node, top) is not None


# --- audit --------------------------------------------------------------------------------

def test_audit_rows(world, worker, db):
    t = Team(world)
    wt = create(t.creator, kind="team", name="Audited", team_space_id=t.space["id"])["id"]
    path = f"/api/worktrees/{wt}"
    t.creator.patch(path, json={"name": "Audited 2", "visibility": "space"})
    t.creator.post(f"{path}/ready")
    t.owner.post(f"{path}/reopen")
    wait_done(t.owner, discard(t.owner, wt).json["id"])
    with db.read() as s:
        rows = list(s.scalars(select(AuditLog).where(AuditLog.target_id == wt)
                              .order_by(AuditLog.at, AuditLog.id)))
    actions = [(r.action, r.actor_type, r.actor_id) for r in rows]
    assert [a for a, *_ in actions] == ["worktree.create", "worktree.update", "worktree.ready",
                                        "worktree.reopen", "worktree.discard"]
    by = {r.action: r for r in rows}
    assert by["worktree.create"].actor_type == "system"  # the operation, on behalf of ...
    assert by["worktree.create"].details["on_behalf_of"] == t.creator.user_id
    assert by["worktree.update"].actor_id == t.creator.user_id
    assert by["worktree.update"].details == {"name": "Audited 2", "visibility": "space"}
    assert by["worktree.reopen"].actor_id == t.owner.user_id
    assert by["worktree.discard"].details["on_behalf_of"] == t.owner.user_id
    assert all(r.space_id == t.space["id"] for r in rows)


# --- the contract, fuzzed -----------------------------------------------------------------

WORKTREE_OPERATIONS = {
    ("POST", "/api/worktrees"), ("GET", "/api/worktrees"),
    ("GET", "/api/worktrees/{worktree_id}"), ("PATCH", "/api/worktrees/{worktree_id}"),
    ("POST", "/api/worktrees/{worktree_id}/ready"),
    ("POST", "/api/worktrees/{worktree_id}/reopen"),
    ("POST", "/api/worktrees/{worktree_id}/discard"),
}


def test_schemathesis_worktrees(world, app, worker, backend):
    import schemathesis
    from schemathesis import GenerationMode

    from api.contract import document
    from tests.hostile.test_schemathesis import (
        EXAMPLES,
        NEGATIVE_EXAMPLES,
        RANDOM_ID_EXAMPLES,
        _run,
    )
    from tests.support.foundation import bearer, make_token

    alice = world.user("alice")
    token = make_token(alice)["token"]
    space = team_space(alice, "Fuzz")
    wt = create(alice, kind="team", name="Fuzzed", team_space_id=space["id"])
    headers = bearer(token)
    schema = schemathesis.openapi.from_dict(copy.deepcopy(document(app)))
    ran = set()
    for result in schema.get_all_operations():
        operation = result.ok()
        label = (operation.method.upper(), operation.path)
        if label not in WORKTREE_OPERATIONS:
            continue
        ran.add(label)
        names = [p.name for p in operation.path_parameters]
        known = {"worktree_id": wt["id"]} if names else None
        _run(operation, app, headers, GenerationMode.POSITIVE, EXAMPLES, known)
        _run(operation, app, headers, GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES, known)
        if names:
            _run(operation, app, headers, GenerationMode.POSITIVE, RANDOM_ID_EXAMPLES)
    assert ran == WORKTREE_OPERATIONS
