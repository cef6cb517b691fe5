"""Account deletion (issue 18): ``DELETE /api/me`` → ``deleting``, no access at once → the
``delete_account`` operation purges what the account owns in bounded batches → the user
row goes. On SQLite and PostgreSQL, with the filesystem store and a real S3 server (moto).
"""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from storage.blobstore import FileBlobStore
from storage.models import (
    AuditLog,
    BlobResource,
    DeletionRecord,
    LoginSession,
    Node,
    Operation,
    Space,
    SpaceMember,
    User,
)
from tests.conftest import World, make_settings
from tests.support.foundation import (
    PASSWORD,
    add_member,
    assert_problem,
    bearer,
    make_node,
    make_token,
    team_space,
)
from wharf.accounts import purge
from wharf.accounts import service as accounts
from wharf.deletion import ledger
from wharf.deletion import service as deletion
from wharf.infra.clock import utcnow
from wharf.operations.executor import Hooks
from wharfd.runtime import Components


def key() -> str:
    return uuid.uuid4().hex


class Env:
    """The embedded wiring with no worker threads: the test runs each operation."""

    def __init__(self, settings, db, store, hooks=None):
        self.db, self.store, self.settings = db, store, settings
        self.components = Components(settings, db=db, blob_store=store, hooks=hooks)
        self.world = World(self.components.api_app(), self.components)

    def run(self, op_id: str) -> dict:
        self.components.executor.execute(op_id)
        with self.db.read() as s:
            op = s.get(Operation, op_id)
            assert op is not None
            return {"status": op.status, "error": op.error, "actor_id": op.actor_id}

    def run_deletions(self) -> None:
        for _ in range(10):
            if not sum(deletion.run_due(self.db, self.store).values()):
                return

    def stored(self) -> set[str]:
        return {k for k in self.store.list_keys() if not k.startswith(ledger.PREFIX)}

    def close(self) -> None:
        self.components.close()


@pytest.fixture(params=["file", "s3"])
def env(request, settings, db, tmp_path):
    store = FileBlobStore(tmp_path / "blobs") if request.param == "file" \
        else request.getfixturevalue("s3_store")
    e = Env(settings, db, store)
    yield e
    e.close()


def upload(env: Env, client, space_id: str, data: bytes, parent_id: str | None = None) -> str:
    """A blob resource (its operation run here); returns its object key."""
    body = {"space_id": space_id, "filename": f"{key()[:8]}.bin", "size": len(data)}
    if parent_id:
        body["parent_id"] = parent_id
    r = client.post("/api/blob-upload-sessions", json=body, headers={"Idempotency-Key": key()})
    assert r.status_code == 201, r.text
    sess = r.json
    r = client.request("PUT", f"/api/blob-upload-sessions/{sess['id']}/content", body=data,
                       headers={"Content-Type": "application/octet-stream",
                                "Content-Length": str(len(data))})
    assert r.status_code == 200, r.text
    r = client.post(f"/api/blob-upload-sessions/{sess['id']}/complete",
                    headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    assert env.run(r.json["id"])["status"] == "completed"
    with env.db.read() as s:
        return s.scalar(select(BlobResource.object_key).where(
            BlobResource.resource_id == sess["resource_id"]))


def submit_resource(client, space_id: str, name: str) -> str:
    r = client.post("/api/resources", json={"space_id": space_id, "name": name,
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    return r.json["id"]


def delete_me(client, password: str | None = None, headers: dict | None = None):
    """``DELETE /api/me``; the client keeps its cookie (the answer clears it) so that the
    test can show the old session is refused."""
    body = {} if password is None else {"password": password}
    cookies = dict(client.cookies)
    r = client.delete("/api/me", json_body=body,
                      headers={"Idempotency-Key": key(), **(headers or {})})
    client.cookies.update(cookies)
    return r


def test_deleting_an_account_purges_it_and_hands_team_spaces_over(env):
    world, db = env.world, env.db
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    token = make_token(alice)["token"]
    personal = alice.personal_space_id
    # 200 nodes in the personal space: 20 folders of 9 each
    folders = [make_node(alice, personal, f"f{i}") for i in range(20)]
    for i, folder in enumerate(folders):
        for j in range(9):
            make_node(alice, personal, f"n{i}-{j}", folder["id"])
    blob_keys = [upload(env, alice, personal, f"blob {i}".encode() * 100, folders[i]["id"])
                 for i in range(3)]
    unit_op = submit_resource(alice, personal, "doc")
    assert env.run(unit_op)["status"] == "completed"
    r = alice.put(f"/api/nodes/{folders[0]['id']}/grants/{bob.user_id}", json={"role": "editor"})
    assert r.status_code in (200, 201), r.text
    # a team space with an admin (bob) and one whose only member is a viewer (carol)
    team = team_space(alice, "Team")
    add_member(alice, team["id"], carol.user_id, "editor")
    add_member(alice, team["id"], bob.user_id, "admin")
    kept = make_node(alice, team["id"], "alice wrote this")
    team_blob = upload(env, alice, team["id"], b"team bytes")
    lonely = team_space(alice, "Lonely")
    add_member(alice, lonely["id"], carol.user_id, "editor")
    # queued operations of hers, never run
    queued = [submit_resource(alice, personal, f"queued {i}") for i in range(3)]

    r = delete_me(alice)
    assert r.status_code == 202, r.text
    assert r.json["kind"] == "delete_account" and r.json["status"] == "pending"
    op_id = r.json["id"]
    # access is gone at once: the session, the token, a new login
    assert_problem(alice.get("/api/me"), 401)
    assert_problem(alice.get("/api/me", headers=bearer(token)), 401)
    assert_problem(world.anonymous().post(
        "/api/login-sessions", json={"username": "alice", "password": PASSWORD}), 401)
    with db.read() as s:
        assert s.scalar(select(User.status).where(User.id == alice.user_id)) == "deleting"
        assert s.scalar(select(func.count()).select_from(LoginSession).where(
            LoginSession.user_id == alice.user_id)) == 0
        record = s.scalar(select(DeletionRecord).where(DeletionRecord.kind == "account"))
        assert record.subject == alice.user_id and record.username_digest
        assert "alice" not in record.username_digest

    done = env.run(op_id)
    assert done["status"] == "completed", done
    assert done["actor_id"] == purge.PLACEHOLDER_ID
    env.run_deletions()

    with db.read() as s:
        assert s.get(User, alice.user_id) is None
        assert s.get(Space, personal) is None
        assert s.scalar(select(func.count()).select_from(Node).where(
            Node.space_id == personal)) == 0
        for op in queued:
            failed = s.get(Operation, op)
            assert failed is None or (failed.status == "failed"
                                      and failed.error["code"] == "account_deleted")
        # audit rows keep the id, not the address or agent
        rows = list(s.scalars(select(AuditLog).where(AuditLog.actor_id == alice.user_id)))
        assert rows and all(r.client_ip is None and r.user_agent is None for r in rows)
        assert s.get(Node, kept["id"]).created_by == purge.PLACEHOLDER_ID
        assert s.get(Space, team["id"]).owner_id == bob.user_id
        orphaned = s.get(Space, lonely["id"])
        assert orphaned.owner_id == purge.PLACEHOLDER_ID and orphaned.read_only
        assert s.scalar(select(func.count()).select_from(SpaceMember).where(
            SpaceMember.user_id == alice.user_id)) == 0
    # the bucket holds none of her personal objects; the team's blob stays
    stored = env.stored()
    assert not set(blob_keys) & stored
    assert team_blob in stored
    # the other members keep the team space: bob owns it, carol still edits
    assert bob.get(f"/api/spaces/{team['id']}").status_code == 200
    make_node(carol, team["id"], "carol still writes")
    assert carol.get(f"/api/nodes/{kept['id']}").status_code == 200
    # with no admin: read-only for its members until an operator acts
    assert carol.get(f"/api/spaces/{lonely['id']}").status_code == 200
    r = carol.post("/api/nodes", json={"space_id": lonely["id"], "name": "nope"})
    assert r.status_code in (403, 404), r.text
    accounts.give_owner(db, lonely["id"], "carol")
    make_node(carol, lonely["id"], "writable again")
    # the username stays taken for WHARF_USERNAME_RETENTION
    r = world.anonymous().post("/api/users", json={"username": "Alice", "password": PASSWORD})
    assert_problem(r, 409, "username_taken")
    # the ledger is shipped to the blob store
    counts = accounts.sweep(db, env.store, env.settings)
    assert counts["shipped"] >= 1 + len(blob_keys)
    shipped = list(ledger.read_shipped(env.store, utcnow() - timedelta(hours=1)))
    assert {e.subject for e in shipped} >= {alice.user_id, *blob_keys}


def test_reauthentication_is_required(env):
    world, db = env.world, env.db
    alice = world.user("alice")
    token = make_token(alice)["token"]
    # a token without the password may not
    assert_problem(delete_me(world.anonymous(), headers=bearer(token)), 403,
                   "reauthentication_required")
    # a wrong password may not
    assert_problem(delete_me(alice, "not the password at all"), 403, "reauthentication_required")
    # a session older than WHARF_ACCOUNT_REAUTH_SECONDS may not without the password
    with db.write() as s:
        s.execute(update(LoginSession).where(LoginSession.user_id == alice.user_id)
                  .values(created_at=utcnow() - timedelta(hours=1)))
    assert_problem(delete_me(alice), 403, "reauthentication_required")
    assert alice.get("/api/me").status_code == 200  # nothing happened
    # the token with the password may
    r = delete_me(world.anonymous(), PASSWORD, headers=bearer(token))
    assert r.status_code == 202, r.text
    assert_problem(alice.get("/api/me"), 401)


def test_idempotency_key_replays_and_hostile_bodies(env):
    alice = env.world.user("alice")
    assert_problem(alice.delete("/api/me", json_body={}), 400, "idempotency_key_required")
    assert_problem(alice.delete("/api/me", json_body={"password": 12},
                                headers={"Idempotency-Key": key()}), 400)
    assert_problem(alice.delete("/api/me", json_body={"password": "x" * 5000},
                                headers={"Idempotency-Key": key()}), 400)
    assert alice.get("/api/me").status_code == 200


class FailOnce(Hooks):
    def __init__(self) -> None:
        self.failed = 0

    def before_commit(self, op):
        if op.kind == "delete_account" and not self.failed:
            self.failed += 1
            raise RuntimeError("injected")


def test_a_failure_leaves_the_user_deleting_and_the_operation_retried(settings, db, tmp_path):
    hooks = FailOnce()
    e = Env(settings, db, FileBlobStore(tmp_path / "blobs"), hooks=hooks)
    try:
        alice = e.world.user("alice")
        make_node(alice, alice.personal_space_id, "a")
        op_id = delete_me(alice).json["id"]
        assert e.run(op_id)["status"] == "pending"  # retried with backoff
        assert_problem(alice.get("/api/me"), 401)
        with db.read() as s:
            assert s.scalar(select(User.status).where(User.id == alice.user_id)) == "deleting"
        with db.write() as s:  # due now
            s.execute(update(Operation).where(Operation.id == op_id)
                      .values(next_attempt_at=utcnow()))
        assert e.run(op_id)["status"] == "completed"
        with db.read() as s:
            assert s.get(User, alice.user_id) is None
    finally:
        e.close()


def test_out_of_attempts_records_a_new_deletion(settings, db, tmp_path):
    hooks = FailOnce()
    e = Env(settings, db, FileBlobStore(tmp_path / "blobs"), hooks=hooks)
    try:
        alice = e.world.user("alice")
        op_id = delete_me(alice).json["id"]
        with db.write() as s:
            s.execute(update(Operation).where(Operation.id == op_id).values(max_attempts=1))
        assert e.run(op_id)["status"] == "failed"
        with db.read() as s:
            again = accounts.open_deletion(s, alice.user_id)
            assert again is not None and again != op_id
            assert s.scalar(select(User.status).where(User.id == alice.user_id)) == "deleting"
        with db.write() as s:
            s.execute(update(Operation).where(Operation.id == again)
                      .values(next_attempt_at=utcnow()))
        assert e.run(again)["status"] == "completed"
        with db.read() as s:
            assert s.get(User, alice.user_id) is None
    finally:
        e.close()


def test_a_lost_deletion_is_redriven_by_the_sweep(env):
    alice = env.world.user("alice")
    op_id = delete_me(alice).json["id"]
    with env.db.write() as s:  # as if the operation row were lost
        s.execute(update(Operation).where(Operation.id == op_id).values(status="failed"))
    counts = accounts.sweep(env.db, env.store, env.settings)
    assert counts["redriven"] == 1
    assert accounts.sweep(env.db, env.store, env.settings)["redriven"] == 0
    with env.db.read() as s:
        again = accounts.open_deletion(s, alice.user_id)
    assert env.run(again)["status"] == "completed"


def test_the_username_is_free_after_the_retention(tmp_path, database_url, unitstore_url, db):
    settings = make_settings(tmp_path, database_url, unitstore_url, username_retention=0)
    e = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    try:
        alice = e.world.user("alice")
        op_id = delete_me(alice).json["id"]
        assert e.run(op_id)["status"] == "completed"
        r = e.world.anonymous().post("/api/users",
                                     json={"username": "alice", "password": PASSWORD})
        assert r.status_code == 201, r.text
        assert r.json["id"] != alice.user_id
    finally:
        e.close()


def test_her_open_operations_fail_with_account_deleted(env, monkeypatch):
    alice = env.world.user("alice")
    queued = [submit_resource(alice, alice.personal_space_id, f"q{i}") for i in range(3)]
    op_id = delete_me(alice).json["id"]
    # only the first step (the later ones delete her finished operations too)
    monkeypatch.setattr(purge, "STEPS", purge.STEPS[:1])
    counts = purge.Purge(env.db, env.components.unitstore, env.settings,
                         env.components.handlers, alice.user_id, op_id).run()
    assert counts == {"operations_failed": 3}
    with env.db.read() as s:
        for op in queued:
            failed = s.get(Operation, op)
            assert failed.status == "failed" and failed.error["code"] == "account_deleted"
        assert s.get(Operation, op_id).status == "pending"  # not itself


def test_her_worktrees_go_and_team_worktrees_stay(env):
    from storage.models import Worktree
    alice, bob = env.world.user("alice"), env.world.user("bob")
    team = team_space(alice, "Team")
    add_member(alice, team["id"], bob.user_id, "admin")
    made = {}
    for kind, extra in (("user", {}), ("team", {"team_space_id": team["id"]})):
        r = alice.post("/api/worktrees", json={"kind": kind, "name": f"{kind} wt", **extra},
                       headers={"Idempotency-Key": key()})
        assert r.status_code == 202, r.text
        assert env.run(r.json["id"])["status"] == "completed"
        with env.db.read() as s:
            made[kind] = s.scalar(select(Worktree.id).where(Worktree.kind == kind))
    assert env.run(delete_me(alice).json["id"])["status"] == "completed"
    with env.db.read() as s:
        assert s.get(Worktree, made["user"]) is None
        kept = s.get(Worktree, made["team"])
        assert kept is not None and kept.creator_id == purge.PLACEHOLDER_ID
    assert bob.get(f"/api/worktrees/{made['team']}").status_code == 200


def test_her_issues_comments_and_events_stay_readable_by_deleted(env):
    """The issues, comments and timeline events a deleted member wrote in a team space stay
    (team content), shown as by ``~deleted``; her assignments go with her."""
    alice, bob = env.world.user("alice"), env.world.user("bob")
    team = team_space(bob, "Team")
    add_member(bob, team["id"], alice.user_id, "editor")
    base = f"/api/spaces/{team['id']}/issues"
    r = alice.post(base, json={"title": "Alice's bug", "body": "steps"})
    assert r.status_code == 201, r.text
    number = r.json["number"]
    assert alice.post(f"{base}/{number}/comments", json={"body": "more"}).status_code == 201
    r = alice.put(f"{base}/{number}/assignees/{alice.user_id}")
    assert r.status_code == 200, r.text
    r = alice.post(f"{base}/{number}/close", json={"reason": "completed"})
    assert r.status_code == 200, r.text
    assert env.run(delete_me(alice).json["id"])["status"] == "completed"
    r = bob.get(f"{base}/{number}")
    assert r.status_code == 200, r.text
    assert r.json["author"]["username"] == purge.PLACEHOLDER_NAME
    assert r.json["assignees"] == []
    r = bob.get(f"{base}/{number}/timeline")
    assert r.status_code == 200, r.text
    items = r.json["items"]
    comments = [i for i in items if i["type"] == "comment"]
    events = [i for i in items if i["type"] == "event"]
    assert [c["author"]["username"] for c in comments] == [purge.PLACEHOLDER_NAME]
    assert {e["actor"]["username"] for e in events} == {purge.PLACEHOLDER_NAME}
    assert {e["kind"] for e in events} >= {"assigned", "closed"}
    # An event's payload is the history as written (issue 17: snapshots stay readable
    # after deletions): the assignment still names whom it assigned.
    assigned = next(e for e in events if e["kind"] == "assigned")
    assert "alice" in str(assigned["payload"])


def test_a_long_audit_history_is_scrubbed_in_one_walk_on_its_index(
        tmp_path, database_url, unitstore_url, db, monkeypatch):
    """A long audit history is walked once, in id order, from where the last batch
    stopped, within one round of the step (the round limit counts rounds, not batches):
    with batches of 10 and only 2 rounds allowed, 57 rows of hers (a third already
    without personal data) are all scrubbed and the account is deleted; someone else's
    rows keep theirs. The walk reads each row once (no rescan per batch), and on
    PostgreSQL it reads ``ix_audit_actor``."""
    from sqlalchemy import event, insert

    monkeypatch.setattr(purge, "MAX_ROUNDS", 2)
    settings = make_settings(tmp_path, database_url, unitstore_url, account_deletion_batch=10)
    e = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    try:
        alice, bob = e.world.user("alice"), e.world.user("bob")
        with db.write() as s:  # a third already without personal data (SQL NULLs)
            for personal in (True, False):
                s.execute(insert(AuditLog), [
                    {"id": uuid.uuid4().hex, "at": utcnow(), "actor_type": "user",
                     "actor_id": uid, "action": "test", "target_type": "user",
                     **({"client_ip": "10.0.0.1", "details": {"k": i}} if personal else {})}
                    for uid in (alice.user_id, bob.user_id) for i in range(50)
                    if (i % 3 != 0) == personal])
        op_id = delete_me(alice).json["id"]
        walks: list[tuple[str, object]] = []

        def record(conn, cursor, statement, parameters, *args):
            if statement.lstrip().upper().startswith("SELECT") and "audit_logs" in statement \
                    and "ORDER BY audit_logs.id" in statement:
                walks.append((statement, parameters))
        event.listen(db.write_engine, "before_cursor_execute", record)
        try:
            assert e.run(op_id)["status"] == "completed"
        finally:
            event.remove(db.write_engine, "before_cursor_execute", record)
        with db.read() as s:
            assert s.get(User, alice.user_id) is None
            rows = list(s.scalars(select(AuditLog).where(AuditLog.actor_id == alice.user_id)))
            assert len(rows) > 50
            assert all(r.client_ip is None and r.user_agent is None and r.details is None
                       for r in rows)
            others = list(s.scalars(select(AuditLog).where(AuditLog.actor_id == bob.user_id,
                                                           AuditLog.action == "test")))
            assert sum(r.client_ip is not None for r in others) == 33
        # one read per batch of 10 and the empty one that ends the walk: no batch is read
        # twice, and no second round (no row was written behind the walk)
        assert len(walks) == -(-len(rows) // 10) + 1, (len(rows), len(walks))
        if db.is_postgres:
            statement, parameters = walks[2]
            with db.read_engine.connect() as conn:
                conn.exec_driver_sql("SET enable_seqscan = off")
                plan = " ".join(str(r[0]) for r in conn.exec_driver_sql(
                    "EXPLAIN " + statement, parameters))
                conn.rollback()
            assert "ix_audit_actor" in plan, plan
    finally:
        e.close()
