"""Quotas on operations (issue 19 item 2, ``wharf.operations.quotas``), on SQLite and
PostgreSQL: operations pending at once and submissions per minute, per user, with an API
token's own limits; 429 ``quota_exceeded`` with ``Retry-After`` and the quota in the
problem's details; replays never refused; and, on PostgreSQL, 8 concurrent submitters on
8 engines admit no more than the limit plus the stated bound (concurrent submitters - 1).
"""
from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import func, select

from storage.db import Database
from storage.models import AuditLog, Operation, OutboxMessage
from tests.conftest import make_settings
from wharf.infra.context import Principal, RequestContext
from wharf.infra.settings import ConfigError, Settings
from wharf.operations.errors import QuotaExceeded
from wharf.operations.quotas import id_floor
from wharf.operations.service import Operations
from wharf.units.resources import submit_create_resource

PENDING = 3


@pytest.fixture
def settings(tmp_path, database_url, unitstore_url) -> Settings:
    return make_settings(tmp_path, database_url, unitstore_url, operators=("carol",),
                         quota_pending_operations=PENDING)


def create(client, space_id: str, key: str | None = None, headers: dict | None = None):
    return client.post("/api/resources", json={"space_id": space_id, "name": "Doc",
                                               "unit_type": "doc"},
                       headers={"Idempotency-Key": key or uuid.uuid4().hex,
                                **(headers or {})})


def open_count(db, actor_id: str) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(Operation).where(
            Operation.actor_id == actor_id, Operation.status.in_(("pending", "running"))))


def test_settings_default_and_bounds():
    s = Settings.from_env({})
    assert s.quota_pending_operations == 10000 and s.quota_submissions_per_minute == 0
    assert Settings.from_env({"WHARF_QUOTA_PENDING_OPERATIONS": "0"}).quota_pending_operations == 0
    for name in ("WHARF_QUOTA_PENDING_OPERATIONS", "WHARF_QUOTA_SUBMISSIONS_PER_MINUTE"):
        for bad in ("-1", "10000001", "many"):
            with pytest.raises(ConfigError, match=name):
                Settings.from_env({name: bad})


def test_id_floor_orders_with_ids():
    from storage.ids import new_id
    before = id_floor(0)
    op_id = new_id()
    ms = int(op_id[:12], 16)
    assert before <= id_floor(ms) <= op_id < id_floor(ms + 1)


def test_pending_quota_refuses_with_429_and_details_until_some_finish(world, components, db):
    alice = world.user("alice")
    space = alice.personal_space_id
    first_key = uuid.uuid4().hex
    first = create(alice, space, first_key)
    assert first.status_code == 202
    for _ in range(PENDING - 1):
        assert create(alice, space).status_code == 202
    r = create(alice, space)
    assert r.status_code == 429, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json["code"] == "quota_exceeded"
    assert r.headers["retry-after"] == "2"
    assert r.json["details"] == {"quota": "pending_operations", "limit": PENDING,
                                 "current": PENDING, "retry_after": 2}
    assert open_count(db, alice.user_id) == PENDING  # nothing recorded: no operation,
    with db.read() as s:  # no outbox row, no audit row
        assert s.scalar(select(func.count()).select_from(OutboxMessage)) == PENDING
        assert s.scalar(select(func.count()).select_from(AuditLog).where(
            AuditLog.action == "operation.submit")) == PENDING
    # a replay of a recorded key is never refused: the operation exists
    again = create(alice, space, first_key)
    assert again.status_code == 202 and again.json["id"] == first.json["id"]
    # another user has a quota of their own
    bob = world.user("bob")
    assert create(bob, bob.personal_space_id).status_code == 202
    # once alice's operations finish, she may submit again
    while components.executor.run_batch(limit=10, worker_id="w1"):
        pass
    assert create(alice, space).status_code == 202


def test_submissions_per_minute_quota_counts_finished_ones_too(tmp_path, database_url,
                                                              unitstore_url):
    from tests.conftest import World
    from wharfd.runtime import Components
    settings = make_settings(tmp_path, database_url, unitstore_url,
                             quota_submissions_per_minute=2)
    comps = Components(settings)
    try:
        world = World(comps.api_app(), comps)
        alice = world.user("alice")
        space = alice.personal_space_id
        keys = [uuid.uuid4().hex for _ in range(2)]
        for k in keys:
            assert create(alice, space, k).status_code == 202
        while comps.executor.run_batch(limit=10, worker_id="w1"):
            pass  # finished operations still count toward the minute
        r = create(alice, space)
        assert r.status_code == 429, r.text
        assert r.json["code"] == "quota_exceeded"
        details = r.json["details"]
        assert details["quota"] == "submissions_per_minute"
        assert details["limit"] == 2 and details["current"] == 2
        assert 1 <= int(r.headers["retry-after"]) <= 60
        assert details["retry_after"] == int(r.headers["retry-after"])
        # replays answer 200 with the (completed) operation
        assert create(alice, space, keys[0]).status_code == 200
    finally:
        comps.close()


def test_token_quota_applies_to_requests_with_that_token(world, components, db):
    alice = world.user("alice")
    space = alice.personal_space_id
    r = alice.post("/api/api-tokens", json={"name": "ci", "scopes": ["read", "write"],
                                        "quota_pending_operations": 1})
    assert r.status_code == 201, r.text
    assert r.json["quota_pending_operations"] == 1
    assert r.json["quota_submissions_per_minute"] is None
    bearer = {"Authorization": f"Bearer {r.json['token']}"}
    listed = alice.get("/api/api-tokens").json["items"]
    assert listed[0]["quota_pending_operations"] == 1

    token_client = world.anonymous()
    assert create(token_client, space, headers=bearer).status_code == 202
    refused = create(token_client, space, headers=bearer)
    assert refused.status_code == 429
    assert refused.json["details"]["limit"] == 1
    # the quota is the user's: her login session still has the server's limit (3)
    assert create(alice, space).status_code == 202


def test_only_an_operator_mints_a_token_looser_than_the_server(world):
    alice = world.user("alice")
    for body in ({"quota_pending_operations": PENDING + 1},
                 {"quota_pending_operations": 0}):
        r = alice.post("/api/api-tokens", json={"name": "ci", "scopes": ["write"], **body})
        assert r.status_code == 400, r.text
        assert r.json["code"] == "validation_failed"
        assert r.json["details"]["field"] == "quota_pending_operations"
    r = alice.post("/api/api-tokens", json={"name": "ci", "scopes": ["write"],
                                        "quota_pending_operations": -1})
    assert r.status_code == 400
    # no server limit on the minute: any value tightens it
    r = alice.post("/api/api-tokens", json={"name": "ci", "scopes": ["write"],
                                        "quota_submissions_per_minute": 5})
    assert r.status_code == 201
    carol = world.user("carol")  # an operator
    # a write-only token would not act as hers (wharf.infra.operators): it may not be looser
    r = carol.post("/api/api-tokens", json={"name": "bulk", "scopes": ["write"],
                                        "quota_pending_operations": 0})
    assert r.status_code == 400, r.text
    assert r.json["details"]["field"] == "quota_pending_operations"
    r = carol.post("/api/api-tokens", json={"name": "bulk", "scopes": ["read", "write"],
                                        "quota_pending_operations": 0})
    assert r.status_code == 201, r.text
    bearer = {"Authorization": f"Bearer {r.json['token']}"}
    space = carol.personal_space_id
    anon = world.anonymous()
    for _ in range(PENDING + 2):  # unlimited for this token
        assert create(anon, space, headers=bearer).status_code == 202


def test_a_retry_is_held_to_the_pending_quota(world, components, db):
    """Retrying a failed operation opens it again: at the pending limit it is refused like
    a submission (429 ``quota_exceeded``, nothing changed); once some finish it passes."""
    alice = world.user("alice")
    space = alice.personal_space_id
    failed = create(alice, space).json["id"]
    assert alice.post(f"/api/operations/{failed}/cancel").status_code == 200
    for _ in range(PENDING):
        assert create(alice, space).status_code == 202
    r = alice.post(f"/api/operations/{failed}/retry")
    assert r.status_code == 429, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json["code"] == "quota_exceeded"
    assert r.json["details"]["quota"] == "pending_operations"
    assert open_count(db, alice.user_id) == PENDING
    while components.executor.run_batch(limit=10, worker_id="w1"):
        pass
    r = alice.post(f"/api/operations/{failed}/retry")
    assert r.status_code == 200, r.text
    assert r.json["status"] == "pending"


def test_a_users_token_is_held_to_a_limit_set_after_it_was_minted(world, db):
    """A token a user minted while the server had no limit (here: one recorded as
    unlimited, and one above today's limit) does not stay exempt: a non-operator's token
    is held to the tighter of its own limit and the server's, at request time. An
    operator's looser token keeps its own."""
    from sqlalchemy import update

    from storage.models import ApiToken
    alice = world.user("alice")
    space = alice.personal_space_id
    tokens = []
    for looser in (0, PENDING + 5):
        r = alice.post("/api/api-tokens", json={"name": "ci", "scopes": ["read", "write"],
                                            "quota_pending_operations": 1})
        assert r.status_code == 201, r.text
        with db.write() as s:  # as minted while the server was unlimited
            s.execute(update(ApiToken).where(ApiToken.id == r.json["id"]).values(
                quota_pending_operations=looser))
        tokens.append({"Authorization": f"Bearer {r.json['token']}"})
    anon = world.anonymous()
    for _ in range(PENDING):
        assert create(anon, space, headers=tokens[0]).status_code == 202
    for bearer in tokens:
        refused = create(anon, space, headers=bearer)
        assert refused.status_code == 429, refused.text
        assert refused.json["details"]["limit"] == PENDING


def test_effective_token_limits():
    from wharf.operations.quotas import limits_for
    server = Settings.from_env({"WHARF_QUOTA_PENDING_OPERATIONS": "3",
                                "WHARF_OPERATORS": "carol"})
    unlimited = Settings.from_env({"WHARF_QUOTA_PENDING_OPERATIONS": "0"})

    def token(name: str, quota: int | None) -> Principal:
        return Principal(kind="user", user_id="u" + name, username=name,
                         scopes=frozenset({"read", "write"}), token_id="t",
                         quota_pending=quota)
    assert [limits_for(server, token("alice", q)).pending
            for q in (None, 0, 2, 3, 5)] == [3, 3, 2, 3, 3]
    assert [limits_for(unlimited, token("alice", q)).pending
            for q in (None, 0, 2)] == [0, 0, 2]
    assert [limits_for(server, token("carol", q)).pending
            for q in (None, 0, 2, 5)] == [3, 0, 2, 5]

# --- concurrency: 8 submitters, 8 engines, one PostgreSQL database ------------------------

SUBMITTERS = 8
LIMIT = 20


@pytest.fixture
def pg_only(backend):
    if backend != "postgres":
        pytest.skip("real concurrency needs PostgreSQL")


def test_8_concurrent_submitters_admit_at_most_limit_plus_7(pg_only, world, settings):
    """Stated bound (wharf.operations.quotas): at most ``limit + C - 1`` admitted with C
    submissions in flight at once; here C = 8 submitters, each on its own engine (as 8 API
    processes), each submitting until refused, all released at once by a barrier."""
    alice = world.user("alice")
    space = alice.personal_space_id
    principal = Principal(kind="user", user_id=alice.user_id, username="alice")
    limited = settings.replace(quota_pending_operations=LIMIT)
    barrier = threading.Barrier(SUBMITTERS)
    admitted: list[int] = [0] * SUBMITTERS
    refused: list[int] = [0] * SUBMITTERS
    errors: list[BaseException] = []

    def submitter(i: int) -> None:
        db = Database(limited.database_url, limited.sqlite_busy_timeout_ms)
        try:
            ops = Operations(db, limited)
            ctx = RequestContext(principal=principal)
            body = {"space_id": space, "parent_id": None, "name": "Doc", "unit_type": "doc"}
            submit_create_resource(ops, ctx, uuid.uuid4().hex, body)  # warm the engine
            admitted[i] += 1
            barrier.wait(timeout=30)
            while True:
                try:
                    submit_create_resource(ops, ctx, uuid.uuid4().hex, body)
                    admitted[i] += 1
                except QuotaExceeded:
                    refused[i] += 1
                    if refused[i] >= 3:
                        return
        except BaseException as exc:
            errors.append(exc)
            barrier.abort()
        finally:
            db.dispose()

    threads = [threading.Thread(target=submitter, args=(i,)) for i in range(SUBMITTERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    total = open_count_pg(settings, alice.user_id)
    print(f"admitted {total} with limit {LIMIT} and {SUBMITTERS} concurrent submitters")
    assert total == sum(admitted)
    assert LIMIT <= total <= LIMIT + SUBMITTERS - 1


def open_count_pg(settings: Settings, actor_id: str) -> int:
    db = Database(settings.database_url, settings.sqlite_busy_timeout_ms)
    try:
        return open_count(db, actor_id)
    finally:
        db.dispose()
