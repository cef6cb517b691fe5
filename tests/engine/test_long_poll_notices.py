"""A long-poll answered from the completion notice: the worker hands over what it committed,
so the long-poll of an operation this process accepted reads nothing, and its answer is the
one a read gives (``wharf.operations.notify``)."""
from __future__ import annotations

import threading
import time

from sqlalchemy import select

from storage.models import Operation
from tests.conftest import World
from tests.engine.test_operations import (
    UnitConflict,
    _components_with,
    create,
    start_worker,
    wait_done,
)
from tests.engine.test_prefer_wait import submit
from wharf.operations.notify import Done, LocalNotifier
from wharfd.runtime import Components


class Recording(LocalNotifier):
    def __init__(self) -> None:
        super().__init__()
        self.published: list = []

    def publish_many(self, notices) -> None:
        self.published.extend(notices)
        super().publish_many(notices)


def waiting(notifier: LocalNotifier, op_ids: list[str]) -> None:
    """Until a long-poll of each of ``op_ids`` waits."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with notifier._lock:
            if all(notifier._waiters.get(i) for i in op_ids):
                return
        time.sleep(0.01)
    raise AssertionError("the long-polls never waited")


def long_poll(client, op_id: str, notifier: LocalNotifier):
    """A 30 s long-poll of ``op_id`` in a thread, once it waits: the thread, and where its
    (answer, seconds waited) will be."""
    answers: list[tuple[dict, float]] = []

    def poll() -> None:
        t0 = time.monotonic()
        answers.append((wait_done(client, op_id, 30), time.monotonic() - t0))

    t = threading.Thread(target=poll)
    t.start()
    waiting(notifier, [op_id])
    return t, answers


def test_the_submitters_long_poll_reads_nothing_and_answers_what_a_read_gives(
        world, components, monkeypatch):
    from wharf.operations import notify
    monkeypatch.setattr(notify, "CONFIRM_SECONDS", 60)  # a slow worker must not read
    alice, bob = world.user("alice"), world.user("bob")
    reads: list[str] = []
    real_peek = components.operations.peek
    monkeypatch.setattr(components.operations, "peek",
                        lambda ctx, op_id: reads.append(op_id) or real_peek(ctx, op_id))
    ops = [create(alice, alice.personal_space_id, name=f"Doc {i}").json for i in range(3)]
    # Another user's long-poll of it is read first, and refused, expected or not.
    r = bob.get(f"/api/operations/{ops[0]['id']}", params={"wait": "2"})
    assert r.status_code == 404 and r.json["code"] == "not_found"
    assert reads == [ops[0]["id"]]
    answers: dict[str, dict] = {}
    polls = [threading.Thread(target=lambda i=op["id"]: answers.update({i: wait_done(alice, i)}))
             for op in ops]
    for t in polls:
        t.start()
    waiting(components.notifier, [op["id"] for op in ops])  # nothing is done yet
    assert reads == [ops[0]["id"]]  # none for alice's own long-polls
    w = start_worker(components.broker)
    try:
        for t in polls:
            t.join(60)
    finally:
        w.stop()
    assert reads == [ops[0]["id"]]  # nor once they were answered
    assert sorted(answers) == sorted(op["id"] for op in ops)
    for answer in answers.values():
        assert answer["status"] == "completed" and answer["result"]["unit_id"]
        # The operation as it is read (the item's ORM read; a long-poll's Core read).
        assert alice.get(f"/api/operations/{answer['id']}").json == answer
        assert wait_done(alice, answer["id"]) == answer
    assert len(reads) == 1 + len(ops)  # finished: a later long-poll reads it


def _committed(db, op_id: str) -> Done:
    with db.read() as s:
        return Done.of(s.scalars(select(Operation).where(Operation.id == op_id)).one())


def test_a_workers_notices_are_the_operations_it_committed(settings, db):
    notifier = Recording()
    comps = Components(settings, db=db, notifier=notifier)
    world = World(comps.api_app())
    alice = world.user("alice")
    ops = [create(alice, alice.personal_space_id, name=f"Doc {i}").json for i in range(4)]
    w = start_worker(comps.broker)
    try:
        for op in ops:
            wait_done(alice, op["id"])
    finally:
        w.stop()
        comps.close()
    by_id = {n.id: n for n in notifier.published}
    assert sorted(by_id) == sorted(op["id"] for op in ops)
    for op in ops:
        assert by_id[op["id"]] == _committed(db, op["id"])


def test_a_failures_notice_is_the_failed_operation_it_committed(settings, db):
    real, comps, _flaky = _components_with(settings, db, [UnitConflict("taken")],
                                           after_effect=True)
    comps.close()
    notifier = Recording()
    comps = Components(settings, db=db, notifier=notifier, unitstore=comps.unitstore)
    world = World(comps.api_app())
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id).json
    w = start_worker(comps.broker)
    try:
        answer = wait_done(alice, op["id"])
    finally:
        w.stop()
        comps.close()
        real.close()
    assert answer["status"] == "failed" and answer["error"]["code"] == "unit_conflict"
    assert notifier.published == [_committed(db, op["id"])]
    assert alice.get(f"/api/operations/{op['id']}").json == answer


def test_a_cancel_answers_the_long_polls_of_its_operation_at_once(world, components,
                                                                   monkeypatch):
    from wharf.operations import notify
    monkeypatch.setattr(notify, "CONFIRM_SECONDS", 60)  # only a notice can answer early
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id).json  # no worker: it stays pending
    t, answers = long_poll(alice, op["id"], components.notifier)
    assert not answers
    r = alice.post(f"/api/operations/{op['id']}/cancel")
    assert r.status_code == 200, r.text
    t.join(40)
    answer, waited = answers[0]
    assert answer["status"] == "failed" and answer["error"]["code"] == "cancelled"
    assert waited < 10  # woken by the cancel, not at the end of its 30 s
    assert answer == alice.get(f"/api/operations/{op['id']}").json


def test_a_submission_that_prefers_to_wait_reads_nothing_either(world, components,
                                                              monkeypatch):
    from wharf.operations import notify
    monkeypatch.setattr(notify, "CONFIRM_SECONDS", 60)
    alice = world.user("alice")
    reads: list[str] = []
    real_peek = components.operations.peek
    monkeypatch.setattr(components.operations, "peek",
                        lambda ctx, op_id: reads.append(op_id) or real_peek(ctx, op_id))
    workers: list = []

    def start_once_waiting() -> None:  # so the notice cannot come before the wait
        deadline = time.monotonic() + 20
        while not components.notifier._waiters and time.monotonic() < deadline:
            time.sleep(0.01)
        workers.append(start_worker(components.broker))

    starter = threading.Thread(target=start_once_waiting)
    starter.start()
    try:
        r = submit(alice, "wait=30", name="Waited")
    finally:
        starter.join()
        for w in workers:
            w.stop()
    assert r.status_code == 200 and r.json["status"] == "completed", r.text
    assert r.headers["preference-applied"] == "wait=30"
    assert reads == []  # answered from the worker's notice
    assert alice.get(f"/api/operations/{r.json['id']}").json == r.json


def test_an_operation_the_recovery_sweep_fails_answers_its_long_polls(world, components,
                                                                       db, monkeypatch):
    from sqlalchemy import update

    from wharf.infra.clock import utcnow
    from wharf.operations import notify
    from wharf.retention.sweeps import SweepContext, recover_operations
    monkeypatch.setattr(notify, "CONFIRM_SECONDS", 60)  # only a notice can answer early
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id).json
    with db.write() as s:  # its worker died on its last attempt
        s.execute(update(Operation).where(Operation.id == op["id"]).values(
            status="running", attempts=5, max_attempts=5, lease_owner="dead",
            lease_expires_at=utcnow().replace(year=2000)))
    t, answers = long_poll(alice, op["id"], components.notifier)
    ctx = SweepContext(db=components.db, settings=components.settings, now=utcnow(),
                       send=components.dispatcher.send, handlers=components.handlers)
    assert recover_operations(ctx)["expired"] == 1
    t.join(40)
    answer, waited = answers[0]
    assert answer["status"] == "failed" and answer["error"]["code"] == "lease_expired"
    assert waited < 10  # woken by the sweep, not at the end of its 30 s
    assert answer == alice.get(f"/api/operations/{op['id']}").json
