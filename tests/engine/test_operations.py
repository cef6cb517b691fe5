"""The operations engine through the HTTP API, on SQLite and PostgreSQL (in-process broker).

Process-level faults (kill -9 of a real worker, Redis flush) are in
test_operations_processes.py.
"""
from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import dramatiq
import pytest
from dramatiq.middleware import Middleware
from sqlalchemy import func, select, update

from storage.models import Node, Operation, OperationAttempt, OutboxMessage, Resource, UnitResource
from storage.unitstore import UnitConflict
from tests.conftest import World
from tests.support.client import ApiClient
from wharf.infra.clock import utcnow
from wharf.infra.errors import TransientFailure
from wharf.operations import recovery
from wharfd.runtime import Components


def key() -> str:
    return uuid.uuid4().hex


def create(client: ApiClient, space_id: str, name: str = "Doc", k: str | None = None,
           unit_type: str = "doc", **kw):
    return client.post("/api/resources", json={"space_id": space_id, "name": name,
                                               "unit_type": unit_type, **kw},
                       headers={"Idempotency-Key": k or key()})


def wait_done(client: ApiClient, op_id: str, seconds: float = 30) -> dict:
    """The operation once done, or as it stands after ``seconds`` of long-polling (30 s:
    a worker thread of a loaded CI machine may take more than 10 s to finish one)."""
    r = client.get(f"/api/operations/{op_id}", params={"wait": str(seconds)})
    assert r.status_code == 200, r.text
    return r.json


def count(db, model, *where) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(model).where(*where))


def start_worker(broker, threads: int = 2) -> dramatiq.Worker:
    w = dramatiq.Worker(broker, worker_threads=threads, worker_timeout=50)
    w.start()
    return w


# --- idempotency ---------------------------------------------------------------------

def test_replay_is_202_while_pending_and_200_once_done(world, components, db):
    alice = world.user("alice")
    k = key()
    first = create(alice, alice.personal_space_id, k=k)
    assert first.status_code == 202
    assert first.headers["location"] == f"/api/operations/{first.json['id']}"
    assert first.headers["retry-after"]
    assert first.json["status"] == "pending" and first.json["done"] is False
    replay = create(alice, alice.personal_space_id, k=k)
    assert replay.status_code == 202 and replay.json["id"] == first.json["id"]
    w = start_worker(components.broker)
    try:
        done = wait_done(alice, first.json["id"])
    finally:
        w.stop()
    assert done["status"] == "completed" and done["done"] is True
    assert set(done["result"]) == {"node_id", "resource_id", "unit_id"}
    again = create(alice, alice.personal_space_id, k=k)
    assert again.status_code == 200 and again.json["id"] == first.json["id"]
    assert "retry-after" not in again.headers
    assert count(db, Operation) == 1 and count(db, Node) == 1


def test_keys_are_scoped_per_actor_and_reuse_with_other_request_is_409(world, db):
    alice, bob = world.user("alice"), world.user("bob")
    k = key()
    a = create(alice, alice.personal_space_id, k=k)
    b = create(bob, bob.personal_space_id, k=k)
    assert a.status_code == b.status_code == 202
    assert a.json["id"] != b.json["id"]
    reused = create(alice, alice.personal_space_id, name="Other", k=k)
    assert reused.status_code == 409
    assert reused.json["code"] == "idempotency_key_reused"
    assert count(db, Operation) == 2


@pytest.mark.parametrize("header,code", [
    (None, "idempotency_key_required"),
    ("short", "invalid_idempotency_key"),
    ("has spaces in it 123456", "invalid_idempotency_key"),
    ("x" * 201, "invalid_idempotency_key"),
    ("ключ-ключ-ключ-ключ", "invalid_idempotency_key"),
])
def test_bad_idempotency_keys_are_400_and_record_nothing(world, db, header, code):
    alice = world.user("alice")
    headers = {"Idempotency-Key": header} if header is not None else {}
    r = alice.post("/api/resources", json={"space_id": alice.personal_space_id, "name": "D",
                                           "unit_type": "doc"}, headers=headers)
    assert r.status_code == 400
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json["code"] == code
    assert count(db, Operation) == 0 and count(db, OutboxMessage) == 0


def test_submit_validates_and_authorizes_before_recording(world, db):
    alice, bob = world.user("alice"), world.user("bob")
    r = create(alice, bob.personal_space_id)
    assert r.status_code == 404  # bob's space is undiscoverable to alice
    r = alice.post("/api/resources", json={"space_id": alice.personal_space_id, "name": "D",
                                           "unit_type": "spreadsheet"},
                   headers={"Idempotency-Key": key()})
    assert r.status_code == 400 and r.json["code"] == "validation_failed"
    team = alice.post("/api/spaces", json={"name": "T"}).json
    assert alice.put(f"/api/spaces/{team['id']}/members/{bob.user_id}",
                     json={"role": "viewer"}).status_code == 201
    r = create(bob, team["id"])
    assert r.status_code == 403
    assert count(db, Operation) == 0


def test_twenty_concurrent_same_key_requests_make_one_operation(world, components, db):
    alice = world.user("alice")
    k = key()
    barrier = threading.Barrier(20)

    def submit(_):
        client = ApiClient(world.app)
        client.cookies = dict(alice.cookies)
        barrier.wait()
        return create(client, alice.personal_space_id, k=k)

    with ThreadPoolExecutor(20) as pool:
        results = list(pool.map(submit, range(20)))
    assert {r.status_code for r in results} == {202}
    assert len({r.json["id"] for r in results}) == 1
    w = start_worker(components.broker)
    try:
        wait_done(alice, results[0].json["id"])
    finally:
        w.stop()
    assert count(db, Operation) == 1
    assert count(db, Node) == 1 and count(db, Resource) == 1 and count(db, UnitResource) == 1


# --- execution -----------------------------------------------------------------------

def test_completed_operation_has_all_rows_and_a_readable_unit(world, worker, db, components):
    alice = world.user("alice")
    parent = alice.post("/api/nodes", json={"space_id": alice.personal_space_id,
                                            "name": "Folder"}).json
    op = create(alice, alice.personal_space_id, name="Plan", unit_type="sheet",
                parent_id=parent["id"]).json
    done = wait_done(alice, op["id"])
    assert done["status"] == "completed" and done["attempts"] == 1
    res = done["result"]
    node = alice.get(f"/api/nodes/{res['node_id']}").json
    assert node["parent_id"] == parent["id"] and node["name"] == "Plan"
    assert node["resource"] == {"id": res["resource_id"], "kind": "unit",
                                "unit_id": res["unit_id"], "unit_type": "sheet"}
    children = alice.get(f"/api/nodes/{parent['id']}/children").json["items"]
    assert [c["id"] for c in children] == [res["node_id"]]
    unit = alice.get(f"/api/units/{res['unit_id']}").json
    assert unit["revision"] == 0 and unit["unit_type"] == "sheet"
    assert alice.get(f"/api/resources/{res['resource_id']}").json["unit"]["unit_id"] == res["unit_id"]
    attempts = alice.get(f"/api/operations/{op['id']}/attempts").json["items"]
    assert [a["outcome"] for a in attempts] == ["completed"]


class FlakyUnitStore:
    """Fault injection around the real UnitStore: ``create_unit`` fails on chosen calls."""

    def __init__(self, real, failures: list[Exception | None], after_effect: bool = False):
        self.real = real
        self.failures = list(failures)
        self.after_effect = after_effect
        self.calls = 0

    def create_unit(self, *args, **kwargs):
        self.calls += 1
        failure = self.failures.pop(0) if self.failures else None
        if failure is not None and not self.after_effect:
            raise failure
        unit = self.real.create_unit(*args, **kwargs)
        if failure is not None:
            raise failure
        return unit

    def __getattr__(self, name):
        return getattr(self.real, name)


def _components_with(settings, db, failures, after_effect=False):
    real = Components(settings, db=db)
    flaky = FlakyUnitStore(real.unitstore, failures, after_effect)
    comps = Components(settings, db=db, unitstore=flaky)
    return real, comps, flaky


def test_transient_unitstore_failures_back_off_then_complete(settings, db):
    transient = TransientFailure("unit store down", code="unitstore_unavailable")
    real, comps, _flaky = _components_with(settings, db, [transient, transient])
    world = World(comps.api_app())
    alice = world.user("alice")
    w = start_worker(comps.broker)
    try:
        op = create(alice, alice.personal_space_id).json
        done = wait_done(alice, op["id"])
    finally:
        w.stop()
        comps.close()
        real.close()
    assert done["status"] == "completed" and done["attempts"] == 3
    attempts = alice.get(f"/api/operations/{op['id']}/attempts").json["items"]
    assert [a["outcome"] for a in attempts] == ["retry", "retry", "completed"]
    assert attempts[0]["error"]["code"] == "unitstore_unavailable"
    assert count(db, Node) == 1


def test_permanent_unitstore_failure_fails_without_rows_or_leftover_unit(settings, db):
    conflict = UnitConflict("unit exists with another type")
    real, comps, _flaky = _components_with(settings, db, [conflict], after_effect=True)
    world = World(comps.api_app())
    alice = world.user("alice")
    w = start_worker(comps.broker)
    try:
        op = create(alice, alice.personal_space_id).json
        done = wait_done(alice, op["id"])
        unit_id = _payload(db, op["id"])["unit_id"]
        assert real.unitstore.get(unit_id) is None  # compensated: the unit was deleted
    finally:
        w.stop()
        comps.close()
        real.close()
    assert done["status"] == "failed" and done["attempts"] == 1
    assert done["error"]["code"] == "unit_conflict" and done["error"]["retryable"] is False
    assert count(db, Node) == 0 and count(db, Resource) == 0 and count(db, UnitResource) == 0


def test_exhausted_retries_fail_and_leave_no_unit(settings, db):
    from wharf.observability.metrics import REGISTRY
    settings = settings.replace(operation_max_attempts=3)
    failure = TransientFailure("unit store down", code="unitstore_unavailable")
    real, comps, _flaky = _components_with(settings, db, [failure] * 10, after_effect=True)
    def retries() -> float:
        return REGISTRY.get_sample_value("wharf_operation_retries_total",
                                         {"kind": "create_resource"}) or 0.0
    retried_before = retries()
    world = World(comps.api_app())
    alice = world.user("alice")
    w = start_worker(comps.broker)
    try:
        op = create(alice, alice.personal_space_id).json
        done = wait_done(alice, op["id"])
        unit_id = _payload(db, op["id"])["unit_id"]
        assert real.unitstore.get(unit_id) is None
    finally:
        w.stop()
        comps.close()
        real.close()
    assert done["status"] == "failed" and done["attempts"] == 3
    assert retries() - retried_before == 2  # the third failure is the last: not a retry
    assert done["error"]["code"] == "unitstore_unavailable"
    assert "gave up after 3 attempts" in done["error"]["message"]
    assert count(db, Node) == 0


def _payload(db, op_id):
    with db.read() as s:
        return s.get(Operation, op_id).payload


def test_permission_revoked_between_submit_and_execution(world, components, db):
    alice, bob = world.user("alice"), world.user("bob")
    team = alice.post("/api/spaces", json={"name": "Team"}).json
    alice.put(f"/api/spaces/{team['id']}/members/{bob.user_id}", json={"role": "editor"})
    op = create(bob, team["id"]).json
    assert alice.delete(f"/api/spaces/{team['id']}/members/{bob.user_id}").status_code == 204
    w = start_worker(components.broker)
    try:
        done = wait_done(bob, op["id"])
    finally:
        w.stop()
    assert done["status"] == "failed"
    assert done["error"]["code"] == "permission_revoked"
    assert count(db, Node) == 0
    assert components.unitstore.get(_payload(db, op["id"])["unit_id"]) is None


class DuplicateEveryMessage(Middleware):
    """Test middleware: every message enqueued is enqueued a second time."""

    def after_enqueue(self, broker, message, delay):
        if not message.options.get("duplicate"):
            broker.enqueue(message.copy(message_id=str(uuid.uuid4()),
                                        options={**message.options, "duplicate": True}),
                           delay=delay)


def test_every_message_delivered_twice_has_one_effect(world, components, db):
    components.broker.add_middleware(DuplicateEveryMessage())
    alice = world.user("alice")
    ops = [create(alice, alice.personal_space_id, name=f"D{i}").json for i in range(5)]
    assert len(components.broker.queues["operations"].queue) == 10  # doubled
    w = start_worker(components.broker, threads=4)
    try:
        done = [wait_done(alice, o["id"]) for o in ops]
        components.broker.join("operations", timeout=10_000)
    finally:
        w.stop()
    assert all(d["status"] == "completed" and d["attempts"] == 1 for d in done)
    assert count(db, Node) == 5 and count(db, UnitResource) == 5
    assert count(db, OperationAttempt) == 5


# --- retry, cancel, visibility, long-poll --------------------------------------------

def test_retry_a_failed_operation_and_refuse_others(world, components, db):
    alice, bob = world.user("alice"), world.user("bob")
    team = alice.post("/api/spaces", json={"name": "Team"}).json
    alice.put(f"/api/spaces/{team['id']}/members/{bob.user_id}", json={"role": "editor"})
    op = create(bob, team["id"]).json
    alice.delete(f"/api/spaces/{team['id']}/members/{bob.user_id}")
    w = start_worker(components.broker)
    try:
        assert wait_done(bob, op["id"])["status"] == "failed"
        alice.put(f"/api/spaces/{team['id']}/members/{bob.user_id}", json={"role": "editor"})
        r = bob.post(f"/api/operations/{op['id']}/retry")
        assert r.status_code == 200 and r.json["status"] == "pending"
        done = wait_done(bob, op["id"])
        assert done["status"] == "completed" and done["attempts"] == 2
        again = bob.post(f"/api/operations/{op['id']}/retry")
        assert again.status_code == 409 and again.json["code"] == "operation_state_conflict"
    finally:
        w.stop()
    assert count(db, Node) == 1


def test_cancel_pending_only_and_cancelled_never_runs(world, components, db):
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id).json
    r = alice.post(f"/api/operations/{op['id']}/cancel")
    assert r.status_code == 200
    assert r.json["status"] == "failed" and r.json["error"]["code"] == "cancelled"
    w = start_worker(components.broker)
    try:
        components.broker.join("operations", timeout=10_000)
    finally:
        w.stop()
    assert alice.get(f"/api/operations/{op['id']}").json["attempts"] == 0
    assert count(db, Node) == 0
    r = alice.post(f"/api/operations/{op['id']}/cancel")
    assert r.status_code == 409


def test_only_the_submitter_sees_an_operation(world):
    alice, bob = world.user("alice"), world.user("bob")
    op = create(alice, alice.personal_space_id).json
    for path in (f"/api/operations/{op['id']}", f"/api/operations/{op['id']}/attempts"):
        assert bob.get(path).status_code == 404
    assert bob.post(f"/api/operations/{op['id']}/cancel").status_code == 404
    assert bob.get("/api/operations").json["items"] == []
    assert world.anonymous().get(f"/api/operations/{op['id']}").status_code == 401


def test_list_filters_and_paginates(world, components):
    alice = world.user("alice")
    ids = [create(alice, alice.personal_space_id, name=f"D{i}").json["id"] for i in range(5)]
    alice.post(f"/api/operations/{ids[0]}/cancel")
    seen, cursor = [], None
    while True:
        params = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        page = alice.get("/api/operations", params=params).json
        seen += [o["id"] for o in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == list(reversed(ids))
    failed = alice.get("/api/operations", params={"status": "failed"}).json["items"]
    assert [o["id"] for o in failed] == [ids[0]]
    assert alice.get("/api/operations", params={"status": "bogus"}).status_code == 400
    assert alice.get("/api/operations", params={"kind": "create_resource"}).json["items"]
    assert alice.get("/api/operations", params={"kind": "nope"}).json["items"] == []


def test_long_poll_wakes_on_completion_not_on_timeout(world, components):
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id).json
    t0 = time.monotonic()
    r = alice.get(f"/api/operations/{op['id']}", params={"wait": "0.5"})
    assert 0.45 <= time.monotonic() - t0 < 3
    assert r.json["status"] == "pending" and r.headers["retry-after"]

    def start_later():
        time.sleep(0.3)
        holder.append(start_worker(components.broker))

    holder: list = []
    threading.Thread(target=start_later).start()
    t0 = time.monotonic()
    r = alice.get(f"/api/operations/{op['id']}", params={"wait": "20"})
    elapsed = time.monotonic() - t0
    time.sleep(0.4)
    for w in holder:
        w.stop()
    assert r.json["status"] == "completed"
    assert elapsed < 5, f"long-poll took {elapsed:.2f}s; it should wake on completion"
    for bad in ("abc", "-1", "nan", "99999"):
        assert alice.get(f"/api/operations/{op['id']}", params={"wait": bad}).status_code == 400


# --- relay and recovery --------------------------------------------------------------

class DownBroker:
    def enqueue(self, *a, **k):
        raise ConnectionError("broker down")


def test_relay_delivers_what_the_fast_path_could_not_send(world, components, db):
    alice = world.user("alice")
    real_broker = components.dispatcher.broker
    components.dispatcher.broker = DownBroker()
    op = create(alice, alice.personal_space_id)
    assert op.status_code == 202  # recorded even though the broker is down
    assert len(components.broker.queues["operations"].queue) == 0
    components.dispatcher.broker = real_broker
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(OutboxMessage)
                        .where(OutboxMessage.dispatched_at.is_(None))) == 1
    assert recovery.relay(db, components.dispatcher.send, grace_seconds=0) == 1
    assert recovery.relay(db, components.dispatcher.send, grace_seconds=0) == 0
    w = start_worker(components.broker)
    try:
        assert wait_done(alice, op.json["id"])["status"] == "completed"
    finally:
        w.stop()


def test_recovery_leaves_an_operation_still_in_the_outbox_to_the_relay(world, components, db):
    """The broker was down at submit; by the time it is back, the operation is overdue for
    recovery and its outbox row for the relay. The sweep (recover, then relay) delivers it
    once, and the outbox row records the delivery."""
    alice = world.user("alice")
    real_broker = components.dispatcher.broker
    components.dispatcher.broker = DownBroker()
    op = create(alice, alice.personal_space_id).json
    components.dispatcher.broker = real_broker
    queue = components.broker.queues["operations"].queue
    assert len(queue) == 0
    report = recovery.recover(db, components.dispatcher.send, grace_seconds=0,
                              key_ttl=components.settings.idempotency_key_ttl)
    relayed = recovery.relay(db, components.dispatcher.send, grace_seconds=0)
    assert (report.requeued, relayed) == (0, 1)
    assert len(queue) == 1  # one delivery, not one from each slow path
    with db.read() as s:
        row = s.scalars(select(OutboxMessage).where(OutboxMessage.subject_id == op["id"])).one()
    assert row.dispatched_at is not None
    # Once the relay sent it, a lost message is recovery's again.
    components.broker.flush_all()
    assert recovery.recover(db, components.dispatcher.send, grace_seconds=0,
                              key_ttl=components.settings.idempotency_key_ttl).requeued == 1
    w = start_worker(components.broker)
    try:
        done = wait_done(alice, op["id"])
    finally:
        w.stop()
    assert done["status"] == "completed" and done["attempts"] == 1


def test_recovery_requeues_expired_leases_and_fails_exhausted_ones(world, components, db):
    alice = world.user("alice")
    a = create(alice, alice.personal_space_id, name="A").json
    b = create(alice, alice.personal_space_id, name="B").json
    components.dispatcher.flush()  # both outbox rows marked dispatched (sent, not pending)
    # Drain the queue: simulate that the broker lost both messages.
    components.broker.flush_all()
    past = utcnow().replace(year=2000)
    with db.write() as s:
        # a: a worker claimed it and died; b: died on its last attempt.
        s.execute(update(Operation).where(Operation.id == a["id"]).values(
            status="running", attempts=1, lease_owner="dead", lease_expires_at=past))
        s.execute(update(Operation).where(Operation.id == b["id"]).values(
            status="running", attempts=5, max_attempts=5, lease_owner="dead",
            lease_expires_at=past))
        s.add(OperationAttempt(operation_id=a["id"], number=1, worker_id="dead"))
    report = recovery.recover(db, components.dispatcher.send, grace_seconds=0,
                              key_ttl=components.settings.idempotency_key_ttl)
    assert report.requeued == 1 and report.expired == 1
    w = start_worker(components.broker)
    try:
        done = wait_done(alice, a["id"])
    finally:
        w.stop()
    assert done["status"] == "completed" and done["attempts"] == 2
    outcomes = [x["outcome"] for x in alice.get(f"/api/operations/{a['id']}/attempts").json["items"]]
    assert outcomes == ["lost", "completed"]
    failed = alice.get(f"/api/operations/{b['id']}").json
    assert failed["status"] == "failed" and failed["error"]["code"] == "lease_expired"
    assert count(db, Node) == 1


def test_operations_and_attempts_written_by_older_versions_still_read(world, components, db):
    """Rows written before the operation kinds were typed: a lost attempt's error without a
    message (what recovery wrote) and a purge result from before nested batches. Reading
    them answered 500 once responses were typed."""
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id, name="Old").json
    with db.write() as s:
        s.execute(update(Operation).where(Operation.id == op["id"]).values(
            status="failed", error={"code": "lease_expired", "retryable": False}))
        s.add(OperationAttempt(operation_id=op["id"], number=9, worker_id="dead",
                               finished_at=utcnow(), outcome="lost",
                               error={"code": "lease_expired", "retryable": True}))
        purge = Operation(kind="purge_trash", actor_id=alice.user_id, max_attempts=5,
                          scope_id=alice.personal_space_id, status="completed",
                          payload={"batch_id": "b" * 32}, request_fingerprint="x",
                          result={"batch_id": "b" * 32, "nodes_deleted": 2,
                                  "resources_deleted": 1, "objects_queued": 0})
        s.add(purge)
        s.flush()
        purge_id = purge.id
    r = alice.get(f"/api/operations/{op['id']}")
    assert r.status_code == 200 and r.json["error"]["code"] == "lease_expired"
    r = alice.get(f"/api/operations/{op['id']}/attempts")
    assert r.status_code == 200
    assert [a["error"]["code"] for a in r.json["items"] if a["outcome"] == "lost"] \
        == ["lease_expired"]
    r = alice.get(f"/api/operations/{purge_id}")
    assert r.status_code == 200, r.text
    assert r.json["result"]["nodes_deleted"] == 2
    assert r.json["result"]["batches_deleted"] == 1
    assert r.json["result"]["nested_batch_ids"] == []
    assert alice.get("/api/operations").status_code == 200


def test_a_lost_attempt_says_why(world, components, db):
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id, name="L").json
    components.dispatcher.flush()
    components.broker.flush_all()
    with db.write() as s:
        s.execute(update(Operation).where(Operation.id == op["id"]).values(
            status="running", attempts=5, max_attempts=5, lease_owner="dead",
            lease_expires_at=utcnow().replace(year=2000)))
        s.add(OperationAttempt(operation_id=op["id"], number=5, worker_id="dead"))
    recovery.recover(db, components.dispatcher.send, grace_seconds=0,
                              key_ttl=components.settings.idempotency_key_ttl)
    items = alice.get(f"/api/operations/{op['id']}/attempts").json["items"]
    assert items[-1]["outcome"] == "lost"
    assert items[-1]["error"]["message"] == recovery.LOST_ATTEMPT


# --- units ---------------------------------------------------------------------------

def test_unit_changesets_follow_resource_access(world, worker):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    team = alice.post("/api/spaces", json={"name": "Team"}).json
    alice.put(f"/api/spaces/{team['id']}/members/{bob.user_id}", json={"role": "viewer"})
    op = create(alice, team["id"]).json
    unit_id = wait_done(alice, op["id"])["result"]["unit_id"]
    patch = [{"op": "add", "path": "/body/title", "value": "Hello"}]
    r = alice.post(f"/api/units/{unit_id}/changesets", json={"base_revision": 0, "changes": patch})
    assert r.status_code == 200 and r.json["revision"] == 1
    assert r.json["snapshot"]["body"]["title"] == "Hello"
    stale = alice.post(f"/api/units/{unit_id}/changesets",
                       json={"base_revision": 0, "changes": patch})
    assert stale.status_code == 409 and stale.json["code"] == "revision_conflict"
    assert bob.get(f"/api/units/{unit_id}").json["snapshot"]["body"]["title"] == "Hello"
    denied = bob.post(f"/api/units/{unit_id}/changesets", json={"base_revision": 1, "changes": patch})
    assert denied.status_code == 403
    assert carol.get(f"/api/units/{unit_id}").status_code == 404
    bad = alice.post(f"/api/units/{unit_id}/changesets",
                     json={"base_revision": 1, "changes": [{"op": "remove", "path": "/nope"}]})
    assert bad.status_code == 400 and bad.json["code"] == "invalid_changeset"
    bad = alice.post(f"/api/units/{unit_id}/changesets",
                     json={"base_revision": 1, "changes": [{"op": "explode"}]})
    assert bad.status_code == 400
    assert alice.get(f"/api/units/{unit_id}").json["revision"] == 1


def test_lease_is_renewed_while_a_long_side_effect_runs(settings, db, world):
    from wharf.operations.executor import Executor
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id).json
    settings = settings.replace(operation_lease_seconds=1)

    class Slow:
        kind = "create_resource"

        def authorize(self, s, op, actor):
            pass

        def perform(self, op):
            time.sleep(2.5)

        def commit(self, s, op, ctx):  # a create_resource result (the kind's shape)
            return {k: op.payload[k] for k in ("node_id", "resource_id", "unit_id")}

        def compensate(self, op):
            pass

    executor = Executor(db, settings, {"create_resource": Slow()})
    outcome = {}
    t = threading.Thread(target=lambda: outcome.setdefault("first", executor.execute(op["id"], "w1")))
    t.start()
    time.sleep(1.8)  # past the original 1 s lease
    assert executor.execute(op["id"], "w2") == "skipped"  # still leased by w1
    t.join()
    assert outcome["first"] == "completed"
    done = alice.get(f"/api/operations/{op['id']}").json
    assert done["status"] == "completed" and done["attempts"] == 1


def test_long_poll_reads_only_the_callers_operation(world, components):
    """A long-poll's read (one Core SELECT, no ORM session) keeps the item's rules: another
    user's operation, an unknown id and a malformed id are 404 with or without ``wait``, and
    the caller's done operation answers at once with its result."""
    alice, bob = world.user("alice"), world.user("bob")
    op = create(alice, alice.personal_space_id).json
    w = start_worker(components.broker)
    try:
        done = wait_done(alice, op["id"])
    finally:
        w.stop()
    assert done["status"] == "completed" and done["result"]["unit_id"]
    t0 = time.monotonic()
    again = wait_done(alice, op["id"], seconds=30)
    assert time.monotonic() - t0 < 5 and again == done
    for who, op_id in ((bob, op["id"]), (alice, "0" * 32), (alice, "not-an-id")):
        for params in ({"wait": "2"}, None):
            r = who.get(f"/api/operations/{op_id}", params=params)
            assert r.status_code == 404, (op_id, params, r.text)
            assert r.json["code"] == "not_found"
