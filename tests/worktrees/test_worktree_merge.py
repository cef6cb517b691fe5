"""Merging worktrees over HTTP (specs/assets-worktrees.md §7.4, §8), on SQLite and
PostgreSQL: every per-unit outcome in one merge (unchanged, fast-forward with the draft
revisions' authors kept, three-way merged, conflict with its paths and values while the
other units still merge, a local unit created and its node activated), the worktree back
to draft, preview and conflicts, a rebase with resolutions and its refusals, then a clean
merge; a second merge while one runs is 409; a re-run of the handler after a crash in
perform writes no second trunk revision.

Units are put into worktrees directly (ORM rows + the UnitStore), not through the unit
operations, which this file does not exercise."""
from __future__ import annotations

import json
import secrets
import uuid

import msgspec
from sqlalchemy import MetaData, select

from storage.models import (
    Node,
    Operation,
    UnitAsset,
    Webhook,
    WebhookDelivery,
    Worktree,
    WorktreeNodeIntent,
    WorktreeUnit,
)
from tests.support.foundation import assert_problem, make_node
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id
from wharf.worktrees import merging
from wharf.worktrees.drafts import Drafts
from wharf.worktrees.kinds import MergeUnitResult, MergeWorktreeResult
from wharf.worktrees.records import MergeRecords


def key() -> str:
    return uuid.uuid4().hex


def run(components, client, r) -> dict:
    """Execute the operation a 202 answer named, in this thread; its final JSON."""
    assert r.status_code == 202, r.text
    assert components.executor.execute(r.json["id"]) == "completed"
    return client.get(f"/api/operations/{r.json['id']}").json


def make_doc(components, client, body: dict | None = None) -> dict:
    """A trunk doc in the caller's personal space, with ``body`` set (revision 1)."""
    op = run(components, client, client.post(
        "/api/resources", json={"space_id": client.personal_space_id, "parent_id": None,
                                "name": f"Doc {uuid.uuid4().hex[:6]}", "unit_type": "doc"},
        headers={"Idempotency-Key": key()}))
    doc = op["result"]
    if body is not None:
        edit_trunk(client, doc["unit_id"], 0, [{"op": "replace", "path": "/body",
                                                "value": body}])
    return doc


def edit_trunk(client, unit_id: str, base: int, changes: list) -> dict:
    r = client.post(f"/api/units/{unit_id}/changesets",
                    json={"base_revision": base, "changes": changes})
    assert r.status_code == 200, r.text
    return r.json


def make_worktree(components, client) -> str:
    op = run(components, client, client.post(
        "/api/worktrees", json={"kind": "user", "name": f"WT {uuid.uuid4().hex[:6]}"},
        headers={"Idempotency-Key": key()}))
    return op["result"]["worktree_id"]


def add_trunk_unit(components, db, wt: str, user_id: str, doc: dict, ordinal: int) -> None:
    with db.write() as s:
        s.add(WorktreeUnit(worktree_id=wt, unit_id=doc["unit_id"],
                           resource_id=doc["resource_id"], source="trunk", unit_type="doc",
                           ordinal=ordinal, added_by=user_id))
    Drafts.of(components.unitstore).fork_draft(wt, doc["unit_id"])


def add_local_unit(components, db, wt: str, client, ordinal: int, snapshot: dict) -> dict:
    unit_id, resource_id, node_id = new_id(), new_id(), new_id()
    with db.write() as s:
        s.add(WorktreeUnit(worktree_id=wt, unit_id=unit_id, resource_id=resource_id,
                           source="worktree", unit_type="doc", ordinal=ordinal,
                           added_by=client.user_id))
        s.flush()
        s.add(WorktreeNodeIntent(worktree_id=wt, unit_id=unit_id, node_id=node_id,
                                 target_space_id=client.personal_space_id,
                                 target_parent_id=None, name="Brand new",
                                 unit_type="doc", created_by=client.user_id))
    Drafts.of(components.unitstore).create_local_draft(wt, unit_id, "doc", snapshot)
    return {"unit_id": unit_id, "resource_id": resource_id, "node_id": node_id}


def edit_draft(components, wt: str, unit_id: str, changes: list, author: str) -> int:
    draft = Drafts.of(components.unitstore).get_draft_head(wt, unit_id)
    return Drafts.of(components.unitstore).apply_draft_changeset(wt, unit_id, draft.revision, changes,
                                                                 author).revision


def add_asset(db, wt: str, unit_id: str, user_id: str) -> str:
    asset_id = new_id()
    with db.write() as s:
        s.add(UnitAsset(id=asset_id, unit_id=unit_id, worktree_id=wt,
                        object_key=f"assets/{asset_id}", filename="a.png",
                        declared_media_type="image/png", detected_media_type="image/png",
                        size=1, sha256="ab" * 32, etag='"e"', created_by=user_id,
                        created_at=utcnow()))
    return asset_id


def ready(client, wt: str) -> None:
    r = client.post(f"/api/worktrees/{wt}/ready")
    assert r.status_code == 200, r.text


def merge(client, wt: str):
    return client.post(f"/api/worktrees/{wt}/merge", headers={"Idempotency-Key": key()})


def body_of(components, unit_id: str) -> dict:
    return components.unitstore.get(unit_id).snapshot["body"]


def stored_bytes(*dbs) -> int:
    """What these databases hold, in bytes: every row of every table as compact JSON."""
    total = 0
    for d in dbs:
        meta = MetaData()
        meta.reflect(d.engine)
        with d.engine.connect() as conn:
            for table in meta.sorted_tables:
                for row in conn.execute(select(table)):
                    total += len(json.dumps(list(row), default=str, separators=(",", ":")))
    return total


def test_every_outcome_then_rebase_and_a_clean_merge(world, components, db):
    alice, bob = world.user("alice"), world.user("bob")
    base = {"a": 1, "b": 2}
    same, ff, three, conf = (make_doc(components, alice, base) for _ in range(4))
    wt = make_worktree(components, alice)
    for i, doc in enumerate((same, ff, three, conf)):
        add_trunk_unit(components, db, wt, alice.user_id, doc, i)
    local = add_local_unit(components, db, wt, alice, 4, {"type": "doc", "schemaVersion": 1,
                                                         "body": {"x": 1}})
    edit_draft(components, wt, local["unit_id"],
               [{"op": "add", "path": "/body/y", "value": 2}], alice.user_id)
    # the fast-forward: two draft revisions by two authors
    edit_draft(components, wt, ff["unit_id"],
               [{"op": "replace", "path": "/body/a", "value": 5}], alice.user_id)
    edit_draft(components, wt, ff["unit_id"],
               [{"op": "add", "path": "/body/c", "value": 3}], bob.user_id)
    # three-way: the draft changes a, trunk changes b
    edit_draft(components, wt, three["unit_id"],
               [{"op": "replace", "path": "/body/a", "value": 10}], alice.user_id)
    edit_trunk(alice, three["unit_id"], 1, [{"op": "replace", "path": "/body/b",
                                             "value": 20}])
    # conflict: both change a (and the draft changes b, trunk adds d: no conflict there)
    conf_rev = edit_draft(components, wt, conf["unit_id"],
                          [{"op": "replace", "path": "/body/a", "value": 11},
                           {"op": "replace", "path": "/body/b", "value": 22}], alice.user_id)
    edit_trunk(alice, conf["unit_id"], 1, [{"op": "replace", "path": "/body/a", "value": 12},
                                           {"op": "add", "path": "/body/d", "value": 4}])
    ff_asset = add_asset(db, wt, ff["unit_id"], alice.user_id)
    conf_asset = add_asset(db, wt, conf["unit_id"], alice.user_id)
    assert alice.get(f"/api/nodes/{local['node_id']}").status_code == 404

    # the preview says what the merge will do, writing nothing
    previews = {name: alice.get(f"/api/worktrees/{wt}/units/{doc['unit_id']}/merge-preview")
                for name, doc in (("same", same), ("ff", ff), ("three", three),
                                  ("conf", conf), ("local", local))}
    assert {n: p.json["outcome"] for n, p in previews.items()} == {
        "same": "unchanged", "ff": "fast_forward", "three": "merged", "conf": "conflict",
        "local": "created"}
    assert previews["conf"].json["conflicts"] == [
        {"path": "/body/a", "base": 1, "trunk": 12, "draft": 11}]
    assert previews["three"].json["patch_ops"] == 1

    # merge needs ready; a second merge while one is under way is 409
    assert_problem(merge(alice, wt), 409, "worktree_state")
    ready(alice, wt)
    r = merge(alice, wt)
    assert r.status_code == 202 and r.json["kind"] == "merge_worktree"
    with db.read() as s:
        row = s.get(Worktree, wt)
        assert row.state == "merging" and row.busy_operation_id == r.json["id"]
    assert_problem(merge(alice, wt), 409, "worktree_busy")
    assert_problem(alice.post(f"/api/worktrees/{wt}/discard",
                              headers={"Idempotency-Key": key()}), 409, "worktree_busy")
    op = run(components, alice, r)
    result = op["result"]
    assert result["state"] == "draft"
    assert result["counts"] == {"unchanged": 1, "fast_forward": 1, "merged": 1, "created": 1,
                                "conflict": 1, "activation_blocked": 0}
    assert result["assets_published"] == 1
    by_unit = {u["unit_id"]: u for u in result["units"]}
    assert [u["unit_id"] for u in result["units"]] == [
        same["unit_id"], ff["unit_id"], three["unit_id"], conf["unit_id"], local["unit_id"]]
    assert by_unit[conf["unit_id"]]["conflicts"] == [
        {"path": "/body/a", "base": 1, "trunk": 12, "draft": 11}]
    assert by_unit[conf["unit_id"]]["trunk_revision_before"] == \
        by_unit[conf["unit_id"]]["trunk_revision_after"] == 2
    assert by_unit[ff["unit_id"]]["trunk_revision_before"] == 1
    assert by_unit[ff["unit_id"]]["trunk_revision_after"] == 3
    assert by_unit[local["unit_id"]]["node_id"] == local["node_id"]

    # trunk: fast-forward replayed both revisions with their authors; three-way has both
    # sides; the conflicting unit is untouched; the unchanged one too
    assert body_of(components, ff["unit_id"]) == {"a": 5, "b": 2, "c": 3}
    revs = components.unitstore.revisions(ff["unit_id"])
    assert [(x.revision, x.author_id) for x in revs[-2:]] == [(2, alice.user_id),
                                                              (3, bob.user_id)]
    assert revs[-1].origin == {"merge": {"worktree_id": wt, "operation_id": op["id"]}}
    assert body_of(components, three["unit_id"]) == {"a": 10, "b": 20}
    assert components.unitstore.get(three["unit_id"]).revision == 3
    assert body_of(components, conf["unit_id"]) == {"a": 12, "b": 2, "d": 4}
    assert components.unitstore.get(conf["unit_id"]).revision == 2
    assert components.unitstore.get(same["unit_id"]).revision == 1
    # the local unit exists in trunk with its history, and its node appeared
    assert body_of(components, local["unit_id"]) == {"x": 1, "y": 2}
    node = alice.get(f"/api/nodes/{local['node_id']}")
    assert node.status_code == 200 and node.json["name"] == "Brand new"
    with db.read() as s:
        assets = {a.id: a for a in s.scalars(select(UnitAsset))}
        assert assets[ff_asset].worktree_id is None and assets[ff_asset].published_at
        assert assets[conf_asset].worktree_id == wt and assets[conf_asset].published_at is None
        states = {u.unit_id: (u.merge_state, u.conflict_count, u.last_merge_operation_id)
                  for u in s.scalars(select(WorktreeUnit))}
        assert states[conf["unit_id"]] == ("conflict", 1, op["id"])
        assert states[local["unit_id"]][0] == "created"
        intent = s.scalars(select(WorktreeNodeIntent)).one()
        assert intent.activated_at is not None
        assert s.get(Node, local["node_id"]).created_by == alice.user_id
    detail = alice.get(f"/api/worktrees/{wt}").json
    assert detail["state"] == "draft" and detail["busy_operation_id"] is None
    assert detail["last_merge_operation_id"] == op["id"] and detail["processed_at"] is None

    # the last merge's conflicts, paged
    page = alice.get(f"/api/worktrees/{wt}/units/{conf['unit_id']}/conflicts",
                     params={"limit": "1"}).json
    assert page == {"operation_id": op["id"], "conflict_count": 1, "next_cursor": None,
                    "items": [{"path": "/body/a", "base": 1, "trunk": 12, "draft": 11}]}

    # rebase: refusals first (nothing written), then with a resolution
    url = f"/api/worktrees/{wt}/units/{conf['unit_id']}/rebase"
    refused = alice.post(url, json={"draft_revision": conf_rev})
    assert_problem(refused, 409, "merge_conflict")
    assert refused.json["details"]["conflicts"] == [
        {"path": "/body/a", "base": 1, "trunk": 12, "draft": 11}]
    assert_problem(alice.post(url, json={"draft_revision": conf_rev, "resolutions": [
        {"path": "/body/a", "take": "draft"}, {"path": "/body/zz", "take": "trunk"}]}),
        400, "unknown_conflict_path")
    assert_problem(alice.post(url, json={"draft_revision": conf_rev + 5, "resolutions": [
        {"path": "/body/a", "take": "draft"}]}), 409, "revision_conflict")
    assert_problem(alice.post(url, json={"draft_revision": conf_rev, "resolutions": [
        {"path": "/body/a", "take": "sideways"}]}), 400)
    assert Drafts.of(components.unitstore).get_draft_head(wt, conf["unit_id"]).revision == conf_rev
    done = alice.post(url, json={"draft_revision": conf_rev,
                                 "resolutions": [{"path": "/body/a", "take": "draft"}]})
    assert done.status_code == 200, done.text
    assert done.json == {"draft_revision": conf_rev + 1, "base_revision": 2}
    assert Drafts.of(components.unitstore).get_draft(wt, conf["unit_id"]).snapshot["body"] == {
        "a": 11, "b": 22, "d": 4}
    assert alice.get(f"/api/worktrees/{wt}/units/{conf['unit_id']}/merge-preview"
                     ).json["outcome"] == "fast_forward"

    # ready again, and the merge is clean: the others are unchanged now
    ready(alice, wt)
    second = run(components, alice, merge(alice, wt))["result"]
    assert second["state"] == "merged"
    assert second["counts"] == {"unchanged": 4, "fast_forward": 1, "merged": 0, "created": 0,
                                "conflict": 0, "activation_blocked": 0}
    assert second["assets_published"] == 1
    assert body_of(components, conf["unit_id"]) == {"a": 11, "b": 22, "d": 4}
    assert components.unitstore.get(three["unit_id"]).revision == 3  # nothing rewritten
    detail = alice.get(f"/api/worktrees/{wt}").json
    assert detail["state"] == "merged" and detail["processed_at"] is not None
    with db.read() as s:
        assert s.scalars(select(UnitAsset.worktree_id)).all() == [None, None]
    assert_problem(alice.get(f"/api/worktrees/{wt}/units/{conf['unit_id']}/merge-preview"),
                   409, "worktree_state")
    assert_problem(merge(alice, wt), 409, "worktree_state")


def test_a_remerge_with_nothing_changed_stores_little_and_results_stay_small(
        world, components, db):
    """20 units, each with 20 conflicting 4,000-character strings (4.8 MB of conflicts): a
    re-merge with nothing changed stores under 64 KiB, each operation's result is under 64
    KiB, the full conflicts stay readable, and a 200-operation listing stays small."""
    alice = world.user("alice")
    names = [f"k{i}" for i in range(20)]

    def big() -> str:
        return secrets.token_hex(2000)  # 4,000 characters that do not compress

    # a webhook (its row put in directly: registration refuses a local address): each
    # finished operation's delivery is stored with the operation's result
    hook_id = new_id()
    with db.write() as s:
        s.add(Webhook(id=hook_id, user_id=alice.user_id, url="http://127.0.0.1:9/hook",
                      events=["operation.completed"], secret="whsec_" + "A" * 44))
    wt = make_worktree(components, alice)
    docs = []
    for i in range(20):
        doc = make_doc(components, alice, {k: big() for k in names})
        add_trunk_unit(components, db, wt, alice.user_id, doc, i)
        edit_draft(components, wt, doc["unit_id"], [
            {"op": "replace", "path": f"/body/{k}", "value": big()} for k in names],
            alice.user_id)
        edit_trunk(alice, doc["unit_id"], 1, [
            {"op": "replace", "path": f"/body/{k}", "value": big()} for k in names])
        docs.append(doc)
    ready(alice, wt)
    first = run(components, alice, merge(alice, wt))
    assert first["result"]["counts"]["conflict"] == 20
    before = stored_bytes(db, components.unitstore.db)
    ready(alice, wt)
    second = run(components, alice, merge(alice, wt))
    grown = stored_bytes(db, components.unitstore.db) - before
    assert second["result"]["counts"]["conflict"] == 20
    assert grown < 64 * 1024, f"a re-merge stored {grown} bytes"
    for op in (first, second):
        result = op["result"]
        assert len(json.dumps(result)) < 64 * 1024
        assert [u["conflict_count"] for u in result["units"]] == [20] * 20
        # a bounded sample: the first conflicts' paths, the 4,000-character values clipped
        shown = [c for u in result["units"] for c in u["conflicts"]]
        assert 0 < len(shown) <= 10
        assert shown[0]["path"] == "/body/k0" and shown[0]["draft"]["$truncated"] is True
    # every conflict, with its values, through the paged endpoint (the second merge's)
    items, cursor = [], None
    while True:
        page = alice.get(f"/api/worktrees/{wt}/units/{docs[7]['unit_id']}/conflicts",
                         params={"limit": "8", **({"cursor": cursor} if cursor else {})}).json
        assert page["operation_id"] == second["id"] and page["conflict_count"] == 20
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert [c["path"] for c in items] == [f"/body/{k}" for k in names]
    assert all(len(c[side]) == 4000 for c in items for side in ("base", "trunk", "draft"))
    listing = alice.get("/api/operations", params={"limit": "200"})
    assert listing.status_code == 200 and len(listing.content) < 4 * 64 * 1024
    with db.read() as s:
        sent = s.scalars(select(WebhookDelivery).where(
            WebhookDelivery.webhook_id == hook_id,
            WebhookDelivery.subject_id.in_([first["id"], second["id"]]))).all()
    assert len(sent) == 2
    assert all(len(json.dumps(d.payload, default=str)) < 64 * 1024 for d in sent)


def test_a_merge_result_is_under_64_kib_at_its_largest():
    """The largest result the bounds allow (every unit listed with the longest ids,
    outcome and numbers, every sample conflict with a path and values just under the
    clip) is under 64 KiB; more units are counted, not listed; a value over the clip is
    the truncation marker."""
    wide = "/" + "p" * 125  # 128 bytes of JSON: kept as it is
    conflicts = [{"path": wide, "base": wide, "trunk": wide, "draft": wide}] * 50
    sample = merging._summary(conflicts, merging.RESULT_UNIT_CONFLICTS)
    assert sample[0] == conflicts[0]
    shown, units = 0, []
    for _ in range(merging.RESULT_UNITS):
        take = merging._summary(conflicts, min(merging.RESULT_UNIT_CONFLICTS,
                                               merging.RESULT_CONFLICTS - shown))
        shown += len(take)
        units.append(MergeUnitResult(
            unit_id="f" * 32, resource_id="f" * 32, node_id="f" * 32,
            outcome="activation_blocked", trunk_revision_before=2**31,
            trunk_revision_after=2**31, conflict_count=10**9, conflicts=take))
    result = MergeWorktreeResult(worktree_id="f" * 32, state="draft",
                                 counts=dict.fromkeys(merging.OUTCOMES, 10**9),
                                 assets_published=10**9, units=units, units_truncated=True)
    assert shown == merging.RESULT_CONFLICTS
    assert len(msgspec.json.encode(result)) < 64 * 1024
    clipped = merging._summary([{"path": "/a", "draft": "x" * 4000}], 1)[0]
    assert clipped["path"] == "/a" and clipped["draft"]["$truncated"] is True


def test_a_merge_of_more_units_than_a_result_lists_counts_them_all(
        world, components, db, monkeypatch):
    monkeypatch.setattr(merging, "RESULT_UNITS", 2)
    alice = world.user("alice")
    wt = make_worktree(components, alice)
    docs = [make_doc(components, alice, {"a": i}) for i in range(3)]
    for i, doc in enumerate(docs):
        add_trunk_unit(components, db, wt, alice.user_id, doc, i)
    ready(alice, wt)
    result = run(components, alice, merge(alice, wt))["result"]
    assert result["state"] == "merged" and result["counts"]["unchanged"] == 3
    assert [u["unit_id"] for u in result["units"]] == [d["unit_id"] for d in docs[:2]]
    assert result["units_truncated"] is True


def test_a_rerun_after_a_crash_in_perform_writes_nothing_twice(world, components, db):
    alice = world.user("alice")
    ff, three = make_doc(components, alice, {"a": 1}), make_doc(components, alice, {"a": 1})
    wt = make_worktree(components, alice)
    add_trunk_unit(components, db, wt, alice.user_id, ff, 0)
    add_trunk_unit(components, db, wt, alice.user_id, three, 1)
    edit_draft(components, wt, ff["unit_id"], [{"op": "add", "path": "/body/b", "value": 2}],
               alice.user_id)
    edit_draft(components, wt, three["unit_id"],
               [{"op": "add", "path": "/body/b", "value": 2}], alice.user_id)
    edit_trunk(alice, three["unit_id"], 1, [{"op": "add", "path": "/body/c", "value": 3}])
    ready(alice, wt)
    r = merge(alice, wt)
    assert r.status_code == 202
    handler = components.handlers["merge_worktree"]
    with db.read() as s:
        op = s.get(Operation, r.json["id"])
    handler.perform(op)  # the worker dies here, before its commit
    assert components.unitstore.get(ff["unit_id"]).revision == 2
    assert components.unitstore.get(three["unit_id"]).revision == 3
    handler.perform(op)  # a second worker performs it again: the records are reused
    assert components.unitstore.get(ff["unit_id"]).revision == 2
    assert components.unitstore.get(three["unit_id"]).revision == 3
    with db.read() as s:
        assert s.get(Worktree, wt).state == "merging"  # product untouched so far
    result = run(components, alice, r)["result"]  # the executor's own run: perform + commit
    assert result["state"] == "merged"
    assert result["counts"]["fast_forward"] == 1 and result["counts"]["merged"] == 1
    assert components.unitstore.get(ff["unit_id"]).revision == 2
    assert components.unitstore.get(three["unit_id"]).revision == 3
    assert body_of(components, three["unit_id"]) == {"a": 1, "b": 2, "c": 3}
    assert len(MergeRecords.of(components.unitstore).merge_records(r.json["id"])) == 2


def test_merge_refusals(world, components, db):
    alice, bob = world.user("alice"), world.user("bob")
    doc = make_doc(components, alice, {"a": 1})
    wt = make_worktree(components, alice)
    add_trunk_unit(components, db, wt, alice.user_id, doc, 0)
    ready(alice, wt)
    assert_problem(merge(bob, wt), 404)  # a user worktree is its creator's alone
    # a trashed unit: 409 unit_unavailable, and nothing changes
    trashed = alice.post(f"/api/nodes/{doc['node_id']}/trash")
    assert trashed.status_code in (200, 201), trashed.text
    refused = merge(alice, wt)
    assert_problem(refused, 409, "unit_unavailable")
    assert refused.json["details"]["unit_ids"] == [doc["unit_id"]]
    with db.read() as s:
        assert s.get(Worktree, wt).state == "ready"


def test_a_blocked_activation_then_a_later_merge_activates(world, components, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    folder = make_node(alice, sp, "Target")
    wt = make_worktree(components, alice)
    local = add_local_unit(components, db, wt, alice, 0, {"type": "doc", "schemaVersion": 1,
                                                         "body": {"x": 1}})
    with db.write() as s:
        s.scalars(select(WorktreeNodeIntent)).one().target_parent_id = folder["id"]
    ready(alice, wt)
    r = merge(alice, wt)
    assert r.status_code == 202, r.text
    handler = components.handlers["merge_worktree"]
    with db.read() as s:
        op = s.get(Operation, r.json["id"])
    handler.perform(op)  # the unit is in trunk; then its target folder is trashed
    trashed = alice.post(f"/api/nodes/{folder['id']}/trash")
    assert trashed.status_code in (200, 201), trashed.text
    result = run(components, alice, r)["result"]  # past the first write: no re-check
    assert result["state"] == "draft"
    assert result["counts"]["activation_blocked"] == 1 and result["counts"]["created"] == 0
    assert result["units"][0]["node_id"] is None
    assert components.unitstore.get(local["unit_id"]) is not None
    with db.read() as s:
        assert s.get(Node, local["node_id"]) is None
        assert s.scalars(select(WorktreeUnit.merge_state)).one() == "activation_blocked"
    # the folder comes back; the next merge creates nothing new and activates the node
    restored = alice.post(f"/api/trash-batches/{trashed.json['id']}/restore")
    assert restored.status_code == 200, restored.text
    revision = components.unitstore.get(local["unit_id"]).revision
    ready(alice, wt)
    again = run(components, alice, merge(alice, wt))["result"]
    assert again["state"] == "merged" and again["counts"]["created"] == 1
    assert components.unitstore.get(local["unit_id"]).revision == revision
    node = alice.get(f"/api/nodes/{local['node_id']}")
    assert node.status_code == 200 and node.json["parent_id"] == folder["id"]


def test_a_failed_merge_gives_ready_back_and_a_retry_takes_it_again(world, components, db):
    alice = world.user("alice")
    doc = make_doc(components, alice, {"a": 1})
    wt = make_worktree(components, alice)
    add_trunk_unit(components, db, wt, alice.user_id, doc, 0)
    edit_draft(components, wt, doc["unit_id"], [{"op": "add", "path": "/body/b", "value": 2}],
               alice.user_id)
    ready(alice, wt)
    r = merge(alice, wt)
    assert r.status_code == 202
    # the unit is trashed before the worker claims the merge: it fails, nothing written
    trashed = alice.post(f"/api/nodes/{doc['node_id']}/trash")
    assert trashed.status_code in (200, 201), trashed.text
    assert components.executor.execute(r.json["id"]) == "failed"
    failed = alice.get(f"/api/operations/{r.json['id']}").json
    assert failed["error"]["code"] == "unit_unavailable"
    with db.read() as s:
        row = s.get(Worktree, wt)
        assert row.state == "ready" and row.busy_operation_id is None
    assert components.unitstore.get(doc["unit_id"]).revision == 1
    # restored, the same operation is retried: the claim takes the worktree again
    assert alice.post(f"/api/trash-batches/{trashed.json['id']}/restore").status_code == 200
    assert alice.post(f"/api/operations/{r.json['id']}/retry").status_code == 200
    assert components.executor.execute(r.json["id"]) == "completed"
    done = alice.get(f"/api/operations/{r.json['id']}").json["result"]
    assert done["state"] == "merged" and done["counts"]["fast_forward"] == 1
    assert body_of(components, doc["unit_id"]) == {"a": 1, "b": 2}
    # a cancelled merge gives ready back too
    wt2 = make_worktree(components, alice)
    add_trunk_unit(components, db, wt2, alice.user_id, doc, 0)
    ready(alice, wt2)
    c = merge(alice, wt2)
    assert alice.post(f"/api/operations/{c.json['id']}/cancel").status_code == 200
    with db.read() as s:
        assert s.get(Worktree, wt2).state == "ready"


def test_trunk_moving_during_the_merge_is_recomputed(world, components, db, monkeypatch):
    alice = world.user("alice")
    doc = make_doc(components, alice, {"a": 1, "b": 2})
    wt = make_worktree(components, alice)
    add_trunk_unit(components, db, wt, alice.user_id, doc, 0)
    edit_draft(components, wt, doc["unit_id"], [{"op": "replace", "path": "/body/a",
                                                 "value": 10}], alice.user_id)
    ready(alice, wt)
    store = components.unitstore
    real = MergeRecords.commit_fast_forward
    moves = []

    def racing(*args, **kwargs):  # someone edits trunk just before the merge writes
        if not moves:
            moves.append(edit_trunk(alice, doc["unit_id"], 1,
                                    [{"op": "replace", "path": "/body/b", "value": 20}]))
        return real(*args, **kwargs)

    monkeypatch.setattr(MergeRecords, "commit_fast_forward", racing)
    result = run(components, alice, merge(alice, wt))["result"]
    assert result["counts"]["merged"] == 1 and result["state"] == "merged"
    assert body_of(components, doc["unit_id"]) == {"a": 10, "b": 20}
    assert store.get(doc["unit_id"]).revision == 3


MERGE_OPERATIONS = {
    ("POST", "/api/worktrees/{worktree_id}/merge"),
    ("GET", "/api/worktrees/{worktree_id}/units/{unit_id}/merge-preview"),
    ("GET", "/api/worktrees/{worktree_id}/units/{unit_id}/conflicts"),
    ("POST", "/api/worktrees/{worktree_id}/units/{unit_id}/rebase"),
}


def test_schemathesis_merge_endpoints(world, app, components, db):
    import copy

    import schemathesis
    from schemathesis import GenerationMode

    from api.contract import document
    from tests.hostile.test_schemathesis import (
        EXAMPLES,
        NEGATIVE_EXAMPLES,
        RANDOM_ID_EXAMPLES,
        _run,
    )
    from tests.support.foundation import bearer, make_token

    alice = world.user("alice")
    doc = make_doc(components, alice, {"a": 1})
    wt = make_worktree(components, alice)
    add_trunk_unit(components, db, wt, alice.user_id, doc, 0)
    edit_draft(components, wt, doc["unit_id"], [{"op": "replace", "path": "/body/a",
                                                 "value": 2}], alice.user_id)
    edit_trunk(alice, doc["unit_id"], 1, [{"op": "replace", "path": "/body/a", "value": 3}])
    headers = bearer(make_token(alice)["token"])
    schema = schemathesis.openapi.from_dict(copy.deepcopy(document(app)))
    ran = set()
    for result in schema.get_all_operations():
        operation = result.ok()
        label = (operation.method.upper(), operation.path)
        if label not in MERGE_OPERATIONS:
            continue
        ran.add(label)
        names = {p.name for p in operation.path_parameters}
        known = {"worktree_id": wt, **({"unit_id": doc["unit_id"]} if "unit_id" in names
                                       else {})}
        _run(operation, app, headers, GenerationMode.POSITIVE, EXAMPLES, known)
        _run(operation, app, headers, GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES, known)
        _run(operation, app, headers, GenerationMode.POSITIVE, RANDOM_ID_EXAMPLES)
    assert ran == MERGE_OPERATIONS


def test_a_retry_of_a_merge_that_wrote_to_trunk_is_refused(world, components, db):
    """Review finding: a merge that failed after writing some units released the
    worktree, which may have been edited since; retrying it would reuse stale per-unit
    records (and skip the permission checks). The retry fails `worktree_state`, nothing
    more is written, and a new merge decides every unit afresh."""
    alice = world.user("alice")
    first = make_doc(components, alice, {"a": 1})
    second = make_doc(components, alice, {"a": 1})
    wt = make_worktree(components, alice)
    add_trunk_unit(components, db, wt, alice.user_id, first, 0)
    add_trunk_unit(components, db, wt, alice.user_id, second, 1)
    edit_draft(components, wt, first["unit_id"], [{"op": "add", "path": "/body/b", "value": 2}],
               alice.user_id)
    ready(alice, wt)
    r = merge(alice, wt)
    op_id = r.json["id"]
    # The first unit was merged by an attempt that then failed for good (simulated: its
    # record written, the operation failed by the submitter's cancel once it is pending).
    draft = Drafts.of(components.unitstore).get_draft(wt, first["unit_id"])
    MergeRecords.of(components.unitstore).commit_fast_forward(
        op_id, wt, first["unit_id"], expected_trunk_revision=draft.base_revision,
        expected_draft_revision=draft.revision)
    assert alice.post(f"/api/operations/{op_id}/cancel").status_code == 200
    with db.read() as s:
        assert s.get(Worktree, wt).state == "ready"
    # Meanwhile the author reopens and edits the first unit again.
    assert alice.post(f"/api/worktrees/{wt}/reopen").status_code == 200
    edit_draft(components, wt, first["unit_id"], [{"op": "add", "path": "/body/c", "value": 3}],
               alice.user_id)
    ready(alice, wt)
    revision = components.unitstore.get(first["unit_id"]).revision
    assert alice.post(f"/api/operations/{op_id}/retry").status_code == 200
    assert components.executor.execute(op_id) == "failed"
    assert alice.get(f"/api/operations/{op_id}").json["error"]["code"] == "worktree_state"
    assert components.unitstore.get(first["unit_id"]).revision == revision
    with db.read() as s:
        assert s.get(Worktree, wt).state == "ready"
    # A new merge brings the later edit over.
    r2 = merge(alice, wt)
    assert components.executor.execute(r2.json["id"]) == "completed"
    assert body_of(components, first["unit_id"]) == {"a": 1, "b": 2, "c": 3}


def test_a_unit_store_outage_at_the_claim_retries_the_merge(world, components, db,
                                                            monkeypatch):
    """Review finding: the merge's claim asks the unit store whether it already wrote;
    an outage there makes this merge retry later (it used to roll back the whole claim,
    holding up every operation claimed with it)."""
    from storage.errors import UnitStoreUnavailable
    alice = world.user("alice")
    doc = make_doc(components, alice, {"a": 1})
    wt = make_worktree(components, alice)
    add_trunk_unit(components, db, wt, alice.user_id, doc, 0)
    edit_draft(components, wt, doc["unit_id"], [{"op": "add", "path": "/body/b", "value": 2}],
               alice.user_id)
    ready(alice, wt)
    op_id = merge(alice, wt).json["id"]

    def down(*_a, **_k):
        raise UnitStoreUnavailable("the unit store is down")

    monkeypatch.setattr(MergeRecords, "has_merge_records", down)
    assert components.executor.execute(op_id) == "retry"
    pending = alice.get(f"/api/operations/{op_id}").json
    assert pending["status"] == "pending" and pending["error"]["code"] == "unitstore_unavailable"
    monkeypatch.undo()
    with db.write() as s:  # its backoff elapsed
        from sqlalchemy import update

        from storage.models import Operation
        s.execute(update(Operation).where(Operation.id == op_id).values(next_attempt_at=None))
    assert components.executor.execute(op_id) == "completed"
    assert body_of(components, doc["unit_id"]) == {"a": 1, "b": 2}
