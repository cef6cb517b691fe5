"""Protected ranges where documents travel (docs/protection.md), on SQLite and
PostgreSQL: a worktree draft sees the bindings of its base (a range protected after the
fork is editable in the draft, one protected before is not), and the merge re-checks at
its commit against trunk's bindings then: the draft that edited a range protected after
the fork is refused (the operation fails ``protected_range``, trunk unchanged); a history
restore is checked the same way and keeps today's bindings; purging the document and
deleting an account take care of both tables."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from storage.models import ContentPermissionCollaborator, ContentPermissionObject
from tests.protection.support import change, collaborator, key, make_doc, protect, revision, run
from tests.support.foundation import add_member, assert_problem, team_space
from wharf.accounts.purge import PLACEHOLDER_ID

pytestmark = pytest.mark.both_databases


def _count(db, model, *where) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(model).where(*where)) or 0


def _worktree_with(components, client, resource_id: str) -> str:
    op = run(components, client, client.post(
        "/api/worktrees", json={"kind": "user", "name": f"WT {key()[:6]}"},
        headers={"Idempotency-Key": key()}))
    wt = op["result"]["worktree_id"]
    op = run(components, client, client.post(
        f"/api/worktrees/{wt}/units", json={"source": "trunk", "resource_id": resource_id},
        headers={"Idempotency-Key": key()}))
    assert op["status"] == "completed", op
    return wt


def _draft(client, wt: str, unit: str, base: int, *ops: dict):
    return client.post(f"/api/worktrees/{wt}/units/{unit}/changesets",
                       json={"base_revision": base, "changes": list(ops)})


def test_drafts_see_their_base_and_the_merge_rechecks_at_commit(components, world):
    alice, edd = world.user("alice"), world.user("edd")
    team = team_space(alice, "Team")["id"]
    add_member(alice, team, edd.user_id, "editor")
    doc = make_doc(components, alice, team, {"totals": {"q1": 1}, "old": {"x": 1},
                                             "notes": ""})
    unit = doc["unit_id"]
    old = protect(alice, unit, "/body/old")  # one_self: alice (and admins) only
    wt = _worktree_with(components, edd, doc["resource_id"])
    # in the draft: /body/old was protected in its base, /body/totals not yet
    p = assert_problem(_draft(edd, wt, unit, 0, {"op": "remove", "path": "/body/old/x"}),
                       403, "protected_range")
    assert p["details"] == {"object_id": old["id"], "op_index": 0}
    r = _draft(edd, wt, unit, 0, {"op": "replace", "path": "/body/totals/q1", "value": 2},
               {"op": "replace", "path": "/body/notes", "value": "edd"})
    assert r.status_code == 200, r.text
    # trunk protects /body/totals after the fork; the draft still sees its base
    totals = protect(alice, unit, "/body/totals")
    assert _draft(edd, wt, unit, 1, {"op": "add", "path": "/body/totals/q2",
                                     "value": 3}).status_code == 200
    # the merge commits against trunk now: refused, trunk unchanged, worktree ready again
    trunk_before = revision(alice, unit)
    assert edd.post(f"/api/worktrees/{wt}/ready").status_code == 200
    op = run(components, edd, edd.post(f"/api/worktrees/{wt}/merge",
                                       headers={"Idempotency-Key": key()}))
    assert op["status"] == "failed", op
    assert op["error"]["code"] == "protected_range"
    assert op["error"]["details"]["object_id"] == totals["id"]
    assert isinstance(op["error"]["details"]["op_index"], int)
    assert revision(alice, unit) == trunk_before
    assert alice.get(f"/api/units/{unit}").json["snapshot"]["body"]["totals"] == {"q1": 1}
    assert edd.get(f"/api/worktrees/{wt}").json["state"] == "ready"
    # once alice lets edd edit it (specified, editor), a new merge goes through
    assert alice.patch(f"/api/permission-objects/{totals['id']}",
                       json={"edit_scope": "specified"}).status_code == 200
    collaborator(alice, totals["id"], edd.user_id, "editor")
    op = run(components, edd, edd.post(f"/api/worktrees/{wt}/merge",
                                       headers={"Idempotency-Key": key()}))
    assert op["status"] == "completed", op
    body = alice.get(f"/api/units/{unit}").json["snapshot"]
    assert body["body"]["totals"] == {"q1": 2, "q2": 3} and body["body"]["notes"] == "edd"
    assert body["protection"] == {old["id"]: "/body/old", totals["id"]: "/body/totals"}


def test_restore_is_checked_and_keeps_todays_bindings(components, world):
    alice, eve = world.user("alice"), world.user("eve")
    team = team_space(alice, "Team")["id"]
    add_member(alice, team, eve.user_id, "editor")
    doc = make_doc(components, alice, team, {"totals": 1, "notes": "a"})
    unit = doc["unit_id"]
    assert change(eve, unit, {"op": "replace", "path": "/body/totals", "value": 2}) \
        .status_code == 200
    first = revision(alice, unit)
    obj = protect(alice, unit, "/body/totals")
    assert change(eve, unit, {"op": "replace", "path": "/body/notes", "value": "b"}) \
        .status_code == 200
    # eve may put the notes back, not the totals (revision 1: totals 1)
    head = revision(alice, unit)
    p = assert_problem(eve.post(f"/api/units/{unit}/restore",
                                json={"revision": 1, "base_revision": head}),
                       403, "protected_range")
    assert p["details"]["object_id"] == obj["id"]
    assert revision(alice, unit) == head
    r = eve.post(f"/api/units/{unit}/restore", json={"revision": first,
                                                      "base_revision": head})
    assert r.status_code == 200, r.text
    assert r.json["snapshot"]["body"] == {"totals": 2, "notes": "a"}
    # alice restores revision 1, before the protection existed: it stays protected
    r = alice.post(f"/api/units/{unit}/restore",
                   json={"revision": 1, "base_revision": revision(alice, unit)})
    assert r.status_code == 200, r.text
    assert r.json["snapshot"]["body"]["totals"] == 1
    assert r.json["snapshot"]["protection"] == {obj["id"]: "/body/totals"}


def test_purge_and_account_deletion(components, world, db):
    alice, bob = world.user("alice"), world.user("bob")
    team = team_space(alice, "Team")["id"]
    add_member(alice, team, bob.user_id, "editor")
    doomed = make_doc(components, alice, team, {"a": 1})
    kept = make_doc(components, alice, team, {"a": 1})
    for doc in (doomed, kept):
        obj = protect(bob, doc["unit_id"], "/body/a")
        collaborator(bob, obj["id"], alice.user_id, "editor")
    mine = make_doc(components, bob, bob.personal_space_id, {"a": 1})
    protect(bob, mine["unit_id"], "/body/a")
    assert _count(db, ContentPermissionObject) == 3
    # trash, move and rename keep the ids; the purge takes the objects with the unit
    assert alice.post(f"/api/nodes/{doomed['node_id']}/trash").status_code == 200
    assert _count(db, ContentPermissionObject) == 3
    op = run(components, alice, alice.delete(f"/api/nodes/{doomed['node_id']}",
                                             headers={"Idempotency-Key": key()}))
    assert op["status"] == "completed", op
    assert _count(db, ContentPermissionObject,
                  ContentPermissionObject.unit_id == doomed["unit_id"]) == 0
    assert _count(db, ContentPermissionCollaborator) == 1
    # bob's account goes: his personal doc's objects with it; the one he made in the
    # team's doc stays, handed to the placeholder, managed by its owner
    r = bob.delete("/api/me", json_body={}, headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    assert components.executor.execute(r.json["id"]) == "completed"
    with db.read() as s:
        left = list(s.scalars(select(ContentPermissionObject)))
    assert [(o.unit_id, o.creator_id) for o in left] == [(kept["unit_id"], PLACEHOLDER_ID)]
    listed = alice.get(f"/api/units/{kept['unit_id']}/permission-objects").json["items"]
    assert listed[0]["rights"]["manage"] is True
    assert alice.patch(f"/api/permission-objects/{listed[0]['id']}",
                       json={"name": "Adopted"}).status_code == 200
