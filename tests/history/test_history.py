"""A trunk unit's history (issue 37): the revisions list (one by one and grouped by
session), one revision's changeset, the document after a revision, and restore, with the
unit's access rules; on SQLite and PostgreSQL."""
from __future__ import annotations

import threading
import time

import pytest

from tests.accounts.test_deletion import delete_me
from tests.sharing.test_sharing_trash_recent import node
from tests.support.foundation import assert_problem
from tests.worktrees.test_worktrees import _doc
from wharf.identity.placeholder import PLACEHOLDER_ID, PLACEHOLDER_NAME

pytestmark = pytest.mark.both_databases


def _edit(client, unit_id: str, base: int, key: str, value, status: int = 200):
    r = client.post(f"/api/units/{unit_id}/changesets",
                    json={"base_revision": base,
                          "changes": [{"op": "add", "path": f"/body/{key}", "value": value}]})
    assert r.status_code == status, r.text
    return r


def _revision(client, unit_id: str) -> int:
    return client.get(f"/api/units/{unit_id}").json["revision"]


class Scene:
    """A doc unit per kind of access (the shared-folder scene of the sharing tests, plus a
    link editor and a removed team member), each with two revisions."""

    def __init__(self, world):
        self.world = world
        self.alice = alice = world.user("alice")
        team = alice.post("/api/spaces", json={"name": "Team"}).json["id"]
        public = alice.post("/api/spaces", json={"name": "Public"}).json["id"]
        alice.patch(f"/api/spaces/{public}", json={"public_read": True})
        self.users = {name: world.user(name) for name in
                      ("ann", "edd", "vic", "gre", "grv", "lnv", "lne", "rem", "out")}
        for name, role in (("ann", "admin"), ("edd", "editor"), ("vic", "viewer"),
                           ("rem", "editor")):
            r = alice.put(f"/api/spaces/{team}/members/{self.users[name].user_id}",
                          json={"role": role})
            assert r.status_code == 201, r.text
        assert alice.delete(f"/api/spaces/{team}/members/"
                            f"{self.users['rem'].user_id}").status_code == 204
        personal = alice.personal_space_id
        self.units = {}
        for label, space in (("team", team), ("granted", personal),
                             ("link-viewer", personal), ("link-editor", personal),
                             ("public", public)):
            folder = node(alice, space, f"{label}-folder")
            unit_id = _doc(alice, space, folder)["unit_id"]
            _edit(alice, unit_id, 0, "a", 1)
            _edit(alice, unit_id, 1, "b", 2)
            self.units[label] = (folder, unit_id)
        g = self.units["granted"][0]
        for name, role in (("gre", "editor"), ("grv", "viewer")):
            r = alice.put(f"/api/nodes/{g}/grants/{self.users[name].user_id}",
                          json={"role": role})
            assert r.status_code == 201, r.text
        for label, role in (("link-viewer", "viewer"), ("link-editor", "editor")):
            r = alice.put(f"/api/nodes/{self.units[label][0]}/link-sharing",
                          json={"enabled": True, "role": role})
            assert r.status_code == 200, r.text

    def client(self, who):
        if who == "owner":
            return self.alice
        if who == "anon":
            return self.world.anonymous()
        return self.users[who]


READ_EDIT = dict(list=200, revision=200, snapshot=200, restore=200)
READ_ONLY = dict(list=200, revision=200, snapshot=200, restore=403)
ANON_READ = dict(list=200, revision=200, snapshot=200, restore=401)
HIDDEN = dict(list=404, revision=404, snapshot=404, restore=404)
ANON_HIDDEN = dict(list=404, revision=404, snapshot=404, restore=401)

MATRIX = [
    ("owner", "team", READ_EDIT), ("ann", "team", READ_EDIT), ("edd", "team", READ_EDIT),
    ("vic", "team", READ_ONLY), ("rem", "team", HIDDEN), ("out", "team", HIDDEN),
    ("anon", "team", ANON_HIDDEN),
    ("gre", "granted", READ_EDIT), ("grv", "granted", READ_ONLY), ("out", "granted", HIDDEN),
    ("lnv", "link-viewer", READ_ONLY), ("anon", "link-viewer", ANON_READ),
    ("lne", "link-editor", READ_EDIT),
    ("out", "public", READ_ONLY), ("anon", "public", ANON_READ),
]


def test_role_matrix(world, worker):
    scene = Scene(world)
    failures = []
    for who, where, expected in MATRIX:
        c = scene.client(who)
        unit_id = scene.units[where][1]
        got = {
            "list": c.get(f"/api/units/{unit_id}/revisions").status_code,
            "revision": c.get(f"/api/units/{unit_id}/revisions/1").status_code,
            "snapshot": c.get(f"/api/units/{unit_id}/revisions/1/snapshot").status_code,
            "restore": c.post(f"/api/units/{unit_id}/restore", json={
                "revision": 1, "base_revision": _revision(scene.alice, unit_id)}).status_code,
        }
        failures += [f"{who}@{where} {action}: expected {status}, got {got[action]}"
                     for action, status in expected.items() if got[action] != status]
    assert not failures, "\n".join(failures)


def test_history_lists_who_when_and_origin_and_groups_sessions(world, worker):
    alice, bob = world.user("alice"), world.user("bob")
    sp = alice.personal_space_id
    unit_id = _doc(alice, sp, node(alice, sp, "F"))["unit_id"]
    for n in range(3):
        _edit(alice, unit_id, n, f"k{n}", n)
    # bob edits through a grant on the unit's folder
    folder = alice.get(f"/api/units/{unit_id}").json["node_id"]
    parent = alice.get(f"/api/nodes/{folder}").json["parent_id"]
    assert alice.put(f"/api/nodes/{parent}/grants/{bob.user_id}",
                     json={"role": "editor"}).status_code == 201
    _edit(bob, unit_id, 3, "bob", True)
    r = alice.post(f"/api/units/{unit_id}/restore", json={"revision": 1, "base_revision": 4})
    assert r.status_code == 200, r.text
    assert r.json["revision"] == 5 and r.json["snapshot"]["body"] == {"k0": 0}
    assert r.headers["etag"] == '"rev-5"'

    items = alice.get(f"/api/units/{unit_id}/revisions").json["items"]
    assert [i["revision"] for i in items] == [5, 4, 3, 2, 1]
    assert items[0]["origin"] == {"kind": "restore", "revision": 1}
    assert items[0]["author"] == {"id": alice.user_id, "username": "alice"}
    assert items[1]["origin"] == {"kind": "edit"}
    assert items[1]["author"] == {"id": bob.user_id, "username": "bob"}
    assert items[4]["op_count"] == 1 and items[4]["size"] == len(
        '[{"op":"add","path":"/body/k0","value":0}]')
    assert all(i["count"] == 1 and i["first_revision"] == i["revision"] for i in items)
    # keyset pages
    first = alice.get(f"/api/units/{unit_id}/revisions", params={"limit": "2"}).json
    assert [i["revision"] for i in first["items"]] == [5, 4] and first["next_cursor"]
    second = alice.get(f"/api/units/{unit_id}/revisions",
                       params={"limit": "2", "cursor": first["next_cursor"]}).json
    assert [i["revision"] for i in second["items"]] == [3, 2]
    assert_problem(alice.get(f"/api/units/{unit_id}/revisions",
                             params={"cursor": "bm90IGEgY3Vyc29y"}), 400, "invalid_cursor")
    # grouped: alice's three quick edits are one session; bob's and the restore stand alone
    grouped = alice.get(f"/api/units/{unit_id}/revisions",
                        params={"group": "session"}).json["items"]
    assert [(g["first_revision"], g["revision"], g["count"]) for g in grouped] == \
        [(5, 5, 1), (4, 4, 1), (1, 3, 3)]
    assert grouped[2]["op_count"] == 3 and grouped[2]["author"]["username"] == "alice"
    assert_problem(alice.get(f"/api/units/{unit_id}/revisions",
                             params={"group": "day"}), 400, "validation_failed")
    # one revision, its changeset; a revision that does not exist
    one = alice.get(f"/api/units/{unit_id}/revisions/4").json
    assert one["changes"] == [{"op": "add", "path": "/body/bob", "value": True}]
    for missing in ("0", "6", "x", "99999999999"):
        assert_problem(alice.get(f"/api/units/{unit_id}/revisions/{missing}"), 404)
    assert_problem(alice.get(f"/api/units/{unit_id}/revisions/6/snapshot"), 404)


def test_restoring_a_revision_gives_its_snapshot_and_never_rewrites_history(world, worker):
    alice = world.user("alice")
    sp = alice.personal_space_id
    unit_id = _doc(alice, sp, node(alice, sp, "F"))["unit_id"]
    for n in range(4):
        _edit(alice, unit_id, n, f"k{n}", {"n": n, "text": "x" * n})
    at_2 = alice.get(f"/api/units/{unit_id}/revisions/2/snapshot").json
    assert at_2["revision"] == 2 and at_2["snapshot"]["body"] == {
        "k0": {"n": 0, "text": ""}, "k1": {"n": 1, "text": "x"}}
    before = alice.get(f"/api/units/{unit_id}/revisions").json["items"]
    restored = alice.post(f"/api/units/{unit_id}/restore",
                          json={"revision": 2, "base_revision": 4}).json
    assert restored["snapshot"] == at_2["snapshot"]
    assert alice.get(f"/api/units/{unit_id}").json["snapshot"] == at_2["snapshot"]
    after = alice.get(f"/api/units/{unit_id}/revisions").json["items"]
    assert after[1:] == before  # the old revisions are as they were
    change = alice.get(f"/api/units/{unit_id}/revisions/5").json
    assert sorted(op["path"] for op in change["changes"]) == ["/body/k2", "/body/k3"]
    # the revision 0 snapshot (the document as created) and a restore to it
    zero = alice.get(f"/api/units/{unit_id}/revisions/0/snapshot").json["snapshot"]
    assert zero["body"] == {}
    # nothing to restore: no new revision
    same = alice.post(f"/api/units/{unit_id}/restore", json={"revision": 5, "base_revision": 5})
    assert same.status_code == 200 and same.json["revision"] == 5
    assert_problem(alice.post(f"/api/units/{unit_id}/restore",
                              json={"revision": 9, "base_revision": 5}), 404)
    assert_problem(alice.post(f"/api/units/{unit_id}/restore",
                              json={"revision": 1, "base_revision": 4}), 409,
                   "revision_conflict")
    assert_problem(alice.post(f"/api/units/{unit_id}/restore",
                              json={"revision": -1, "base_revision": 5}), 400)


def test_a_restore_and_an_edit_racing_one_wins_the_other_is_409(world, worker):
    alice = world.user("alice")
    sp = alice.personal_space_id
    unit_id = _doc(alice, sp, node(alice, sp, "F"))["unit_id"]
    for n in range(2):
        _edit(alice, unit_id, n, f"k{n}", n)
    for round_ in range(5):
        # the document differs from revision 1's before each race: a restore to it that
        # read first is a write, not a no-op (a no-op restore answers 200 and writes
        # nothing, so the edit after it rightly succeeds too: the test's flake in CI)
        _edit(alice, unit_id, _revision(alice, unit_id), f"pre{round_}", round_)
        base = _revision(alice, unit_id)
        results: dict[str, int] = {}
        start = threading.Barrier(2)

        def restore() -> None:
            start.wait()
            results["restore"] = alice.post(f"/api/units/{unit_id}/restore", json={
                "revision": 1, "base_revision": base}).status_code

        def edit() -> None:
            start.wait()
            results["edit"] = alice.post(f"/api/units/{unit_id}/changesets", json={
                "base_revision": base, "changes": [
                    {"op": "add", "path": f"/body/r{round_}", "value": round_}]}).status_code

        threads = [threading.Thread(target=restore), threading.Thread(target=edit)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sorted(results.values()) == [200, 409], results
        assert _revision(alice, unit_id) == base + 1


def test_a_deleted_authors_revisions_show_the_placeholder(world, worker):
    alice, bob = world.user("alice"), world.user("bob")
    team = alice.post("/api/spaces", json={"name": "Team"}).json["id"]
    assert alice.put(f"/api/spaces/{team}/members/{bob.user_id}",
                     json={"role": "editor"}).status_code == 201
    unit_id = _doc(alice, team, node(alice, team, "F"))["unit_id"]
    _edit(bob, unit_id, 0, "by_bob", 1)
    assert delete_me(bob).status_code == 202
    deadline = time.monotonic() + 30
    while True:
        author = alice.get(f"/api/units/{unit_id}/revisions").json["items"][0]["author"]
        if author["id"] != bob.user_id or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert author == {"id": PLACEHOLDER_ID, "username": PLACEHOLDER_NAME}


def test_a_merged_worktree_appears_in_history_with_its_origin(world, worker):
    """A worktree merge's trunk revisions name the worktree and the merge operation; a
    draft's own edits never show up in trunk's history before the merge."""
    from tests.engine.test_operations import wait_done
    from tests.worktrees.test_worktree_merge import merge, ready
    from tests.worktrees.test_worktree_units import add, edit
    from tests.worktrees.test_worktrees import create
    alice = world.user("alice")
    sp = alice.personal_space_id
    doc = _doc(alice, sp, node(alice, sp, "F"))
    unit_id = doc["unit_id"]
    _edit(alice, unit_id, 0, "title", "A")
    wt = create(alice, name="History")["id"]
    add(alice, wt, source="trunk", resource_id=doc["resource_id"])
    r = edit(alice, wt, unit_id, 0, [{"op": "add", "path": "/body/from_draft", "value": 1}])
    assert r.status_code == 200, r.text
    assert [i["revision"] for i in alice.get(
        f"/api/units/{unit_id}/revisions").json["items"]] == [1]
    _edit(alice, unit_id, 1, "trunk_side", 2)  # trunk moved: a real three-way merge
    ready(alice, wt)
    r = merge(alice, wt)
    assert r.status_code == 202, r.text
    done = wait_done(alice, r.json["id"])
    assert done["status"] == "completed", done
    newest = alice.get(f"/api/units/{unit_id}/revisions").json["items"][0]
    assert newest["revision"] == 3
    assert newest["origin"] == {"kind": "merge", "worktree_id": wt,
                                "operation_id": r.json["id"]}
    assert newest["author"]["username"] == "alice"
    change = alice.get(f"/api/units/{unit_id}/revisions/3").json["changes"]
    assert change == [{"op": "add", "path": "/body/from_draft", "value": 1}]
    # grouped, the merge stands alone beside alice's own edits
    grouped = alice.get(f"/api/units/{unit_id}/revisions",
                        params={"group": "session"}).json["items"]
    assert [(g["first_revision"], g["revision"]) for g in grouped] == [(3, 3), (1, 2)]
