"""Assets in a worktree's scope: uploaded into a worktree's unit, served only through
that worktree's gateway (to those who may review it), published to trunk when a publish
arrives after the unit merged, deleted with a discarded worktree. The worktree's units
are put in place directly (rows) so these tests depend only on the asset paths."""
from __future__ import annotations

import pytest
from sqlalchemy import delete, update

from storage.blobstore import FileBlobStore
from storage.models import Operation, UnitAsset, UnitAssetUpload, Worktree, WorktreeUnit
from tests.assets.test_assets import PNG, Env, key, new_unit, published
from tests.engine.test_operations import wait_done
from wharf.infra.clock import utcnow
from wharf.worktrees.enums import MergeState, WorktreeState


@pytest.fixture
def fs_env(settings, db, tmp_path):
    e = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    yield e
    e.close()


def new_worktree(client) -> str:
    r = client.post("/api/worktrees", json={"kind": "user", "name": "Draft"},
                    headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    op = wait_done(client, r.json["id"])
    assert op["status"] == "completed", op
    return op["result"]["worktree_id"]


def add_unit(env: Env, worktree_id: str, unit: dict, user_id: str) -> None:
    with env.db.write() as s:
        s.add(WorktreeUnit(worktree_id=worktree_id, unit_id=unit["unit_id"],
                           resource_id=unit["resource_id"], source="trunk", unit_type="doc",
                           ordinal=0, added_by=user_id, added_at=utcnow(),
                           merge_state=MergeState.PENDING.value, conflict_count=0))


def wt_upload(client, wt: str, unit_id: str, data: bytes, **kw):
    headers = {"Idempotency-Key": kw.pop("k", None) or key(), "Content-Type": "image/png",
               "Content-Length": str(len(data))}
    return client.request("POST", f"/api/worktrees/{wt}/units/{unit_id}/assets", body=data,
                          headers=headers, params={"filename": "w.png"})


def setup(env: Env):
    alice = env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)
    wt = new_worktree(alice)
    add_unit(env, wt, unit, alice.user_id)
    return alice, unit, wt


def test_a_worktree_asset_is_served_only_by_its_worktree(fs_env):
    alice, unit, wt = setup(fs_env)
    trunk_op = published(alice, unit["unit_id"], PNG)  # a trunk asset of the same unit
    r = wt_upload(alice, wt, unit["unit_id"], PNG + b"w")
    assert r.status_code == 202, r.text
    op = wait_done(alice, r.json["id"])
    assert op["status"] == "completed", op
    res = op["result"]
    assert res["worktree_id"] == wt
    assert res["content_url"] == f"/api/worktrees/{wt}/assets/{res['asset_id']}/content"
    got = alice.get(res["content_url"])
    assert got.status_code == 200 and got.content == PNG + b"w"
    assert got.headers["cache-control"] == "private, no-store"
    # Not on trunk: neither its gateway, nor its metadata, nor the unit's trunk listing.
    assert alice.get(f"/api/assets/{res['asset_id']}/content").status_code == 404
    assert alice.get(f"/api/assets/{res['asset_id']}").status_code == 404
    trunk_items = alice.get(f"/api/units/{unit['unit_id']}/assets").json["items"]
    assert [a["id"] for a in trunk_items] == [trunk_op["result"]["asset_id"]]
    wt_items = alice.get(f"/api/worktrees/{wt}/units/{unit['unit_id']}/assets").json["items"]
    assert [a["id"] for a in wt_items] == [res["asset_id"]]
    assert wt_items[0]["published_at"] is None
    # Its metadata describes it as the result does: served by the worktree's gateway.
    assert {k: wt_items[0][k] for k in res if k != "asset_id"} == \
        {k: v for k, v in res.items() if k != "asset_id"}
    assert alice.get(wt_items[0]["content_url"]).content == PNG + b"w"
    # The worktree's gateway also serves its units' trunk assets.
    trunk_via_wt = alice.get(f"/api/worktrees/{wt}/assets/{trunk_op['result']['asset_id']}"
                             "/content")
    assert trunk_via_wt.status_code == 200 and trunk_via_wt.content == PNG
    # Another worktree's gateway does not.
    other = new_worktree(alice)
    assert alice.get(f"/api/worktrees/{other}/assets/{res['asset_id']}/content") \
        .status_code == 404


def test_worktree_scope_refusals_change_nothing(fs_env):
    alice, unit, wt = setup(fs_env)
    bob = fs_env.world.user("bob")
    lone = new_unit(alice, alice.personal_space_id)  # not in the worktree
    r = wt_upload(alice, wt, lone["unit_id"], PNG)
    assert r.status_code == 404
    r = wt_upload(bob, wt, unit["unit_id"], PNG)  # bob cannot discover alice's worktree
    assert r.status_code == 404
    assert fs_env.world.anonymous().request(
        "POST", f"/api/worktrees/{wt}/units/{unit['unit_id']}/assets", body=b"x",
        headers={"Idempotency-Key": key()}).status_code == 401
    assert alice.post(f"/api/worktrees/{wt}/ready").status_code == 200
    r = wt_upload(alice, wt, unit["unit_id"], PNG)
    assert r.status_code == 409 and r.json["code"] == "worktree_state"
    assert fs_env.count(Operation, Operation.kind == "publish_asset") == 0
    assert fs_env.count(UnitAsset) == 0 and fs_env.stored_keys() == set()


def test_a_publish_arriving_after_the_unit_merged_goes_to_trunk(fs_env):
    alice, unit, wt = setup(fs_env)
    fs_env.stop_worker()
    r = wt_upload(alice, wt, unit["unit_id"], PNG)
    assert r.status_code == 202
    # Meanwhile the worktree merged, this unit among the units that merged.
    with fs_env.db.write() as s:
        s.execute(update(Worktree).where(Worktree.id == wt).values(
            state=WorktreeState.MERGED.value, processed_at=utcnow()))
        s.execute(update(WorktreeUnit).where(WorktreeUnit.worktree_id == wt).values(
            merge_state=MergeState.FAST_FORWARD.value))
    fs_env.start_worker()
    op = wait_done(alice, r.json["id"])
    assert op["status"] == "completed", op
    assert op["result"].get("worktree_id") is None  # a trunk asset
    got = alice.get(f"/api/assets/{op['result']['asset_id']}/content")
    assert got.status_code == 200 and got.content == PNG
    assert alice.get(f"/api/assets/{op['result']['asset_id']}").json["published_at"]


def test_discarding_a_worktree_deletes_its_assets_and_fails_its_queued_uploads(fs_env):
    alice, unit, wt = setup(fs_env)
    kept = wait_done(alice, wt_upload(alice, wt, unit["unit_id"], PNG).json["id"])
    assert kept["status"] == "completed"
    fs_env.stop_worker()
    queued = wt_upload(alice, wt, unit["unit_id"], PNG + b"q")
    assert queued.status_code == 202
    r = alice.post(f"/api/worktrees/{wt}/discard", headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    fs_env.start_worker()
    assert wait_done(alice, r.json["id"])["status"] == "completed"
    op = wait_done(alice, queued.json["id"])
    # Whichever ran first: the publish failed (the worktree was discarded), or it
    # published into the worktree just before the discard, which then deleted it.
    assert op["status"] == "completed" or op["error"]["code"] == "worktree_discarded", op
    assert fs_env.count(UnitAsset) == 0
    fs_env.run_deletions()
    assert fs_env.stored_keys() == set()
    assert alice.get(kept["result"]["content_url"]).status_code == 404


def test_a_publish_claimed_as_a_discard_failed_its_upload_says_the_worktree_was_discarded(
        fs_env):
    """The race CI caught: a discard read the publish as pending, a worker claimed it
    just then (so the discard's failing UPDATE missed it), and the discard deleted its
    upload. The publish then finds no upload; it must say why (worktree_discarded), not
    that its bytes never arrived."""
    alice, unit, wt = setup(fs_env)
    fs_env.stop_worker()
    queued = wt_upload(alice, wt, unit["unit_id"], PNG)
    assert queued.status_code == 202
    with fs_env.db.write() as s:  # what the raced discard left: the op still pending
        s.execute(update(Worktree).where(Worktree.id == wt).values(
            state=WorktreeState.DISCARDED.value, processed_at=utcnow()))
        s.execute(delete(UnitAssetUpload).where(UnitAssetUpload.worktree_id == wt))
    fs_env.start_worker()
    op = wait_done(alice, queued.json["id"])
    assert op["status"] == "failed" and op["error"]["code"] == "worktree_discarded", op
    assert fs_env.count(UnitAsset) == 0
