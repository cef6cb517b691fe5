"""Identity: registration, login sessions, logout, the current principal, API tokens."""
from __future__ import annotations

import statistics
import time
from datetime import datetime, timedelta

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select

from api.app import create_app
from storage.models import ApiToken, LoginSession
from tests.support.client import ApiClient
from tests.support.foundation import (
    PASSWORD,
    assert_problem,
    bearer,
    make_token,
    password_hash,
    row_counts,
    set_password_hash,
    table_values,
)
from wharf.infra.clock import utcnow


def register(client, username, password=PASSWORD):
    return client.post("/api/users", json={"username": username, "password": password})


def login(client, username, password=PASSWORD):
    return client.post("/api/login-sessions", json={"username": username, "password": password})


# --- registration ---------------------------------------------------------------------

def test_register_creates_user_and_personal_space(client):
    r = register(client, "Alice")
    assert r.status_code == 201, r.text
    user = r.json
    assert user["username"] == "Alice"
    assert r.headers.get("location") == "/api/me"
    assert login(client, "Alice").status_code == 201
    me = client.get("/api/me").json
    assert me["id"] == user["id"]
    assert me["personal_space_id"] == user["personal_space_id"]
    space = client.get(f"/api/spaces/{user['personal_space_id']}")
    assert space.status_code == 200
    assert space.json["type"] == "personal"
    assert space.json["owner_id"] == user["id"]
    assert space.json["role"] == "owner"
    assert space.json["public_read"] is False
    listed = client.get("/api/spaces").json["items"]
    assert [s["id"] for s in listed] == [user["personal_space_id"]]


USERNAMES_OK = ["abc", "a" * 64, "user.name-1_x", "0day"]
USERNAMES_BAD = ["ab", "a" * 65, "", "-abc", ".abc", "has space", "alice\n", "ali/ce", "élodie",
                 "bob\x00", "tab\tbed"]


def test_register_username_rules(client, db):
    for username in USERNAMES_OK:
        r = register(client, username)
        assert r.status_code == 201, (username, r.text)
        assert r.json["username"] == username
    before = row_counts(db)
    for username in USERNAMES_BAD:
        assert_problem(register(client, username), 400)
    assert row_counts(db) == before


def test_register_username_is_unique_case_insensitively(client, db):
    assert register(client, "Alice").status_code == 201
    before = row_counts(db)
    for name in ("alice", "ALICE", "Alice"):
        assert_problem(register(client, name, "another long password"), 409, "username_taken")
    assert row_counts(db) == before
    # the original user keeps their password; login is case-insensitive too
    assert login(client, "aLiCe").status_code == 201
    assert login(client, "alice", "another long password").status_code == 401


def test_register_password_length(client, db):
    before = row_counts(db)
    for i, password in enumerate(["x" * 11, "", " " * 11, "p" * 1025]):
        assert_problem(register(client, f"bob{i}", password), 400)
    assert row_counts(db) == before
    for i, password in enumerate(["x" * 12, "p" * 1024, "пароль-пароль-🔑"]):
        assert register(client, f"carl{i}", password).status_code == 201
        assert login(client, f"carl{i}", password).status_code == 201
        assert_problem(login(client, f"carl{i}", password[:-1]), 401)


# --- login sessions -------------------------------------------------------------------

def test_login_sets_httponly_lax_cookie_and_stores_only_a_hash(client, db):
    uid = register(client, "carol").json["id"]
    r = login(client, "carol")
    assert r.status_code == 201, r.text
    assert r.json["user"]["id"] == uid
    cookie = r.cookies["wharf_session"]
    assert cookie.http_only
    assert (cookie.same_site or "").lower() == "lax"
    assert cookie.path == "/"
    assert cookie.max_age and cookie.max_age > 0
    raw = cookie.value
    assert len(raw) >= 40
    sid, _, secret = raw.partition(".")
    assert sid == r.json["session_id"]
    assert len(secret) >= 32
    with db.read() as s:
        rows = list(s.scalars(select(LoginSession)))
    assert [row.id for row in rows] == [sid]
    stored = table_values(db, "login_sessions")
    assert not any(secret in v for v in stored), "the raw session secret is in the database"
    # the cookie alone authenticates
    anon = client.as_anonymous()
    me = anon.get("/api/me", headers={"Cookie": f"wharf_session={raw}"})
    assert me.status_code == 200
    assert me.json["auth"] == "session"
    # a tampered secret does not
    bad = anon.get("/api/me", headers={"Cookie": f"wharf_session={sid}.{secret[:-2]}xx"})
    assert_problem(bad, 401)


def test_secure_cookie_setting(settings, db):
    app = create_app(settings.replace(secure_cookies=True), db)
    c = ApiClient(app)
    assert register(c, "dave").status_code == 201
    r = login(c, "dave")
    assert r.cookies["wharf_session"].secure


def _problem_without_request_id(r) -> tuple:
    body = dict(r.json)
    body.pop("request_id", None)
    return r.status_code, r.headers.get("content-type"), body


def test_unknown_user_and_wrong_password_fail_identically(client, db):
    register(client, "erin")
    before = row_counts(db)
    wrong = login(client, "erin", "not the password at all")
    unknown = login(client, "nobody-here", "not the password at all")
    assert_problem(wrong, 401)
    assert _problem_without_request_id(wrong) == _problem_without_request_id(unknown)
    assert "set-cookie" not in wrong.headers and "set-cookie" not in unknown.headers
    assert row_counts(db) == before
    assert client.get("/api/me").status_code == 401


def test_unknown_user_and_wrong_password_take_similar_time(settings, db):
    # A real (if small) argon2 cost, so skipping the hash for unknown users would show.
    # (28 failed logins: the login throttle is off for this timing test.)
    app = create_app(settings.replace(argon2_time_cost=2, argon2_memory_cost=16384,
                                      login_max_failures=0,
                                      login_max_failures_per_address=0), db)
    c = ApiClient(app)
    assert register(c, "frank").status_code == 201

    def timed(username):
        out = []
        for _ in range(7):
            t0 = time.perf_counter()
            r = login(c, username, "definitely the wrong password")
            out.append(time.perf_counter() - t0)
            assert r.status_code == 401
        return statistics.median(out)

    timed("frank"), timed("ghost-user")  # warm up
    wrong, unknown = timed("frank"), timed("ghost-user")
    ratio = max(wrong, unknown) / min(wrong, unknown)
    assert ratio < 5, f"wrong password {wrong * 1000:.2f} ms vs unknown user {unknown * 1000:.2f} ms"


def test_logout_invalidates_the_cookie(client, db):
    register(client, "gina")
    r = login(client, "gina")
    raw = r.cookies["wharf_session"].value
    assert client.get("/api/me").status_code == 200
    out = client.delete("/api/login-sessions/current")
    assert out.status_code == 204
    assert "wharf_session" not in client.cookies
    with db.read() as s:
        assert s.get(LoginSession, r.json["session_id"]) is None
    replay = client.as_anonymous().get("/api/me", headers={"Cookie": f"wharf_session={raw}"})
    assert_problem(replay, 401)
    # logging out again without a session is refused, not a 500
    assert_problem(client.delete("/api/login-sessions/current"), 401)


def test_logout_ends_only_that_session(client):
    register(client, "hank")
    login(client, "hank")
    other = client.as_anonymous()
    login(other, "hank")
    assert client.delete("/api/login-sessions/current").status_code == 204
    assert other.get("/api/me").status_code == 200


def test_me_requires_authentication(client):
    r = client.get("/api/me")
    assert_problem(r, 401, "unauthenticated")
    r = client.get("/api/me", headers={"Cookie": "wharf_session=garbage"})
    assert_problem(r, 401, "unauthenticated")


def test_expired_session_is_refused(world, db):
    alice = world.user("alice")
    assert alice.get("/api/me").status_code == 200
    with db.write() as s:
        for row in s.scalars(select(LoginSession)):
            row.expires_at = utcnow() - timedelta(seconds=1)
    assert_problem(alice.get("/api/me"), 401)


def test_cookie_writes_must_come_from_our_origin(world, db):
    alice = world.user("alice")
    body = {"space_id": alice.personal_space_id, "name": "n"}
    before = row_counts(db)
    for origin in ("https://evil.example", "null", "http://[", "http://falconframework.org.evil.example"):
        r = alice.post("/api/nodes", json=body, headers={"Origin": origin})
        assert_problem(r, 403, "cross_origin")
    assert row_counts(db) == before
    # reads are not affected; our own origin may write
    assert alice.get("/api/me", headers={"Origin": "https://evil.example"}).status_code == 200
    r = alice.post("/api/nodes", json=body, headers={"Origin": "http://falconframework.org"})
    assert r.status_code == 201
    # a bearer token is not an ambient credential: no origin check
    tok = make_token(alice)
    r = world.anonymous().post("/api/nodes", json=body, headers={
        **bearer(tok["token"]), "Origin": "https://ci.example"})
    assert r.status_code == 201


@pytest.mark.both_databases  # concurrency: the database decides
def test_concurrent_registrations_of_one_name(client, db):
    import threading
    results, barrier = [], threading.Barrier(4)

    def attempt(i):
        c = client.as_anonymous()
        barrier.wait()
        results.append(register(c, ["race", "RACE", "Race", "rAce"][i], f"password number {i}"))

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert sorted(r.status_code for r in results) == [201, 409, 409, 409], \
        [r.text for r in results]
    for r in results:
        if r.status_code == 409:
            assert_problem(r, 409, "username_taken")
    assert row_counts(db)["users"] == 1 and row_counts(db)["spaces"] == 1


# --- password rehash ------------------------------------------------------------------

def test_login_rehashes_password_stored_with_weaker_parameters(settings, db):
    strong = settings.replace(argon2_time_cost=2, argon2_memory_cost=64)
    c = ApiClient(create_app(strong, db))
    uid = register(c, "ivan").json["id"]
    assert PasswordHasher(time_cost=2, memory_cost=64, parallelism=1).check_needs_rehash(
        password_hash(db, uid)) is False
    weak = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash(PASSWORD)
    set_password_hash(db, uid, weak)

    assert_problem(login(c, "ivan", "wrong password here"), 401)
    assert password_hash(db, uid) == weak, "a failed login must not rehash"

    assert login(c, "ivan").status_code == 201
    new = password_hash(db, uid)
    assert new != weak
    assert "t=2" in new and "m=64" in new
    assert PASSWORD not in new
    # still the same password, and no further rehash once current
    assert login(c, "ivan").status_code == 201
    assert password_hash(db, uid) == new


# --- API tokens -----------------------------------------------------------------------

def test_token_is_shown_once_and_never_stored(world, db):
    alice = world.user("alice")
    created = make_token(alice, name="deploy bot", expires_in_days=30)
    raw = created["token"]
    assert created["name"] == "deploy bot"
    assert created["scopes"] == ["read", "write"]
    assert created["last_used_at"] is None
    # the listing's prefix identifies the token; expiry is 30 days out
    assert raw.startswith(f"wharf_{created['prefix']}_")
    expires = datetime.fromisoformat(created["expires_at"].replace("Z", "+00:00"))
    assert abs(expires - (utcnow() + timedelta(days=30))) < timedelta(minutes=1)
    assert make_token(alice, name="forever")["expires_at"] is None
    listed = alice.get("/api/api-tokens")
    assert listed.status_code == 200
    assert next(t["id"] for t in listed.json["items"]) == created["id"]
    assert all("token" not in t for t in listed.json["items"])
    secret = raw[len(f"wharf_{created['prefix']}_"):]
    assert len(secret) >= 32
    assert secret not in listed.text
    assert not any(secret in v for v in table_values(db, "api_tokens"))
    assert not any(secret[-20:] in v for v in table_values(db, "api_tokens"))


def test_bearer_token_authenticates(world):
    alice = world.user("alice")
    tok = make_token(alice)
    anon = world.anonymous()
    me = anon.get("/api/me", headers=bearer(tok["token"]))
    assert me.status_code == 200
    assert me.json["id"] == alice.user_id
    assert me.json["auth"] == "token"
    assert me.json["scopes"] == ["read", "write"]
    r = anon.post("/api/spaces", json={"name": "From CI"}, headers=bearer(tok["token"]))
    assert r.status_code == 201
    assert r.json["owner_id"] == alice.user_id


def test_read_only_token_cannot_write(world, db):
    alice = world.user("alice")
    tok = make_token(alice, scopes=["read"])
    anon = world.anonymous()
    h = bearer(tok["token"])
    assert anon.get("/api/spaces", headers=h).status_code == 200
    before = row_counts(db)
    assert_problem(anon.post("/api/spaces", json={"name": "x"}, headers=h), 403,
                   "insufficient_scope")
    assert_problem(anon.post("/api/nodes", json={"space_id": alice.personal_space_id,
                                                 "name": "n"}, headers=h),
                   403, "insufficient_scope")
    assert_problem(anon.post("/api/api-tokens", json={"name": "x", "scopes": ["read", "write"]},
                             headers=h), 403, "insufficient_scope")
    assert_problem(anon.delete(f"/api/api-tokens/{tok['id']}", headers=h), 403,
                   "insufficient_scope")
    assert row_counts(db) == before


def test_write_token_cannot_mint_more_than_it_has(world):
    alice = world.user("alice")
    write_only = make_token(alice, scopes=["write"])
    anon = world.anonymous()
    r = anon.post("/api/api-tokens", json={"name": "escalate", "scopes": ["read", "write"]},
                  headers=bearer(write_only["token"]))
    assert_problem(r, 403, "token_cannot_mint")


def test_revoked_token_is_refused(world):
    alice = world.user("alice")
    tok = make_token(alice)
    anon = world.anonymous()
    assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 200
    assert alice.delete(f"/api/api-tokens/{tok['id']}").status_code == 204
    assert_problem(anon.get("/api/me", headers=bearer(tok["token"])), 401, "invalid_token")
    assert alice.get("/api/api-tokens").json["items"] == []
    assert_problem(alice.delete(f"/api/api-tokens/{tok['id']}"), 404)


def test_cannot_revoke_another_users_token(world):
    alice, bob = world.user("alice"), world.user("bob")
    tok = make_token(alice)
    assert_problem(bob.delete(f"/api/api-tokens/{tok['id']}"), 404)
    assert world.anonymous().get("/api/me", headers=bearer(tok["token"])).status_code == 200
    assert bob.get("/api/api-tokens").json["items"] == []


def test_expired_token_is_refused(world, db):
    alice = world.user("alice")
    tok = make_token(alice, expires_in_days=1)
    anon = world.anonymous()
    assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 200
    with db.write() as s:
        s.get(ApiToken, tok["id"]).expires_at = utcnow() - timedelta(seconds=5)
    assert_problem(anon.get("/api/me", headers=bearer(tok["token"])), 401, "invalid_token")


def test_last_used_at_is_recorded(world):
    alice = world.user("alice")
    tok = make_token(alice)
    assert alice.get("/api/api-tokens").json["items"][0]["last_used_at"] is None
    t0 = utcnow()
    assert world.anonymous().get("/api/me", headers=bearer(tok["token"])).status_code == 200
    used = alice.get("/api/api-tokens").json["items"][0]["last_used_at"]
    assert used is not None
    assert datetime.fromisoformat(used.replace("Z", "+00:00")) >= t0 - timedelta(seconds=1)


MALFORMED_AUTH = [
    "Basic YWxpY2U6cGFzc3dvcmQ=", "Bearer", "Bearer    ", "Token abc", "bearer",
    "Bearer wharf_", "Bearer wharf_nonsense", "Bearer not-a-wharf-token",
    "Bearer wharf_0123456789ab_" + "x" * 43, "Bearer wharf_0123456789AB_" + "x" * 43,
    "Bearer wharf_0123456789ab_", "Bearer " + "a" * 5000,
]


def test_malformed_authorization_header(world):
    alice = world.user("alice")
    # even with a valid session cookie, a bad Authorization header is refused
    for header in MALFORMED_AUTH:
        r = alice.get("/api/me", headers={"Authorization": header})
        assert_problem(r, 401, "invalid_token")
        r = alice.post("/api/spaces", json={"name": "x"}, headers={"Authorization": header})
        assert_problem(r, 401, "invalid_token")
    assert alice.get("/api/spaces").json["items"][0]["type"] == "personal"
    assert len(alice.get("/api/spaces").json["items"]) == 1


def test_token_with_wrong_secret_is_refused(world):
    alice = world.user("alice")
    raw = make_token(alice)["token"]
    forged = raw[:-4] + ("AAAA" if not raw.endswith("AAAA") else "BBBB")
    assert_problem(world.anonymous().get("/api/me", headers=bearer(forged)), 401,
                   "invalid_token")


def test_token_validation(world, db):
    alice = world.user("alice")
    before = row_counts(db)
    for body in ({"name": "x", "scopes": []}, {"name": "x", "scopes": ["admin"]},
                 {"name": "", "scopes": ["read"]}, {"name": "   ", "scopes": ["read"]},
                 {"name": "x", "scopes": ["read"], "expires_in_days": 0},
                 {"name": "x", "scopes": ["read"], "expires_in_days": 3651},
                 {"name": "x", "scopes": ["read"], "expires_in_days": True},
                 {"name": "x", "scopes": ["read", "read"]},
                 {"name": "bad\x00name", "scopes": ["read"]},
                 {"name": "bad\nname", "scopes": ["read"]}):
        assert_problem(alice.post("/api/api-tokens", json=body), 400)
    assert row_counts(db) == before
