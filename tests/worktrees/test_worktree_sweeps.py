"""The worktree draft retention sweep (specs/assets-worktrees.md §12), on SQLite and
PostgreSQL: a worktree processed longer ago than WHARF_WORKTREE_RETENTION loses its drafts
(its unit list stays; a unit's draft answers 410 ``draft_purged``), once; a recent one
keeps them; a unit-store draft with no ``worktree_units`` row is deleted once it is an
hour old, while drafts that have one stay. The sweep runs as if later, as tests/assets/test_assets.py
does."""
from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from storage.models import Worktree
from tests.support.foundation import assert_problem
from tests.worktrees.test_worktree_merge import (
    add_trunk_unit,
    edit_draft,
    edit_trunk,
    key,
    make_doc,
    make_worktree,
    merge,
    ready,
    run,
)
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id
from wharf.retention.sweeps import SWEEPS, SweepContext
from wharf.worktrees.drafts import Drafts
from wharf.worktrees.records import MergeRecords

DAY = 86400.0
DOC = {"type": "doc", "schemaVersion": 1, "body": {}}


def sweep(components, db, *, later: float) -> dict[str, int]:
    ctx = SweepContext(db=db, settings=components.settings,
                       now=utcnow() + timedelta(seconds=later),
                       unitstore=components.unitstore, batch_size=2)
    return SWEEPS["sweep_worktree_drafts"](ctx)


def merged_worktree(components, db, client) -> tuple[str, str]:
    doc = make_doc(components, client, {"a": 1})
    wt = make_worktree(components, client)
    add_trunk_unit(components, db, wt, client.user_id, doc, 0)
    ready(client, wt)
    assert run(components, client, merge(client, wt))["result"]["state"] == "merged"
    return wt, doc["unit_id"]


def test_processed_worktrees_lose_their_drafts_after_retention(world, components, db):
    alice = world.user("alice")
    retention = components.settings.worktree_retention
    old = [merged_worktree(components, db, alice) for _ in range(3)]  # two batches of 2
    open_wt = make_worktree(components, alice)
    open_doc = make_doc(components, alice, {"b": 1})
    add_trunk_unit(components, db, open_wt, alice.user_id, open_doc, 0)

    # not old enough yet: nothing happens
    assert sweep(components, db, later=retention - DAY) == {"purged_worktrees": 0,
                                                            "orphan_drafts": 0}
    wt, unit_id = old[0]
    assert alice.get(f"/api/worktrees/{wt}/units/{unit_id}").status_code == 200

    assert sweep(components, db, later=retention + DAY) == {"purged_worktrees": 3,
                                                            "orphan_drafts": 0}
    for wt, unit_id in old:
        assert Drafts.of(components.unitstore).get_draft_head(wt, unit_id) is None
        assert components.unitstore.get(unit_id) is not None  # trunk untouched
        r = alice.get(f"/api/worktrees/{wt}/units/{unit_id}")
        assert_problem(r, 410, "draft_purged")
        r = alice.post(f"/api/worktrees/{wt}/units/{unit_id}/changesets",
                       json={"base_revision": 1, "changes": [
                           {"op": "replace", "path": "/body", "value": {}}]})
        assert_problem(r, 410, "draft_purged")
        # the worktree and its unit list stay, as processed
        got = alice.get(f"/api/worktrees/{wt}")
        assert got.status_code == 200 and got.json["state"] == "merged"
        assert [u["unit_id"] for u in got.json["units"]] == [unit_id]
    with db.read() as s:
        marks = dict(s.execute(select(Worktree.id, Worktree.drafts_purged_at)).all())
    assert all(marks[wt] is not None for wt, _ in old) and marks[open_wt] is None
    # the open worktree keeps its draft; a second run finds nothing
    assert Drafts.of(components.unitstore).get_draft_head(open_wt, open_doc["unit_id"]) is not None
    assert sweep(components, db, later=retention + 2 * DAY) == {"purged_worktrees": 0,
                                                                "orphan_drafts": 0}


def test_retention_deletes_a_worktrees_merge_records_with_its_drafts(world, components, db):
    """A merge's records (its conflicts) go with the worktree's drafts; the unit's
    conflicts then answer 410 ``draft_purged``."""
    alice = world.user("alice")
    doc = make_doc(components, alice, {"a": 1})
    wt = make_worktree(components, alice)
    add_trunk_unit(components, db, wt, alice.user_id, doc, 0)
    edit_draft(components, wt, doc["unit_id"], [{"op": "replace", "path": "/body/a",
                                                 "value": 2}], alice.user_id)
    edit_trunk(alice, doc["unit_id"], 1, [{"op": "replace", "path": "/body/a", "value": 3}])
    ready(alice, wt)
    op = run(components, alice, merge(alice, wt))
    assert op["result"]["counts"]["conflict"] == 1
    url = f"/api/worktrees/{wt}/units/{doc['unit_id']}/conflicts"
    assert alice.get(url).json["conflict_count"] == 1
    run(components, alice, alice.post(f"/api/worktrees/{wt}/discard",
                                      headers={"Idempotency-Key": key()}))
    assert len(MergeRecords.of(components.unitstore).merge_records(op["id"])) == 1
    assert sweep(components, db, later=components.settings.worktree_retention + DAY
                 )["purged_worktrees"] == 1
    assert MergeRecords.of(components.unitstore).merge_records(op["id"]) == []
    assert_problem(alice.get(url), 410, "draft_purged")


def test_orphan_drafts_older_than_an_hour_are_deleted(world, components, db):
    alice = world.user("alice")
    store = Drafts.of(components.unitstore)
    wt = make_worktree(components, alice)
    doc = make_doc(components, alice, {"a": 1})
    add_trunk_unit(components, db, wt, alice.user_id, doc, 0)  # has its product row
    orphans = [(wt, new_id()), (new_id(), new_id()), (new_id(), new_id())]
    for o_wt, o_unit in orphans:
        store.create_local_draft(o_wt, o_unit, "doc", DOC)

    # younger than an hour: left alone (an addition may still be completing)
    assert sweep(components, db, later=30 * 60) == {"purged_worktrees": 0,
                                                    "orphan_drafts": 0}
    assert all(store.get_draft_head(*o) is not None for o in orphans)

    assert sweep(components, db, later=2 * 3600) == {"purged_worktrees": 0,
                                                     "orphan_drafts": 3}
    assert all(store.get_draft_head(*o) is None for o in orphans)
    assert store.get_draft_head(wt, doc["unit_id"]) is not None
    r = alice.get(f"/api/worktrees/{wt}/units/{doc['unit_id']}")
    assert r.status_code == 200, r.text
    assert sweep(components, db, later=2 * 3600) == {"purged_worktrees": 0,
                                                     "orphan_drafts": 0}
