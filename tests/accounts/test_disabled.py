"""Disabled accounts (issue 40, item 6): ``wharf user disable|enable NAME``. A disabled user
is refused (403 ``account_disabled``) on every request, by session and token alike, in
another API process within ``WHARF_AUTH_CACHE_SECONDS``, and at login with the right
password; their pending operations wait, nothing is deleted; enabling restores it all.
On SQLite and PostgreSQL."""
from __future__ import annotations

import time
import uuid

import pytest
from sqlalchemy import func, select, update

from api.app import create_app
from storage.blobstore import FileBlobStore
from storage.models import ApiToken, AuditLog, LoginSession, Node, Operation, User
from tests.conftest import World, make_settings
from tests.support.client import ApiClient
from tests.support.foundation import PASSWORD, assert_problem, bearer, make_node, make_token
from wharf.accounts.disabling import set_disabled
from wharf.identity.cache import AuthCache
from wharf.identity.service import Identity
from wharf.infra.clock import utcnow
from wharf.infra.errors import Conflict, NotFound
from wharfd.runtime import Components

pytestmark = pytest.mark.both_databases


@pytest.fixture
def components(settings, db, tmp_path):
    c = Components(settings, db=db, blob_store=FileBlobStore(tmp_path / "blobs"))
    yield c
    c.close()


def status_of(db, user_id: str) -> str:
    with db.read() as s:
        return s.scalar(select(User.status).where(User.id == user_id))


def test_a_disabled_user_is_refused_everywhere_and_enabling_restores_it(components, db):
    world = World(components.api_app(), components)
    alice = world.user("alice")
    node = make_node(alice, alice.personal_space_id, "kept")
    tok = make_token(alice)
    anon = world.anonymous()
    assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 200  # cached
    assert alice.get("/api/me").status_code == 200  # cached

    assert set_disabled(db, "ALICE", True) is True
    assert set_disabled(db, "alice", True) is False  # already
    assert status_of(db, alice.user_id) == "disabled"
    # the next request, by session and by token alike
    assert_problem(alice.get("/api/me"), 403, "account_disabled")
    assert_problem(anon.get("/api/me", headers=bearer(tok["token"])), 403, "account_disabled")
    assert_problem(alice.get(f"/api/nodes/{node['id']}"), 403, "account_disabled")
    # login with the right password: refused, no session made; a wrong one stays 401
    with db.read() as s:
        sessions = s.scalar(select(func.count()).select_from(LoginSession))
    r = anon.post("/api/login-sessions", json={"username": "alice", "password": PASSWORD})
    assert_problem(r, 403, "account_disabled")
    assert "wharf_session" not in anon.cookies
    r = anon.post("/api/login-sessions", json={"username": "alice", "password": PASSWORD + "x"})
    assert_problem(r, 401, "invalid_credentials")
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(LoginSession)) == sessions
        # nothing deleted: her token, session, nodes; the change is audited
        assert s.get(ApiToken, tok["id"]).revoked_at is None
        assert s.get(Node, node["id"]) is not None
        assert s.scalar(select(AuditLog.action).where(AuditLog.target_id == alice.user_id,
                                                      AuditLog.action == "user.disable"))

    assert set_disabled(db, "alice", False) is True
    assert alice.get("/api/me").status_code == 200
    assert anon.get("/api/me", headers=bearer(tok["token"])).status_code == 200
    assert alice.get(f"/api/nodes/{node['id']}").status_code == 200
    assert world.user("alice").get("/api/me").status_code == 200  # login again
    with db.read() as s:
        assert s.scalar(select(AuditLog.action).where(AuditLog.target_id == alice.user_id,
                                                      AuditLog.action == "user.enable"))


def test_another_process_refuses_within_the_cache_bound(tmp_path, database_url, unitstore_url,
                                                        components, db):
    """B stands for another API process (its own cache, no invalidation from this one)."""
    bound = 2.0
    settings = make_settings(tmp_path, database_url, unitstore_url, auth_cache_seconds=bound)
    app_a = create_app(settings, db, operations=components.operations,
                       unitstore=components.unitstore)
    identity_b = Identity(settings)
    other_process = AuthCache(bound)
    from wharf.identity import service as identity_mod
    identity_mod._CACHES.discard(other_process)
    identity_b.auth_cache = other_process
    app_b = create_app(settings, db, operations=components.operations,
                       unitstore=components.unitstore, identity=identity_b)
    alice = World(app_a).user("alice")
    tok = make_token(alice)
    h = bearer(tok["token"])
    cookie = {"Cookie": f"wharf_session={alice.cookies['wharf_session']}"}
    b = ApiClient(app_b)
    assert b.get("/api/me", headers=h).status_code == 200  # B caches them now
    assert b.get("/api/me", headers=cookie).status_code == 200
    read_at = time.monotonic()
    set_disabled(db, "alice", True)
    while time.monotonic() - read_at < bound:
        time.sleep(0.05)
    assert_problem(b.get("/api/me", headers=h), 403, "account_disabled")
    assert_problem(b.get("/api/me", headers=cookie), 403, "account_disabled")
    set_disabled(db, "alice", False)  # B cached no refusal
    assert b.get("/api/me", headers=h).status_code == 200
    assert b.get("/api/me", headers=cookie).status_code == 200


def test_pending_operations_wait_while_disabled_and_complete_after(components, db):
    world = World(components.api_app(), components)
    alice = world.user("alice")
    r = alice.post("/api/resources", json={"space_id": alice.personal_space_id,
                                           "name": "later", "unit_type": "doc"},
                   headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    op_id = r.json["id"]
    with db.read() as s:
        budget = s.get(Operation, op_id).max_attempts
    set_disabled(db, "alice", True)
    for _ in range(3):  # each claim finds her disabled: pending again, never failed
        with db.write() as s:
            s.execute(update(Operation).where(Operation.id == op_id)
                      .values(next_attempt_at=utcnow()))
        components.executor.execute(op_id)
        with db.read() as s:
            op = s.get(Operation, op_id)
            assert op.status == "pending" and op.error["code"] == "account_disabled"
            assert op.next_attempt_at > utcnow()
            assert op.max_attempts - op.attempts == budget  # waiting costs no attempt
            assert s.scalar(select(func.count()).select_from(Node).where(
                Node.name == "later")) == 0
    set_disabled(db, "alice", False)
    with db.write() as s:
        s.execute(update(Operation).where(Operation.id == op_id)
                  .values(next_attempt_at=utcnow()))
    components.executor.execute(op_id)
    with db.read() as s:
        assert s.get(Operation, op_id).status == "completed"
        assert s.scalar(select(func.count()).select_from(Node).where(
            Node.name == "later")) == 1


def test_unknown_and_deleting_users_are_refused(components, db):
    with pytest.raises(NotFound):
        set_disabled(db, "nobody", True)
    alice = World(components.api_app(), components).user("alice")
    with db.write() as s:
        s.execute(update(User).where(User.id == alice.user_id).values(status="deleting"))
    with pytest.raises(Conflict):
        set_disabled(db, "alice", True)
    with pytest.raises(Conflict):
        set_disabled(db, "alice", False)
    assert status_of(db, alice.user_id) == "deleting"
