"""The executor's batch path (``Executor.run_batch``), on SQLite and PostgreSQL: a batch
claims due operations in one statement, re-checks permission per target, performs, and
completes them together, falling back to one transaction per operation on error."""
from __future__ import annotations

import uuid

from sqlalchemy import func, select

from storage.models import Node, Operation, OperationAttempt
from tests.support.client import ApiClient


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
