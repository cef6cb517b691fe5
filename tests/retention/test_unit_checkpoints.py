"""The ``prune_unit_checkpoints`` sweep: trunk checkpoints no read needs go, in bounded
batches; every unit keeps its first and its newest, and reads the same afterwards."""
from __future__ import annotations

from sqlalchemy import func, select

from storage.clock import utcnow
from storage.unitpatch import json_size
from storage.unitschema import CHECKPOINTS, REVISIONS, UNITS
from storage.unitstore import UnitStore, initial_snapshot
from wharf.retention.schedule import schedules
from wharf.retention.sweeps import SWEEPS, SweepContext, prune_unit_checkpoints


def _long_history(store: UnitStore, unit_id: str, checkpoints: int) -> None:
    """A unit with a checkpoint at every revision 0..checkpoints (as a long edit history
    leaves behind), each revision adding one member."""
    store.create_unit(unit_id, "doc")
    doc = initial_snapshot("doc")
    with store.db.write() as s:
        for revision in range(1, checkpoints + 1):
            doc["body"][f"k{revision}"] = revision
            s.execute(REVISIONS.insert().values(
                unit_id=unit_id, revision=revision, author_id="alice", created_at=utcnow(),
                changeset=[{"op": "add", "path": f"/body/k{revision}", "value": revision}]))
            s.execute(CHECKPOINTS.insert().values(unit_id=unit_id, revision=revision,
                                                  snapshot=doc, size=json_size(doc),
                                                  created_at=utcnow()))
        s.execute(UNITS.update().where(UNITS.c.id == unit_id).values(
            revision=checkpoints, checkpoint_revision=checkpoints, size=json_size(doc)))


def test_the_sweep_prunes_in_bounded_batches_and_documents_read_the_same(components):
    store = components.unitstore
    _long_history(store, "u1", 6)
    _long_history(store, "u2", 3)
    before = {u: store.get(u).snapshot for u in ("u1", "u2")}
    seen: list[int] = []
    ctx = SweepContext(db=components.db, settings=components.settings, now=utcnow(),
                       unitstore=store, batch_size=2, max_batches=2,
                       on_batch=lambda sweep, n, rows: seen.append(rows))
    assert prune_unit_checkpoints(ctx) == {"checkpoints": 4}  # two batches of two
    assert seen == [2, 2]
    ctx = SweepContext(db=components.db, settings=components.settings, now=utcnow(),
                       unitstore=store, batch_size=100)
    assert prune_unit_checkpoints(ctx) == {"checkpoints": 3}
    assert prune_unit_checkpoints(ctx) == {"checkpoints": 0}
    with store.db.read() as s:
        kept = s.execute(select(CHECKPOINTS.c.unit_id, func.min(CHECKPOINTS.c.revision),
                                func.max(CHECKPOINTS.c.revision), func.count())
                         .group_by(CHECKPOINTS.c.unit_id).order_by(CHECKPOINTS.c.unit_id)).all()
    assert [tuple(r) for r in kept] == [("u1", 0, 6, 2), ("u2", 0, 3, 2)]
    cold = UnitStore(store.db, store.limits)
    assert {u: cold.get(u).snapshot for u in ("u1", "u2")} == before


def test_the_sweep_is_scheduled():
    from wharf.infra.settings import Settings
    assert "prune_unit_checkpoints" in SWEEPS
    assert "prune_unit_checkpoints" in {s.name for s in schedules(Settings.from_env({}))}
