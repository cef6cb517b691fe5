"""Issue 40 item 2: a user sees their login sessions and ends one."""
from __future__ import annotations

import pytest

from api.app import create_app
from tests.conftest import World
from tests.support.client import ApiClient
from tests.support.foundation import PASSWORD, assert_problem, audit_rows


def _login(app, username: str, agent: str, ip: str) -> ApiClient:
    c = ApiClient(app, headers={"User-Agent": agent, "X-Forwarded-For": ip})
    r = c.post("/api/login-sessions", json={"username": username, "password": PASSWORD})
    assert r.status_code == 201, r.text
    return c


@pytest.mark.both_databases
def test_sessions_listed_newest_first_with_current(settings, db):
    app = create_app(settings.replace(trusted_proxy_count=1), db)
    world = World(app)
    world.user("alice")
    laptop = _login(app, "alice", "Laptop/1.0", "203.0.113.7")
    phone = _login(app, "alice", "Phone/2.0 " + "x" * 300, "198.51.100.9")
    r = laptop.get("/api/login-sessions")
    assert r.status_code == 200
    items = r.json["items"]
    assert len(items) == 3
    assert [i["created_at"] for i in items] == sorted((i["created_at"] for i in items),
                                                      reverse=True)
    newest, mine = items[0], items[1]
    assert newest["user_agent"].startswith("Phone/2.0") and len(newest["user_agent"]) == 200
    assert newest["address"] == "198.51.100.9" and newest["current"] is False
    assert mine["user_agent"] == "Laptop/1.0" and mine["address"] == "203.0.113.7"
    assert mine["current"] is True and mine["last_used_at"] is not None
    assert [i["current"] for i in phone.get("/api/login-sessions").json["items"]] == \
        [True, False, False]
    # only the caller's own
    bob = world.user("bob")
    assert len(bob.get("/api/login-sessions").json["items"]) == 1


@pytest.mark.both_databases
def test_ending_a_session_refuses_its_cookie(app, db, world):
    alice = world.user("alice")
    other = _login(app, "alice", "Other/1.0", "203.0.113.8")
    other_id = other.get("/api/login-sessions").json["items"][0]["id"]
    assert other.get("/api/me").status_code == 200  # cached in this process
    r = alice.delete(f"/api/login-sessions/{other_id}")
    assert r.status_code == 204
    assert_problem(other.get("/api/me"), 401)
    assert alice.get("/api/me").status_code == 200
    assert [i["id"] for i in alice.get("/api/login-sessions").json["items"]] != [other_id]
    rows = audit_rows(db, action="session.revoke")
    assert [(a.target_id, a.actor_id) for a in rows] == [(other_id, alice.user_id)]
    # again: gone
    assert_problem(alice.delete(f"/api/login-sessions/{other_id}"), 404, "not_found")


@pytest.mark.both_databases
def test_another_users_session_is_404(world):
    alice, bob = world.user("alice"), world.user("bob")
    bobs = bob.get("/api/login-sessions").json["items"][0]["id"]
    assert_problem(alice.delete(f"/api/login-sessions/{bobs}"), 404, "not_found")
    assert_problem(alice.delete("/api/login-sessions/not-an-id"), 404, "not_found")
    assert bob.get("/api/me").status_code == 200


def test_ending_the_current_session_is_a_logout(world):
    alice = world.user("alice")
    mine = alice.get("/api/login-sessions").json["items"][0]
    assert mine["current"] is True
    r = alice.delete(f"/api/login-sessions/{mine['id']}")
    assert r.status_code == 204
    assert "wharf_session" not in alice.cookies
    assert_problem(alice.get("/api/me"), 401)


def test_last_used_is_written_at_most_once_a_minute(app, db, world):
    from sqlalchemy import event

    alice = world.user("alice")
    writes: list[str] = []

    def count(conn, cursor, statement, *args):
        if statement.lstrip().upper().startswith("UPDATE LOGIN_SESSIONS"):
            writes.append(statement)

    event.listen(db.engine, "before_cursor_execute", count)
    try:
        for _ in range(5):
            assert alice.get("/api/me").status_code == 200
    finally:
        event.remove(db.engine, "before_cursor_execute", count)
    assert writes == []  # used just now at login: not due again within the minute


def test_last_used_is_refreshed_when_due(settings, db, world):
    from datetime import timedelta

    from sqlalchemy import update

    from storage.models import LoginSession
    from wharf.infra.clock import utcnow

    alice = world.user("alice")
    old = utcnow() - timedelta(minutes=5)
    with db.write() as s:
        s.execute(update(LoginSession).values(last_used_at=old))
    other_process = ApiClient(create_app(settings, db))
    other_process.cookies = dict(alice.cookies)
    item = other_process.get("/api/login-sessions").json["items"][0]
    assert item["last_used_at"] > old.isoformat()[:19]
