"""The executor's batch path (``Executor.run_batch``), on SQLite and PostgreSQL: a batch
claims due operations in one statement, re-checks permission per target, performs, and
completes them together, falling back to one transaction per operation on error."""
from __future__ import annotations

import contextlib
import threading
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import create_engine, func, select, text, update

from storage.models import Node, Operation, OperationAttempt
from storage.unitstore import UnitConflict
from tests.support.client import ApiClient
from wharf.infra.clock import utcnow


def key() -> str:
    return uuid.uuid4().hex


def create(client: ApiClient, space_id: str, name: str = "Doc") -> dict:
    r = client.post("/api/resources", json={"space_id": space_id, "name": name,
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    return r.json


def count(db, model, *where) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(model).where(*where))


def statuses(db) -> dict[str, str]:
    with db.read() as s:
        return {i: st for i, st in s.execute(select(Operation.id, Operation.status))}


def test_run_batch_completes_every_due_operation(world, components, db):
    alice = world.user("alice")
    ops = [create(alice, alice.personal_space_id, f"D{i}") for i in range(5)]
    assert components.executor.run_batch(limit=3, worker_id="w1") == 3
    assert components.executor.run_batch(limit=3, worker_id="w1") == 2
    assert components.executor.run_batch(limit=3, worker_id="w1") == 0
    assert set(statuses(db).values()) == {"completed"}
    assert count(db, Node) == 5
    assert count(db, OperationAttempt, OperationAttempt.outcome == "completed") == 5
    for op in ops:
        done = alice.get(f"/api/operations/{op['id']}").json
        assert done["status"] == "completed" and done["attempts"] == 1


def test_run_batch_filters_by_kind(world, components, db):
    alice = world.user("alice")
    create(alice, alice.personal_space_id)
    assert components.executor.run_batch(["purge_trash"], worker_id="w1") == 0
    assert components.executor.run_batch(["create_resource"], worker_id="w1") == 1
    # Several kinds (PostgreSQL: one array parameter; one kind is one value), fair
    # claiming on (the default) and off.
    create(alice, alice.personal_space_id, "Two")
    assert components.executor.run_batch(["purge_trash", "create_resource"],
                                         worker_id="w1") == 1
    from wharf.operations.executor import Executor
    plain = Executor(components.db, components.settings.replace(fair_claiming=False),
                     components.handlers)
    create(alice, alice.personal_space_id, "Three")
    assert plain.run_batch(["purge_trash"], worker_id="w1") == 0
    assert plain.run_batch(["merge_worktree", "create_resource"], worker_id="w1") == 1
    assert statuses(db) and set(statuses(db).values()) == {"completed"}


def payload_of(db, op_id: str) -> dict:
    with db.read() as s:
        return s.get(Operation, op_id).payload


def attempts_of(db, op_id: str) -> list[tuple[int, str | None]]:
    with db.read() as s:
        return [(a.number, a.outcome) for a in s.scalars(
            select(OperationAttempt).where(OperationAttempt.operation_id == op_id)
            .order_by(OperationAttempt.number))]


def test_include_is_claimed_first(world, components, db):
    alice = world.user("alice")
    a, b, c = (create(alice, alice.personal_space_id, n)["id"] for n in "ABC")
    assert components.executor.run_batch(limit=2, worker_id="w1", include=c) == 2
    assert statuses(db) == {a: "completed", b: "pending", c: "completed"}
    # an include that is not due (done) takes nothing away from the others
    assert components.executor.run_batch(limit=2, worker_id="w1", include=c) == 1
    assert statuses(db)[b] == "completed"


def test_execute_is_a_batch_of_one_that_claims_only_its_operation(world, components, db):
    alice = world.user("alice")
    a, b = (create(alice, alice.personal_space_id, n)["id"] for n in "AB")
    assert components.executor.execute(b, "w1") == "completed"
    assert statuses(db) == {a: "pending", b: "completed"}
    assert components.executor.execute(b, "w1") == "skipped"


def test_revoked_permission_fails_only_that_operation(world, components, db):
    """One refused at the claim (bob, removed before), one refused inside the completion
    (carol, removed between perform and commit); alice's operations complete."""
    from wharf.operations.executor import Executor, Hooks
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    team = alice.post("/api/spaces", json={"name": "Team"}).json
    for u in (bob, carol):
        alice.put(f"/api/spaces/{team['id']}/members/{u.user_id}", json={"role": "editor"})
    mine = [create(alice, team["id"], f"A{i}")["id"] for i in range(3)]
    by_bob = create(bob, team["id"], "B")["id"]
    by_carol = create(carol, team["id"], "C")["id"]
    assert alice.delete(f"/api/spaces/{team['id']}/members/{bob.user_id}").status_code == 204

    class RevokeCarolBeforeCommit(Hooks):
        def before_commit(self, op):
            if op.id == by_carol:
                r = alice.delete(f"/api/spaces/{team['id']}/members/{carol.user_id}")
                assert r.status_code == 204

    executor = Executor(components.db, components.settings, components.handlers,
                        hooks=RevokeCarolBeforeCommit())
    assert executor.run_batch(limit=10, worker_id="w1") == 5
    st = statuses(db)
    assert [st[i] for i in mine] == ["completed"] * 3
    for refused in (by_bob, by_carol):
        done = bob.get(f"/api/operations/{refused}").json if refused == by_bob else \
            carol.get(f"/api/operations/{refused}").json
        assert done["status"] == "failed"
        assert done["error"]["code"] == "permission_revoked"
        assert attempts_of(db, refused) == [(1, "failed")]
        # compensated: no unit left behind, no rows
        assert components.unitstore.get(payload_of(db, refused)["unit_id"]) is None
    assert count(db, Node) == 3


def test_one_bad_completion_does_not_fail_the_others(world, components, db):
    """A node id taken behind the engine's back makes the batch's INSERT fail; the batch
    falls back to one transaction per operation and only that one is retried."""
    alice = world.user("alice")
    ids = [create(alice, alice.personal_space_id, f"D{i}")["id"] for i in range(4)]
    bad = ids[2]
    with db.write() as s:
        s.add(Node(id=payload_of(db, bad)["node_id"], space_id=alice.personal_space_id,
                   parent_id=None, name="squatter", created_by=alice.user_id))
    assert components.executor.run_batch(limit=10, worker_id="w1") == 4
    st = statuses(db)
    assert [st[i] for i in ids if i != bad] == ["completed"] * 3
    assert st[bad] == "pending"  # a database error: retried (bounded), as before batches
    assert attempts_of(db, bad) == [(1, "retry")]
    for i in ids:
        if i != bad:
            assert attempts_of(db, i) == [(1, "completed")]
    assert count(db, Node) == 4  # three new ones and the squatter


def test_a_unit_conflict_in_a_batch_fails_only_its_operation(world, components, db):
    """The batch perform (one UnitStore transaction) fails on the conflicting unit; every
    operation is then performed on its own, so the error belongs to that operation."""
    alice = world.user("alice")
    ids = [create(alice, alice.personal_space_id, f"D{i}")["id"] for i in range(3)]
    components.unitstore.create_unit(payload_of(db, ids[1])["unit_id"], "sheet")
    assert components.executor.run_batch(limit=10, worker_id="w1") == 3
    st = statuses(db)
    assert (st[ids[0]], st[ids[1]], st[ids[2]]) == ("completed", "failed", "completed")
    done = alice.get(f"/api/operations/{ids[1]}").json
    assert done["error"]["code"] == "unit_conflict"
    for i in (ids[0], ids[2]):
        assert components.unitstore.get(payload_of(db, i)["unit_id"]).unit_type == "doc"


def test_attempt_rows_one_per_claim_and_lost_ones_marked(world, components, db):
    alice = world.user("alice")
    fresh = [create(alice, alice.personal_space_id, f"F{i}")["id"] for i in range(2)]
    orphan = create(alice, alice.personal_space_id, "O")["id"]
    with db.write() as s:  # a worker claimed it twice and died during the second attempt
        s.execute(update(Operation).where(Operation.id == orphan).values(
            status="running", attempts=2, lease_owner="dead",
            lease_expires_at=utcnow() - timedelta(seconds=1)))
        s.add(OperationAttempt(operation_id=orphan, number=1, worker_id="dead",
                               finished_at=utcnow(), outcome="retry",
                               error={"code": "x", "message": "x", "retryable": True}))
        s.add(OperationAttempt(operation_id=orphan, number=2, worker_id="dead"))
    assert components.executor.run_batch(limit=10, worker_id="w1") == 3
    assert attempts_of(db, orphan) == [(1, "retry"), (2, "lost"), (3, "completed")]
    for i in fresh:
        assert attempts_of(db, i) == [(1, "completed")]
    with db.read() as s:
        lost = s.scalar(select(OperationAttempt).where(
            OperationAttempt.operation_id == orphan, OperationAttempt.number == 2))
        assert lost.error["code"] == "lease_expired" and lost.finished_at is not None
        assert s.get(Operation, orphan).attempts == 3


def test_create_units_is_idempotent_and_refuses_another_type(components):
    store = components.unitstore
    store.create_units([("u" * 32, "doc", None), ("v" * 32, "sheet", None)])
    store.create_units([("u" * 32, "doc", None), ("w" * 32, "doc", None)])  # replay + new
    assert store.get("u" * 32).unit_type == "doc" and store.get("w" * 32) is not None
    with pytest.raises(UnitConflict):
        store.create_units([("x" * 32, "doc", None), ("v" * 32, "doc", None)])
    assert store.get("x" * 32) is None  # all or nothing
    assert store.get("v" * 32).unit_type == "sheet"
    assert store.create_unit("v" * 32, "sheet").unit_type == "sheet"
    with pytest.raises(UnitConflict):
        store.create_unit("v" * 32, "doc")


# --- PostgreSQL: concurrent claimers ----------------------------------------------------

@pytest.fixture
def pg_only(backend):
    if backend != "postgres":
        pytest.skip("SKIP LOCKED is PostgreSQL's; SQLite serialises writers")


def test_claim_skips_rows_another_claimer_holds(pg_only, world, components, db):
    """Rows locked by another transaction are skipped, not waited for."""
    alice = world.user("alice")
    ids = [create(alice, alice.personal_space_id, f"D{i}")["id"] for i in range(6)]
    engine = create_engine(components.settings.database_url)
    got: list[int] = []
    try:
        with engine.connect() as conn, conn.begin():
            held = list(conn.scalars(text(
                "SELECT id FROM operations ORDER BY created_at, id LIMIT 3 FOR UPDATE")))
            claimer = threading.Thread(target=lambda: got.append(
                components.executor.run_batch(limit=10, worker_id="w1")))
            claimer.start()
            claimer.join(10)
            blocked = claimer.is_alive()
        claimer.join(10)  # released: a blocked claimer finishes now
        assert not blocked, "the claim waited for rows another transaction holds"
        assert got == [3]
        st = statuses(db)
        assert {i for i in ids if st[i] == "completed"} == set(ids) - set(held)
        assert components.executor.run_batch(limit=10, worker_id="w2") == 3
    finally:
        engine.dispose()
    assert set(statuses(db).values()) == {"completed"}


def test_concurrent_batch_claimers_never_claim_twice(pg_only, world, components, db):
    alice = world.user("alice")
    n = 60
    for i in range(n):
        create(alice, alice.personal_space_id, f"D{i}")
    claimed: list[int] = []

    def drain(worker: str) -> None:
        while (got := components.executor.run_batch(limit=4, worker_id=worker)):
            claimed.append(got)

    threads = [threading.Thread(target=drain, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sum(claimed) == n
    assert set(statuses(db).values()) == {"completed"}
    assert count(db, OperationAttempt) == n
    with db.read() as s:
        assert set(s.scalars(select(Operation.attempts))) == {1}
    assert count(db, Node) == n


def test_the_lease_keeper_leaves_once_no_lease_is_held(settings, db):
    """The thread renewing leases exits when the last lease is released (an idle or
    dropped executor keeps no thread: the suite once had a thousand) and a later batch
    starts another."""
    from tests.conftest import World
    from wharfd.runtime import Components
    comps = Components(settings.replace(operation_lease_seconds=1), db=db)
    executor = comps.executor
    # the keeper is looked at while the lease is held: once the batch returns it may
    # already have woken and left (CI once took longer than its 0.5 s between the two)
    keepers: list[threading.Thread | None] = []
    lease_kept = executor._lease_kept

    @contextlib.contextmanager
    def watched(op_ids, worker_id):
        with lease_kept(op_ids, worker_id):
            keepers.append(executor._keeper)
            yield
    executor._lease_kept = watched
    try:
        alice = World(comps.api_app()).user("alice")
        for round_ in range(2):
            create(alice, alice.personal_space_id, f"D{round_}")
            assert executor.run_batch(limit=5, worker_id="w1") == 1
            keeper = keepers[-1]
            assert keeper is not None
            keeper.join(5)  # it wakes every third of the lease (0.5 s at least), sees none
            assert not keeper.is_alive() and executor._keeper is None
        assert len(keepers) == 2 and keepers[0] is not keepers[1]  # the second batch's own
    finally:
        comps.close()
