"""Spaces, team members, the node tree, access roles and keyset pagination."""
from __future__ import annotations

import pytest

from tests.support.foundation import add_member, assert_problem, make_node, row_counts, team_space

# --- spaces ---------------------------------------------------------------------------

def test_team_space_create_list_get_patch(world):
    alice = world.user("alice")
    r = alice.post("/api/spaces", json={"name": "  Design  ", "type": "team"})
    assert r.status_code == 201, r.text
    space = r.json
    assert r.headers["location"] == f"/api/spaces/{space['id']}"
    assert space["name"] == "Design"
    assert (space["type"], space["role"], space["owner_id"], space["public_read"]) == \
        ("team", "owner", alice.user_id, False)
    # type defaults to team
    other = alice.post("/api/spaces", json={"name": "Ops"})
    assert other.status_code == 201 and other.json["type"] == "team"

    listed = alice.get("/api/spaces").json
    assert sorted(s["id"] for s in listed["items"]) == sorted(
        [alice.personal_space_id, space["id"], other.json["id"]])
    assert listed["next_cursor"] is None

    got = alice.get(f"/api/spaces/{space['id']}")
    assert got.status_code == 200 and got.json == space

    p = alice.patch(f"/api/spaces/{space['id']}", json={"name": "Design team"})
    assert p.status_code == 200
    assert p.json["name"] == "Design team" and p.json["public_read"] is False
    assert alice.get(f"/api/spaces/{space['id']}").json["name"] == "Design team"
    p = alice.patch(f"/api/spaces/{space['id']}", json={"public_read": True})
    assert p.status_code == 200 and p.json["public_read"] is True
    assert p.json["name"] == "Design team"


def test_personal_space_cannot_be_created(world, db):
    alice = world.user("alice")
    before = row_counts(db)
    assert_problem(alice.post("/api/spaces", json={"name": "Mine", "type": "personal"}), 400)
    assert row_counts(db) == before


def test_spaces_listing_pages(world):
    alice = world.user("alice")
    ids = {alice.personal_space_id}
    for i in range(4):
        ids.add(team_space(alice, f"T{i}")["id"])
    seen, cursor = [], None
    while True:
        params = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        page = alice.get("/api/spaces", params=params).json
        assert len(page["items"]) <= 2
        seen += [s["id"] for s in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(ids) and len(seen) == len(ids)
    # someone else's spaces are not listed
    bob = world.user("bob")
    assert [s["id"] for s in bob.get("/api/spaces").json["items"]] == [bob.personal_space_id]


def test_public_read_space_is_visible_read_only(world):
    alice, eve = world.user("alice"), world.user("eve")
    space = team_space(alice)
    node = make_node(alice, space["id"], "Readme")
    assert_problem(eve.get(f"/api/spaces/{space['id']}"), 404)
    alice.patch(f"/api/spaces/{space['id']}", json={"public_read": True})
    got = eve.get(f"/api/spaces/{space['id']}")
    assert got.status_code == 200 and got.json["role"] == "viewer"
    n = eve.get(f"/api/nodes/{node['id']}")
    assert n.status_code == 200 and n.json["role"] == "viewer"
    caps = n.json["capabilities"]
    # a public reader may read and nothing else, whatever capabilities the node lists
    assert caps["can_read"] is True
    assert {k for k, v in caps.items() if v} == {"can_read"}, caps
    assert_problem(eve.patch(f"/api/nodes/{node['id']}", json={"name": "x"}), 403)
    assert_problem(eve.post("/api/nodes", json={"space_id": space["id"], "name": "x"}), 403)
    assert_problem(eve.patch(f"/api/spaces/{space['id']}", json={"name": "x"}), 403)
    # public read does not put the space in eve's list
    assert space["id"] not in [s["id"] for s in eve.get("/api/spaces").json["items"]]
    alice.patch(f"/api/spaces/{space['id']}", json={"public_read": False})
    assert_problem(eve.get(f"/api/nodes/{node['id']}"), 404)


# --- members --------------------------------------------------------------------------

def test_members_put_change_list_delete(world, db):
    alice, bob = world.user("alice"), world.user("bob")
    space = team_space(alice)
    sid = space["id"]
    assert_problem(bob.get(f"/api/spaces/{sid}"), 404)

    r = alice.put(f"/api/spaces/{sid}/members/{bob.user_id}", json={"role": "viewer"})
    assert r.status_code == 201, r.text
    assert (r.json["user_id"], r.json["username"], r.json["role"]) == (bob.user_id, "bob", "viewer")
    assert bob.get(f"/api/spaces/{sid}").json["role"] == "viewer"
    assert sid in [s["id"] for s in bob.get("/api/spaces").json["items"]]

    r = alice.put(f"/api/spaces/{sid}/members/{bob.user_id}", json={"role": "editor"})
    assert r.status_code == 200 and r.json["role"] == "editor"
    assert bob.get(f"/api/spaces/{sid}").json["role"] == "editor"

    listed = alice.get(f"/api/spaces/{sid}/members")
    assert listed.status_code == 200
    assert [(m["user_id"], m["role"]) for m in listed.json["items"]] == [(bob.user_id, "editor")]
    # members can see the member list too
    assert bob.get(f"/api/spaces/{sid}/members").json == listed.json

    assert alice.delete(f"/api/spaces/{sid}/members/{bob.user_id}").status_code == 204
    assert_problem(bob.get(f"/api/spaces/{sid}"), 404)
    assert alice.get(f"/api/spaces/{sid}/members").json["items"] == []
    assert_problem(alice.delete(f"/api/spaces/{sid}/members/{bob.user_id}"), 404)
    assert row_counts(db)["space_members"] == 0


def test_personal_space_refuses_members(world, db):
    alice, bob = world.user("alice"), world.user("bob")
    before = row_counts(db)
    r = alice.put(f"/api/spaces/{alice.personal_space_id}/members/{bob.user_id}",
                  json={"role": "editor"})
    assert_problem(r, 409, "not_a_team_space")
    assert row_counts(db) == before
    assert_problem(bob.get(f"/api/spaces/{alice.personal_space_id}"), 404)


def test_owner_cannot_be_made_a_member(world, db):
    alice, bob = world.user("alice"), world.user("bob")
    space = team_space(alice)
    add_member(alice, space["id"], bob.user_id, "admin")
    before = row_counts(db)
    for actor in (alice, bob):
        r = actor.put(f"/api/spaces/{space['id']}/members/{alice.user_id}",
                      json={"role": "viewer"})
        assert_problem(r, 409, "owner_not_member")
    assert row_counts(db) == before
    assert alice.get(f"/api/spaces/{space['id']}").json["role"] == "owner"
    # and cannot be removed by an admin
    assert_problem(bob.delete(f"/api/spaces/{space['id']}/members/{alice.user_id}"), 409,
                   "owner_not_member")
    assert alice.get(f"/api/spaces/{space['id']}").json["role"] == "owner"


def test_member_of_unknown_user_or_role(world, db):
    alice = world.user("alice")
    bob = world.user("bob")
    space = team_space(alice)
    before = row_counts(db)
    assert_problem(alice.put(f"/api/spaces/{space['id']}/members/{'0' * 32}",
                             json={"role": "viewer"}), 404)
    assert_problem(alice.put(f"/api/spaces/{space['id']}/members/not-a-user",
                             json={"role": "viewer"}), 404)
    assert_problem(alice.put(f"/api/spaces/{space['id']}/members/{bob.user_id}",
                             json={"role": "owner"}), 400)
    assert row_counts(db) == before


# --- the role matrix ------------------------------------------------------------------

ROLES = ["owner", "admin", "editor", "viewer", "outsider"]
EXPECTED = {
    #               owner admin editor viewer outsider
    "get_space":     (200, 200, 200, 200, 404),
    "patch_space":   (200, 200, 403, 403, 404),
    "add_member":    (201, 201, 403, 403, 404),
    "list_members":  (200, 200, 200, 200, 404),
    "create_node":   (201, 201, 201, 403, 404),
    "get_node":      (200, 200, 200, 200, 404),
    "list_children": (200, 200, 200, 200, 404),
    "list_roots":    (200, 200, 200, 200, 404),
    "rename":        (200, 200, 200, 403, 404),
    "move":          (200, 200, 200, 403, 404),
}


def test_role_matrix(world, db):
    users = {"owner": world.user("olive"), "admin": world.user("adam"),
             "editor": world.user("eddie"), "viewer": world.user("vera"),
             "outsider": world.user("otto")}
    owner = users["owner"]
    space = team_space(owner, "Matrix")
    sid = space["id"]
    for role in ("admin", "editor", "viewer"):
        add_member(owner, sid, users[role].user_id, role)
    folder = make_node(owner, sid, "folder")
    other = make_node(owner, sid, "other")
    doc = make_node(owner, sid, "doc", folder["id"])
    newcomers = {role: world.user(f"new-{role}") for role in ROLES}

    actual: dict[str, list[int]] = {action: [] for action in EXPECTED}
    problems: list[str] = []
    for role in ROLES:
        c = users[role]

        def did(action, r, role=role):
            actual[action].append(r.status_code)
            if r.status_code >= 400 and "problem+json" not in r.headers.get("content-type", ""):
                problems.append(f"{role} {action}: {r.status_code} not problem+json")

        r = c.get(f"/api/spaces/{sid}")
        did("get_space", r)
        if r.status_code == 200:
            assert r.json["role"] == role
        did("patch_space", c.patch(f"/api/spaces/{sid}", json={"name": f"by {role}"}))
        did("add_member", c.put(f"/api/spaces/{sid}/members/{newcomers[role].user_id}",
                                json={"role": "viewer"}))
        did("list_members", c.get(f"/api/spaces/{sid}/members"))
        did("create_node", c.post("/api/nodes", json={"space_id": sid, "name": f"{role}'s",
                                                      "parent_id": folder["id"]}))
        r = c.get(f"/api/nodes/{doc['id']}")
        did("get_node", r)
        if r.status_code == 200:
            assert r.json["role"] == role
            caps = r.json["capabilities"]
            assert caps["can_read"] is True
            assert caps["can_edit"] is (role in ("owner", "admin", "editor"))
            assert caps["can_manage"] is (role in ("owner", "admin"))
        did("list_children", c.get(f"/api/nodes/{folder['id']}/children"))
        did("list_roots", c.get(f"/api/spaces/{sid}/nodes"))
        did("rename", c.patch(f"/api/nodes/{doc['id']}", json={"name": f"doc by {role}"}))
        target = other["id"] if role in ("owner", "editor", "outsider") else folder["id"]
        did("move", c.patch(f"/api/nodes/{doc['id']}", json={"parent_id": target}))

    expected = {action: list(codes) for action, codes in EXPECTED.items()}
    assert actual == expected
    assert problems == []
    # refused requests changed nothing: the last successful writer was the editor
    final = owner.get(f"/api/nodes/{doc['id']}").json
    assert final["name"] == "doc by editor"
    assert final["parent_id"] == other["id"]
    assert owner.get(f"/api/spaces/{sid}").json["name"] == "by admin"
    members = {m["user_id"] for m in owner.get(f"/api/spaces/{sid}/members").json["items"]}
    assert newcomers["owner"].user_id in members and newcomers["admin"].user_id in members
    assert newcomers["editor"].user_id not in members
    assert newcomers["viewer"].user_id not in members
    assert newcomers["outsider"].user_id not in members


def test_outsider_404_is_indistinguishable_from_unknown(world):
    alice, eve = world.user("alice"), world.user("eve")
    node = make_node(alice, alice.personal_space_id, "secret")
    for path in (f"/api/nodes/{node['id']}", f"/api/spaces/{alice.personal_space_id}"):
        real = eve.get(path)
        fake = eve.get(path[:-32] + "f" * 32)
        assert_problem(real, 404)
        assert_problem(fake, 404)
        assert ({k: v for k, v in real.json.items() if k != "request_id"}
                == {k: v for k, v in fake.json.items() if k != "request_id"})


# --- nodes ----------------------------------------------------------------------------

def test_create_nodes_with_and_without_parent(world):
    alice = world.user("alice")
    sid = alice.personal_space_id
    r = alice.post("/api/nodes", json={"space_id": sid, "name": "Projects"})
    assert r.status_code == 201, r.text
    root = r.json
    assert r.headers["location"] == f"/api/nodes/{root['id']}"
    assert (root["space_id"], root["parent_id"], root["name"], root["created_by"],
            root["resource"]) == (sid, None, "Projects", alice.user_id, None)
    child = make_node(alice, sid, "Q3", root["id"])
    assert child["parent_id"] == root["id"]
    explicit_null = alice.post("/api/nodes", json={"space_id": sid, "name": "Inbox",
                                                   "parent_id": None})
    assert explicit_null.status_code == 201 and explicit_null.json["parent_id"] is None

    assert alice.get(f"/api/nodes/{child['id']}").json == child
    roots = alice.get(f"/api/spaces/{sid}/nodes").json["items"]
    assert [n["name"] for n in roots] == ["Inbox", "Projects"]
    kids = alice.get(f"/api/nodes/{root['id']}/children").json["items"]
    assert [n["id"] for n in kids] == [child["id"]]


def test_node_names_are_validated(world, db):
    alice = world.user("alice")
    sid = alice.personal_space_id
    before = row_counts(db)
    for name in ("", "   ", "a/b", "a\\b", "tab\there", "nul\x00", "x" * 256, "rtl\u202eoverride"):
        assert_problem(alice.post("/api/nodes", json={"space_id": sid, "name": name}), 400)
    assert row_counts(db) == before
    for name in ("x" * 255, "Ünïcödé 文件", "👨‍👩‍👧 family", "report (final).v2"):
        r = alice.post("/api/nodes", json={"space_id": sid, "name": name})
        assert r.status_code == 201, (name, r.text)
        assert r.json["name"] == name


def test_parent_in_another_space_is_refused(world, db):
    alice = world.user("alice")
    team = team_space(alice)
    elsewhere = make_node(alice, team["id"], "elsewhere")
    before = row_counts(db)
    r = alice.post("/api/nodes", json={"space_id": alice.personal_space_id, "name": "x",
                                       "parent_id": elsewhere["id"]})
    assert_problem(r, 400, "parent_in_other_space")
    assert row_counts(db) == before


def test_rename_and_move(world):
    alice = world.user("alice")
    sid = alice.personal_space_id
    a = make_node(alice, sid, "a")
    b = make_node(alice, sid, "b")
    c = make_node(alice, sid, "c", a["id"])

    r = alice.patch(f"/api/nodes/{c['id']}", json={"name": "  renamed "})
    assert r.status_code == 200 and r.json["name"] == "renamed"
    assert r.json["parent_id"] == a["id"]
    assert r.json["updated_at"] >= c["updated_at"]

    r = alice.patch(f"/api/nodes/{c['id']}", json={"parent_id": b["id"]})
    assert r.status_code == 200 and r.json["parent_id"] == b["id"]
    assert [n["id"] for n in alice.get(f"/api/nodes/{b['id']}/children").json["items"]] == [c["id"]]
    assert alice.get(f"/api/nodes/{a['id']}/children").json["items"] == []

    r = alice.patch(f"/api/nodes/{c['id']}", json={"parent_id": None, "name": "top"})
    assert r.status_code == 200
    assert (r.json["parent_id"], r.json["name"]) == (None, "top")
    roots = alice.get(f"/api/spaces/{sid}/nodes").json["items"]
    assert sorted(n["name"] for n in roots) == ["a", "b", "top"]


def test_move_into_own_subtree_is_refused(world, db):
    alice = world.user("alice")
    sid = alice.personal_space_id
    a = make_node(alice, sid, "a")
    b = make_node(alice, sid, "b", a["id"])
    c = make_node(alice, sid, "c", b["id"])
    for node, target in ((a, c), (a, b), (a, a), (b, c), (b, b)):
        r = alice.patch(f"/api/nodes/{node['id']}", json={"parent_id": target["id"]})
        assert_problem(r, 409, "move_cycle")
    # a combined rename+move that is refused renames nothing
    assert_problem(alice.patch(f"/api/nodes/{a['id']}",
                               json={"name": "zzz", "parent_id": c["id"]}), 409, "move_cycle")
    assert alice.get(f"/api/nodes/{a['id']}").json["name"] == "a"
    assert alice.get(f"/api/nodes/{a['id']}").json["parent_id"] is None
    assert alice.get(f"/api/nodes/{c['id']}").json["parent_id"] == b["id"]
    # moving down a sibling branch is fine
    d = make_node(alice, sid, "d")
    assert alice.patch(f"/api/nodes/{d['id']}", json={"parent_id": c["id"]}).status_code == 200


def test_move_across_spaces_is_refused(world):
    alice = world.user("alice")
    team = team_space(alice)
    mine = make_node(alice, alice.personal_space_id, "mine")
    theirs = make_node(alice, team["id"], "theirs")
    r = alice.patch(f"/api/nodes/{mine['id']}", json={"parent_id": theirs["id"]})
    assert_problem(r, 409, "cross_space_move")
    assert alice.get(f"/api/nodes/{mine['id']}").json["parent_id"] is None
    assert alice.get(f"/api/nodes/{theirs['id']}/children").json["items"] == []


def test_move_under_an_invisible_node_is_404(world):
    alice, bob = world.user("alice"), world.user("bob")
    mine = make_node(alice, alice.personal_space_id, "mine")
    hidden = make_node(bob, bob.personal_space_id, "hidden")
    r = alice.patch(f"/api/nodes/{mine['id']}", json={"parent_id": hidden["id"]})
    assert_problem(r, 404)
    r = alice.post("/api/nodes", json={"space_id": alice.personal_space_id, "name": "x",
                                       "parent_id": hidden["id"]})
    assert_problem(r, 404)


# --- pagination -----------------------------------------------------------------------

NAMES = ["delta", "alpha", "charlie", "alpha", "bravo", "echo", "bravo"]


def _walk(client, path, limit):
    items, cursor, pages = [], None, 0
    while True:
        params = {"limit": str(limit)}
        if cursor:
            params["cursor"] = cursor
        r = client.get(path, params=params)
        assert r.status_code == 200, r.text
        assert len(r.json["items"]) <= limit
        items += r.json["items"]
        pages += 1
        cursor = r.json["next_cursor"]
        if cursor is None:
            return items, pages
        assert pages < 20


def test_children_keyset_pagination(world):
    alice = world.user("alice")
    sid = alice.personal_space_id
    parent = make_node(alice, sid, "parent")
    created = [make_node(alice, sid, name, parent["id"]) for name in NAMES]
    expected = [n["id"] for n in sorted(created, key=lambda n: (n["name"], n["id"]))]
    items, pages = _walk(alice, f"/api/nodes/{parent['id']}/children", 3)
    assert [n["id"] for n in items] == expected
    assert pages == 3
    # a node added behind the cursor mid-walk is not returned twice or skipped wrongly
    first = alice.get(f"/api/nodes/{parent['id']}/children", params={"limit": "3"}).json
    make_node(alice, sid, "aaa-early", parent["id"])
    rest, _ = _walk_from(alice, f"/api/nodes/{parent['id']}/children", 3, first["next_cursor"])
    assert [n["id"] for n in first["items"] + rest] == expected


def _walk_from(client, path, limit, cursor):
    items, pages = [], 0
    while cursor:
        r = client.get(path, params={"limit": str(limit), "cursor": cursor})
        assert r.status_code == 200
        items += r.json["items"]
        cursor = r.json["next_cursor"]
        pages += 1
    return items, pages


def test_root_keyset_pagination(world):
    alice = world.user("alice")
    sid = alice.personal_space_id
    created = [make_node(alice, sid, name) for name in NAMES]
    make_node(alice, sid, "child-not-root", created[0]["id"])
    expected = [n["id"] for n in sorted(created, key=lambda n: (n["name"], n["id"]))]
    items, pages = _walk(alice, f"/api/spaces/{sid}/nodes", 3)
    assert [n["id"] for n in items] == expected
    assert pages == 3
    exact, pages = _walk(alice, f"/api/spaces/{sid}/nodes", 7)
    assert [n["id"] for n in exact] == expected and pages == 1


@pytest.mark.parametrize("path_kind", ["children", "roots", "spaces"])
def test_bad_cursor_and_limit(world, path_kind):
    alice = world.user("alice")
    sid = alice.personal_space_id
    parent = make_node(alice, sid, "p")
    for i in range(3):
        make_node(alice, sid, f"c{i}", parent["id"])
        make_node(alice, sid, f"r{i}")
        team_space(alice, f"t{i}")
    path = {"children": f"/api/nodes/{parent['id']}/children",
            "roots": f"/api/spaces/{sid}/nodes", "spaces": "/api/spaces"}[path_kind]
    other = {"children": f"/api/spaces/{sid}/nodes", "roots": "/api/spaces",
             "spaces": f"/api/nodes/{parent['id']}/children"}[path_kind]
    foreign_cursor = alice.get(other, params={"limit": "1"}).json["next_cursor"]
    assert foreign_cursor
    import base64
    crafted = [base64.urlsafe_b64encode(raw).decode().rstrip("=") for raw in (
        b'["children","a\\u0000","b"]', b'["roots","\\ud800","x"]', b'["spaces","\\u0000"]',
        b'["children",1,2]', b'["roots"]', b'{"a":1}', b'null', b'\xff\xfe')]
    for cursor in ["garbage", "!!!!", "%%%", "a" * 2000, "eyJ", foreign_cursor, "🙂",
                   *crafted]:
        assert_problem(alice.get(path, params={"cursor": cursor}), 400, "invalid_cursor")
    for limit in ["0", "-1", "abc", "500", "201", "1.5", "1e2", "1_0", "٣", " 3"]:
        r = alice.get(path, params={"limit": limit})
        body = assert_problem(r, 400)
        assert body["code"] == "validation_failed"
    assert alice.get(path, params={"limit": "200"}).status_code == 200
    assert len(alice.get(path, params={"limit": "1"}).json["items"]) == 1


# --- concurrency ----------------------------------------------------------------------

def _race(calls):
    """Run the callables at the same moment in threads; return their results in order."""
    import threading
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(i):
        barrier.wait()
        results[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.mark.both_databases  # concurrency: the database decides
def test_concurrent_member_puts(world, db):
    from tests.support.foundation import bearer, make_token
    alice = world.user("alice")
    space = team_space(alice)
    token = make_token(alice)["token"]
    newcomers = [world.user(f"user{i}") for i in range(3)]
    for user in newcomers:
        clients = [world.anonymous() for _ in range(3)]
        results = _race([
            (lambda c=c, role=role: c.put(f"/api/spaces/{space['id']}/members/{user.user_id}",
                                          json={"role": role}, headers=bearer(token)))
            for c, role in zip(clients, ("viewer", "editor", "admin"))])
        assert sorted(r.status_code for r in results) == [200, 200, 201], \
            [r.text for r in results]
    assert row_counts(db)["space_members"] == 3


@pytest.mark.both_databases  # concurrency: the database decides
def test_concurrent_opposite_moves_cannot_build_a_cycle(world):
    from tests.support.foundation import bearer, make_token
    alice = world.user("alice")
    sid = alice.personal_space_id
    token = make_token(alice)["token"]
    for round_ in range(3):
        a = make_node(alice, sid, f"a{round_}")
        b = make_node(alice, sid, f"b{round_}")
        c1, c2 = world.anonymous(), world.anonymous()
        results = _race([
            lambda: c1.patch(f"/api/nodes/{a['id']}", json={"parent_id": b["id"]},
                             headers=bearer(token)),
            lambda: c2.patch(f"/api/nodes/{b['id']}", json={"parent_id": a["id"]},
                             headers=bearer(token)),
        ])
        assert sorted(r.status_code for r in results) == [200, 409], [r.text for r in results]
        loser = next(r for r in results if r.status_code == 409)
        assert loser.json["code"] == "move_cycle"
        parents = {n: alice.get(f"/api/nodes/{n}").json["parent_id"] for n in (a["id"], b["id"])}
        assert None in parents.values()  # one of them is still a root: no cycle
