"""Bulk submission (``POST /api/operations:batch``, issue 43), on SQLite and PostgreSQL:
one answer per item in order, one transaction, the single route's validation, idempotency
inside and across batches, quotas counting each operation, and hostile batches refused
whole with nothing recorded. (A kill -9 during a batch: tests/processes/test_bulk.py.)"""
from __future__ import annotations

import uuid

import falcon
import falcon.testing
import msgspec
import pytest
from sqlalchemy import func, select

from api import errors
from api.resources import batch
from storage.models import AuditLog, Node, Operation, OutboxMessage
from tests.conftest import make_settings
from tests.engine.test_operations import start_worker, wait_done
from wharf.infra.settings import Settings
from wharf.operations.bulk import ItemAnswer
from wharf.operations.errors import IdempotencyKeyReused

BATCH = "/api/operations:batch"


def item(space_id: str, k: str | None = None, name: str = "Doc", **input_: object) -> dict:
    return {"idempotency_key": k or uuid.uuid4().hex, "kind": "create_resource",
            "input": {"space_id": space_id, "name": name, "unit_type": "doc", **input_}}


def count(db, model, *where) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(model).where(*where))


def test_100_items_3_duplicates_2_invalid_give_95_operations_3_replays_2_problems(
        world, components, db):
    alice = world.user("alice")
    space = alice.personal_space_id
    items = [item(space, name=f"Doc {i}") for i in range(95)]
    items.insert(10, dict(items[3]))            # same key, same request: replays
    items.insert(40, dict(items[20]))
    items.insert(70, dict(items[60]))
    items.insert(5, item(space, name=""))        # invalid: the single route's rule
    items.insert(50, item(space, unit_type="nope"))
    assert len(items) == 100
    r = alice.post(BATCH, json={"items": items})
    assert r.status_code == 200, r.text
    answers = r.json["items"]
    assert len(answers) == 100
    created = [a for a in answers if a["status"] == 202 and not a["replay"]]
    replays = [a for a in answers if a.get("replay")]
    problems = [a for a in answers if "problem" in a]
    assert (len(created), len(replays), len(problems)) == (95, 3, 2)
    assert all(p["status"] == 400 and p["problem"]["code"] == "validation_failed"
               for p in problems)
    assert answers[5]["problem"]["details"]["field"] == "name"
    # each replay answers the operation its first item recorded, in order
    by_key = {it["idempotency_key"]: a["operation"]["id"]
              for it, a in zip(items, answers, strict=True) if "operation" in a}
    for it, a in zip(items, answers, strict=True):
        if a.get("replay"):
            assert a["status"] == 202 and a["operation"]["id"] == by_key[it["idempotency_key"]]
    assert count(db, Operation, Operation.actor_id == alice.user_id) == 95
    assert count(db, OutboxMessage) >= 95
    assert count(db, AuditLog, AuditLog.action == "operation.submit") == 95
    # across batches: the same batch again is 98 replays (the same operations) + 2 problems
    again = alice.post(BATCH, json={"items": items}).json["items"]
    assert [a.get("operation", {}).get("id") for a in again] == \
        [a.get("operation", {}).get("id") for a in answers]
    assert all(a["replay"] for a in again if "operation" in a)
    assert count(db, Operation, Operation.actor_id == alice.user_id) == 95
    # the recorded operations complete, each once
    w = start_worker(components.broker)
    try:
        for a in created[:3] + created[-2:]:
            assert wait_done(alice, a["operation"]["id"])["status"] == "completed"
        components.broker.join("operations", timeout=60_000)
    finally:
        w.stop(timeout=5000)
    assert count(db, Node, Node.name.like("Doc %")) == 95


def test_a_key_reused_inside_a_batch_or_across_is_409_for_another_request(world, db):
    alice = world.user("alice")
    space = alice.personal_space_id
    k = uuid.uuid4().hex
    single = alice.post("/api/resources", json={"space_id": space, "name": "Single",
                                                "unit_type": "doc"},
                        headers={"Idempotency-Key": k})
    assert single.status_code == 202
    k2 = uuid.uuid4().hex
    items = [item(space, k, name="Single"), item(space, k, name="Other"),
             item(space, k2, name="A"), item(space, k2, name="B"), item(space, "short")]
    answers = alice.post(BATCH, json={"items": items}).json["items"]
    assert answers[0]["replay"] and answers[0]["operation"]["id"] == single.json["id"]
    assert answers[1]["status"] == 409
    assert answers[1]["problem"]["code"] == "idempotency_key_reused"
    assert answers[1]["problem"]["details"]["operation_id"] == single.json["id"]
    assert answers[2]["status"] == 202 and not answers[2]["replay"]
    assert answers[3]["status"] == 409
    # (names the item that holds the key: its operation may yet be refused, by a quota)
    assert answers[3]["problem"]["details"] == {"item": 2}
    assert answers[4]["problem"]["code"] == "invalid_idempotency_key"
    assert count(db, Operation, Operation.actor_id == alice.user_id) == 2


def test_items_the_caller_may_not_create_are_refused_one_by_one(world, db):
    alice, bob = world.user("alice"), world.user("bob")
    items = [item(alice.personal_space_id), item(bob.personal_space_id),
             item(alice.personal_space_id, parent_id=uuid.uuid4().hex)]
    answers = alice.post(BATCH, json={"items": items}).json["items"]
    assert answers[0]["status"] == 202
    assert answers[1]["status"] == 404 and answers[1]["problem"]["code"] == "not_found"
    assert answers[2]["status"] == 404
    assert count(db, Operation) == 1


def test_an_item_problem_is_the_single_route_document_its_detail_bounded_alike():
    """An item's problem is the document the single route answers for the same error: the
    same keys, details whole (not only the schema's), and a long detail cut the same way."""
    exc = IdempotencyKeyReused("x" * 5000, details={"item": 2, "operation_id": "op_1"})

    class Raises:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            raise exc

    app = falcon.App()
    errors.install(app)
    app.add_route("/", Raises())
    top = falcon.testing.TestClient(app).simulate_get("/")
    assert top.status_code == 409 and top.headers["content-type"] == errors.PROBLEM
    answer = msgspec.json.decode(msgspec.json.encode(
        batch._answer(ItemAnswer(error=exc))))
    assert answer["status"] == 409
    assert answer["problem"] == top.json
    assert answer["problem"]["detail"] == "x" * errors.MAX_DETAIL + "…"
    assert answer["problem"]["details"] == {"item": 2, "operation_id": "op_1"}


class TestQuota:
    @pytest.fixture
    def settings(self, tmp_path, database_url, unitstore_url) -> Settings:
        return make_settings(tmp_path, database_url, unitstore_url,
                             quota_pending_operations=30)

    def test_a_batch_cannot_pass_the_pending_operations_quota(self, world, db):
        alice = world.user("alice")
        space = alice.personal_space_id
        first = [item(space) for _ in range(20)]
        assert all(a["status"] == 202 for a in
                   alice.post(BATCH, json={"items": first}).json["items"])
        second = [item(space) for _ in range(20)] + [first[0]]
        answers = alice.post(BATCH, json={"items": second}).json["items"]
        assert [a["status"] for a in answers[:10]] == [202] * 10
        refused = answers[10:20]
        assert all(a["status"] == 429 and a["problem"]["code"] == "quota_exceeded"
                   and a["problem"]["details"]["quota"] == "pending_operations"
                   for a in refused)
        assert answers[20]["replay"]  # a replay is never refused by a quota
        assert count(db, Operation, Operation.actor_id == alice.user_id) == 30
        answers = alice.post(BATCH, json={"items": [item(space)]}).json["items"]
        assert answers[0]["status"] == 429
        assert count(db, Operation, Operation.actor_id == alice.user_id) == 30


class TestConcurrentQuota:
    @pytest.fixture
    def settings(self, tmp_path, database_url, unitstore_url) -> Settings:
        return make_settings(tmp_path, database_url, unitstore_url,
                             quota_submissions_per_minute=10)

    def test_concurrent_batches_of_one_user_stay_within_the_quota(self, world, db):
        """Ten batches of ten new keys at once, a quota of ten a minute: one batch's count
        sees the others' rows (they take turns), so ten are recorded, not a hundred."""
        alice = world.user("alice")
        batches = [[item(alice.personal_space_id, name=f"B{b} {i}") for i in range(10)]
                   for b in range(10)]
        results = _send_concurrently(world, alice, batches)
        statuses = [a["status"] for answers in results for a in answers]
        assert statuses.count(202) == 10 and statuses.count(429) == 90
        assert count(db, Operation, Operation.actor_id == alice.user_id) == 10


def test_batches_holding_each_others_keys_in_opposite_orders_both_answer(world, db):
    """Two batches of the same 60 keys, one reversed, sent at once: both are answered
    (no deadlock's 503), each key recorded once, the other's items its replays."""
    alice = world.user("alice")
    items = [item(alice.personal_space_id, name=f"Key {i}") for i in range(60)]
    for _round in range(3):
        fresh = [{**it, "idempotency_key": uuid.uuid4().hex} for it in items]
        # (SQLite's write lock answers 503 under contention, retried; on PostgreSQL a 503
        # would be the deadlock)
        a, b = _send_concurrently(world, alice, [fresh, fresh[::-1]],
                                  retry_busy=not db.is_postgres)
        assert [x["operation"]["id"] for x in a] == [x["operation"]["id"] for x in b[::-1]]
        assert sum(not x["replay"] for x in a + b) == 60
    assert count(db, Operation, Operation.actor_id == alice.user_id) == 180


def _send_concurrently(world, user, batches: list[list[dict]], *,
                       retry_busy: bool = True) -> list[list[dict]]:
    """Each batch POSTed from its own thread at once; their answers, in order. A 503
    ``database_busy`` (SQLite's write lock under contention) is retried as a client does
    when ``retry_busy``."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from tests.support.client import ApiClient
    start = threading.Barrier(len(batches))

    def send(batch: list[dict]) -> list[dict]:
        c = ApiClient(world.app)
        c.cookies = dict(user.cookies)
        start.wait()
        for _attempt in range(50):
            r = c.post(BATCH, json={"items": batch})
            if r.status_code != 503 or not retry_busy:
                break
            time.sleep(0.05)
        assert r.status_code == 200, r.text
        return r.json["items"]

    with ThreadPoolExecutor(len(batches)) as pool:
        return list(pool.map(send, batches))


@pytest.mark.parametrize("body", [
    "101 items", "not a list", "an item not an object", "a missing key", "a missing kind",
    "an unknown kind", "input not an object", "an unknown member", "no items",
    "a huge body"])
def test_hostile_batches_are_refused_whole_and_record_nothing(world, db, body):
    alice = world.user("alice")
    space = alice.personal_space_id
    good = item(space)
    bodies = {
        "101 items": {"items": [item(space) for _ in range(101)]},
        "not a list": {"items": good},
        "an item not an object": {"items": [good, 3]},
        "a missing key": {"items": [good, {"kind": "create_resource", "input": {}}]},
        "a missing kind": {"items": [good, {"idempotency_key": uuid.uuid4().hex,
                                            "input": good["input"]}]},
        "an unknown kind": {"items": [good, {**good, "kind": "delete_everything",
                                             "idempotency_key": uuid.uuid4().hex}]},
        "input not an object": {"items": [good, {**item(space), "input": [1]}]},
        "an unknown member": {"items": [good, {**item(space), "priority": 1}]},
        "no items": {"items": []},
        "a huge body": {"items": [good, item(space, name="x" * (2 * 1024 * 1024))]},
    }
    r = alice.post(BATCH, json=bodies[body])
    assert 400 <= r.status_code < 500, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json["code"] in ("validation_failed", "payload_too_large")
    assert count(db, Operation) == 0 and count(db, AuditLog,
                                               AuditLog.action == "operation.submit") == 0


def test_a_batch_needs_a_signed_in_user(client, db):
    r = client.post(BATCH, json={"items": []})
    assert r.status_code == 401
    assert count(db, Operation) == 0


def test_the_same_batch_sent_concurrently_records_each_item_once(world, db):
    """Concurrent copies of one batch meet on the (actor, key) constraint: one records,
    the others' INSERT finds the keys taken and answers them as replays (a 503
    ``database_busy`` from SQLite's write lock is retried, as a client does)."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    from tests.support.client import ApiClient
    alice = world.user("alice")
    items = [item(alice.personal_space_id, name=f"Same {i}") for i in range(50)]

    def send(_: int) -> list[dict]:
        c = ApiClient(world.app)
        c.cookies = dict(alice.cookies)
        for _attempt in range(20):
            r = c.post(BATCH, json={"items": items})
            if r.status_code != 503:
                break
            time.sleep(0.1)
        assert r.status_code == 200, r.text
        return r.json["items"]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(send, range(4)))
    ids = [[a["operation"]["id"] for a in answers] for answers in results]
    assert all(x == ids[0] for x in ids)
    assert sum(not a["replay"] for answers in results for a in answers) == 50
    assert count(db, Operation, Operation.actor_id == alice.user_id) == 50
    assert count(db, AuditLog, AuditLog.action == "operation.submit") == 50
