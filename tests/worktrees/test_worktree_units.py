"""Units inside worktrees over HTTP, on SQLite and PostgreSQL (specs/assets-worktrees.md
§6.2, §7.2, §7.3, §5, §13): adding a trunk unit (the draft is trunk's head), creating a
unit new in the worktree (a local draft and a node intent), the unit JSON (``change`` is
content-based: an edit undone is ``unchanged``), draft changesets (compare-and-set),
renaming and re-targeting a local unit, removing a unit (its assets deleted, its draft
too), per-unit rights in the capabilities, the state's 409s, bad input that changes
nothing, replays, and a failed addition that leaves no draft behind."""
from __future__ import annotations

import uuid

from sqlalchemy import func, select, update

from storage.models import (
    AuditLog,
    BlobResource,
    Node,
    ObjectDeletionJob,
    Operation,
    Resource,
    UnitAsset,
    Worktree,
    WorktreeNodeIntent,
    WorktreeUnit,
)
from tests.engine.test_operations import wait_done
from tests.support.foundation import add_member, assert_problem, make_node, row_counts, team_space
from tests.worktrees.test_worktrees import _doc, create, create_without_worker, key
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id
from wharf.worktrees.drafts import Drafts

UNIT_KEYS = {"unit_id", "resource_id", "node_id", "source", "unit_type", "name", "target",
             "base_revision", "draft_revision", "change", "trunk_revision", "trunk_moved",
             "merge_state", "conflict_count", "activation"}


def post_unit(client, wt_id: str, k: str | None = None, **body):
    headers = {"Idempotency-Key": k or key()}
    return client.post(f"/api/worktrees/{wt_id}/units", json=body, headers=headers)


def add(client, wt_id: str, **body) -> dict:
    """A unit added through the API (the operation waited for): the operation's result."""
    r = post_unit(client, wt_id, **body)
    assert r.status_code == 202, r.text
    op = wait_done(client, r.json["id"])
    assert op["status"] == "completed", op
    return op["result"]


def trunk_edit(client, unit_id: str, base: int, path: str, value) -> dict:
    r = client.post(f"/api/units/{unit_id}/changesets",
                    json={"base_revision": base,
                          "changes": [{"op": "add", "path": path, "value": value}]})
    assert r.status_code == 200, r.text
    return r.json


def edit(client, wt_id: str, unit_id: str, base: int, changes: list):
    return client.post(f"/api/worktrees/{wt_id}/units/{unit_id}/changesets",
                       json={"base_revision": base, "changes": changes})


def unitstore_counts(components) -> tuple[int, int]:
    from storage.unitschema import DRAFT_REVISIONS, DRAFTS
    with components.unitstore.db.read() as s:
        return (s.scalar(select(func.count()).select_from(DRAFTS)),
                s.scalar(select(func.count()).select_from(DRAFT_REVISIONS)))


def test_add_a_trunk_unit_its_draft_is_trunk(world, worker, components, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    doc = _doc(alice, sp, make_node(alice, sp, "Docs")["id"])
    trunk = trunk_edit(alice, doc["unit_id"], 0, "/body/title", "Plan")
    wt = create(alice, name="Edits")["id"]
    k = key()
    r = post_unit(alice, wt, k, source="trunk", resource_id=doc["resource_id"])
    assert r.status_code == 202 and r.json["kind"] == "add_worktree_unit", r.text
    op = wait_done(alice, r.json["id"])
    assert op["status"] == "completed", op
    assert op["result"] == {"worktree_id": wt, "unit_id": doc["unit_id"],
                            "resource_id": doc["resource_id"], "base_revision": 1}
    got = alice.get(f"/api/worktrees/{wt}/units/{doc['unit_id']}")
    assert got.status_code == 200, got.text
    unit = got.json
    assert set(unit) == UNIT_KEYS | {"snapshot"}
    assert unit["snapshot"] == trunk["snapshot"]
    assert unit | {"snapshot": None} == {
        "unit_id": doc["unit_id"], "resource_id": doc["resource_id"],
        "node_id": doc["node_id"], "source": "trunk", "unit_type": "doc",
        "name": unit["name"], "target": None, "base_revision": 1, "draft_revision": 0,
        "change": "unchanged", "trunk_revision": 1, "trunk_moved": False,
        "merge_state": "pending", "conflict_count": 0, "activation": "not_applicable",
        "snapshot": None}
    assert unit["name"].startswith("Doc ")
    detail = alice.get(f"/api/worktrees/{wt}").json
    assert detail["unit_count"] == 1
    assert [u["unit_id"] for u in detail["units"]] == [doc["unit_id"]]
    assert set(detail["units"][0]) == UNIT_KEYS
    # a replay answers the same operation (200 now that it is done) and adds nothing
    again = post_unit(alice, wt, k, source="trunk", resource_id=doc["resource_id"])
    assert again.status_code == 200 and again.json["id"] == op["id"]
    # the same unit again (another key): refused at submission
    before = row_counts(db)
    assert_problem(post_unit(alice, wt, source="trunk", resource_id=doc["resource_id"]),
                   409, "unit_already_added")
    assert row_counts(db) == before
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(WorktreeUnit)) == 1
        audit = s.scalars(select(AuditLog).where(AuditLog.action == "worktree.unit_add")).one()
        assert audit.target_id == wt and audit.details["unit_id"] == doc["unit_id"]
    assert unitstore_counts(components) == (1, 0)
    # trunk moves on: the unit says so, its draft does not move
    trunk_edit(alice, doc["unit_id"], 1, "/body/more", 1)
    unit = alice.get(f"/api/worktrees/{wt}/units/{doc['unit_id']}").json
    assert unit["trunk_revision"] == 2 and unit["trunk_moved"] is True
    assert unit["base_revision"] == 1 and unit["snapshot"] == trunk["snapshot"]


def test_create_a_local_unit_and_edit_its_intent(world, worker, components, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    folder = make_node(alice, sp, "Folder")["id"]
    other = make_node(alice, sp, "Other")["id"]
    wt = create(alice, name="New things")["id"]
    k = key()
    body = {"source": "worktree", "name": "Budget", "unit_type": "sheet",
            "target": {"space_id": sp, "parent_id": folder},
            "initial_snapshot": {"type": "sheet", "cells": {"A1": 1}}}
    r = post_unit(alice, wt, k, **body)
    assert r.status_code == 202 and r.json["kind"] == "create_worktree_unit", r.text
    op = wait_done(alice, r.json["id"])
    assert op["status"] == "completed", op
    again = post_unit(alice, wt, k, **body)  # a replay: the same operation, the same ids
    assert again.status_code == 200 and again.json["id"] == op["id"]
    assert again.json["result"] == op["result"]
    res = op["result"]
    assert set(res) == {"worktree_id", "unit_id", "resource_id", "node_id"}
    assert res["worktree_id"] == wt
    unit = alice.get(f"/api/worktrees/{wt}/units/{res['unit_id']}").json
    assert unit["snapshot"] == {"type": "sheet", "cells": {"A1": 1}}
    assert unit["source"] == "worktree" and unit["change"] == "added"
    assert unit["activation"] == "waiting" and unit["name"] == "Budget"
    assert unit["node_id"] == res["node_id"] and unit["resource_id"] == res["resource_id"]
    assert unit["target"] == {"space_id": sp, "parent_id": folder}
    assert unit["trunk_revision"] is None and unit["trunk_moved"] is False
    with db.read() as s:
        intent = s.scalars(select(WorktreeNodeIntent)).one()
        assert (intent.node_id, intent.name, intent.target_parent_id) == \
            (res["node_id"], "Budget", folder)
        assert s.get(Node, res["node_id"]) is None  # reserved: the merge creates it
        assert s.get(Resource, res["resource_id"]) is None
    # without initial_snapshot: the type's empty document
    empty = add(alice, wt, source="worktree", name="Notes", unit_type="doc",
                target={"space_id": sp, "parent_id": None})
    got = alice.get(f"/api/worktrees/{wt}/units/{empty['unit_id']}").json
    assert got["snapshot"] == {"type": "doc", "schemaVersion": 1, "body": {}}
    assert got["target"] == {"space_id": sp, "parent_id": None}
    # rename and re-target (merge state back to pending)
    with db.write() as s:
        s.execute(update(WorktreeUnit).values(merge_state="conflict", conflict_count=3))
    path = f"/api/worktrees/{wt}/units/{res['unit_id']}"
    p = alice.patch(path, json={"name": "Budget 2027",
                                "target": {"space_id": sp, "parent_id": other}})
    assert p.status_code == 200, p.text
    assert p.json["name"] == "Budget 2027"
    assert p.json["target"] == {"space_id": sp, "parent_id": other}
    assert p.json["merge_state"] == "pending" and p.json["conflict_count"] == 0
    assert set(p.json) == UNIT_KEYS
    assert_problem(alice.patch(path, json={}), 400)
    assert_problem(alice.patch(path, json={"target": {"space_id": sp, "parent_id": new_id()}}),
                   404)
    # trunk units have no intent of their own
    doc = _doc(alice, sp, folder)
    add(alice, wt, source="trunk", resource_id=doc["resource_id"])
    assert_problem(alice.patch(f"/api/worktrees/{wt}/units/{doc['unit_id']}",
                               json={"name": "x"}), 400, "not_local_unit")
    detail = alice.get(f"/api/worktrees/{wt}").json
    assert [u["source"] for u in detail["units"]] == ["worktree", "worktree", "trunk"]
    assert unitstore_counts(components)[0] == 3


def test_draft_changesets_and_content_based_change(world, worker, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    doc = _doc(alice, sp, make_node(alice, sp, "F")["id"])
    trunk_edit(alice, doc["unit_id"], 0, "/body/title", "A")
    wt = create(alice, name="CAS")["id"]
    add(alice, wt, source="trunk", resource_id=doc["resource_id"])
    u = doc["unit_id"]
    with db.write() as s:
        s.execute(update(WorktreeUnit).values(merge_state="conflict", conflict_count=2))
    r = edit(alice, wt, u, 0, [{"op": "replace", "path": "/body/title", "value": "B"}])
    assert r.status_code == 200, r.text
    assert r.json == {"unit_id": u, "revision": 1,
                      "snapshot": {"type": "doc", "schemaVersion": 1, "body": {"title": "B"}}}
    # stale base: 409, nothing applied
    stale = edit(alice, wt, u, 0, [{"op": "replace", "path": "/body/title", "value": "C"}])
    body = assert_problem(stale, 409, "revision_conflict")
    assert body["details"]["current_revision"] == 1
    assert_problem(edit(alice, wt, u, 1, [{"op": "remove", "path": "/nope"}]), 400,
                   "invalid_changeset")
    unit = alice.get(f"/api/worktrees/{wt}/units/{u}").json
    assert unit["draft_revision"] == 1 and unit["change"] == "modified"
    assert unit["merge_state"] == "pending" and unit["conflict_count"] == 0
    assert unit["snapshot"]["body"] == {"title": "B"}
    # trunk itself is untouched
    assert alice.get(f"/api/units/{u}").json["snapshot"]["body"] == {"title": "A"}
    # the edit undone: content-based, so unchanged again (W5)
    r = edit(alice, wt, u, 1, [{"op": "replace", "path": "/body/title", "value": "A"}])
    assert r.status_code == 200
    unit = alice.get(f"/api/worktrees/{wt}/units/{u}").json
    assert unit["draft_revision"] == 2 and unit["change"] == "unchanged"
    assert alice.get(f"/api/worktrees/{wt}").json["units"][0]["change"] == "unchanged"
    # JSON equality of §8.4: true is not 1
    edit(alice, wt, u, 2, [{"op": "add", "path": "/body/flag", "value": True}])
    edit(alice, wt, u, 3, [{"op": "replace", "path": "/body/flag", "value": 1}])
    assert alice.get(f"/api/worktrees/{wt}/units/{u}").json["change"] == "modified"
    with db.read() as s:
        audits = s.scalars(select(AuditLog).where(AuditLog.action == "worktree.changeset")
                           .order_by(AuditLog.at, AuditLog.id)).all()
        assert [a.details["revision"] for a in audits] == [1, 2, 3, 4]
        assert all(a.target_id == wt and a.details["unit_id"] == u for a in audits)


def test_a_draft_changeset_answers_without_the_document_when_asked(world, worker):
    """``Prefer: return=minimal`` on a draft changeset, as on trunk: the new revision only
    (the answer's cost follows the changeset, not the document)."""
    alice = world.user("alice")
    sp = alice.personal_space_id
    doc = _doc(alice, sp, make_node(alice, sp, "F")["id"])
    wt = create(alice, name="Minimal")["id"]
    add(alice, wt, source="trunk", resource_id=doc["resource_id"])
    u = doc["unit_id"]
    r = alice.post(f"/api/worktrees/{wt}/units/{u}/changesets",
                   json={"base_revision": 0,
                         "changes": [{"op": "add", "path": "/body/t", "value": "B"}]},
                   headers={"Prefer": "return=minimal"})
    assert r.status_code == 200, r.text
    assert r.json == {"unit_id": u, "revision": 1, "snapshot": None}
    assert r.headers["preference-applied"] == "return=minimal"
    assert alice.get(f"/api/worktrees/{wt}/units/{u}").json["snapshot"]["body"] == {"t": "B"}


def test_state_conflicts(world, worker, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    doc = _doc(alice, sp, make_node(alice, sp, "F")["id"])
    doc2 = _doc(alice, sp, make_node(alice, sp, "G")["id"])
    wt = create(alice, name="States")["id"]
    local = add(alice, wt, source="worktree", name="L", unit_type="doc",
                target={"space_id": sp})
    add(alice, wt, source="trunk", resource_id=doc["resource_id"])
    assert alice.post(f"/api/worktrees/{wt}/ready").status_code == 200
    base = f"/api/worktrees/{wt}/units"
    before = row_counts(db)
    for r in (post_unit(alice, wt, source="trunk", resource_id=doc2["resource_id"]),
              post_unit(alice, wt, source="worktree", name="M", unit_type="doc",
                        target={"space_id": sp}),
              edit(alice, wt, doc["unit_id"], 0, [{"op": "add", "path": "/x", "value": 1}]),
              alice.patch(f"{base}/{local['unit_id']}", json={"name": "N"}),
              alice.delete(f"{base}/{doc['unit_id']}")):
        body = assert_problem(r, 409, "worktree_state")
        assert body["details"] == {"state": "ready", "allowed": ["draft"]}
    assert row_counts(db) == before
    # reading still works in ready
    assert alice.get(f"{base}/{doc['unit_id']}").status_code == 200
    # busy while discarding, processed once discarded
    r = alice.post(f"/api/worktrees/{wt}/discard", headers={"Idempotency-Key": key()})
    wait_done(alice, r.json["id"])
    assert_problem(post_unit(alice, wt, source="trunk", resource_id=doc2["resource_id"]),
                   409, "worktree_state")
    assert alice.get(f"{base}/{doc['unit_id']}").status_code == 200


def test_an_addition_refused_at_commit_leaves_no_draft(world, components, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    doc = _doc_without_worker(components, alice, sp)
    wt = create_without_worker(components, alice, name="Race")
    r = post_unit(alice, wt, source="trunk", resource_id=doc["resource_id"])
    local = post_unit(alice, wt, source="worktree", name="L", unit_type="doc",
                      target={"space_id": sp})
    assert r.status_code == 202 and local.status_code == 202
    assert alice.post(f"/api/worktrees/{wt}/ready").status_code == 200
    for op_id in (r.json["id"], local.json["id"]):
        assert components.executor.execute(op_id) == "failed"
        op = alice.get(f"/api/operations/{op_id}").json
        assert op["error"]["code"] == "worktree_state", op
    assert unitstore_counts(components) == (0, 0)
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(WorktreeUnit)) == 0
    # a duplicate's failure does not take the first addition's draft
    alice.post(f"/api/worktrees/{wt}/reopen")
    first = post_unit(alice, wt, source="trunk", resource_id=doc["resource_id"])
    second = post_unit(alice, wt, source="trunk", resource_id=doc["resource_id"])
    assert components.executor.execute(first.json["id"]) == "completed"
    assert components.executor.execute(second.json["id"]) == "failed"
    assert alice.get(f"/api/operations/{second.json['id']}").json["error"]["code"] == \
        "unit_already_added"
    assert unitstore_counts(components) == (1, 0)
    assert alice.get(f"/api/worktrees/{wt}/units/{doc['unit_id']}").status_code == 200


def _doc_without_worker(components, client, space_id: str) -> dict:
    r = client.post("/api/resources", json={"space_id": space_id, "parent_id": None,
                                            "name": f"Doc {uuid.uuid4().hex[:6]}",
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": key()})
    assert components.executor.execute(r.json["id"]) == "completed"
    return client.get(f"/api/operations/{r.json['id']}").json["result"]


def test_remove_a_unit(world, worker, components, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    doc = _doc(alice, sp, make_node(alice, sp, "F")["id"])
    wt = create(alice, name="Remove")["id"]
    add(alice, wt, source="trunk", resource_id=doc["resource_id"])
    local = add(alice, wt, source="worktree", name="L", unit_type="doc",
                target={"space_id": sp})
    with db.write() as s:
        for unit in (doc["unit_id"], local["unit_id"]):
            s.add(UnitAsset(id=new_id(), unit_id=unit, worktree_id=wt,
                            object_key=f"assets/{unit}", filename="a.png",
                            declared_media_type="image/png", detected_media_type="image/png",
                            size=1, sha256="ab" * 32, etag='"e"', created_by=alice.user_id,
                            created_at=utcnow()))
    assert alice.delete(f"/api/worktrees/{wt}/units/{local['unit_id']}").status_code == 204
    assert_problem(alice.delete(f"/api/worktrees/{wt}/units/{local['unit_id']}"), 404)
    assert_problem(alice.get(f"/api/worktrees/{wt}/units/{local['unit_id']}"), 404)
    with db.read() as s:
        assert s.scalars(select(UnitAsset.object_key)).all() == [f"assets/{doc['unit_id']}"]
        # its object was queued (the worker may have deleted it and its job already)
        jobs = s.scalars(select(ObjectDeletionJob.reason).where(
            ObjectDeletionJob.object_key == f"assets/{local['unit_id']}")).all()
        assert jobs in ([], ["worktree_unit_removed"])
        assert s.scalar(select(func.count()).select_from(WorktreeNodeIntent)) == 0
        audit = s.scalars(select(AuditLog).where(
            AuditLog.action == "worktree.unit_remove")).one()
        assert audit.details["unit_id"] == local["unit_id"]
        assert audit.details["assets_deleted"] == 1
    assert Drafts.of(components.unitstore).get_draft(wt, local["unit_id"]) is None
    detail = alice.get(f"/api/worktrees/{wt}").json
    assert detail["unit_count"] == 1 and len(detail["units"]) == 1
    # the trunk unit trashed: it can still be taken out (and added again once restored)
    assert alice.post(f"/api/nodes/{doc['node_id']}/trash").status_code == 200
    assert alice.delete(f"/api/worktrees/{wt}/units/{doc['unit_id']}").status_code == 204
    assert alice.get(f"/api/worktrees/{wt}").json["unit_count"] == 0


def test_unit_limit(world, worker, components, db):
    object.__setattr__(components.settings, "worktree_max_units", 2)
    alice = world.user("alice")
    sp = alice.personal_space_id
    wt = create(alice, name="Small")["id"]
    for name in ("A", "B"):
        add(alice, wt, source="worktree", name=name, unit_type="doc", target={"space_id": sp})
    before = row_counts(db)
    body = assert_problem(post_unit(alice, wt, source="worktree", name="C", unit_type="doc",
                                    target={"space_id": sp}), 409, "worktree_unit_limit")
    assert body["details"] == {"max_units": 2}
    assert row_counts(db) == before


def test_permissions(world, worker, db):
    owner, creator, member = world.user("owner"), world.user("creator"), world.user("member")
    bob, outsider = world.user("bob"), world.user("outsider")
    team = team_space(owner, "Team")
    add_member(owner, team["id"], creator.user_id, "editor")
    add_member(owner, team["id"], member.user_id, "editor")
    folder = make_node(owner, team["id"], "Shared")["id"]
    doc = _doc(owner, team["id"], folder)
    wt = create(creator, kind="team", name="Team WT", team_space_id=team["id"],
                visibility="private")["id"]
    # a unit of another space: 400; someone else's worktree: 404 / 403
    mine = _doc(creator, creator.personal_space_id,
                make_node(creator, creator.personal_space_id, "Mine")["id"])
    before = row_counts(db)
    assert_problem(post_unit(creator, wt, source="trunk", resource_id=mine["resource_id"]),
                   400, "outside_team_space")
    assert_problem(post_unit(creator, wt, source="worktree", name="X", unit_type="doc",
                             target={"space_id": creator.personal_space_id}),
                   400, "outside_team_space")
    assert_problem(post_unit(member, wt, source="trunk", resource_id=doc["resource_id"]), 404)
    assert_problem(post_unit(owner, wt, source="trunk", resource_id=doc["resource_id"]), 403)
    assert_problem(post_unit(outsider, wt, source="trunk", resource_id=doc["resource_id"]),
                   404)
    assert row_counts(db) == before
    add(creator, wt, source="trunk", resource_id=doc["resource_id"])
    u = doc["unit_id"]
    # private: the owner sees the summary, not the units
    detail = owner.get(f"/api/worktrees/{wt}").json
    assert detail["unit_count"] == 1 and detail["units"] == []
    assert_problem(owner.get(f"/api/worktrees/{wt}/units/{u}"), 404)
    assert_problem(member.get(f"/api/worktrees/{wt}/units/{u}"), 404)
    creator.patch(f"/api/worktrees/{wt}", json={"visibility": "space"})
    assert member.get(f"/api/worktrees/{wt}/units/{u}").status_code == 200
    assert len(member.get(f"/api/worktrees/{wt}").json["units"]) == 1
    # only the creator edits drafts
    assert_problem(edit(member, wt, u, 0, [{"op": "add", "path": "/x", "value": 1}]), 403)
    assert_problem(owner.delete(f"/api/worktrees/{wt}/units/{u}"), 403)
    assert edit(creator, wt, u, 0, [{"op": "add", "path": "/x", "value": 1}]).status_code == 200
    caps = creator.get(f"/api/worktrees/{wt}").json["capabilities"]
    assert caps["edit_draft"] and caps["mark_ready"] and caps["review"]
    # the creator demoted to viewer: no more edits, of this unit or the worktree
    add_member(owner, team["id"], creator.user_id, "viewer")
    assert_problem(edit(creator, wt, u, 1, [{"op": "add", "path": "/y", "value": 1}]), 403)
    caps = creator.get(f"/api/worktrees/{wt}").json["capabilities"]
    assert not caps["edit_draft"] and not caps["add_unit"] and not caps["mark_ready"]
    assert caps["review"]

    # user worktrees: every unit's own permission (a grant on bob's personal doc)
    alice = world.user("alice")
    bdoc = _doc(bob, bob.personal_space_id, make_node(bob, bob.personal_space_id, "B")["id"])
    uwt = create(alice, name="Mine")["id"]
    assert_problem(post_unit(alice, uwt, source="trunk", resource_id=bdoc["resource_id"]), 404)
    grant = f"/api/nodes/{bdoc['node_id']}/grants/{alice.user_id}"
    assert bob.put(grant, json={"role": "viewer"}).status_code in (200, 201)
    assert_problem(post_unit(alice, uwt, source="trunk", resource_id=bdoc["resource_id"]), 403)
    assert bob.put(grant, json={"role": "editor"}).status_code in (200, 201)
    add(alice, uwt, source="trunk", resource_id=bdoc["resource_id"])
    caps = alice.get(f"/api/worktrees/{uwt}").json["capabilities"]
    assert caps["edit_draft"] and caps["mark_ready"]
    bob.put(grant, json={"role": "viewer"})
    caps = alice.get(f"/api/worktrees/{uwt}").json["capabilities"]
    assert caps["review"] and not caps["edit_draft"] and not caps["mark_ready"]
    assert caps["add_unit"]  # a unit she may edit can still be added
    assert_problem(alice.post(f"/api/worktrees/{uwt}/ready"), 403)
    assert_problem(edit(alice, uwt, bdoc["unit_id"], 0, [{"op": "add", "path": "/y",
                                                          "value": 1}]), 403)
    assert alice.get(f"/api/worktrees/{uwt}/units/{bdoc['unit_id']}").status_code == 200
    # no read right at all: the unit disappears from the detail and is 404
    bob.delete(grant)
    assert alice.get(f"/api/worktrees/{uwt}").json["units"] == []
    assert_problem(alice.get(f"/api/worktrees/{uwt}/units/{bdoc['unit_id']}"), 404)


def test_bad_input_changes_nothing(world, worker, components, db):
    alice = world.user("alice")
    anonymous = world.anonymous()
    sp = alice.personal_space_id
    folder = make_node(alice, sp, "F")["id"]
    doc = _doc(alice, sp, folder)
    bob = world.user("bob")
    bobs_folder = make_node(bob, bob.personal_space_id, "Bob's")["id"]
    wt = create(alice, name="Bad input")["id"]
    with db.write() as s:
        node = Node(space_id=sp, parent_id=None, name="blob.bin", created_by=alice.user_id)
        s.add(node)
        s.flush()
        blob = Resource(id=new_id(), node_id=node.id, kind="blob", created_by=alice.user_id)
        s.add(blob)
        s.flush()
        s.add(BlobResource(resource_id=blob.id, object_key=f"blobs/{blob.id}",
                           filename="blob.bin", mime_type="application/octet-stream", size=1,
                           sha256="ab" * 32, object_etag="e", etag="e"))
        blob_id = blob.id
    team = team_space(alice, "T")
    tfolder = make_node(alice, team["id"], "TF")["id"]
    local = {"source": "worktree", "name": "L", "unit_type": "doc",
             "target": {"space_id": sp, "parent_id": folder}}
    before, drafts = row_counts(db), unitstore_counts(components)
    path = f"/api/worktrees/{wt}/units"
    assert_problem(alice.post(path, json={"source": "trunk", "resource_id": doc["resource_id"]}),
                   400, "idempotency_key_required")
    assert_problem(alice.post(path, json={"source": "trunk", "resource_id": doc["resource_id"]},
                              headers={"Idempotency-Key": "bad key!"}),
                   400, "invalid_idempotency_key")
    assert_problem(post_unit(anonymous, wt, source="trunk", resource_id=doc["resource_id"]),
                   401)
    cases = [
        ({"source": "trunk", "resource_id": doc["resource_id"], "unit_id": new_id()}, 400),
        ({**local, "node_id": new_id()}, 400),
        ({"source": "branch", "resource_id": doc["resource_id"]}, 400),
        ({"source": "trunk"}, 400),
        ({"source": "trunk", "resource_id": doc["resource_id"], "name": "x"}, 400),
        ({**local, "resource_id": doc["resource_id"]}, 400),
        ({"source": "trunk", "resource_id": new_id()}, 404),
        ({"source": "trunk", "resource_id": "not-an-id"}, 404),
        ({"source": "trunk", "resource_id": blob_id}, (400, "not_a_unit")),
        ({**local, "unit_type": "movie"}, 400),
        ({**local, "name": ""}, 400),
        ({**local, "name": "a/b"}, 400),
        ({**local, "target": None}, 400),
        ({**local, "target": {"space_id": sp, "parent_id": bobs_folder}}, 404),
        ({**local, "target": {"space_id": bob.personal_space_id, "parent_id": None}}, 404),
        ({**local, "target": {"space_id": new_id(), "parent_id": None}}, 404),
        ({**local, "initial_snapshot": [1, 2]}, 400),
        ({**local, "initial_snapshot": "doc"}, 400),
    ]
    for body, want in cases:
        status, code = want if isinstance(want, tuple) else (want, None)
        r = post_unit(alice, wt, **body)
        assert r.status_code == status, (body, r.status_code, r.text)
        if code:
            assert r.json["code"] == code, (body, r.text)
    # a parent in another space of the caller's
    assert_problem(post_unit(alice, wt, **{**local, "target": {"space_id": sp,
                                                               "parent_id": tfolder}}),
                   400, "parent_in_other_space")
    # unknown worktree / unit
    assert_problem(post_unit(alice, new_id(), source="trunk",
                             resource_id=doc["resource_id"]), 404)
    assert_problem(alice.get(f"/api/worktrees/{wt}/units/{new_id()}"), 404)
    assert_problem(alice.get(f"/api/worktrees/{wt}/units/nope"), 404)
    assert_problem(edit(alice, wt, doc["unit_id"], 0, [{"op": "add", "path": "/x",
                                                        "value": 1}]), 404)
    assert_problem(alice.delete(f"/api/worktrees/{wt}/units/{new_id()}"), 404)
    assert_problem(anonymous.get(f"/api/worktrees/{wt}/units/{doc['unit_id']}"), 401)
    assert row_counts(db) == before and unitstore_counts(components) == drafts
    # the same key for another request
    k = key()
    add_r = post_unit(alice, wt, k, **local)
    assert add_r.status_code == 202
    wait_done(alice, add_r.json["id"])
    assert_problem(post_unit(alice, wt, k, **{**local, "name": "Other"}), 409,
                   "idempotency_key_reused")
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(WorktreeUnit)) == 1
        assert s.scalar(select(func.count()).select_from(Operation).where(
            Operation.kind.in_(("add_worktree_unit", "create_worktree_unit")))) == 1
    assert unitstore_counts(components) == (drafts[0] + 1, drafts[1])
    # changesets: malformed bodies on the added unit
    u = alice.get(f"/api/worktrees/{wt}").json["units"][0]["unit_id"]
    for body in ({"base_revision": -1, "changes": [{"op": "add", "path": "/x", "value": 1}]},
                 {"base_revision": 0, "changes": []},
                 {"base_revision": 0},
                 {"base_revision": 0, "changes": [{"op": "jump", "path": "/x"}]}):
        r = alice.post(f"/api/worktrees/{wt}/units/{u}/changesets", json=body)
        assert r.status_code == 400, (body, r.text)
    assert alice.get(f"/api/worktrees/{wt}/units/{u}").json["draft_revision"] == 0
    with db.read() as s:
        assert s.get(Worktree, wt).state == "draft"


UNIT_OPERATIONS = {
    ("POST", "/api/worktrees/{worktree_id}/units"),
    ("GET", "/api/worktrees/{worktree_id}/units/{unit_id}"),
    ("PATCH", "/api/worktrees/{worktree_id}/units/{unit_id}"),
    ("DELETE", "/api/worktrees/{worktree_id}/units/{unit_id}"),
    ("POST", "/api/worktrees/{worktree_id}/units/{unit_id}/changesets"),
}


def test_schemathesis_worktree_units(world, app, worker, backend):
    """No generated input is a 500, and every answer matches the document."""
    import copy

    import schemathesis
    from schemathesis import GenerationMode

    from api.contract import document
    from tests.hostile.test_schemathesis import EXAMPLES, NEGATIVE_EXAMPLES, _run
    from tests.support.foundation import bearer, make_token

    alice = world.user("alice")
    headers = bearer(make_token(alice)["token"])
    sp = alice.personal_space_id
    wt = create(alice, name="Fuzzed")["id"]
    local = add(alice, wt, source="worktree", name="L", unit_type="doc",
                target={"space_id": sp})
    known = {"worktree_id": wt, "unit_id": local["unit_id"]}
    schema = schemathesis.openapi.from_dict(copy.deepcopy(document(app)))
    ran = set()
    for result in schema.get_all_operations():
        operation = result.ok()
        label = (operation.method.upper(), operation.path)
        if label not in UNIT_OPERATIONS or label[0] == "DELETE":
            continue
        ran.add(label)
        names = {p.name for p in operation.path_parameters}
        params = {k: v for k, v in known.items() if k in names}
        _run(operation, app, headers, GenerationMode.POSITIVE, EXAMPLES, params)
        _run(operation, app, headers, GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES, params)
    assert ran == UNIT_OPERATIONS - {("DELETE", "/api/worktrees/{worktree_id}/units/{unit_id}")}
