"""Issue 40 item 1: changing a password, recovery codes, password resets, an operator's reset.

A password change ends the caller's other login sessions at once in this API process and
within ``WHARF_AUTH_CACHE_SECONDS`` in another (its own auth cache), keeps the current one,
keeps API tokens unless asked; a recovery code works once, also when two resets race; guessing
codes or current passwords is throttled. On SQLite and PostgreSQL."""
from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import func, select

from api.app import create_app
from storage.models import AuditLog, LoginSession, RecoveryCode
from tests.conftest import PASSWORD, World
from tests.support.client import ApiClient
from tests.support.foundation import (
    assert_problem,
    audit_rows,
    bearer,
    make_token,
    password_hash,
    table_values,
)
from wharf.identity import passwords
from wharf.identity.cache import AuthCache
from wharf.identity.service import PASSWORD_MAX, PASSWORD_MIN, Identity
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, NotFound, RateLimited, Unauthenticated, ValidationFailed

pytestmark = pytest.mark.both_databases

NEW = "a brand new password"


def login(app, username: str, password: str = PASSWORD, ip: str | None = None) -> ApiClient:
    c = ApiClient(app, headers={"X-Forwarded-For": ip} if ip else None)
    r = c.post("/api/login-sessions", json={"username": username, "password": password})
    assert r.status_code == 201, r.text
    return c


def login_status(app, username: str, password: str) -> int:
    return ApiClient(app).post("/api/login-sessions",
                               json={"username": username, "password": password}).status_code


def sessions_of(db, user_id: str) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(LoginSession)
                        .where(LoginSession.user_id == user_id))


def change(client: ApiClient, current: str = PASSWORD, new: str = NEW, headers=None, **extra):
    return client.put("/api/me/password", headers=headers,
                      json={"current_password": current, "new_password": new, **extra})


def codes_for(client: ApiClient, **body) -> list[str]:
    r = client.post("/api/me/recovery-codes", json=body)
    assert r.status_code == 201, r.text
    return r.json["codes"]


def reset(client: ApiClient, username: str, code: str, new: str = NEW, **extra):
    return client.post("/api/password-resets",
                       json={"username": username, "code": code, "new_password": new, **extra})


# -- changing a password -------------------------------------------------------------------
def test_change_ends_other_sessions_keeps_this_one_and_tokens(app, db, world):
    alice = world.user("alice")
    laptop = login(app, "alice")
    tok = make_token(alice)
    anon = world.anonymous()
    bob = world.user("bob")
    assert laptop.get("/api/me").status_code == 200  # cached in this process
    assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 200

    r = change(alice)
    assert r.status_code == 204, r.text
    assert_problem(laptop.get("/api/me"), 401)  # at once
    assert alice.get("/api/me").status_code == 200  # the current session stays
    assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 200  # tokens too
    assert bob.get("/api/me").status_code == 200  # nobody else's
    assert sessions_of(db, alice.user_id) == 1
    assert login_status(app, "alice", PASSWORD) == 401
    assert login_status(app, "alice", NEW) == 201
    [row] = audit_rows(db, action="user.password_change")
    assert (row.actor_id, row.target_id) == (alice.user_id, alice.user_id)
    assert row.details == {"sessions_ended": 1, "tokens_revoked": 0}


def test_change_revokes_tokens_when_asked(app, db, world):
    alice = world.user("alice")
    tok = make_token(alice)
    anon = world.anonymous()
    assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 200
    assert change(alice, revoke_tokens=True).status_code == 204
    assert_problem(anon.get("/api/me", headers=bearer(tok["token"])), 401)
    assert alice.get("/api/me").status_code == 200
    assert alice.get("/api/api-tokens").json["items"] == []


def test_change_by_token_ends_every_session(app, db, world):
    alice = world.user("alice")
    tok = make_token(alice)
    r = change(world.anonymous(), headers=bearer(tok["token"]))
    assert r.status_code == 204, r.text
    assert_problem(alice.get("/api/me"), 401)
    assert sessions_of(db, alice.user_id) == 0


def test_wrong_current_password_is_refused_and_throttled(settings, db):
    app = create_app(settings.replace(login_max_failures=3), db)
    alice = World(app).user("alice")
    before = password_hash(db, alice.user_id)
    for _ in range(3):
        assert_problem(change(alice, current="not the password!"), 401, "invalid_credentials")
    body = assert_problem(change(alice), 429, "rate_limited")  # even the right one now
    assert body["details"]["retry_after"] > 0
    assert password_hash(db, alice.user_id) == before
    assert alice.get("/api/me").status_code == 200  # a wrong guess does not log out
    assert audit_rows(db, action="user.password_change") == []


def test_a_success_gives_its_throttle_slot_back(settings, db):
    app = create_app(settings.replace(login_max_failures=2), db)
    alice = World(app).user("alice")
    assert_problem(change(alice, current="not the password!"), 401, "invalid_credentials")
    assert change(alice).status_code == 204
    assert change(alice, current=NEW, new=PASSWORD).status_code == 204
    assert change(alice, current=PASSWORD, new=NEW).status_code == 204


@pytest.mark.parametrize("new", ["short", "x" * (PASSWORD_MIN - 1), "x" * (PASSWORD_MAX + 1)])
def test_new_password_policy(app, db, world, new):
    alice = world.user("alice")
    before = password_hash(db, alice.user_id)
    assert_problem(change(alice, new=new), 400, "validation_failed")
    codes = codes_for(alice)
    assert_problem(reset(world.anonymous(), "alice", codes[0], new=new), 400,
                   "validation_failed")
    assert password_hash(db, alice.user_id) == before
    assert reset(world.anonymous(), "alice", codes[0]).status_code == 204  # not spent
    with pytest.raises(ValidationFailed):
        passwords.check_new_password("x" * PASSWORD_MIN + "\ud800", "new_password")


def test_another_process_refuses_the_ended_sessions_within_the_cache_bound(
        tmp_path, database_url, unitstore_url, db):
    """B stands for another API process: its own auth cache, which nothing here touches."""
    from tests.conftest import make_settings
    bound = 2.0
    settings = make_settings(tmp_path, database_url, unitstore_url, auth_cache_seconds=bound)
    app_a = create_app(settings, db)
    identity_b = Identity(settings)
    other_process = AuthCache(bound)
    from wharf.identity import service as identity_mod
    identity_mod._CACHES.discard(other_process)
    identity_b.auth_cache = other_process
    app_b = create_app(settings, db, identity=identity_b)
    alice = World(app_a).user("alice")
    laptop = login(app_a, "alice")
    on_b = ApiClient(app_b)
    on_b.cookies = dict(laptop.cookies)
    current_on_b = ApiClient(app_b)
    current_on_b.cookies = dict(alice.cookies)
    assert on_b.get("/api/me").status_code == 200  # B caches it now
    assert current_on_b.get("/api/me").status_code == 200
    read_at = time.monotonic()
    assert change(alice).status_code == 204
    assert_problem(laptop.get("/api/me"), 401)  # A: at once
    while time.monotonic() - read_at < bound:
        time.sleep(0.05)
    assert_problem(on_b.get("/api/me"), 401)  # B: within the bound
    assert current_on_b.get("/api/me").status_code == 200


# -- recovery codes and resets ---------------------------------------------------------------
def test_codes_are_shown_once_stored_as_digests_and_reset_once(app, db, world):
    alice = world.user("alice")
    laptop = login(app, "alice")
    tok = make_token(alice)
    codes = codes_for(alice)
    assert len(codes) == 10 and len(set(codes)) == 10
    stored = table_values(db, "recovery_codes")
    assert not any(c in v or c.replace("-", "") in v for c in codes for v in stored)
    [made] = audit_rows(db, action="user.recovery_codes")
    assert made.actor_id == alice.user_id and made.details["count"] == 10

    anon = world.anonymous()
    r = reset(anon, "ALICE", codes[3].upper().replace("-", " "))  # as typed
    assert r.status_code == 204, r.text
    assert_problem(alice.get("/api/me"), 401)  # every session ends
    assert_problem(laptop.get("/api/me"), 401)
    assert sessions_of(db, alice.user_id) == 0
    assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 200  # kept
    assert login_status(app, "alice", PASSWORD) == 401
    assert login_status(app, "alice", NEW) == 201
    # once only
    assert_problem(reset(anon, "alice", codes[3], new="yet another password"), 401,
                   "invalid_recovery_code")
    assert login_status(app, "alice", NEW) == 201
    [row] = audit_rows(db, action="user.password_reset")
    assert row.actor_id == alice.user_id and row.details["by"] == "recovery_code"
    assert row.details["sessions_ended"] == 2
    # another code works, and may revoke the tokens
    assert reset(anon, "alice", codes[4], new="third password!!", revoke_tokens=True) \
        .status_code == 204
    assert_problem(anon.get("/api/me", headers=bearer(tok["token"])), 401)


def test_wrong_name_or_code_answer_alike(app, db, world):
    alice = world.user("alice")
    world.user("bob")
    codes = codes_for(alice)
    anon = world.anonymous()
    answers = [reset(anon, "alice", "aaaa-bbbb-cccc-dddd"),  # wrong code
               reset(anon, "bob", codes[0]),                  # another user's code
               reset(anon, "nobody", codes[0]),               # no such user
               reset(anon, "alice", "not a code"),            # not even a code's shape
               reset(anon, "-bad name-", codes[0])]
    bodies = [assert_problem(r, 401, "invalid_recovery_code") for r in answers]
    assert len({(b["title"], b["detail"]) for b in bodies}) == 1
    assert reset(anon, "alice", codes[0]).status_code == 204


def test_a_new_set_replaces_the_old(app, db, world):
    alice = world.user("alice")
    old = codes_for(alice)
    new = codes_for(alice)
    assert not set(old) & set(new)
    assert_problem(reset(world.anonymous(), "alice", old[0]), 401, "invalid_recovery_code")
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(RecoveryCode)) == 10
    assert reset(world.anonymous(), "alice", new[0]).status_code == 204


def test_codes_need_a_fresh_or_reauthenticated_session(settings, db):
    app = create_app(settings.replace(account_reauth_seconds=0), db)
    world = World(app)
    alice = world.user("alice")
    assert_problem(alice.post("/api/me/recovery-codes", json={}), 403,
                   "reauthentication_required")
    assert_problem(alice.post("/api/me/recovery-codes",
                              json={"current_password": "not the password!"}), 403,
                   "reauthentication_required")
    assert len(codes_for(alice, current_password=PASSWORD)) == 10
    tok = make_token(alice)
    r = world.anonymous().post("/api/me/recovery-codes", json={"current_password": PASSWORD},
                               headers=bearer(tok["token"]))
    assert_problem(r, 403, "token_cannot_mint")
    assert_problem(world.anonymous().post("/api/me/recovery-codes", json={}), 401)


def test_guessing_codes_is_throttled_per_name_and_per_client(settings, db):
    app = create_app(settings.replace(login_max_failures=3, login_max_failures_per_address=5,
                                      trusted_proxy_count=1), db)
    world = World(app)
    alice = world.user("alice")
    codes = codes_for(alice)
    guesser = ApiClient(app, headers={"X-Forwarded-For": "203.0.113.5"})
    for _ in range(3):
        assert_problem(reset(guesser, "alice", "aaaa-bbbb-cccc-dddd"), 401,
                       "invalid_recovery_code")
    r = reset(guesser, "alice", codes[0])  # even the right code, from this client
    body = assert_problem(r, 429, "rate_limited")
    assert int(r.headers["Retry-After"]) == body["details"]["retry_after"] > 0
    # the user from elsewhere is not locked out by the guesser
    mine = ApiClient(app, headers={"X-Forwarded-For": "198.51.100.1"})
    assert reset(mine, "alice", codes[0]).status_code == 204
    # one client spraying names is stopped by the per-client limit
    sprayer = ApiClient(app, headers={"X-Forwarded-For": "192.0.2.44"})
    for i in range(5):
        assert_problem(reset(sprayer, f"user{i}", "aaaa-bbbb-cccc-dddd"), 401,
                       "invalid_recovery_code")
    assert_problem(reset(sprayer, "alice", codes[1]), 429, "rate_limited")


def test_two_concurrent_resets_with_one_code_succeed_once(settings, db, world):
    alice = world.user("alice")
    code = codes_for(alice)[0]
    identity = Identity(settings)
    barrier = threading.Barrier(2)
    both_verified = threading.Barrier(2, timeout=20)
    hasher = identity.hasher

    class BothHashBeforeEitherWrites:
        """Both resets have found the code unused (they hash only after that read) before
        either writes: the conditional UPDATE alone must pick one."""

        def hash(self, password: str) -> str:
            hashed = hasher.hash(password)
            both_verified.wait()
            return hashed

    identity.hasher = BothHashBeforeEitherWrites()  # type: ignore[assignment]
    outcomes: list[str] = []

    def attempt(new: str) -> None:
        barrier.wait()
        try:
            passwords.reset_password(identity, db, RequestContext(client_ip="192.0.2.1"),
                                     "alice", code, new)
            outcomes.append(new)
        except Unauthenticated as exc:
            assert exc.code == "invalid_recovery_code"
            outcomes.append("refused")

    threads = [threading.Thread(target=attempt, args=(f"concurrent password {i}",))
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(outcomes)[-1] == "refused" and len(outcomes) == 2, outcomes
    winner = sorted(outcomes)[0]
    assert winner.startswith("concurrent password")
    assert login_status(world.app, "alice", winner) == 201
    assert len(audit_rows(db, action="user.password_reset")) == 1


def test_a_disabled_or_deleting_user_cannot_reset(app, db, world):
    from sqlalchemy import update

    from storage.models import User
    from wharf.accounts.disabling import set_disabled
    alice = world.user("alice")
    codes = codes_for(alice)
    set_disabled(db, "alice", True)
    assert_problem(reset(world.anonymous(), "alice", codes[0]), 403, "account_disabled")
    set_disabled(db, "alice", False)
    assert reset(world.anonymous(), "alice", codes[0]).status_code == 204  # not spent
    with db.write() as s:
        s.execute(update(User).where(User.id == alice.user_id).values(status="deleting"))
    assert_problem(reset(world.anonymous(), "alice", codes[1]), 401, "invalid_recovery_code")


# -- wharf user reset-password -----------------------------------------------------------
def test_operator_reset_sets_the_password_and_ends_every_session(settings, app, db, world):
    alice = world.user("alice")
    laptop = login(app, "alice")
    tok = make_token(alice)
    identity = Identity(settings)
    assert passwords.operator_reset(identity, db, "ALICE", NEW) == 2
    assert_problem(alice.get("/api/me"), 401)
    assert_problem(laptop.get("/api/me"), 401)
    assert world.anonymous().get("/api/me", headers=bearer(tok["token"])).status_code == 200
    assert login_status(app, "alice", PASSWORD) == 401
    assert login_status(app, "alice", NEW) == 201
    with db.read() as s:
        row = s.scalar(select(AuditLog).where(AuditLog.action == "user.password_reset"))
    assert (row.actor_type, row.actor_id) == ("system", "user-reset-password")
    assert row.target_id == alice.user_id
    assert row.details == {"by": "operator", "sessions_ended": 2}
    with pytest.raises(NotFound):
        passwords.operator_reset(identity, db, "nobody", NEW)
    with pytest.raises(ValidationFailed):
        passwords.operator_reset(identity, db, "alice", "short")
    from sqlalchemy import update

    from storage.models import User
    with db.write() as s:
        s.execute(update(User).where(User.id == alice.user_id).values(status="deleting"))
    with pytest.raises(Conflict):
        passwords.operator_reset(identity, db, "alice", NEW)


def test_the_throttle_refuses_before_any_hashing(settings, db):
    """A refused reset costs a read: RateLimited without touching the code."""
    identity = Identity(settings.replace(login_max_failures=1))
    ctx = RequestContext(client_ip="192.0.2.9")
    with pytest.raises(Unauthenticated):
        passwords.reset_password(identity, db, ctx, "alice", "aaaa-bbbb-cccc-dddd", NEW)
    with pytest.raises(RateLimited):
        passwords.reset_password(identity, db, ctx, "alice", "aaaa-bbbb-cccc-dddd", NEW)


def test_hostile_bodies_are_4xx_problems(app, db, world):
    alice = world.user("alice")
    anon = world.anonymous()
    for body in [{"current_password": PASSWORD, "new_password": 123456789012345},
                 {"current_password": None, "new_password": NEW},
                 {"current_password": PASSWORD},
                 {"current_password": PASSWORD, "new_password": NEW, "revoke_tokens": "yes"},
                 {"current_password": PASSWORD, "new_password": NEW, "extra": 1}]:
        assert_problem(alice.put("/api/me/password", json=body), 400, "validation_failed")
    for body in [{"username": "alice", "code": "x" * 65, "new_password": NEW},
                 {"username": ["alice"], "code": "aaaa-bbbb-cccc-dddd", "new_password": NEW},
                 {"username": "alice", "new_password": NEW}]:
        assert_problem(anon.post("/api/password-resets", json=body), 400, "validation_failed")
    assert_problem(alice.post("/api/me/recovery-codes", json={"current_password": 5}), 400,
                   "validation_failed")
    assert_problem(anon.put("/api/me/password", json={"current_password": PASSWORD,
                                                      "new_password": NEW}), 401)
    assert login_status(app, "alice", PASSWORD) == 201  # nothing changed


def test_deleting_the_account_deletes_its_codes(app, db, world):
    import uuid
    alice = world.user("alice")
    codes = codes_for(alice)
    r = alice.delete("/api/me", headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(RecoveryCode)) == 0
    assert_problem(reset(world.anonymous(), "alice", codes[0]), 401, "invalid_recovery_code")
