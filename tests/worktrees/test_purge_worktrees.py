"""The permanent delete of trash against worktrees that hold its units (hardening item 4):
a grantee whose grant was revoked could keep a document undeletable forever by keeping
it in his private worktree. The owner's (or a space admin's) purge and the trash
retention win over worktrees the purger may not discard (their drafts of the deleted
units are discarded, with a ``unit_purged`` event); a worktree the purger may discard, or
one being merged, still blocks, and the 409 names only the worktrees the caller may see
(wharf/worktrees/blockers.py)."""
from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update

from storage.models import AuditLog, Operation, Worktree, WorktreeEvent, WorktreeUnit
from tests.engine.test_operations import wait_done
from tests.support.foundation import add_member, assert_problem, make_node, team_space
from tests.worktrees.test_worktree_units import _doc_without_worker, add, edit, post_unit
from tests.worktrees.test_worktrees import (
    _doc,
    _purge,
    count,
    create,
    create_without_worker,
    discard,
)
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id
from wharf.trash import service as trash
from wharf.worktrees.drafts import Drafts


def _shared_doc(alice, bob) -> tuple[str, dict, str]:
    """A folder of alice's with a doc in it, bob an editor of the folder: (folder id,
    the doc, the grant's path)."""
    sp = alice.personal_space_id
    folder = make_node(alice, sp, "Shared")["id"]
    doc = _doc(alice, sp, folder)
    grant = f"/api/nodes/{folder}/grants/{bob.user_id}"
    assert alice.put(grant, json={"role": "editor"}).status_code in (200, 201)
    return folder, doc, grant


def _events(client, wt: str) -> list[tuple]:
    r = client.get(f"/api/worktrees/{wt}/events")
    assert r.status_code == 200, r.text
    assert r.json["next_cursor"] is None
    return [(e["kind"], e["unit_id"], e["resource_id"], e["operation_id"], e["reason"])
            for e in r.json["items"]]


def _purged(client, node_id: str) -> dict:
    r = _purge(client, node_id)
    assert r.status_code == 202, r.text
    op = wait_done(client, r.json["id"])
    assert op["status"] == "completed", op
    return op


def _retention(components, settings) -> str:
    """Run the trash retention as if its time had come; the purge operation's id."""
    later = utcnow() + timedelta(seconds=settings.trash_retention + 1)
    assert trash.submit_due_purges(components.db, settings, later) == 1
    with components.db.read() as s:
        return s.scalars(select(Operation.id).where(Operation.kind == "purge_trash")
                         .order_by(Operation.id.desc())).first()


def test_the_owners_purge_discards_a_revoked_grantees_draft(world, worker, components, db):
    alice, bob = world.user("alice"), world.user("bob")
    folder, doc, grant = _shared_doc(alice, bob)
    wt = create(bob, name="Bob's copy")["id"]
    add(bob, wt, source="trunk", resource_id=doc["resource_id"])
    change = [{"op": "add", "path": "/note", "value": "bob was here"}]
    assert edit(bob, wt, doc["unit_id"], 0, change).status_code == 200
    assert alice.delete(grant).status_code in (200, 204)
    assert alice.post(f"/api/nodes/{folder}/trash").status_code == 200
    # bob keeps his worktree open; alice's purge completes all the same
    op = _purged(alice, folder)
    assert alice.get(f"/api/nodes/{folder}").status_code == 404
    # bob's worktree lost that draft, and says why
    detail = bob.get(f"/api/worktrees/{wt}").json
    assert detail["state"] == "draft" and detail["unit_count"] == 0 and detail["units"] == []
    assert_problem(bob.get(f"/api/worktrees/{wt}/units/{doc['unit_id']}"), 404)
    assert _events(bob, wt) == [("unit_purged", doc["unit_id"], doc["resource_id"],
                                 op["id"], "purge")]
    assert Drafts.of(components.unitstore).get_draft(wt, doc["unit_id"]) is None
    assert components.unitstore.get(doc["unit_id"]) is None
    with db.read() as s:
        audit = s.scalars(select(AuditLog).where(
            AuditLog.action == "worktree.unit_purged")).one()
        assert audit.target_id == wt and audit.details["unit_id"] == doc["unit_id"]
    # alice sees neither bob's worktree nor its events
    assert_problem(alice.get(f"/api/worktrees/{wt}/events"), 404)
    # the worktree goes on: bob adds another unit
    other = _doc(bob, bob.personal_space_id, None)
    add(bob, wt, source="trunk", resource_id=other["resource_id"])
    assert bob.get(f"/api/worktrees/{wt}").json["unit_count"] == 1


def test_a_purge_waits_for_a_worktree_the_caller_may_discard_and_names_only_it(
        world, worker, components, db):
    alice, bob = world.user("alice"), world.user("bob")
    folder, doc, _ = _shared_doc(alice, bob)
    mine = create(alice, name="Mine")["id"]
    add(alice, mine, source="trunk", resource_id=doc["resource_id"])
    bobs = create(bob, name="Bob's")["id"]
    add(bob, bobs, source="trunk", resource_id=doc["resource_id"])
    assert alice.post(f"/api/nodes/{folder}/trash").status_code == 200
    before = count(db, Operation)
    body = assert_problem(_purge(alice, folder), 409, "worktree_reference")
    # only her own worktree blocks, and only it is named (bob's is not hers to see)
    assert body["details"] == {"worktree_ids": [mine]}
    assert "1 active worktree(s) reference a resource below" in body["detail"]
    assert count(db, Operation) == before
    # she takes the unit out of hers: the purge goes through, bob's worktree gives way
    assert alice.delete(f"/api/worktrees/{mine}/units/{doc['unit_id']}").status_code == 204
    op = _purged(alice, folder)
    assert _events(bob, bobs) == [("unit_purged", doc["unit_id"], doc["resource_id"],
                                   op["id"], "purge")]
    assert _events(alice, mine) == []


def test_a_team_admins_purge_waits_for_team_worktrees_not_for_a_members_own(
        world, worker, components, db):
    owner, admin, member = world.user("owner"), world.user("admin"), world.user("member")
    team = team_space(owner, "Team")
    add_member(owner, team["id"], admin.user_id, "admin")
    add_member(owner, team["id"], member.user_id, "editor")
    folder = make_node(owner, team["id"], "Docs")["id"]
    doc = _doc(owner, team["id"], folder)
    team_wt = create(member, kind="team", name="Team draft", team_space_id=team["id"],
                     visibility="private")["id"]
    add(member, team_wt, source="trunk", resource_id=doc["resource_id"])
    own_wt = create(member, name="My own")["id"]
    add(member, own_wt, source="trunk", resource_id=doc["resource_id"])
    assert admin.post(f"/api/nodes/{folder}/trash").status_code == 200
    # the admin may discard the team worktree (not the member's user worktree)
    body = assert_problem(_purge(admin, folder), 409, "worktree_reference")
    assert body["details"] == {"worktree_ids": [team_wt]}
    assert wait_done(admin, discard(admin, team_wt).json["id"])["status"] == "completed"
    op = _purged(admin, folder)
    assert _events(member, own_wt) == [("unit_purged", doc["unit_id"], doc["resource_id"],
                                        op["id"], "purge")]
    assert _events(member, team_wt) == []  # discarded before: nothing was taken from it


def test_a_worktree_being_merged_blocks_every_purge_without_being_named(
        world, worker, components, db, settings):
    alice, bob = world.user("alice"), world.user("bob")
    folder, doc, grant = _shared_doc(alice, bob)
    wt = create(bob, name="Merging")["id"]
    add(bob, wt, source="trunk", resource_id=doc["resource_id"])
    assert alice.delete(grant).status_code in (200, 204)
    assert alice.post(f"/api/nodes/{folder}/trash").status_code == 200
    with db.write() as s:  # a merge under way (it was submitted before the trash)
        s.execute(update(Worktree).where(Worktree.id == wt).values(
            state="merging", busy_operation_id=new_id()))
    body = assert_problem(_purge(alice, folder), 409, "worktree_reference")
    assert body["details"] == {"worktree_ids": []}
    assert "merge under way" in body["detail"]
    # the retention waits too
    op_id = _retention(components, settings)
    with db.read() as s:
        assert s.get(Operation, op_id).actor_id == alice.user_id
    op = wait_done(alice, op_id)
    assert op["status"] == "failed" and op["error"]["code"] == "worktree_reference"
    assert Drafts.of(components.unitstore).get_draft(wt, doc["unit_id"]) is not None
    # the merge over, the purge wins
    with db.write() as s:
        s.execute(update(Worktree).where(Worktree.id == wt).values(
            state="ready", busy_operation_id=None))
    op = _purged(alice, folder)
    assert _events(bob, wt) == [("unit_purged", doc["unit_id"], doc["resource_id"],
                                 op["id"], "purge")]


def test_the_trash_retention_is_not_blocked_by_worktrees(world, worker, components, settings):
    alice, bob = world.user("alice"), world.user("bob")
    folder, doc, _ = _shared_doc(alice, bob)
    mine = create(alice, name="Mine")["id"]
    add(alice, mine, source="trunk", resource_id=doc["resource_id"])
    bobs = create(bob, name="Bob's")["id"]
    add(bob, bobs, source="trunk", resource_id=doc["resource_id"])
    assert alice.post(f"/api/nodes/{folder}/trash").status_code == 200
    # her own worktree blocks alice's purge, not the retention's
    assert_problem(_purge(alice, folder), 409, "worktree_reference")
    op_id = _retention(components, settings)
    op = wait_done(alice, op_id)
    assert op["status"] == "completed", op
    assert alice.get(f"/api/nodes/{folder}").status_code == 404
    for client, wt in ((alice, mine), (bob, bobs)):
        assert _events(client, wt) == [("unit_purged", doc["unit_id"], doc["resource_id"],
                                        op_id, "retention")]
        assert client.get(f"/api/worktrees/{wt}").json["unit_count"] == 0
        assert Drafts.of(components.unitstore).get_draft(wt, doc["unit_id"]) is None


def test_a_revoked_grantees_new_unit_does_not_block_the_purge_of_its_target(
        world, worker, components, db):
    alice, bob = world.user("alice"), world.user("bob")
    folder, _, grant = _shared_doc(alice, bob)
    wt = create(bob, name="New doc")["id"]
    local = add(bob, wt, source="worktree", name="Bob's doc", unit_type="doc",
                target={"space_id": alice.personal_space_id, "parent_id": folder})
    assert alice.delete(grant).status_code in (200, 204)
    assert alice.post(f"/api/nodes/{folder}/trash").status_code == 200
    op = _purged(alice, folder)
    # bob's own unit stays; its target is gone, and he is told
    assert _events(bob, wt) == [("target_purged", local["unit_id"], None, op["id"], "purge")]
    units = bob.get(f"/api/worktrees/{wt}").json["units"]
    assert [(u["unit_id"], u["activation"]) for u in units] == [(local["unit_id"], "waiting")]
    assert Drafts.of(components.unitstore).get_draft(wt, local["unit_id"]) is not None


def test_a_purge_retried_after_its_worker_died_discards_the_draft_once(world, components, db):
    """A worker killed after perform (units and drafts deleted, nothing committed): the
    next run deletes nothing twice and commits once (one event, one audit row)."""
    alice, bob = world.user("alice"), world.user("bob")
    doc = _doc_without_worker(components, alice, alice.personal_space_id)
    grant = f"/api/nodes/{doc['node_id']}/grants/{bob.user_id}"
    assert alice.put(grant, json={"role": "editor"}).status_code in (200, 201)
    wt = create_without_worker(components, bob, name="Bob's")
    r = post_unit(bob, wt, source="trunk", resource_id=doc["resource_id"])
    assert components.executor.execute(r.json["id"]) == "completed"
    assert alice.delete(grant).status_code in (200, 204)
    assert alice.post(f"/api/nodes/{doc['node_id']}/trash").status_code == 200
    r = _purge(alice, doc["node_id"])
    assert r.status_code == 202, r.text
    op_id = r.json["id"]
    handler = components.handlers["purge_trash"]
    with db.read() as s:
        op = s.get(Operation, op_id)
        s.expunge(op)
    handler.perform(op)  # the worker that died
    assert Drafts.of(components.unitstore).get_draft(wt, doc["unit_id"]) is None
    with db.read() as s:  # nothing committed: bob's row is still there
        assert s.get(WorktreeUnit, (wt, doc["unit_id"])) is not None
    assert components.executor.execute(op_id) == "completed"
    assert alice.get(f"/api/operations/{op_id}").json["status"] == "completed"
    assert count(db, WorktreeEvent) == 1
    assert count(db, AuditLog, AuditLog.action == "worktree.unit_purged") == 1
    assert count(db, WorktreeUnit) == 0
    assert _events(bob, wt) == [("unit_purged", doc["unit_id"], doc["resource_id"], op_id,
                                 "purge")]
