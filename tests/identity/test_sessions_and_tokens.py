"""Issue 10 (identity): argon2 outside write transactions, login/registration rate limits,
tokens that cannot mint tokens, the full-origin CSRF check, and who manages team admins."""
from __future__ import annotations

import itertools
import threading
import time
from datetime import timedelta

import pytest
from argon2 import PasswordHasher
from sqlalchemy import event, update

from api.app import create_app
from storage.db import Database
from storage.models import AuthThrottle
from tests.support.client import ApiClient
from tests.support.foundation import (
    PASSWORD,
    add_member,
    assert_problem,
    audit_rows,
    bearer,
    make_token,
    row_counts,
    team_space,
)
from wharf.infra.clock import utcnow
from wharf.infra.settings import ConfigError, Settings


def register(client, username, password=PASSWORD, headers=None):
    return client.post("/api/users", json={"username": username, "password": password},
                       headers=headers)


def login(client, username, password=PASSWORD, headers=None):
    return client.post("/api/login-sessions", json={"username": username, "password": password},
                       headers=headers)


def from_addr(ip: str) -> dict[str, str]:
    """Headers of a request that came through one trusted proxy from ``ip``."""
    return {"X-Forwarded-For": ip}


def _app(settings, db, **changes):
    return create_app(settings.replace(**changes), db)


def _retry_after(r) -> int:
    value = int(r.headers["retry-after"])
    assert r.json["details"]["retry_after"] == value
    return value


def _end_windows(db) -> None:
    """Move every throttle window into the past (as if the window had elapsed)."""
    with db.write() as s:
        s.execute(update(AuthThrottle).values(window_start=utcnow() - timedelta(days=1)))


# --- item 5: argon2 never runs inside a write transaction -----------------------------------------

def _slow_time_cost(target_seconds: float) -> int:
    """An argon2 time cost (at 8 MiB) whose verify takes at least ``target_seconds`` here."""
    probe = PasswordHasher(time_cost=4, memory_cost=8192, parallelism=1)
    digest = probe.hash("calibration password")
    t0 = time.perf_counter()
    probe.verify(digest, "calibration password")
    per_pass = max((time.perf_counter() - t0) / 4, 1e-4)
    return max(4, int(target_seconds / per_pass) + 1)


def test_password_guessing_does_not_block_other_writers(settings, db, monkeypatch):
    """No password is hashed or verified while its thread holds a write transaction (on
    SQLite the database's one write lock), and another user's writes go on while guesses
    are hashing.

    Checked where it happens: each write transaction's thread is recorded from its BEGIN
    to its COMMIT/ROLLBACK, and every argon2 call asserts its own thread holds none. (It
    used to be inferred from other writers' 503s under a 400 ms busy timeout, which a
    loaded machine's slow fsync also produced: flaky.)"""
    holding: dict[int, int] = {}  # thread id -> open write transactions
    inside: list[str] = []
    quick_db = Database(settings.database_url, settings.sqlite_busy_timeout_ms)
    engine = quick_db.write_engine

    def began(_conn) -> None:
        holding[threading.get_ident()] = holding.get(threading.get_ident(), 0) + 1

    def ended(_conn) -> None:
        holding[threading.get_ident()] = holding.get(threading.get_ident(), 1) - 1

    def guarded(name):
        original = getattr(PasswordHasher, name)

        def call(self, *args, **kwargs):
            if holding.get(threading.get_ident()):
                inside.append(name)
            return original(self, *args, **kwargs)
        return call

    event.listen(engine, "begin", began)
    event.listen(engine, "commit", ended)
    event.listen(engine, "rollback", ended)
    for name in ("hash", "verify"):
        monkeypatch.setattr(PasswordHasher, name, guarded(name))
    try:
        fast = ApiClient(create_app(settings, quick_db))
        assert register(fast, "alice").status_code == 201
        alice = fast.as_anonymous()
        assert login(alice, "alice").status_code == 201

        # bob's password is stored with slow parameters (verify uses the stored ones)
        cost = _slow_time_cost(0.5)
        slow_app = create_app(settings.replace(argon2_time_cost=cost, argon2_memory_cost=8192),
                              quick_db)
        assert register(ApiClient(slow_app), "bob").status_code == 201
        guesses: list[tuple[int, float]] = []
        running = threading.Event()

        def guess(i):
            c = ApiClient(slow_app)
            running.set()
            for _ in range(2):
                t0 = time.perf_counter()
                r = login(c, "bob", f"wrong password number {i}")
                guesses.append((r.status_code, time.perf_counter() - t0))

        threads = [threading.Thread(target=guess, args=(i,)) for i in range(3)]
        [t.start() for t in threads]
        running.wait(5)
        writes = []
        while any(t.is_alive() for t in threads):
            r = alice.post("/api/spaces", json={"name": f"team {len(writes)}"})
            writes.append((r.status_code, r.text[:200]))
            time.sleep(0.1)
        [t.join() for t in threads]
        assert login(fast.as_anonymous(), "bob").status_code == 201  # a success writes too
    finally:
        event.remove(engine, "begin", began)
        event.remove(engine, "commit", ended)
        event.remove(engine, "rollback", ended)
        quick_db.dispose()
    assert [code for code, _ in guesses] == [401] * 6
    assert inside == []
    assert len(writes) >= 3
    assert [w for w in writes if w[0] != 201] == []


def test_registration_and_login_still_work_end_to_end(settings, db):
    c = ApiClient(create_app(settings, db))
    r = register(c, "Henry")
    assert r.status_code == 201
    r = login(c, "henry")
    assert r.status_code == 201 and r.json["user"]["username"] == "Henry"
    assert c.get("/api/me").json["username"] == "Henry"
    assert [a.action for a in audit_rows(db)] == ["user.register", "session.login"]


# --- item 5: rate limits -------------------------------------------------------------------------

def test_failed_logins_are_limited_per_username(settings, db):
    # the per-username limit across all addresses (against distributed guessing)
    app = _app(settings, db, login_max_failures=0, login_max_failures_per_user=3,
               login_max_failures_per_address=0, login_window=600, trusted_proxy_count=1)
    c = ApiClient(app)
    assert register(c, "ursula").status_code == 201
    assert register(c, "victor").status_code == 201
    # guesses from several addresses: the per-username limit counts them all
    for i in range(3):
        assert_problem(login(c, "ursula", "wrong password here", from_addr(f"10.0.0.{i}")),
                       401, "invalid_credentials")
    before = row_counts(db)
    r = login(c, "URSULA", "wrong password here", from_addr("10.0.0.9"))
    assert_problem(r, 429, "rate_limited")
    assert 1 <= _retry_after(r) <= 600
    # locked: even the right password waits for the window; nothing was created
    assert_problem(login(c, "ursula", headers=from_addr("10.0.0.9")), 429, "rate_limited")
    assert row_counts(db) == before
    # other users are not affected
    assert login(c, "victor", headers=from_addr("10.0.0.0")).status_code == 201
    # an unknown username is limited the same way (no hint whether it exists)
    for _ in range(3):
        assert_problem(login(c, "nobody-at-all", "wrong password here"), 401)
    assert_problem(login(c, "nobody-at-all", "wrong password here"), 429, "rate_limited")
    # once the window has passed, the right password works and gives its slot back
    _end_windows(db)
    assert login(c, "ursula").status_code == 201
    for _ in range(3):
        assert_problem(login(c, "ursula", "wrong password here"), 401)


def test_successful_logins_do_not_count(settings, db):
    c = ApiClient(_app(settings, db, login_max_failures=2, login_max_failures_per_address=2,
                       login_max_failures_per_user=2))
    assert register(c, "wendy").status_code == 201
    for _ in range(6):
        assert login(c, "wendy").status_code == 201
    assert_problem(login(c, "wendy", "wrong password here"), 401)
    assert login(c, "wendy").status_code == 201


def test_failed_logins_are_limited_per_address(settings, db):
    app = _app(settings, db, login_max_failures=0, login_max_failures_per_address=3,
               login_max_failures_per_user=0, trusted_proxy_count=1)
    c = ApiClient(app)
    assert register(c, "xena").status_code == 201
    # one address spraying different usernames (and malformed ones)
    for name in ("xena", "yuri", "zed"):
        assert_problem(login(c, name, "wrong password here", from_addr("192.0.2.1")), 401)
    r = login(c, "x", "short", from_addr("192.0.2.1"))
    assert_problem(r, 429, "rate_limited")
    _retry_after(r)
    assert_problem(login(c, "xena", headers=from_addr("192.0.2.1")), 429, "rate_limited")
    # another address is not affected
    assert login(c, "xena", headers=from_addr("192.0.2.2")).status_code == 201


def test_guesses_from_elsewhere_do_not_lock_the_user_out(settings, db):
    # the strict limit counts failures per (username, address): an attacker exhausting it
    # for alice locks out only their own address, not alice at hers
    app = _app(settings, db, login_max_failures=3, login_max_failures_per_user=8,
               trusted_proxy_count=1)
    c = ApiClient(app)
    assert register(c, "alice").status_code == 201
    attacker, home = from_addr("203.0.113.66"), from_addr("198.51.100.20")
    for _ in range(3):
        assert_problem(login(c, "alice", "wrong password here", attacker), 401)
    assert_problem(login(c, "alice", "wrong password here", attacker), 429, "rate_limited")
    assert_problem(login(c, "ALICE", headers=attacker), 429, "rate_limited")
    assert login(c, "alice", headers=home).status_code == 201
    # her own typos count against her own pair only, and a success clears that pair
    for _ in range(2):
        assert_problem(login(c, "alice", "wrong password here", home), 401)
    assert login(c, "alice", headers=home).status_code == 201
    # guessing spread over many addresses is stopped by the per-username limit, which
    # then holds for every address (5 failures so far, a limit of 8)
    for i in range(3):
        assert_problem(login(c, "alice", "wrong password here", from_addr(f"10.9.0.{i}")), 401)
    assert_problem(login(c, "alice", "wrong password here", from_addr("10.9.0.9")), 429,
                   "rate_limited")
    assert_problem(login(c, "alice", headers=home), 429, "rate_limited")


def test_ipv6_clients_are_limited_per_64(settings, db):
    app = _app(settings, db, login_max_failures=0, login_max_failures_per_user=0,
               login_max_failures_per_address=3, register_per_address=1,
               trusted_proxy_count=1)
    c = ApiClient(app)
    assert register(c, "ivan", headers=from_addr("2001:db8:1:2::1")).status_code == 201
    # every address of one /64 is one client
    for i, ip in enumerate(("2001:db8:1:2::a", "2001:db8:1:2:ffff:ffff:ffff:ffff",
                            "2001:DB8:1:2:0:0:0:b")):
        assert_problem(login(c, f"ivan-{i}", "wrong password here", from_addr(ip)), 401)
    assert_problem(login(c, "ivan", headers=from_addr("2001:db8:1:2:1234::5")), 429,
                   "rate_limited")
    assert_problem(register(c, "ivan-two", headers=from_addr("2001:db8:1:2::77")), 429,
                   "rate_limited")
    # the neighbouring /64 is another client
    assert login(c, "ivan", headers=from_addr("2001:db8:1:3::1")).status_code == 201
    # audit rows keep the full address
    assert audit_rows(db, action="session.login")[-1].client_ip == "2001:db8:1:3::1"
    # an IPv4-mapped IPv6 address is the IPv4 address
    for _ in range(3):
        assert_problem(login(c, "ivan", "wrong password here", from_addr("192.0.2.44")), 401)
    assert_problem(login(c, "ivan", headers=from_addr("::ffff:192.0.2.44")), 429,
                   "rate_limited")
    assert login(c, "ivan", headers=from_addr("::ffff:192.0.2.45")).status_code == 201


@pytest.mark.both_databases  # concurrency: the database decides
def test_concurrent_guesses_cannot_overshoot_the_limit(settings, db):
    app = _app(settings, db, login_max_failures=3, login_max_failures_per_address=0)
    c = ApiClient(app)
    assert register(c, "yvonne").status_code == 201
    results, barrier = [], threading.Barrier(8)

    def attempt(i):
        client = ApiClient(app)
        barrier.wait()
        results.append(login(client, "yvonne", f"wrong password {i:04d}").status_code)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert sorted(results) == [401] * 3 + [429] * 5


def test_registrations_are_limited_per_address(settings, db):
    app = _app(settings, db, register_per_address=2, register_window=3600,
               trusted_proxy_count=1)
    c = ApiClient(app)
    assert register(c, "reg-one", headers=from_addr("198.51.100.7")).status_code == 201
    # a taken name counts too (it probes, and it got as far as the hash)
    assert_problem(register(c, "REG-ONE", headers=from_addr("198.51.100.7")), 409,
                   "username_taken")
    before = row_counts(db)
    r = register(c, "reg-two", headers=from_addr("198.51.100.7"))
    assert_problem(r, 429, "rate_limited")
    assert 3500 <= _retry_after(r) <= 3600
    assert row_counts(db) == before
    # invalid bodies are refused before the limit (and do not count)
    assert_problem(register(c, "x", headers=from_addr("198.51.100.8")), 400)
    assert register(c, "reg-two", headers=from_addr("198.51.100.8")).status_code == 201
    _end_windows(db)
    assert register(c, "reg-three", headers=from_addr("198.51.100.7")).status_code == 201


def test_zero_disables_a_limit(settings, db):
    c = ApiClient(_app(settings, db, login_max_failures=0, login_max_failures_per_address=0,
                       login_max_failures_per_user=0, register_per_address=0))
    for i in range(25):
        assert register(c, f"bulk-{i:02d}").status_code == 201
    for _ in range(12):
        assert_problem(login(c, "bulk-00", "wrong password here"), 401)


@pytest.mark.parametrize("name,value", [
    ("WHARF_LOGIN_MAX_FAILURES", "-1"), ("WHARF_LOGIN_MAX_FAILURES_PER_ADDRESS", "many"),
    ("WHARF_LOGIN_MAX_FAILURES_PER_USER", "-5"),
    ("WHARF_LOGIN_WINDOW", "0"), ("WHARF_REGISTER_PER_ADDRESS", "1.5"),
    ("WHARF_REGISTER_WINDOW", "0")])
def test_rate_limit_settings_are_validated(tmp_path, name, value):
    with pytest.raises(ConfigError, match=name):
        Settings.from_env({"WHARF_DATA_DIR": str(tmp_path), name: value})


def test_expired_throttle_rows_are_swept(settings, db):
    from wharf.retention.sweeps import SweepContext, delete_expired_credentials
    c = ApiClient(_app(settings, db, login_max_failures=5))
    assert register(c, "sweepy").status_code == 201
    assert_problem(login(c, "sweepy", "wrong password here"), 401)
    with db.read() as s:
        # register:addr, login:pair, login:user, login:addr; the failed login's audit row
        # took audit:refused:addr and audit:refused:all (wharf.audittrail.refusals)
        assert s.query(AuthThrottle).count() == 6
    counts = delete_expired_credentials(SweepContext(db=db, settings=settings, now=utcnow()))
    assert counts["auth_throttle"] == 0
    later = utcnow() + timedelta(seconds=max(settings.login_window,
                                             settings.register_window) + 1)
    counts = delete_expired_credentials(SweepContext(db=db, settings=settings, now=later))
    assert counts["auth_throttle"] == 6
    with db.read() as s:
        assert s.query(AuthThrottle).count() == 0


# --- item 6: a token cannot mint tokens ----------------------------------------------------------

def test_a_token_cannot_mint_a_token(world, db):
    alice = world.user("alice")
    parent = make_token(alice, name="ci", expires_in_days=1)
    anon = world.anonymous()
    before = row_counts(db)
    for body in ({"name": "child", "scopes": ["read", "write"]},
                 {"name": "child", "scopes": ["read"], "expires_in_days": 1}):
        r = anon.post("/api/api-tokens", json=body, headers=bearer(parent["token"]))
        assert_problem(r, 403, "token_cannot_mint")
    assert row_counts(db) == before
    # the token still works for everything else, including revoking itself
    assert anon.get("/api/api-tokens", headers=bearer(parent["token"])).status_code == 200
    assert anon.delete(f"/api/api-tokens/{parent['id']}",
                       headers=bearer(parent["token"])).status_code == 204
    assert_problem(anon.get("/api/me", headers=bearer(parent["token"])), 401, "invalid_token")
    # a logged-in user still creates tokens
    assert make_token(alice, name="another")["name"] == "another"


# --- item 9: the CSRF check compares the full origin -------------------------------------------

def _write(client, space_id, origin, host=None, extra=None):
    headers = {"Origin": origin, **(extra or {})}
    if host:
        headers["Host"] = host
    name = f"node {next(_names)}"
    return client.post("/api/nodes", json={"space_id": space_id, "name": name},
                       headers=headers)


_names = itertools.count()


def test_cookie_writes_compare_scheme_host_and_port(world, db):
    alice = world.user("alice")
    sid = alice.personal_space_id
    before = row_counts(db)
    for origin in ("http://127.0.0.1:9999", "https://127.0.0.1:8080", "http://127.0.0.1",
                   "http://localhost:8080", "ftp://127.0.0.1:8080", "http://127.0.0.1:x"):
        assert_problem(_write(alice, sid, origin, host="127.0.0.1:8080"), 403, "cross_origin")
    for origin in ("http://falconframework.org:8080", "https://falconframework.org"):
        assert_problem(_write(alice, sid, origin), 403, "cross_origin")
    assert row_counts(db) == before
    assert _write(alice, sid, "http://127.0.0.1:8080", host="127.0.0.1:8080").status_code == 201
    assert _write(alice, sid, "http://falconframework.org").status_code == 201
    assert _write(alice, sid, "HTTP://FalconFramework.org:80").status_code == 201
    assert _write(alice, sid, "http://[::1]:8080", host="[::1]:8080").status_code == 201


def test_allowed_origins_setting(settings, db, world):
    world.user("alice")
    app = _app(settings, db, allowed_origins=("https://app.example.com",
                                              "http://localhost:3000"))
    c = ApiClient(app)
    assert login(c, "alice").status_code == 201
    sid = world.ids["alice"]["personal_space_id"]
    assert _write(c, sid, "https://app.example.com").status_code == 201
    assert _write(c, sid, "https://app.example.com:443").status_code == 201
    assert _write(c, sid, "http://localhost:3000").status_code == 201
    assert_problem(_write(c, sid, "http://app.example.com"), 403, "cross_origin")
    assert_problem(_write(c, sid, "https://app.example.com:8443"), 403, "cross_origin")
    assert_problem(_write(c, sid, "http://localhost:3001"), 403, "cross_origin")


def test_tls_terminating_proxy_uses_forwarded_proto(settings, db, world):
    world.user("alice")
    c = ApiClient(_app(settings, db, trusted_proxy_count=1))
    assert login(c, "alice").status_code == 201
    sid = world.ids["alice"]["personal_space_id"]
    proxied = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.5"}
    assert _write(c, sid, "https://wharf.example.com", host="wharf.example.com",
                  extra=proxied).status_code == 201
    assert_problem(_write(c, sid, "http://wharf.example.com", host="wharf.example.com",
                          extra=proxied), 403, "cross_origin")


def test_forwarded_proto_is_read_hop_by_hop(settings, db, world):
    world.user("alice")
    one = ApiClient(_app(settings, db, trusted_proxy_count=1))
    two = ApiClient(_app(settings, db, trusted_proxy_count=2))
    assert login(one, "alice").status_code == 201
    assert login(two, "alice").status_code == 201
    sid = world.ids["alice"]["personal_space_id"]
    host = "wharf.example.com"

    def write(client, origin, **headers):
        return _write(client, sid, origin, host=host, extra=headers)

    # one proxy: its entry is the last one; what the client sent before it proves nothing
    spoofed = {"X-Forwarded-Proto": "http, https"}
    assert write(one, "https://wharf.example.com", **spoofed).status_code == 201
    assert_problem(write(one, "http://wharf.example.com", **spoofed), 403, "cross_origin")
    # a client's own Forwarded header is not the proxy's word
    assert write(one, "https://wharf.example.com", Forwarded="proto=http",
                 **{"X-Forwarded-Proto": "https"}).status_code == 201
    # two proxies that each append: the outer one's entry counts
    for chain in ("https, https", "https,http", "http, https, http"):
        assert write(two, "https://wharf.example.com",
                     **{"X-Forwarded-Proto": chain}).status_code == 201, chain
    assert_problem(write(two, "https://wharf.example.com",
                         **{"X-Forwarded-Proto": "https, http, https"}), 403, "cross_origin")
    # fewer entries than proxies: not through them, the server's own scheme applies
    assert_problem(write(two, "https://wharf.example.com", **{"X-Forwarded-Proto": "https"}),
                   403, "cross_origin")
    assert write(two, "http://wharf.example.com",
                 **{"X-Forwarded-Proto": "https"}).status_code == 201


def test_allowed_origins_are_validated_and_normalised(tmp_path):
    env = {"WHARF_DATA_DIR": str(tmp_path)}
    s = Settings.from_env({**env, "WHARF_ALLOWED_ORIGINS":
                           " https://App.Example.com:443 , http://localhost:3000,,"
                           "http://[::1]:8080"})
    assert s.allowed_origins == ("https://app.example.com", "http://localhost:3000",
                                 "http://[::1]:8080")
    assert Settings.from_env(env).allowed_origins == ()
    for bad in ("ftp://example.com", "https://example.com/app", "example.com",
                "https://", "https://example.com:99999", "https://u:p@example.com",
                "https://example.com?x=1", "*"):
        with pytest.raises(ConfigError, match="WHARF_ALLOWED_ORIGINS"):
            Settings.from_env({**env, "WHARF_ALLOWED_ORIGINS": bad})


# --- space administration: only the owner manages admins; members may leave -----------------

def _role(client, sid):
    r = client.get(f"/api/spaces/{sid}")
    return r.json["role"] if r.status_code == 200 else r.status_code


def test_only_the_owner_grants_changes_or_removes_admins(world, db):
    owner, adam, alma = world.user("olive"), world.user("adam"), world.user("alma")
    vera, nico = world.user("vera"), world.user("nico")
    sid = team_space(owner, "Admins")["id"]
    add_member(owner, sid, adam.user_id, "admin")
    add_member(owner, sid, alma.user_id, "admin")
    add_member(owner, sid, vera.user_id, "viewer")
    before = row_counts(db)
    members = f"/api/spaces/{sid}/members"
    # an admin cannot demote or remove another admin, nor create admins
    for r in (adam.put(f"{members}/{alma.user_id}", json={"role": "viewer"}),
              adam.delete(f"{members}/{alma.user_id}"),
              adam.put(f"{members}/{vera.user_id}", json={"role": "admin"}),
              adam.put(f"{members}/{nico.user_id}", json={"role": "admin"})):
        assert_problem(r, 403, "owner_required")
    assert row_counts(db) == before
    assert (_role(alma, sid), _role(vera, sid), _role(nico, sid)) == ("admin", "viewer", 404)
    # an admin manages editors and viewers
    assert adam.put(f"{members}/{vera.user_id}", json={"role": "editor"}).status_code == 200
    assert adam.put(f"{members}/{nico.user_id}", json={"role": "viewer"}).status_code == 201
    assert adam.delete(f"{members}/{nico.user_id}").status_code == 204
    # an admin may step down
    assert adam.put(f"{members}/{adam.user_id}", json={"role": "editor"}).status_code == 200
    assert _role(adam, sid) == "editor"
    # the owner manages admins
    assert owner.put(f"{members}/{vera.user_id}", json={"role": "admin"}).status_code == 200
    assert owner.put(f"{members}/{alma.user_id}", json={"role": "viewer"}).status_code == 200
    assert owner.delete(f"{members}/{vera.user_id}").status_code == 204
    assert (_role(vera, sid), _role(alma, sid)) == (404, "viewer")


@pytest.mark.parametrize("role", ["admin", "editor", "viewer"])
def test_a_member_can_leave_a_team_space(world, db, role):
    owner, mia = world.user("olive"), world.user("mia")
    sid = team_space(owner, "Leavers")["id"]
    add_member(owner, sid, mia.user_id, role)
    assert mia.delete(f"/api/spaces/{sid}/members/{mia.user_id}").status_code == 204
    assert _role(mia, sid) == 404
    assert [m["user_id"] for m in owner.get(f"/api/spaces/{sid}/members").json["items"]] == []
    left = audit_rows(db, action="space.member.delete")
    assert [(a.actor_id, a.target_id) for a in left] == [(mia.user_id, mia.user_id)]
    # gone: leaving again is 404 (the space is no longer visible)
    assert_problem(mia.delete(f"/api/spaces/{sid}/members/{mia.user_id}"), 404)


def test_the_owner_cannot_leave_and_outsiders_cannot_leave(world, db):
    owner, otto = world.user("olive"), world.user("otto")
    sid = team_space(owner, "Stay")["id"]
    before = row_counts(db)
    assert_problem(owner.delete(f"/api/spaces/{sid}/members/{owner.user_id}"), 409,
                   "owner_not_member")
    assert_problem(otto.delete(f"/api/spaces/{sid}/members/{otto.user_id}"), 404)
    assert row_counts(db) == before
    assert _role(owner, sid) == "owner"


@pytest.mark.parametrize("forwarded, bucket", [
    ("198.51.100.7:5678", "198.51.100.7"),
    ("[2001:db8:1:2::9]:443", "2001:db8:1:2::/64"),
    ("[2001:db8:1:2::9]", "2001:db8:1:2::/64"),
    ("198.51.100.7", "198.51.100.7"),
    ("2001:db8:1:2::9", "2001:db8:1:2::/64"),
])
def test_a_port_a_proxy_appends_is_not_a_bucket_of_its_own(forwarded, bucket):
    """Some proxies write ``address:port`` into X-Forwarded-For; counted as it was, each
    source port was a fresh throttle bucket and the per-address limits held nothing."""
    from wharf.identity.throttle import address_key
    assert address_key(forwarded) == bucket
