"""The API's submission hot path (issue 12): the token → principal cache and its
revocation bound, the submission recorded in one transaction with plain SQL, and pooled
connections without a pre-ping."""
from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import create_engine, event, func, select, text, update

from api.app import create_app
from storage.db import ConnectionLost, Database
from storage.errors import DatabaseBusy
from storage.models import ApiToken, AuditLog, LoginSession, Operation, OutboxMessage
from tests.conftest import make_settings
from tests.support.client import ApiClient
from wharf.identity.service import AuthCache, Identity
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.units.kinds import CreateResourcePayload
from wharf.units.resources import KIND as CREATE_RESOURCE


def key() -> str:
    return uuid.uuid4().hex


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def make_token(client: ApiClient, **extra) -> dict:
    r = client.post("/api/api-tokens", json={"name": "t", "scopes": ["read", "write"], **extra})
    assert r.status_code == 201, r.text
    return r.json


def post_resource(client: ApiClient, space_id: str, headers: dict[str, str] | None = None,
                  k: str | None = None):
    return client.post("/api/resources", json={"space_id": space_id, "name": "Doc",
                                               "unit_type": "doc"},
                       headers={"Idempotency-Key": k or key(), **(headers or {})})


# --- the auth cache, unit -------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def principal(n: int) -> Principal:
    return Principal(kind="user", user_id=f"u{n}", username=f"user{n}", token_id=f"t{n}")


def test_cache_serves_for_at_most_its_bound():
    clock = Clock()
    cache = AuthCache(2.0, clock=clock)
    cache.put("k", principal(1), "t1", None, cache.begin())
    clock.now += 1.99
    assert cache.get("k") == principal(1)
    clock.now += 0.02
    assert cache.get("k") is None
    assert len(cache) == 0


def test_cache_bound_counts_from_when_the_database_read_began():
    clock = Clock()
    cache = AuthCache(2.0, clock=clock)
    begun = cache.begin()
    clock.now += 1.5  # a slow read
    cache.put("k", principal(1), "t1", None, begun)
    clock.now += 0.6
    assert cache.get("k") is None


def test_cache_never_serves_past_the_credentials_expiry():
    clock = Clock()
    cache = AuthCache(60.0, clock=clock)
    cache.put("k", principal(1), "t1", utcnow() + timedelta(milliseconds=300), cache.begin())
    assert cache.get("k") == principal(1)
    time.sleep(0.35)  # the cache's own bound is far away; the token's expiry is not
    assert cache.get("k") is None


def test_cache_is_bounded_least_recently_used_first_out():
    cache = AuthCache(60.0, max_entries=3, clock=Clock())
    for n in range(3):
        cache.put(f"k{n}", principal(n), f"t{n}", None, cache.begin())
    assert cache.get("k0") is not None  # k1 is now the least recently used
    cache.put("k3", principal(3), "t3", None, cache.begin())
    assert len(cache) == 3
    assert cache.get("k1") is None
    assert [cache.get(f"k{n}") is not None for n in (0, 2, 3)] == [True, True, True]
    for n in range(4, 100):
        cache.put(f"k{n}", principal(n), f"t{n}", None, cache.begin())
    assert len(cache) == 3
    cache.invalidate("t99")  # the credential index follows evictions
    assert len(cache) == 2


def test_invalidation_wins_over_a_read_that_raced_it():
    cache = AuthCache(60.0, clock=Clock())
    begun = cache.begin()  # a request starts reading the token...
    cache.invalidate("t1")  # ...the token is revoked and committed meanwhile...
    cache.put("k", principal(1), "t1", None, begun)  # ...the stale read is not kept
    assert cache.get("k") is None


def test_zero_seconds_disables_the_cache():
    cache = AuthCache(0.0, clock=Clock())
    cache.put("k", principal(1), "t1", None, cache.begin())
    assert cache.get("k") is None
    assert len(cache) == 0


# --- the auth cache, through the API ------------------------------------------------------

def _queries(engine, sink: list[str]):
    me = threading.get_ident()

    def on_execute(conn, cursor, statement, *args) -> None:
        if threading.get_ident() == me:
            sink.append(statement)

    event.listen(engine, "before_cursor_execute", on_execute)
    return lambda: event.remove(engine, "before_cursor_execute", on_execute)


def test_a_cached_token_is_not_read_again_within_the_bound(world, components):
    alice = world.user("alice")
    tok = make_token(alice)
    anon = world.anonymous()
    assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 200
    seen: list[str] = []
    stop = _queries(components.db.engine, seen)
    try:
        assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 200
    finally:
        stop()
    assert not any("api_tokens" in q for q in seen), seen


def test_revocation_in_one_process_reaches_another_within_the_bound(tmp_path, database_url,
                                                                    unitstore_url, components):
    """Two API instances with caches of their own on one database: A revokes, A refuses at
    once, B (standing for another process: A's invalidation does not reach its cache)
    keeps serving the cached principal at most ``WHARF_AUTH_CACHE_SECONDS`` after it read
    it, then refuses."""
    bound = 3.0
    settings = make_settings(tmp_path, database_url, unitstore_url,
                             auth_cache_seconds=bound)
    app_a = create_app(settings, components.db, operations=components.operations,
                       unitstore=components.unitstore)
    identity_b = Identity(settings)
    other_process = AuthCache(bound)
    from wharf.identity import service as identity_mod
    identity_mod._CACHES.discard(other_process)  # another process: no shared hooks
    identity_b.auth_cache = other_process
    app_b = create_app(settings, components.db, operations=components.operations,
                       unitstore=components.unitstore, identity=identity_b)
    a, b = ApiClient(app_a), ApiClient(app_b)
    assert a.post("/api/users", json={"username": "alice", "password": "x" * 16}).status_code \
        == 201
    assert a.post("/api/login-sessions",
                  json={"username": "alice", "password": "x" * 16}).status_code == 201
    tok = make_token(a)
    h = bearer(tok["token"])
    a.get("/api/me", headers=h)
    before_read = time.monotonic()
    assert b.get("/api/me", headers=h).status_code == 200  # B caches it now
    # B read it somewhere between the two stamps: its copy is fresh until at least
    # before_read + bound, and at most read + bound <= after_read + bound.
    after_read = time.monotonic()
    assert a.delete(f"/api/api-tokens/{tok['id']}").status_code == 204
    assert a.get("/api/me", headers=h).status_code == 401  # at once where revoked
    r = b.get("/api/me", headers=h)
    if time.monotonic() - before_read < bound - 0.2:  # (a very slow machine skips this check)
        assert r.status_code == 200  # B has not read the database again yet
    while time.monotonic() - after_read < bound:
        time.sleep(0.05)
    assert b.get("/api/me", headers=h).status_code == 401  # within the bound
    assert b.get("/api/me", headers=h).status_code == 401


def test_logout_takes_effect_at_once_despite_the_cache(world):
    alice = world.user("alice")
    h = {"Cookie": f"wharf_session={alice.cookies['wharf_session']}"}
    other = world.anonymous()
    assert other.get("/api/me", headers=h).status_code == 200  # cached now
    assert alice.delete("/api/login-sessions/current").status_code == 204
    assert other.get("/api/me", headers=h).status_code == 401


def _expire_soon(db, model, row_id: str, ms: int):
    soon = utcnow() + timedelta(milliseconds=ms)
    with db.write() as s:  # Core: not seen by the ORM hook, as if another process did it
        s.connection().execute(update(model).where(model.id == row_id)
                               .values(expires_at=soon))
    return soon


def test_an_expired_token_is_refused_even_while_cached(world, db):
    alice = world.user("alice")
    tok = make_token(alice)  # not used yet: nothing cached
    soon = _expire_soon(db, ApiToken, tok["id"], 1500)
    anon = world.anonymous()
    assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 200  # cached
    while utcnow() <= soon:
        time.sleep(0.05)
    # within the cache's bound (2 s from the read), past the token's expiry
    assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 401


def test_an_expired_session_is_refused_even_while_cached(world, db):
    alice = world.user("alice")  # logged in, the cookie not used yet
    sid = alice.cookies["wharf_session"].split(".", 1)[0]
    soon = _expire_soon(db, LoginSession, sid, 1500)
    assert alice.get("/api/me").status_code == 200  # read and cached with that expiry
    while utcnow() <= soon:
        time.sleep(0.05)
    assert alice.get("/api/me").status_code == 401


# --- submission ----------------------------------------------------------------------------

def test_a_submission_is_one_write_transaction_of_few_statements(world, components, db):
    alice = world.user("alice")
    tok = make_token(alice)
    anon = world.anonymous()
    h = bearer(tok["token"])
    assert post_resource(anon, alice.personal_space_id, h).status_code == 202  # warm
    seen: list[str] = []
    stop = _queries(components.db.engine, seen)
    try:
        r = post_resource(anon, alice.personal_space_id, h)
    finally:
        stop()
    assert r.status_code == 202, r.text
    statements = [q for q in seen if not q.upper().startswith(("BEGIN", "COMMIT", "PRAGMA"))]
    # the space (locked) with the caller's role, then operation + outbox + audit: one
    # statement on PostgreSQL, three on SQLite.
    assert len(statements) == (2 if db.is_postgres else 4), statements
    op_id = r.json["id"]
    with db.read() as s:
        op = s.get(Operation, op_id)
        assert op is not None and op.status == "pending" and op.attempts == 0
        assert op.result is None and op.error is None and op.lease_owner is None
        outbox = s.scalars(select(OutboxMessage).where(OutboxMessage.subject_id == op_id)).all()
        assert [(m.actor_name, m.queue_name, m.delay_ms, m.send_attempts) for m in outbox] \
            == [("op_create_resource", "operations", 0, 0)]
        rows = s.scalars(select(AuditLog).where(AuditLog.target_id == op_id)).all()
        assert [(a.action, a.actor_type, a.actor_id, a.space_id, a.details) for a in rows] \
            == [("operation.submit", "user", alice.user_id, alice.personal_space_id,
                 {"kind": "create_resource"})]
    # the outbox row reached the broker after commit (the fast path)
    components.dispatcher.flush()
    with db.read() as s:
        assert s.get(OutboxMessage, outbox[0].id).dispatched_at is not None


def test_audit_record_core_writes_what_record_writes(db):
    ctx = RequestContext(principal=Principal(kind="user", user_id="u1", username="u"),
                         request_id="r" * 200, client_ip="1.2.3.4", user_agent="ua")
    with db.write() as s:
        orm = audit.record(s, ctx, "x.y", "thing", "t1", space_id=None)
        core_id = audit.record_core(s, ctx, "x.y", "thing", "t1", space_id=None)
    cols = [c for c in audit.COLUMNS if c not in ("id", "at")]
    with db.read() as s:
        a = s.execute(select(*(AuditLog.__table__.c[c] for c in cols),
                             AuditLog.details.is_(None)).where(AuditLog.id == orm.id)).one()
        b = s.execute(select(*(AuditLog.__table__.c[c] for c in cols),
                             AuditLog.details.is_(None)).where(AuditLog.id == core_id)).one()
    assert tuple(a) == tuple(b)


def _ctx(user_id: str) -> RequestContext:
    return RequestContext(principal=Principal(kind="user", user_id=user_id, username="x"))


def test_a_replay_keeps_nothing_prepare_wrote(world, components, db):
    """``prepare`` may write (complete_session moves an upload session on); when the key
    turns out to be taken, those writes are rolled back with the rest."""
    alice = world.user("alice")
    ops = components.operations
    k = key()
    request = {"space_id": alice.personal_space_id, "parent_id": None, "name": "n",
               "unit_type": "doc"}

    def prepare(s, op_id):
        audit.record_core(s, _ctx(alice.user_id), "test.prepare", "operation", op_id)
        return alice.personal_space_id, CreateResourcePayload(
            space_id=alice.personal_space_id, parent_id=None, name="n", unit_type="doc",
            node_id=key()[:26], resource_id=key()[:26], unit_id=key()[:26])

    first = ops.submit(_ctx(alice.user_id), CREATE_RESOURCE, k, request, prepare)
    again = ops.submit(_ctx(alice.user_id), CREATE_RESOURCE, k, request, prepare)
    assert first.created and not again.created
    assert again.operation.id == first.operation.id
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(AuditLog)
                        .where(AuditLog.action == "test.prepare")) == 1
        assert s.scalar(select(func.count()).select_from(Operation)) == 1
        assert s.scalar(select(func.count()).select_from(OutboxMessage)) == 1


def test_a_replay_answers_after_the_permission_is_gone(world):
    alice, bob = world.user("alice"), world.user("bob")
    team = alice.post("/api/spaces", json={"name": "Team"}).json
    alice.put(f"/api/spaces/{team['id']}/members/{bob.user_id}", json={"role": "editor"})
    k = key()
    first = post_resource(bob, team["id"], k=k)
    assert first.status_code == 202
    assert alice.delete(f"/api/spaces/{team['id']}/members/{bob.user_id}").status_code == 204
    again = post_resource(bob, team["id"], k=k)
    assert again.status_code == 202 and again.json["id"] == first.json["id"]
    assert post_resource(bob, team["id"]).status_code == 404  # a new request is refused
    other = bob.post("/api/resources", json={"space_id": team["id"], "name": "Other",
                                             "unit_type": "doc"},
                     headers={"Idempotency-Key": k})
    assert other.status_code == 409 and other.json["code"] == "idempotency_key_reused"


# --- pooled connections without a pre-ping ------------------------------------------------

def _terminate_backends(url: str) -> int:
    admin = create_engine(url)
    try:
        with admin.connect() as conn:
            killed = conn.execute(text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()")).scalar()
            conn.commit()
    finally:
        admin.dispose()
    time.sleep(0.2)  # the server closes the sockets
    return int(killed or 0)


def test_dead_pooled_connections_answer_503_or_succeed_never_500(world, components, db):
    if not db.is_postgres:
        pytest.skip("PostgreSQL: a server-side disconnect")
    alice = world.user("alice")
    tok = make_token(alice)
    anon = world.anonymous()
    h = bearer(tok["token"])
    for _ in range(3):
        assert post_resource(anon, alice.personal_space_id, h).status_code == 202
    assert _terminate_backends(db.url) >= 1
    time.sleep(2.1)  # the token's principal is read from the database again as well
    for _ in range(3):
        r = post_resource(anon, alice.personal_space_id, h)
        assert r.status_code in (202, 503), r.text
    assert _terminate_backends(db.url) >= 1
    r = anon.get("/api/spaces", headers=h)
    assert r.status_code in (200, 503), r.text
    assert post_resource(anon, alice.personal_space_id, h).status_code == 202


def test_a_connection_lost_mid_transaction_is_retryable_not_a_500(db):
    if not db.is_postgres:
        pytest.skip("PostgreSQL: a server-side disconnect")
    with pytest.raises(ConnectionLost) as lost, db.write() as s:
        pid = s.connection().execute(text("SELECT pg_backend_pid()")).scalar()
        admin = Database(db.url)
        with admin.engine.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
            conn.commit()
        admin.dispose()
        s.connection().execute(text("SELECT 1"))
    assert isinstance(lost.value, DatabaseBusy)  # the API's 503 with Retry-After
    with db.write() as s:
        assert s.connection().execute(text("SELECT 1")).scalar() == 1
