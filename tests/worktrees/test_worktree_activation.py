"""Re-driving a blocked activation over HTTP (specs/assets-worktrees.md §7.6), on SQLite
and PostgreSQL: a unit new in the worktree merges into trunk while its target folder is
trashed (``activation_blocked``); ``POST .../activate`` with a new target creates its
node there, publishes its worktree assets and makes the worktree ``merged``; refusals
(stored target still gone, a target the caller may not use, a worktree they cannot see,
a unit that is not blocked); a trunk unit gone before perform fails the operation
``unit_missing`` and leaves the unit blocked."""
from __future__ import annotations

from sqlalchemy import select

from storage.models import Node, Operation, UnitAsset, WorktreeNodeIntent, WorktreeUnit
from tests.support.foundation import add_member, assert_problem, make_node, team_space
from tests.worktrees.test_worktree_merge import (
    add_asset,
    add_local_unit,
    add_trunk_unit,
    key,
    make_doc,
    make_worktree,
    merge,
    ready,
    run,
)
from wharf.infra.ids import new_id
from wharf.worktrees.drafts import Drafts


def blocked_unit(components, db, alice, folder: dict) -> tuple[str, dict]:
    """A worktree whose local unit merged into trunk while its target folder (in
    ``folder``'s space) was trashed (``activation_blocked``), with a worktree asset on
    that unit."""
    wt = make_worktree(components, alice)
    local = add_local_unit(components, db, wt, alice, 0, {"type": "doc", "schemaVersion": 1,
                                                         "body": {"x": 1}})
    local["asset_id"] = add_asset(db, wt, local["unit_id"], alice.user_id)
    with db.write() as s:
        intent = s.scalars(select(WorktreeNodeIntent).where(
            WorktreeNodeIntent.worktree_id == wt)).one()
        intent.target_space_id, intent.target_parent_id = folder["space_id"], folder["id"]
    ready(alice, wt)
    r = merge(alice, wt)
    assert r.status_code == 202, r.text
    with db.read() as s:
        op = s.get(Operation, r.json["id"])
    components.handlers["merge_worktree"].perform(op)
    trashed = alice.post(f"/api/nodes/{folder['id']}/trash")
    assert trashed.status_code in (200, 201), trashed.text
    result = run(components, alice, r)["result"]
    assert result["counts"]["activation_blocked"] == 1 and result["state"] == "draft"
    return wt, local


def activate(client, wt: str, unit_id: str, body: dict | None = None):
    return client.post(f"/api/worktrees/{wt}/units/{unit_id}/activate", json=body or {},
                       headers={"Idempotency-Key": key()})


def test_activating_a_blocked_unit_at_a_new_target(world, components, db):
    alice, bob = world.user("alice"), world.user("bob")
    sp = alice.personal_space_id
    wt, local = blocked_unit(components, db, alice, make_node(alice, sp, "Target"))
    unit = alice.get(f"/api/worktrees/{wt}/units/{local['unit_id']}")
    assert unit.json["activation"] == "blocked"

    # refusals: the stored target is still trashed; bob's space is not alice's to use;
    # bob cannot see the worktree
    assert_problem(activate(alice, wt, local["unit_id"]), 409, "unit_unavailable")
    assert_problem(activate(alice, wt, local["unit_id"],
                            {"target": {"space_id": bob.personal_space_id}}), 404)
    assert_problem(activate(bob, wt, local["unit_id"], {"target": {"space_id": sp}}), 404)

    elsewhere = make_node(alice, sp, "Elsewhere")
    r = activate(alice, wt, local["unit_id"],
                 {"target": {"space_id": sp, "parent_id": elsewhere["id"]}})
    op = run(components, alice, r)
    assert op["kind"] == "activate_worktree_resource"
    assert op["result"] == {"worktree_id": wt, "unit_id": local["unit_id"],
                            "node_id": local["node_id"], "resource_id": local["resource_id"]}
    node = alice.get(f"/api/nodes/{local['node_id']}")
    assert node.status_code == 200 and node.json["parent_id"] == elsewhere["id"]
    got = alice.get(f"/api/worktrees/{wt}")
    assert got.json["state"] == "merged" and got.json["processed_at"] is not None
    assert got.json["units"][0]["merge_state"] == "created"
    assert got.json["units"][0]["activation"] == "activated"
    with db.read() as s:
        asset = s.get(UnitAsset, local["asset_id"])
        assert asset.worktree_id is None and asset.published_at is not None
        rows = s.scalars(select(WorktreeUnit).where(WorktreeUnit.worktree_id == wt)).all()
        assert [u.merge_state for u in rows] == ["created"]

    # now nothing is blocked
    assert_problem(activate(alice, wt, local["unit_id"]), 409)


def test_activation_refused_unless_blocked(world, components, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    doc = make_doc(components, alice, {"a": 1})
    wt = make_worktree(components, alice)
    add_trunk_unit(components, db, wt, alice.user_id, doc, 0)
    local = add_local_unit(components, db, wt, alice, 1, {"type": "doc", "schemaVersion": 1,
                                                         "body": {}})
    for unit_id in (doc["unit_id"], local["unit_id"]):
        r = activate(alice, wt, unit_id, {"target": {"space_id": sp}})
        body = assert_problem(r, 409, "not_blocked")
        assert body["details"]["merge_state"] == "pending"
    assert_problem(activate(alice, wt, new_id()), 404)


def test_activation_fails_when_the_trunk_unit_is_missing(world, components, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    wt, local = blocked_unit(components, db, alice, make_node(alice, sp, "Target"))
    r = activate(alice, wt, local["unit_id"], {"target": {"space_id": sp}})
    assert r.status_code == 202, r.text
    components.unitstore.delete_unit(local["unit_id"])  # e.g. a purge raced it
    assert components.executor.execute(r.json["id"]) == "failed"
    op = alice.get(f"/api/operations/{r.json['id']}").json
    assert op["error"]["code"] == "unit_missing"
    with db.read() as s:
        assert s.get(Node, local["node_id"]) is None
        unit = s.get(WorktreeUnit, (wt, local["unit_id"]))
        assert unit.merge_state == "activation_blocked"


def test_schemathesis_activate_endpoint(world, app, components, db):
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
    wt, local = blocked_unit(components, db, alice,
                             make_node(alice, alice.personal_space_id, "Target"))
    headers = bearer(make_token(alice)["token"])
    schema = schemathesis.openapi.from_dict(copy.deepcopy(document(app)))
    label = ("POST", "/api/worktrees/{worktree_id}/units/{unit_id}/activate")
    ran = False
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) != label:
            continue
        ran = True
        known = {"worktree_id": wt, "unit_id": local["unit_id"]}
        _run(operation, app, headers, GenerationMode.POSITIVE, EXAMPLES, known)
        _run(operation, app, headers, GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES, known)
        _run(operation, app, headers, GenerationMode.POSITIVE, RANDOM_ID_EXAMPLES)
    assert ran


def test_a_blocked_unit_draft_is_read_only_until_activated(world, components, db):
    """Its trunk unit holds the draft's content already: an edit now would be lost by the
    activation, so it is refused (409 ``activation_blocked``) and changes nothing."""
    alice = world.user("alice")
    sp = alice.personal_space_id
    wt, local = blocked_unit(components, db, alice, make_node(alice, sp, "Target"))
    unit_id = local["unit_id"]
    # The target folder restored from the trash: the unit is editable again as far as
    # rights go, but still blocked.
    for batch in alice.get(f"/api/spaces/{sp}/trash").json["items"]:
        assert alice.post(f"/api/trash-batches/{batch['id']}/restore").status_code == 200
    before = Drafts.of(components.unitstore).get_draft(wt, unit_id)
    r = alice.post(f"/api/worktrees/{wt}/units/{unit_id}/changesets",
                   json={"base_revision": before.revision,
                         "changes": [{"op": "add", "path": "/late", "value": 1}]})
    assert r.status_code == 409 and r.json["code"] == "activation_blocked", r.text
    assert Drafts.of(components.unitstore).get_draft(wt, unit_id).snapshot == before.snapshot


def test_a_member_removed_before_the_worker_commits_activates_nothing(world, components, db):
    """Bob, editor of a team space, re-drives the activation of his own worktree's unit
    into a folder of that team; the owner removes him before the worker runs: the
    operation fails ``permission_revoked`` and no node appears in a space he no longer
    belongs to (the worker re-checks the right to create in the target, not only the
    worktree's *merge* right)."""
    owner, bob = world.user("owner"), world.user("bob")
    team = team_space(owner, "Team")
    add_member(owner, team["id"], bob.user_id, "editor")
    wt, local = blocked_unit(components, db, bob, make_node(bob, team["id"], "Gone"))
    elsewhere = make_node(owner, team["id"], "Elsewhere")
    r = activate(bob, wt, local["unit_id"],
                 {"target": {"space_id": team["id"], "parent_id": elsewhere["id"]}})
    assert r.status_code == 202, r.text
    assert owner.delete(f"/api/spaces/{team['id']}/members/{bob.user_id}").status_code == 204
    assert components.executor.execute(r.json["id"]) == "failed"
    op = bob.get(f"/api/operations/{r.json['id']}").json
    assert op["error"]["code"] == "permission_revoked", op
    assert owner.get(f"/api/nodes/{elsewhere['id']}/children").json["items"] == []
    with db.read() as s:
        assert s.get(Node, local["node_id"]) is None
        assert s.get(WorktreeUnit, (wt, local["unit_id"])).merge_state == \
            "activation_blocked"
