"""Bounds on what worktrees store, over HTTP, on SQLite and PostgreSQL: a local unit's
``initial_snapshot`` within the unit size and depth limits (at submission, and by the unit
store when it stores it); the orphan-draft sweep racing a unit's late commit; open
worktrees per user and per team space; draft bytes per user."""
from __future__ import annotations

import threading

from sqlalchemy import update

from storage.models import Operation
from storage.unitpatch import UnitLimits
from tests.support.foundation import assert_problem, row_counts
from tests.test_operations import wait_done
from tests.test_worktree_sweeps import sweep
from tests.test_worktree_units import post_unit, unitstore_counts
from tests.test_worktrees import create


def nested(depth: int) -> dict:
    """A document ``depth`` levels deep (the document itself is level 1)."""
    doc: dict = {}
    for _ in range(depth - 1):
        doc = {"d": doc}
    return doc


def local(client, wt: str, snapshot: dict | None = None, name: str = "New"):
    body = {"source": "worktree", "name": name, "unit_type": "doc",
            "target": {"space_id": client.personal_space_id}}
    if snapshot is not None:
        body["initial_snapshot"] = snapshot
    return post_unit(client, wt, **body)


# --- item 12: initial_snapshot within the unit limits -----------------------------------

def test_an_initial_snapshot_over_the_unit_limits_is_refused(world, worker, components, db):
    object.__setattr__(components.settings, "unit_max_snapshot_bytes", 2048)
    object.__setattr__(components.settings, "unit_max_depth", 8)
    alice = world.user("alice")
    wt = create(alice, name="Bounded")["id"]
    before = (row_counts(db), unitstore_counts(components))
    big = {"type": "doc", "schemaVersion": 1, "body": {"x": "a" * 3000}}
    body = assert_problem(local(alice, wt, big), 413, "unit_too_large")
    assert body["details"]["max_bytes"] == 2048
    deep = {"type": "doc", "schemaVersion": 1, "body": nested(8)}  # 9 levels
    body = assert_problem(local(alice, wt, deep), 400, "unit_too_deep")
    assert body["details"]["max_depth"] == 8
    assert (row_counts(db), unitstore_counts(components)) == before
    # at the limits: accepted
    ok = {"type": "doc", "schemaVersion": 1, "body": nested(7)}
    r = local(alice, wt, ok)
    assert r.status_code == 202, r.text
    assert wait_done(alice, r.json["id"])["status"] == "completed"


def test_the_unit_store_refuses_an_initial_snapshot_over_its_limits(world, components, db,
                                                                    monkeypatch):
    """The limits lowered between submission and the worker: the operation fails
    ``unit_too_large`` and no draft is stored."""
    alice = world.user("alice")
    wt = create_wt(components, alice)
    r = local(alice, wt, {"type": "doc", "schemaVersion": 1, "body": {"x": "a" * 3000}})
    assert r.status_code == 202, r.text
    drafts = unitstore_counts(components)
    monkeypatch.setattr(components.unitstore, "limits", UnitLimits(max_bytes=2048))
    assert components.executor.execute(r.json["id"]) == "failed"
    assert alice.get(f"/api/operations/{r.json['id']}").json["error"]["code"] == \
        "unit_too_large"
    assert unitstore_counts(components) == drafts


def create_wt(components, client) -> str:
    from tests.test_worktree_merge import make_worktree
    return make_worktree(components, client)


def test_the_orphan_sweep_racing_a_late_create_commit(world, components, db, monkeypatch):
    """A unit's draft written long ago (perform), its row not yet committed: the orphan
    sweep deletes it; the operation's worker commits between the sweep's look at the rows
    and its delete. The unit ends up with its draft all the same."""
    alice = world.user("alice")
    wt = create_wt(components, alice)
    r = local(alice, wt, {"type": "doc", "schemaVersion": 1, "body": {"keep": 1}})
    assert r.status_code == 202, r.text
    op_id = r.json["id"]
    with db.read() as s:
        op = s.get(Operation, op_id)
    unit_id = op.payload["unit_id"]
    components.handlers["create_worktree_unit"].perform(op)  # the draft, no row yet

    real = components.unitstore.delete_draft
    workers: list[threading.Thread] = []

    def racing(worktree_id: str, unit: str) -> bool:
        t = threading.Thread(target=components.executor.execute, args=(op_id,))
        workers.append(t)
        t.start()
        t.join(2)  # the commit, unless the sweep holds it off
        return real(worktree_id, unit)

    monkeypatch.setattr(components.unitstore, "delete_draft", racing)
    sweep(components, db, later=2 * 3600.0)
    monkeypatch.undo()
    for t in workers:
        t.join(30)
    for _ in range(3):  # a commit that found its draft gone retries (due at once here)
        if alice.get(f"/api/operations/{op_id}").json["done"]:
            break
        with db.write() as s:
            s.execute(update(Operation).where(Operation.id == op_id)
                      .values(next_attempt_at=None))
        components.executor.execute(op_id)
    assert alice.get(f"/api/operations/{op_id}").json["status"] == "completed"
    got = alice.get(f"/api/worktrees/{wt}/units/{unit_id}")
    assert got.status_code == 200, got.text
    assert got.json["snapshot"]["body"] == {"keep": 1}
