"""Bounds on what worktrees store, over HTTP, on SQLite and PostgreSQL: a local unit's
``initial_snapshot`` within the unit size and depth limits (at submission, and by the unit
store when it stores it); the orphan-draft sweep racing a unit's late commit; open
worktrees per user and per team space; draft bytes per user."""
from __future__ import annotations

import threading

from sqlalchemy import update

from storage.models import Operation
from storage.unitpatch import UnitLimits, json_size
from tests.engine.test_operations import wait_done
from tests.support.foundation import add_member, assert_problem, row_counts, team_space
from tests.worktrees.test_worktree_merge import key, make_doc, make_worktree, run
from tests.worktrees.test_worktree_sweeps import sweep
from tests.worktrees.test_worktree_units import post_unit, unitstore_counts
from tests.worktrees.test_worktrees import create
from wharf.worktrees.drafts import Drafts


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

    real = Drafts.delete_draft
    workers: list[threading.Thread] = []

    def racing(drafts: Drafts, worktree_id: str, unit: str) -> bool:
        t = threading.Thread(target=components.executor.execute, args=(op_id,))
        workers.append(t)
        t.start()
        t.join(2)  # the commit, unless the sweep holds it off
        return real(drafts, worktree_id, unit)

    monkeypatch.setattr(Drafts, "delete_draft", racing)
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


# --- item 3: open worktrees per user and per team space ---------------------------------

def submit_wt(client, **body):
    body.setdefault("kind", "user")
    body.setdefault("name", "WT")
    return client.post("/api/worktrees", json=body, headers={"Idempotency-Key": key()})


def test_open_worktrees_are_bounded_per_user_and_per_team_space(world, components, db):
    object.__setattr__(components.settings, "worktree_max_open_per_user", 2)
    object.__setattr__(components.settings, "worktree_max_open_per_team_space", 3)
    alice = world.user("alice")
    # a burst: the submissions not yet executed count
    first, second = submit_wt(alice), submit_wt(alice)
    assert first.status_code == 202 and second.status_code == 202, second.text
    before = row_counts(db)
    body = assert_problem(submit_wt(alice), 409, "worktree_limit")
    assert body["details"] == {"scope": "user", "limit": 2}
    assert row_counts(db) == before  # no operation, no worktree
    wts = [run(components, alice, r)["result"]["worktree_id"] for r in (first, second)]
    assert_problem(submit_wt(alice), 409, "worktree_limit")
    # a discarded worktree is no longer open
    r = alice.post(f"/api/worktrees/{wts[0]}/discard", headers={"Idempotency-Key": key()})
    run(components, alice, r)
    run(components, alice, submit_wt(alice))

    # a team space: 3 open, whoever created them
    owner, ed1, ed2 = world.user("owner"), world.user("ed1"), world.user("ed2")
    team = team_space(owner, "Team")
    for who in (ed1, ed2):
        add_member(owner, team["id"], who.user_id, "editor")
    for who in (owner, ed1, ed2):
        run(components, who, submit_wt(who, kind="team", team_space_id=team["id"]))
    before = row_counts(db)
    body = assert_problem(submit_wt(ed1, kind="team", team_space_id=team["id"]), 409,
                          "worktree_limit")
    assert body["details"] == {"scope": "team_space", "limit": 3}
    assert row_counts(db) == before
    run(components, ed1, submit_wt(ed1))  # a user worktree of ed1's own is still allowed


def test_the_open_worktree_limit_is_counted_again_at_commit(world, components, db):
    object.__setattr__(components.settings, "worktree_max_open_per_user", 2)
    alice = world.user("alice")
    a, b = submit_wt(alice), submit_wt(alice)
    assert a.status_code == 202 and b.status_code == 202
    object.__setattr__(components.settings, "worktree_max_open_per_user", 1)
    run(components, alice, a)
    assert components.executor.execute(b.json["id"]) == "failed"
    op = alice.get(f"/api/operations/{b.json['id']}").json
    assert op["error"]["code"] == "worktree_limit", op
    assert len(alice.get("/api/worktrees").json["items"]) == 1


# --- item 3: draft bytes per user ---------------------------------------------------------

def stored_draft_bytes(components) -> int:
    """What the unit store holds in drafts, measured from the documents themselves (every
    draft's base and head, compact JSON) and their revisions' changesets."""
    from sqlalchemy import select

    from storage.unitpatch import json_size
    from storage.unitschema import DRAFT_REVISIONS, DRAFTS
    with components.unitstore.db.read() as s:
        docs = s.execute(select(DRAFTS.c.base_snapshot, DRAFTS.c.snapshot)).all()
        revs = s.scalars(select(DRAFT_REVISIONS.c.changeset)).all()
    return sum(json_size(b) + json_size(h) for b, h in docs) + sum(map(json_size, revs))


def test_draft_bytes_are_bounded_per_user(world, components, db):
    alice = world.user("alice")
    doc = make_doc(components, alice, {"text": "x" * 10_000})
    size = json_size(components.unitstore.get(doc["unit_id"]).snapshot)
    quota = 5 * size  # room for two additions (2 copies each), not three
    object.__setattr__(components.settings, "worktree_draft_quota_bytes", quota)
    wts = [create_wt(components, alice) for _ in range(4)]

    def add(wt: str):
        return alice.post(f"/api/worktrees/{wt}/units", headers={"Idempotency-Key": key()},
                          json={"source": "trunk", "resource_id": doc["resource_id"]})

    stored = [stored_draft_bytes(components)]
    drafts = Drafts.of(components.unitstore)
    for wt in wts[:2]:
        run(components, alice, add(wt))
        stored.append(stored_draft_bytes(components))
    # a fork shares trunk's document (issue 36): it stores a JSON null for its base and
    # its head, whatever the document's size, and the quota still counts both documents
    assert (stored[1] - stored[0], stored[2] - stored[1]) == (8, 8)
    assert drafts.draft_bytes(wts[:2]) == 4 * size

    # the third: refused at submission, nothing stored, no operation
    before = row_counts(db)
    body = assert_problem(add(wts[2]), 409, "draft_quota_exceeded")
    # "requested" is the stored size (measured by the database, never below the compact
    # size: the document is not loaded into the submission's write transaction), twice
    estimate = components.unitstore.stored_size(doc["unit_id"])
    assert size <= estimate < size * 1.01
    assert body["details"] == {"quota": quota, "used": 4 * size, "requested": 2 * estimate}
    assert row_counts(db) == before and stored_draft_bytes(components) == stored[-1]
    # a unit new in a worktree too: its initial document, twice
    big = {"type": "doc", "schemaVersion": 1, "body": {"t": "y" * 10_000}}
    assert_problem(local(alice, wts[2], big), 409, "draft_quota_exceeded")
    assert row_counts(db) == before and stored_draft_bytes(components) == stored[-1]

    # past the quota at commit (the submission saw room): failed, its draft deleted
    object.__setattr__(components.settings, "worktree_draft_quota_bytes", 10 * size)
    r = add(wts[2])
    assert r.status_code == 202, r.text
    object.__setattr__(components.settings, "worktree_draft_quota_bytes", quota)
    assert components.executor.execute(r.json["id"]) == "failed"
    assert alice.get(f"/api/operations/{r.json['id']}").json["error"]["code"] == \
        "draft_quota_exceeded"
    assert stored_draft_bytes(components) == stored[-1]

    # a draft changeset that grows past it: refused, the draft unchanged; shrinking is fine
    path = f"/api/worktrees/{wts[0]}/units/{doc['unit_id']}/changesets"
    grow = alice.post(path, json={"base_revision": 0, "changes": [
        {"op": "add", "path": "/body/more", "value": "z" * (size + 100)}]})
    assert_problem(grow, 409, "draft_quota_exceeded")
    assert stored_draft_bytes(components) == stored[-1]
    shrink = alice.post(path, json={"base_revision": 0, "changes": [
        {"op": "replace", "path": "/body/text", "value": "short"}]})
    assert shrink.status_code == 200, shrink.text

    # a discarded worktree's drafts no longer count
    r = alice.post(f"/api/worktrees/{wts[1]}/discard", headers={"Idempotency-Key": key()})
    run(components, alice, r)
    run(components, alice, add(wts[3]))
