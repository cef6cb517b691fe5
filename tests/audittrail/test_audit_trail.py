"""Issue 41 item 3: reading the audit trail (a space's, one's own, the operators'), and
failed logins and refused writes recorded without letting a flood fill the table."""
from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from storage.models import AuditLog
from tests.conftest import make_settings
from tests.support.foundation import add_member, assert_problem, audit_rows, make_node, team_space
from wharf.infra.clock import iso, utcnow

pytestmark = pytest.mark.both_databases


@pytest.fixture
def settings(tmp_path, database_url, unitstore_url):
    return make_settings(tmp_path, database_url, unitstore_url, operators=("ops",))


def refusal_count(db) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(AuditLog).where(
            AuditLog.action.in_(("session.login_failed", "request.refused"))))


def walk(client, path: str, **params) -> list[dict]:
    """Every item of a paged trail, following next_cursor."""
    out, cursor = [], None
    for _ in range(100):
        r = client.get(path, params={**params, **({"cursor": cursor} if cursor else {})})
        assert r.status_code == 200, r.text
        out += r.json["items"]
        cursor = r.json["next_cursor"]
        if cursor is None:
            return out
    raise AssertionError("the trail did not end")


def test_a_spaces_trail_is_for_its_owner_and_admins(world):
    owner = world.user("owner")
    admin, editor, viewer, stranger = (world.user(n) for n in
                                       ("admin", "editor", "viewer", "stranger"))
    space = team_space(owner)
    for who, role in ((admin, "admin"), (editor, "editor"), (viewer, "viewer")):
        add_member(owner, space["id"], who.user_id, role)
    make_node(editor, space["id"], "plan")
    path = f"/api/spaces/{space['id']}/audit"
    for reader in (owner, admin):
        items = walk(reader, path)
        actions = [i["action"] for i in items]
        assert "node.create" in actions and "space.create" in actions
        created = next(i for i in items if i["action"] == "node.create")
        assert created["actor"] == {"type": "user", "id": editor.user_id, "username": "editor"}
        assert all(i["space_id"] == space["id"] for i in items)
        # members' addresses and user agents are not shown to admins
        assert all(i["client_ip"] is None and i["user_agent"] is None for i in items)
    for member in (editor, viewer):
        assert_problem(member.get(path), 403, "forbidden")
    assert_problem(stranger.get(path), 404, "not_found")
    assert_problem(world.anonymous().get(path), 401)
    # another space's rows never appear
    other = team_space(stranger, "Other")
    make_node(stranger, other["id"], "secret")
    assert all(i["space_id"] == space["id"] for i in walk(owner, path))


def test_filters_and_pages(world, db):
    owner, editor = world.user("owner"), world.user("editor")
    space = team_space(owner)
    add_member(owner, space["id"], editor.user_id, "editor")
    for i in range(7):
        make_node(owner if i % 2 else editor, space["id"], f"n{i}")
    path = f"/api/spaces/{space['id']}/audit"
    everything = walk(owner, path, limit=2)
    ids = [i["id"] for i in everything]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)  # newest first
    with db.read() as s:
        assert len(ids) == s.scalar(select(func.count()).select_from(AuditLog)
                                    .where(AuditLog.space_id == space["id"]))
    by_editor = walk(owner, path, actor_id=editor.user_id, limit=2)
    assert len(by_editor) == 4  # their nodes; adding them was the owner's act
    assert {i["actor"]["id"] for i in by_editor} == {editor.user_id}
    nodes = walk(owner, path, action="node.create")
    assert len(nodes) == 7
    assert walk(owner, path, action="node.") == [i for i in everything
                                                 if i["action"].startswith("node.")]
    future = iso(utcnow() + timedelta(hours=1))
    past = iso(utcnow() - timedelta(hours=1))
    assert walk(owner, path, since=future) == []
    assert walk(owner, path, until=past) == []
    assert len(walk(owner, path, since=past, until=future)) == len(everything)
    for bad in ({"action": "NODE.create"}, {"action": "x" * 70}, {"action": "a..b"},
                {"since": future, "until": past}, {"since": "yesterday"},
                {"actor_id": "x" * 65}):
        assert_problem(owner.get(path, params=bad), 400)
    assert_problem(owner.get(path, params={"cursor": "forged"}), 400, "invalid_cursor")
    me_cursor = owner.get("/api/me/audit", params={"limit": 1}).json["next_cursor"]
    assert_problem(owner.get(path, params={"cursor": me_cursor}), 400, "invalid_cursor")


def test_my_trail_has_my_actions_logins_and_the_failed_logins_against_me(world):
    alice, bob = world.user("alice"), world.user("bob")
    anon = world.anonymous()
    assert_problem(anon.post("/api/login-sessions",
                             json={"username": "ALICE", "password": "wrong password!!"},
                             headers={"User-Agent": "guesser/1"}), 401, "invalid_credentials")
    assert_problem(anon.post("/api/login-sessions",
                             json={"username": "bob", "password": "wrong password!!"}), 401)
    assert_problem(anon.post("/api/login-sessions",
                             json={"username": "nobody", "password": "wrong password!!"}), 401)
    make_node(alice, alice.get("/api/me").json["personal_space_id"], "mine")
    mine = walk(alice, "/api/me/audit")
    actions = [i["action"] for i in mine]
    assert {"user.register", "session.login", "node.create", "session.login_failed"} \
        <= set(actions)
    failed = [i for i in mine if i["action"] == "session.login_failed"]
    assert len(failed) == 1
    assert failed[0]["target_id"] == alice.user_id
    assert failed[0]["details"] == {"username": "ALICE"}  # the name as tried; no password
    assert failed[0]["actor"]["type"] == "anonymous"
    assert failed[0]["user_agent"] == "guesser/1"
    assert "wrong password" not in str(mine)
    login = next(i for i in mine if i["action"] == "session.login")
    assert "client_ip" in login  # one's own addresses are shown
    # nothing of bob's
    assert all(i["actor"]["id"] in (alice.user_id, None) for i in mine)
    assert all(i["target_id"] != bob.user_id for i in mine)
    assert [i["action"] for i in walk(alice, "/api/me/audit", action="session.")].count(
        "session.login_failed") == 1
    assert_problem(anon.get("/api/me/audit"), 401)


def test_refused_writes_are_recorded_without_bodies(world, db):
    owner, viewer, stranger = world.user("owner"), world.user("viewer"), world.user("stranger")
    space = team_space(owner)
    add_member(owner, space["id"], viewer.user_id, "viewer")
    assert_problem(viewer.post("/api/nodes", json={"space_id": space["id"],
                                                   "name": "SECRET-NAME"}), 403)
    assert_problem(stranger.delete(f"/api/spaces/{space['id']}/members/{viewer.user_id}"), 404)
    assert stranger.get(f"/api/spaces/{space['id']}").status_code == 404  # a read: not recorded
    rows = audit_rows(db, action="request.refused")
    assert [(r.actor_id, r.details["method"], r.details["status"]) for r in rows] == [
        (viewer.user_id, "POST", 403), (stranger.user_id, "DELETE", 404)]
    assert rows[0].details["route"] == "/api/nodes"
    assert rows[1].details["route"] == "/api/spaces/{space_id}/members/{user_id}"
    assert rows[0].details["code"] == "forbidden"
    assert "SECRET-NAME" not in str([(r.details, r.target_id) for r in rows])
    # the refused writer sees it in their own trail
    assert "request.refused" in [i["action"] for i in walk(viewer, "/api/me/audit")]


def test_operators_read_everything_others_get_404(world):
    ops, alice = world.user("ops"), world.user("alice")
    space = team_space(alice)
    make_node(alice, space["id"], "n")
    items = walk(ops, "/api/ops/audit", space_id=space["id"])
    assert {"space.create", "node.create"} <= {i["action"] for i in items}
    assert all(i["space_id"] == space["id"] for i in items)
    assert any(i["client_ip"] is not None or i["user_agent"] is not None
               for i in walk(ops, "/api/ops/audit", action="session.login"))
    assert_problem(alice.get("/api/ops/audit"), 404)


def test_a_thousand_failed_logins_stay_within_the_rate_limit(tmp_path, database_url,
                                                             unitstore_url, monkeypatch):
    """1,000 failed logins from one address record at most WHARF_AUDIT_REFUSALS_PER_ADDRESS
    rows; from many addresses at most WHARF_AUDIT_REFUSALS_PER_MINUTE. Every one is still
    answered 401. The flood comes within one minute: the throttle's clock stands still
    (on a loaded machine the 1,200 requests took longer than the window, and a second
    window's 25 were recorded too)."""
    from tests.support.client import ApiClient
    from wharf.identity import throttle
    from wharf.infra.clock import utcnow
    from wharfd.runtime import Components

    now = utcnow()
    monkeypatch.setattr(throttle, "utcnow", lambda: now)

    settings = make_settings(tmp_path, database_url, unitstore_url, login_max_failures=0,
                             login_max_failures_per_user=0, login_max_failures_per_address=0,
                             audit_refusals_per_address=25, audit_refusals_per_minute=60,
                             trusted_proxy_count=1)
    comps = Components(settings)
    try:
        client = ApiClient(comps.api_app())
        for i in range(1000):
            r = client.post("/api/login-sessions",
                            json={"username": f"guess{i % 7}", "password": "not it at all"},
                            headers={"X-Forwarded-For": "198.51.100.7"})
            assert r.status_code == 401
        assert refusal_count(comps.db) == 25
        for i in range(200):  # a botnet: every request from its own address
            r = client.post("/api/login-sessions",
                            json={"username": "guess", "password": "not it at all"},
                            headers={"X-Forwarded-For": f"203.0.113.{i}"})
            assert r.status_code == 401
        assert refusal_count(comps.db) == 60
    finally:
        comps.close()
