"""The seed's matrix of protected ranges (docs/protection.md "Who may do what"), on
SQLite and PostgreSQL: in a team space owned by alice, edd (an editor) protects two
ranges of a doc. For each person — the owner and an admin (takeover by their current
role), the creator, explicit editor and viewer collaborators, a file editor and a file
viewer without object rights — the unit's read and the listing answer their rights, and
their trunk changesets are applied or refused (403 ``protected_range`` naming the object
and the operation). ``one_self`` keeps edit to the creator and the takeover; a
``specified`` read scope hides the object from non-collaborators. Management follows the
rights; the creator demoted to viewer loses it; an export follows the Export strategy.
Every write is audited, and a refused one changes nothing."""
from __future__ import annotations

import pytest

from tests.protection.support import change, collaborator, make_doc, protect, revision
from tests.support.foundation import add_member, assert_problem, audit_rows, team_space

pytestmark = pytest.mark.both_databases

R = ("view", "edit", "copy", "print", "export", "manage")
# A: /body/totals, read all_collaborators, edit specified, default strategies
# B: /body/notes, read specified, edit one_self, export by any reader
A_RIGHTS = {
    "alice": (1, 1, 1, 1, 1, 1), "ann": (1, 1, 1, 1, 1, 1), "edd": (1, 1, 1, 1, 1, 1),
    "col": (1, 1, 1, 1, 1, 0), "vic": (1, 0, 1, 0, 0, 0), "eve": (1, 0, 1, 0, 0, 0),
    "val": (1, 0, 1, 0, 0, 0)}
B_RIGHTS = {
    "alice": (1, 1, 1, 1, 1, 1), "ann": (1, 1, 1, 1, 1, 1), "edd": (1, 1, 1, 1, 1, 1),
    "col": (1, 0, 1, 0, 1, 0), "vic": (1, 0, 1, 0, 1, 0), "eve": (0, 0, 0, 0, 0, 0),
    "val": (0, 0, 0, 0, 0, 0)}
# A changeset on each target by each file editor: None applied, else the object refusing
EDITS = {"alice": (None, None), "ann": (None, None), "edd": (None, None),
         "col": (None, "B"), "eve": ("A", "B")}


def test_the_seed_matrix(components, world, db):
    alice = world.user("alice")
    people = {n: world.user(n) for n in ("ann", "edd", "col", "vic", "eve", "val")}
    people["alice"] = alice
    team = team_space(alice, "Team")["id"]
    for name, role in (("ann", "admin"), ("edd", "editor"), ("col", "editor"),
                       ("vic", "viewer"), ("eve", "editor"), ("val", "viewer")):
        add_member(alice, team, people[name].user_id, role)
    doc = make_doc(components, alice, team, {"totals": {"q1": 1}, "notes": "n", "free": 0})
    unit = doc["unit_id"]
    edd = people["edd"]
    a = protect(edd, unit, "/body/totals", edit_scope="specified")
    b = protect(edd, unit, "/body/notes", read_scope="specified", edit_scope="one_self",
                strategies={"copy": "reader", "print": "editor", "export": "reader"})
    ids = {"A": a["id"], "B": b["id"]}
    for obj in (a, b):
        collaborator(edd, obj["id"], people["col"].user_id, "editor")
        collaborator(edd, obj["id"], people["vic"].user_id, "viewer")
    # the bindings live in the document, one revision each
    snap = alice.get(f"/api/units/{unit}").json
    assert snap["snapshot"]["protection"] == {a["id"]: "/body/totals", b["id"]: "/body/notes"}
    assert a["creator_id"] == edd.user_id and a["strategies"] == {
        "copy": "reader", "print": "editor", "export": "editor"}

    for name, client in people.items():
        listed = {o["id"]: o["rights"] for o in
                  client.get(f"/api/units/{unit}/permission-objects").json["items"]}
        ranges = {r["object_id"]: r for r in
                  client.get(f"/api/units/{unit}").json["protected_ranges"]}
        for obj, table in ((a, A_RIGHTS), (b, B_RIGHTS)):
            want = dict(zip(R, map(bool, table[name]), strict=True))
            assert listed[obj["id"]] == want, (name, obj["name"])
            assert {k: ranges[obj["id"]][k] for k in R} == want, name

    for name, refused in EDITS.items():
        client = people[name]
        for target, obj in zip(("/body/totals/q1", "/body/notes"), refused, strict=True):
            before = revision(alice, unit)
            r = change(client, unit, {"op": "replace", "path": "/body/free", "value": name},
                       {"op": "replace", "path": target, "value": name})
            if obj is None:
                assert r.status_code == 200, (name, target, r.text)
            else:
                p = assert_problem(r, 403, "protected_range")
                assert p["details"] == {"object_id": ids[obj], "op_index": 1}, name
                assert revision(alice, unit) == before  # nothing written
    # a file viewer is refused by the file's right first; an unprotected path is free
    assert_problem(change(people["vic"], unit, {"op": "replace", "path": "/body/free",
                                                 "value": 1}), 403, "forbidden")
    assert change(people["eve"], unit, {"op": "add", "path": "/body/more", "value": 1}) \
        .status_code == 200

    # management: the creator, the owner and an admin; not a collaborator or an editor
    for name, status in (("edd", 200), ("ann", 200), ("alice", 200), ("col", 403),
                         ("eve", 403), ("vic", 403)):
        r = people[name].patch(f"/api/permission-objects/{a['id']}",
                               json={"name": f"by {name}"})
        assert r.status_code == status, (name, r.text)
    assert_problem(people["eve"].delete(f"/api/permission-objects/{b['id']}"), 403)
    assert_problem(people["col"].put(
        f"/api/permission-objects/{b['id']}/collaborators/{people['eve'].user_id}",
        json={"role": "editor"}), 403)
    # hostile input: a target outside the body, a bad pointer, an unknown user
    for target in ("/type", "", "body", "/body/~2"):
        assert_problem(edd.post(f"/api/units/{unit}/permission-objects", json={
            "name": "x", "object_type": "range", "target": target}), 400)
    assert_problem(edd.put(f"/api/permission-objects/{a['id']}/collaborators/{'0' * 32}",
                           json={"role": "viewer"}), 404, "user_not_found")
    for body in ({"name": "x", "object_type": "range", "target": "/body/x",
                  "strategies": {"copy": "nobody"}},
                 {"name": "x" * 300, "object_type": "range", "target": "/body/x"},
                 {"name": "x", "object_type": "range", "target": "/body/x", "extra": 1},
                 {"name": "x", "object_type": "range", "target": "/body/" + "a" * 1100}):
        assert_problem(edd.post(f"/api/units/{unit}/permission-objects", json=body), 400)
    assert_problem(edd.patch(f"/api/permission-objects/{a['id']}", json={}), 400)
    assert_problem(edd.get("/api/permission-objects/nonsense"), 404)
    assert_problem(change(edd, unit, {"op": "replace", "path": 5, "value": 1}), 400,
                   "invalid_changeset")

    # exports follow the Export strategy: eve may not export A (editor), val sees
    # neither... but A is readable by all and needs an editor to export
    assert_problem(people["eve"].post(f"/api/units/{unit}/exports", json={"format": "docx"},
                                      headers={"Idempotency-Key": "export-by-eve-00001"}),
                   403, "protected_range")
    assert people["col"].post(f"/api/units/{unit}/exports", json={"format": "docx"},
                              headers={"Idempotency-Key": "export-by-col-00001"}) \
        .status_code == 202

    # the creator demoted to viewer loses management and edit; the owner keeps both
    add_member(alice, team, edd.user_id, "viewer")
    rights = edd.get(f"/api/permission-objects/{a['id']}").json["rights"]
    assert rights == {"view": True, "edit": False, "copy": True, "print": False,
                      "export": False, "manage": False}
    assert_problem(edd.patch(f"/api/permission-objects/{a['id']}", json={"name": "mine"}),
                   403)
    # the owner retargets B, then deletes A: its range is free at once
    r = alice.patch(f"/api/permission-objects/{b['id']}", json={"target": "/body/free"})
    assert r.status_code == 200 and r.json["target"] == "/body/free"
    assert change(people["col"], unit, {"op": "replace", "path": "/body/notes",
                                        "value": "col"}).status_code == 200
    assert alice.delete(f"/api/permission-objects/{a['id']}").status_code == 204
    assert change(people["eve"], unit, {"op": "replace", "path": "/body/totals",
                                        "value": {}}).status_code == 200
    assert alice.get(f"/api/permission-objects/{a['id']}").status_code == 404
    assert alice.get(f"/api/units/{unit}").json["snapshot"]["protection"] == {
        b["id"]: "/body/free"}
    # each binding revision is audited as a changeset of the unit (the feed announces it)
    bound = [r.details for r in audit_rows(db, action="unit.changeset")
             if "permission_object_id" in (r.details or {})]
    assert len(bound) == 4  # A and B bound, B retargeted, A unbound
    actions = sorted(r.action for r in audit_rows(db, target_type="permission_object"))
    assert actions.count("permission_object.create") == 2
    assert actions.count("permission_object.collaborator_put") == 4
    assert "permission_object.delete" in actions and "permission_object.update" in actions
