"""Audit: every state change writes exactly one audit row in the same transaction."""
from __future__ import annotations

import itertools

import pytest

import wharf.infra.audit
from storage.models import AuditLog
from tests.support.foundation import (
    PASSWORD,
    add_member,
    audit_rows,
    bearer,
    is_problem,
    make_node,
    make_token,
    row_counts,
    team_space,
)

UA = "wharf-tests/1.0 (audit)"
_seq = itertools.count()


def rid(label: str) -> str:
    return f"req-{label}-{next(_seq)}"


def call(client, method, path, label, **kw):
    """Send with a fresh X-Request-Id and User-Agent; check the id is echoed."""
    request_id = rid(label)
    headers = {"X-Request-Id": request_id, "User-Agent": UA, **kw.pop("headers", {})}
    r = client.request(method, path, headers=headers, **kw)
    assert r.headers.get("x-request-id") == request_id
    return r, request_id


def one_row(db, request_id, client_ip="127.0.0.1") -> AuditLog:
    rows = audit_rows(db, request_id=request_id)
    assert len(rows) == 1, [(r.action, r.target_id) for r in rows]
    row = rows[0]
    assert row.client_ip == client_ip
    assert row.user_agent == UA
    assert row.at is not None
    return row


def test_every_state_change_is_audited(world, db):
    anon = world.anonymous()
    seen = []

    def expect(r, request_id, status, actor, action, target_type, target_id, space_id):
        assert r.status_code == status, r.text
        row = one_row(db, request_id)
        assert (row.actor_type, row.actor_id, row.action, row.target_type, row.target_id,
                row.space_id) == ("user", actor, action, target_type, target_id, space_id)
        seen.append(action)
        return row

    r, q = call(anon, "POST", "/api/users", "register",
                json_body={"username": "alice", "password": PASSWORD})
    alice_id, personal = r.json["id"], r.json["personal_space_id"]
    expect(r, q, 201, alice_id, "user.register", "user", alice_id, personal)

    r, q = call(anon, "POST", "/api/login-sessions", "login",
                json_body={"username": "alice", "password": PASSWORD})
    expect(r, q, 201, alice_id, "session.login", "login_session", r.json["session_id"], None)
    alice = anon  # now carries the session cookie
    session_id = r.json["session_id"]

    bob = world.user("bob")

    r, q = call(alice, "POST", "/api/api-tokens", "token-create",
                json_body={"name": "ci", "scopes": ["read", "write"]})
    token = r.json
    row = expect(r, q, 201, alice_id, "api_token.create", "api_token", token["id"], None)
    assert token["token"] not in str(row.details)

    r, q = call(alice, "POST", "/api/spaces", "space-create", json_body={"name": "Team"})
    space_id = r.json["id"]
    expect(r, q, 201, alice_id, "space.create", "space", space_id, space_id)

    r, q = call(alice, "PATCH", f"/api/spaces/{space_id}", "space-patch",
                json_body={"name": "Team 2", "public_read": True})
    row = expect(r, q, 200, alice_id, "space.update", "space", space_id, space_id)
    assert row.details == {"name": "Team 2", "public_read": True}

    r, q = call(alice, "PUT", f"/api/spaces/{space_id}/members/{bob.user_id}", "member-add",
                json_body={"role": "viewer"})
    expect(r, q, 201, alice_id, "space.member.put", "user", bob.user_id, space_id)
    r, q = call(alice, "PUT", f"/api/spaces/{space_id}/members/{bob.user_id}", "member-role",
                json_body={"role": "editor"})
    row = expect(r, q, 200, alice_id, "space.member.put", "user", bob.user_id, space_id)
    assert row.details == {"role": "editor"}

    r, q = call(alice, "POST", "/api/nodes", "node-create",
                json_body={"space_id": space_id, "name": "folder"})
    node_id = r.json["id"]
    expect(r, q, 201, alice_id, "node.create", "node", node_id, space_id)
    # bob (editor) acts through a token of his own: the audit names bob, not the owner
    bob_token = make_token(bob)
    r, q = call(world.anonymous(), "POST", "/api/nodes", "node-create-bob",
                json_body={"space_id": space_id, "name": "bob's"},
                headers=bearer(bob_token["token"]))
    expect(r, q, 201, bob.user_id, "node.create", "node", r.json["id"], space_id)

    r, q = call(alice, "PATCH", f"/api/nodes/{node_id}", "node-update",
                json_body={"name": "renamed"})
    row = expect(r, q, 200, alice_id, "node.update", "node", node_id, space_id)
    assert row.details["name"] == "renamed"

    r, q = call(alice, "DELETE", f"/api/spaces/{space_id}/members/{bob.user_id}", "member-del")
    expect(r, q, 204, alice_id, "space.member.delete", "user", bob.user_id, space_id)

    r, q = call(alice, "DELETE", f"/api/api-tokens/{token['id']}", "token-revoke")
    expect(r, q, 204, alice_id, "api_token.revoke", "api_token", token["id"], None)

    r, q = call(alice, "DELETE", "/api/login-sessions/current", "logout")
    expect(r, q, 204, alice_id, "session.logout", "login_session", session_id, None)

    assert seen == ["user.register", "session.login", "api_token.create", "space.create",
                    "space.update", "space.member.put", "space.member.put", "node.create",
                    "node.create", "node.update", "space.member.delete", "api_token.revoke",
                    "session.logout"]


def test_reads_and_refusals_write_no_audit_rows(world, db):
    alice, eve = world.user("alice"), world.user("eve")
    node = make_node(alice, alice.personal_space_id, "n")
    before = row_counts(db)["audit_logs"]
    alice.get("/api/me"), alice.get("/api/spaces"), alice.get(f"/api/nodes/{node['id']}")
    alice.get(f"/api/nodes/{node['id']}/children")
    eve.patch(f"/api/nodes/{node['id']}", json={"name": "x"})
    alice.post("/api/nodes", json={"space_id": alice.personal_space_id, "name": "a/b"})
    world.anonymous().post("/api/login-sessions", json={"username": "alice", "password": "nope"})
    assert row_counts(db)["audit_logs"] == before


def test_request_id_is_generated_when_missing_or_invalid(world, db):
    alice = world.user("alice")
    for sent in (None, "", "has spaces", "x" * 129, "semi;colon"):
        headers = {} if sent is None else {"X-Request-Id": sent}
        r = alice.post("/api/nodes", json={"space_id": alice.personal_space_id, "name": "n"},
                       headers=headers)
        assert r.status_code == 201
        echoed = r.headers.get("x-request-id")
        assert echoed and echoed != sent and len(echoed) <= 128
        rows = audit_rows(db, request_id=echoed)
        assert [row.target_id for row in rows] == [r.json["id"]]
    # error responses carry the request id too, in the header and the problem body
    r = alice.get(f"/api/nodes/{'0' * 32}", headers={"X-Request-Id": "lookup-1"})
    assert r.status_code == 404
    assert r.headers.get("x-request-id") == "lookup-1" and r.json["request_id"] == "lookup-1"


def test_forwarded_for_is_ignored_without_trusted_proxies(world, db):
    alice = world.user("alice")
    r, q = call(alice, "POST", "/api/nodes", "spoof",
                json_body={"space_id": alice.personal_space_id, "name": "n"},
                headers={"X-Forwarded-For": "6.6.6.6"})
    assert r.status_code == 201
    assert one_row(db, q).client_ip == "127.0.0.1"


# --- a failed audit write fails the change --------------------------------------------

@pytest.fixture
def broken_audit(monkeypatch):
    """Make the audit INSERT itself fail (NOT NULL violation on ``action``)."""
    real = wharf.infra.audit.AuditLog

    def failing(**kwargs):
        return real(**{**kwargs, "action": None})

    def arm():
        monkeypatch.setattr(wharf.infra.audit, "AuditLog", failing)
    return arm


def _refused(r):
    # The only 500 the suite accepts: the injected database failure, as problem+json.
    assert r.status_code >= 500, r.text
    assert is_problem(r, None), r.text
    assert r.json["code"] in ("internal_error", "service_unavailable")
    # and says nothing about our internals
    for leak in ("Traceback", "IntegrityError", "NOT NULL", "audit_logs", "sqlalchemy"):
        assert leak.lower() not in r.text.lower(), r.text


def test_failed_audit_write_fails_node_create(world, db, broken_audit):
    alice = world.user("alice")
    sid = alice.personal_space_id
    before = row_counts(db)
    broken_audit()
    r = alice.post("/api/nodes", json={"space_id": sid, "name": "ghost"}, check=False)
    _refused(r)
    assert row_counts(db) == before


def test_failed_audit_write_fails_other_changes(world, db, broken_audit):
    alice, bob = world.user("alice"), world.user("bob")
    space = team_space(alice)
    node = make_node(alice, space["id"], "stays")
    other = make_node(alice, space["id"], "other")
    add_member(alice, space["id"], bob.user_id, "viewer")
    token = make_token(alice)
    before = row_counts(db)
    broken_audit()
    attempts = [
        ("PATCH", f"/api/nodes/{node['id']}", {"name": "moved", "parent_id": other["id"]}),
        ("PATCH", f"/api/spaces/{space['id']}", {"name": "renamed", "public_read": True}),
        ("PUT", f"/api/spaces/{space['id']}/members/{bob.user_id}", {"role": "admin"}),
        ("DELETE", f"/api/spaces/{space['id']}/members/{bob.user_id}", None),
        ("POST", "/api/spaces", {"name": "new"}),
        ("POST", "/api/api-tokens", {"name": "t", "scopes": ["read"]}),
        ("DELETE", f"/api/api-tokens/{token['id']}", None),
    ]
    for method, path, body in attempts:
        _refused(alice.request(method, path, json_body=body, check=False))
    anon = world.anonymous()
    _refused(anon.post("/api/users", json={"username": "carol", "password": PASSWORD},
                       check=False))
    _refused(anon.post("/api/login-sessions", json={"username": "bob", "password": PASSWORD},
                       check=False))
    assert "wharf_session" not in anon.cookies
    _refused(alice.delete("/api/login-sessions/current", check=False))
    assert row_counts(db) == before

    # nothing changed, as seen through the API
    wharf_audit_ok = alice.get(f"/api/nodes/{node['id']}").json
    assert (wharf_audit_ok["name"], wharf_audit_ok["parent_id"]) == ("stays", None)
    got = alice.get(f"/api/spaces/{space['id']}").json
    assert (got["name"], got["public_read"]) == (space["name"], False)
    assert bob.get(f"/api/spaces/{space['id']}").json["role"] == "viewer"
    assert world.anonymous().get("/api/me", headers=bearer(token["token"])).status_code == 200
    assert alice.get("/api/me").status_code == 200


def test_client_ip_behind_a_trusted_proxy(settings, db):
    from api.app import create_app
    from tests.conftest import World
    world = World(create_app(settings.replace(trusted_proxy_count=1), db))
    alice = world.user("alice")
    sid = alice.personal_space_id
    cases = [
        # (headers the proxy forwards, the address the audit must record)
        ({}, "127.0.0.1"),                                          # direct, no proxy hop
        ({"X-Forwarded-For": "203.0.113.9"}, "203.0.113.9"),
        ({"X-Forwarded-For": "6.6.6.6, 203.0.113.9"}, "203.0.113.9"),  # client-sent entry
        ({"X-Forwarded-For": "203.0.113.9", "Forwarded": "for=6.6.6.6"}, "203.0.113.9"),
        ({"X-Forwarded-For": "6.6.6.6, 127.0.0.1"}, "127.0.0.1"),    # client on the proxy host
    ]
    for headers, expected in cases:
        r, q = call(alice, "POST", "/api/nodes", "proxy",
                    json_body={"space_id": sid, "name": "n"}, headers=headers)
        assert r.status_code == 201
        assert one_row(db, q, expected), headers
