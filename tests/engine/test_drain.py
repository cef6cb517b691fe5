"""Regressions from the review of issue 12's drain/executor path (SQLite and PostgreSQL):

1. a drain whose worker is stopping always hands over (rings), unless it left quietly;
2. a bell naming an operation no longer due is not a short claim (the drain claims on);
3. one operation whose payload no longer decodes fails alone (retried, bounded), and an
   error escaping the claim hands over before it is raised;
4. long kinds are not coalesced behind a running drain (one bell per operation): while
   one long perform runs, another thread takes the next long operation;
5. operations refused at the claim are settled before the others are performed;
6. an ``after_commit`` callback that raises does not turn a commit into an error, nor
   keep the outbox from the dispatcher.
"""
from __future__ import annotations

import threading
import time
import uuid

import dramatiq
import pytest
from dramatiq.brokers.stub import StubBroker
from sqlalchemy import select, update

from storage.db import after_commit, send_after_commit
from storage.models import Operation, OperationAttempt, OutboxMessage
from tasks.actors import drain
from tasks.dispatch import BrokerDispatcher
from tasks.doorbell import LocalDoorbell
from tests.support.client import ApiClient
from wharf.operations.executor import BatchRun
from wharf.operations.service import QUEUE, actor_name


def create(client: ApiClient, space_id: str, name: str) -> str:
    r = client.post("/api/resources", json={"space_id": space_id, "name": name,
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    return str(r.json["id"])


def statuses(db) -> dict[str, str]:
    with db.read() as s:
        return {i: st for i, st in s.execute(select(Operation.id, Operation.status))}


class Ringer:
    def __init__(self) -> None:
        self.doorbell = LocalDoorbell()
        self.rings = 0

    def ring_more(self, actor: str) -> None:
        self.rings += 1


# -- 1. a stopping worker hands over what it owes ----------------------------------------

def test_a_stopping_drain_hands_over_a_claim_a_sender_counted_on():
    ringer = Ringer()
    stopping = threading.Event()

    class Exec:
        calls = 0

        def run_batch_report(self, kinds, *, limit, include=None):
            self.calls += 1
            if self.calls == 1:  # a sender commits O meanwhile; it sees the drain
                assert ringer.doorbell.ring("op_create_resource") is False
                stopping.set()  # SIGTERM
                return BatchRun(claimed=0, full=False)  # began before O committed
            return BatchRun(claimed=1, full=False)

    ex = Exec()
    drain(ex, ringer, "create_resource", 32, None, stopping=stopping)  # type: ignore[arg-type]
    assert ex.calls == 1 and ringer.rings == 1


def test_a_bell_without_an_operation_answered_while_stopping_hands_over():
    ringer = Ringer()
    stopping = threading.Event()
    stopping.set()

    class Exec:
        def run_batch_report(self, kinds, *, limit, include=None):
            raise AssertionError("a stopping worker claims nothing")

    drain(Exec(), ringer, "create_resource", 32, None, stopping=stopping)  # type: ignore[arg-type]
    assert ringer.rings == 1


def test_a_drain_that_left_quietly_does_not_ring():
    ringer = Ringer()

    class Exec:
        def run_batch_report(self, kinds, *, limit, include=None):
            return BatchRun(claimed=0, full=False)

    drain(Exec(), ringer, "create_resource", 32, None,  # type: ignore[arg-type]
          stopping=threading.Event())
    assert ringer.rings == 0


# -- 2. a named operation no longer due is not a short claim -----------------------------

@pytest.mark.parametrize("limit", [3, 1])
def test_a_bell_naming_a_done_operation_drains_the_rest(world, components, db, limit):
    alice = world.user("alice")
    ids = [create(alice, alice.personal_space_id, n) for n in "ABCDE"]
    assert components.executor.execute(ids[0]) == "completed"  # the named one is done
    drain(components.executor, Ringer(), "create_resource", limit, ids[0])
    assert [statuses(db)[i] for i in ids] == ["completed"] * 5


def test_run_batch_report_says_full_when_the_named_slot_was_empty(world, components, db):
    alice = world.user("alice")
    ids = [create(alice, alice.personal_space_id, n) for n in "ABC"]
    assert components.executor.execute(ids[0]) == "completed"
    run = components.executor.run_batch_report(["create_resource"], limit=2, include=ids[0])
    assert run == BatchRun(claimed=1, full=True)
    run = components.executor.run_batch_report(["create_resource"], limit=2)
    assert run == BatchRun(claimed=1, full=False)
    assert components.executor.run_batch(limit=2, include=ids[0]) == 0  # still an int


def test_a_drain_grows_its_claims_over_a_backlog_and_shrinks_after_a_short_one(
        world, components, db):
    """Issue 43: full claims double the next one's size up to ``most``; a short claim
    sets it back. Every operation completes, each once."""
    alice = world.user("alice")
    ids = [create(alice, alice.personal_space_id, f"g{i:02d}") for i in range(20)]
    sizes: list[int] = []
    real = components.executor.run_batch_report
    ringer = Ringer()

    class Exec:
        def run_batch_report(self, kinds, *, limit, include=None):
            sizes.append(limit)
            run = real(kinds, limit=limit, include=include)
            if len(sizes) == 4:  # a later arrival, its sender counting on this drain
                ids.append(create(alice, alice.personal_space_id, "late"))
                assert ringer.doorbell.ring(actor_name("create_resource")) is False
            return run

    drain(Exec(), ringer, "create_resource", 2, None, most=8)  # type: ignore[arg-type]
    # 2 + 4 + 8 + 6 (short) claimed the first 20; then 2 again for the late one, short.
    assert sizes[:5] == [2, 4, 8, 8, 2]
    assert [statuses(db)[i] for i in ids] == ["completed"] * 21
    with db.read() as s:
        attempts = list(s.scalars(select(OperationAttempt.operation_id)))
    assert sorted(attempts) == sorted(ids)  # one attempt each


# -- 3. one bad operation does not block its kind ----------------------------------------

def test_an_undecodable_payload_fails_alone(world, components, db):
    alice = world.user("alice")
    ids = [create(alice, alice.personal_space_id, n) for n in "ABC"]
    with db.write() as s:
        s.execute(update(Operation).where(Operation.id == ids[0]).values(payload={"x": 1}))
    ringer = Ringer()
    drain(components.executor, ringer, "create_resource", 32, None)
    st = statuses(db)
    assert st[ids[1]] == "completed" and st[ids[2]] == "completed"
    with db.read() as s:
        bad = s.get(Operation, ids[0])
        assert bad.attempts == 1 and bad.error["code"] == "internal_error"
        assert bad.status in ("pending", "failed")
        outcomes = list(s.scalars(select(OperationAttempt.outcome).where(
            OperationAttempt.operation_id == ids[0])))
    assert outcomes == ["retry"]


def test_an_error_escaping_the_claim_hands_over():
    ringer = Ringer()

    class Exec:
        def run_batch_report(self, kinds, *, limit, include=None):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        drain(Exec(), ringer, "create_resource", 32, "op1")  # type: ignore[arg-type]
    assert ringer.rings == 1
    assert ringer.doorbell.draining["op_create_resource"] == 0


# -- 4. long kinds ring per operation ----------------------------------------------------

def test_long_kinds_are_not_coalesced_behind_a_running_drain(db):
    broker = StubBroker()
    broker.declare_queue(QUEUE)
    bell = LocalDoorbell()
    dispatcher = BrokerDispatcher(broker, db, doorbell=bell)
    long_actor, fast_actor = actor_name("create_blob_resource"), actor_name("create_resource")
    with bell.answer(long_actor), bell.answer(fast_actor):  # both kinds are draining
        dispatcher.dispatch([
            OutboxMessage(id=f"r{i}", actor_name=a, queue_name=QUEUE, subject_id=f"o{i}",
                          delay_ms=0)
            for i, a in enumerate([long_actor, long_actor, fast_actor, fast_actor])])
    dispatcher.flush()
    sent = [dramatiq.Message.decode(m).actor_name for m in broker.queues[QUEUE].queue]
    assert sent.count(long_actor) == 2  # each its own bell: an idle thread takes it
    assert sent.count(fast_actor) == 0  # covered by the running drain


# -- 5. refusals are settled straight after the claim ------------------------------------

def test_a_refused_operation_is_settled_before_the_others_are_performed(world, components,
                                                                       db):
    from wharf.operations.executor import Executor, Hooks
    alice, bob = world.user("alice"), world.user("bob")
    team = alice.post("/api/spaces", json={"name": "Team"}).json
    alice.put(f"/api/spaces/{team['id']}/members/{bob.user_id}", json={"role": "editor"})
    by_bob = create(bob, team["id"], "B")
    mine = create(alice, team["id"], "A")
    assert alice.delete(f"/api/spaces/{team['id']}/members/{bob.user_id}").status_code == 204
    seen: list[str] = []

    class Look(Hooks):
        def before_perform(self, op):
            seen.append(statuses(db)[by_bob])

    ex = Executor(db, components.settings, components.executor.handlers, hooks=Look())
    assert ex.run_batch(limit=10, worker_id="w1") == 2
    assert seen == ["failed"]
    assert statuses(db) == {by_bob: "failed", mine: "completed"}


# -- 6. after_commit callbacks ------------------------------------------------------------

def test_a_failing_after_commit_callback_neither_raises_nor_drops_the_outbox(db):
    handed: list[list] = []
    ran: list[str] = []
    sink_db = db.with_outbox_sink(handed.append)

    def boom() -> None:
        raise RuntimeError("cache drop failed")

    with sink_db.write() as s:
        after_commit(s, boom)
        after_commit(s, lambda: ran.append("second"))
        send_after_commit(s, OutboxMessage(actor_name="op_x", queue_name=QUEUE,
                                           subject_id="o1"))
    assert ran == ["second"]
    assert len(handed) == 1 and handed[0][0].subject_id == "o1"


def test_a_long_kind_is_not_held_up_by_another_ones_long_perform(world, components, db):
    """Embedded broker, 4 worker threads: while the first long operation's side effects
    run (paused), the second one is claimed and completed by another thread."""
    from tasks.worker import make_worker
    from wharf.infra.clock import utcnow
    from wharf.operations.service import outbox_for
    alice = world.user("alice")
    release, started = threading.Event(), threading.Event()
    first: list[str] = []

    class SlowLong:
        kind = "create_blob_resource"

        def authorize(self, session, op, actor):
            pass

        def perform(self, op):
            if op.id == first[0]:
                started.set()
                assert release.wait(20)

        def commit(self, session, op, ctx):
            return {}

        def compensate(self, op):
            pass

    components.handlers["create_blob_resource"] = SlowLong()  # type: ignore[assignment]

    def submit() -> str:
        with components.db.write() as s:
            op = Operation(id=uuid.uuid4().hex[:26], kind="create_blob_resource",
                           status="pending", actor_id=alice.user_id, payload={},
                           request_fingerprint="x", max_attempts=3, created_at=utcnow())
            s.add(op)
            s.flush()
            send_after_commit(s, outbox_for(op))
            return op.id

    worker = make_worker(components.broker, 4)
    worker.start()
    try:
        first.append(submit())
        assert started.wait(10)
        second = submit()
        deadline = time.monotonic() + 8
        while statuses(db)[second] != "completed":
            assert time.monotonic() < deadline, "second waited for the first"
            time.sleep(0.05)
        assert statuses(db)[first[0]] == "running"
    finally:
        release.set()
        worker.stop(timeout=10_000)
    assert statuses(db)[first[0]] == "completed"
