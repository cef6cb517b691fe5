"""The ``prune_unit_history`` sweep (issue 37): with ``WHARF_HISTORY_RETENTION`` set,
trunk revisions older than it go down to each unit's newest checkpoint before then, in
bounded batches, never below a worktree draft's base; the document at every later revision
reads as before, and the history says where it starts."""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from sqlalchemy import select, update

from storage.clock import utcnow
from storage.unitschema import CHECKPOINTS, DRAFTS, REVISIONS
from storage.unitstore import UnitStore
from tests.sharing.test_sharing_trash_recent import node
from tests.worktrees.test_worktrees import _doc
from wharf.retention.schedule import schedules
from wharf.retention.sweeps import SWEEPS, SweepContext, prune_unit_history
from wharf.worktrees.drafts import Drafts

VALUE = "z" * 4000  # ~70 such edits outgrow the 256 KiB log: a checkpoint


def _edits(client, unit_id: str, count: int, start: int = 0) -> None:
    for revision in range(start, start + count):
        r = client.post(f"/api/units/{unit_id}/changesets", headers={"Prefer": "return=minimal"},
                        json={"base_revision": revision, "changes": [
                            {"op": "add", "path": "/body/v", "value": VALUE + str(revision)},
                            {"op": "add", "path": f"/body/n{revision % 7}", "value": revision}]})
        assert r.status_code == 200, r.text


def _checkpoints(store: UnitStore, unit_id: str) -> list[int]:
    with store.db.read() as s:
        return list(s.scalars(select(CHECKPOINTS.c.revision).where(
            CHECKPOINTS.c.unit_id == unit_id).order_by(CHECKPOINTS.c.revision)))


def _age(store: UnitStore, unit_id: str, days: int) -> None:
    """Make everything the unit stores so far ``days`` old."""
    when = utcnow() - timedelta(days=days)
    with store.db.write() as s:
        for table in (REVISIONS, CHECKPOINTS):
            s.execute(update(table).where(table.c.unit_id == unit_id).values(created_at=when))


def _ctx(components, retention: int, batch: int = 1000, **kw) -> SweepContext:
    settings = replace(components.settings, history_retention=retention)
    return SweepContext(db=components.db, settings=settings, now=utcnow(),
                        unitstore=components.unitstore, batch_size=batch, **kw)


def test_old_history_is_pruned_to_a_checkpoint_and_later_revisions_still_read(
        world, worker, components):
    store = components.unitstore
    alice = world.user("alice")
    sp = alice.personal_space_id
    unit_id = _doc(alice, sp, node(alice, sp, "F"))["unit_id"]
    _edits(alice, unit_id, 80)
    cut = _checkpoints(store, unit_id)[-1]
    assert cut > 0
    _age(store, unit_id, days=40)
    _edits(alice, unit_id, 5, start=80)  # recent: kept
    later = {n: alice.get(f"/api/units/{unit_id}/revisions/{n}/snapshot").json["snapshot"]
             for n in (cut, cut + 1, 84, 85)}
    current = alice.get(f"/api/units/{unit_id}").json["snapshot"]
    # off by default: nothing goes
    assert prune_unit_history(_ctx(components, 0)) == {"revisions": 0}
    assert store.first_revision(unit_id) == 1
    # 30 days: in bounded batches, revisions 1..cut and the checkpoints below cut go
    seen: list[int] = []
    first = prune_unit_history(_ctx(components, 30 * 86400, batch=25, max_batches=2,
                                    on_batch=lambda sweep, n, rows: seen.append(rows)))
    assert first == {"revisions": 50} and seen == [25, 25]
    rest = prune_unit_history(_ctx(components, 30 * 86400))
    assert rest == {"revisions": cut - 50}
    assert prune_unit_history(_ctx(components, 30 * 86400)) == {"revisions": 0}
    assert store.first_revision(unit_id) == cut + 1
    assert _checkpoints(store, unit_id)[0] == cut
    # every later revision reads as before; the current document too, cold as well
    for n, snapshot in later.items():
        r = alice.get(f"/api/units/{unit_id}/revisions/{n}/snapshot")
        assert r.status_code == 200 and r.json["snapshot"] == snapshot
    assert alice.get(f"/api/units/{unit_id}").json["snapshot"] == current
    assert UnitStore(store.db, store.limits).get(unit_id).snapshot == current
    # earlier ones are gone, and the history says where it starts
    for n in (1, cut - 1):
        assert alice.get(f"/api/units/{unit_id}/revisions/{n}/snapshot").status_code == 404
        assert alice.get(f"/api/units/{unit_id}/revisions/{n}").status_code == 404
    listing = alice.get(f"/api/units/{unit_id}/revisions", params={"limit": "200"}).json
    assert listing["pruned_through"] == cut
    # a client catching up from a pruned revision is told so, never given a page with a hole
    r = alice.get(f"/api/units/{unit_id}/changesets", params={"after": "5"})
    assert r.status_code == 410 and r.json["code"] == "history_pruned", r.text
    assert r.json["details"] == {"pruned_through": cut}
    r = alice.get(f"/api/units/{unit_id}/changesets", params={"after": str(cut), "limit": "2"})
    assert [i["revision"] for i in r.json["items"]] == [cut + 1, cut + 2]
    assert alice.get(f"/api/units/{unit_id}/changesets",
                     params={"after": "85"}).json["items"] == []
    assert listing["items"][-1]["revision"] == cut + 1
    # edits go on
    _edits(alice, unit_id, 1, start=85)


def test_a_worktree_draft_keeps_the_history_above_its_base(world, worker, components):
    store = components.unitstore
    alice = world.user("alice")
    sp = alice.personal_space_id
    unit_id = _doc(alice, sp, node(alice, sp, "F"))["unit_id"]
    _edits(alice, unit_id, 80)
    cut = _checkpoints(store, unit_id)[-1]
    Drafts.of(store).fork("wt-old", unit_id)
    # the draft's base (revision 80) is above the checkpoint: pruning up to it is allowed;
    # a draft based below the checkpoint holds everything from its base
    with store.db.write() as s:
        s.execute(update(DRAFTS).where(DRAFTS.c.unit_id == unit_id).values(
            base_revision=cut - 10))
    _age(store, unit_id, days=40)
    assert prune_unit_history(_ctx(components, 30 * 86400)) == {"revisions": 0}
    assert store.first_revision(unit_id) == 1
    assert Drafts.of(UnitStore(store.db, store.limits)).get_draft_head(
        "wt-old", unit_id) is not None


def test_the_sweep_is_scheduled():
    from wharf.infra.settings import Settings
    assert "prune_unit_history" in SWEEPS
    assert "prune_unit_history" in {s.name for s in schedules(Settings.from_env({}))}
