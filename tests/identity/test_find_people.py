"""Issue 40 item 3: find a user by username; add a space member by username."""
from __future__ import annotations

import pytest

from tests.support.foundation import (
    add_member,
    assert_problem,
    make_node,
    make_token,
    team_space,
)
from wharf.identity.people import LOOKUP_WINDOW, LOOKUPS_PER_WINDOW


@pytest.mark.both_databases
def test_lookup_is_exact_case_insensitive_and_reveals_only_id_and_username(world):
    alice = world.user("alice")
    bob = world.user("Bob.Builder")
    r = alice.get("/api/users", params={"username": "bob.builder"})
    assert r.status_code == 200
    assert r.json == {"items": [{"id": bob.user_id, "username": "Bob.Builder"}]}
    assert alice.get("/api/users", params={"username": "BOB.BUILDER"}).json["items"] == \
        [{"id": bob.user_id, "username": "Bob.Builder"}]
    for near in ("bob", "Bob.Builde", "bob.builder2", "bob%", "bob.*", ""):
        assert alice.get("/api/users", params={"username": near}).json == {"items": []}
    assert alice.get("/api/users").json == {"items": []}


def test_lookup_refused_to_anonymous(world):
    world.user("bob")
    r = world.anonymous().get("/api/users", params={"username": "bob"})
    assert_problem(r, 401)


def test_lookup_by_token(world, app):
    alice = world.user("alice")
    bob = world.user("bob")
    token = make_token(alice, scopes=["read"])
    from tests.support.client import ApiClient
    c = ApiClient(app, headers={"Authorization": f"Bearer {token['token']}"})
    assert c.get("/api/users", params={"username": "BOB"}).json["items"][0]["id"] == bob.user_id


@pytest.mark.both_databases
def test_lookup_is_throttled_per_user(world):
    alice, carol = world.user("alice"), world.user("carol")
    world.user("bob")
    for i in range(LOOKUPS_PER_WINDOW):
        name = "bob" if i % 2 else f"nobody{i}"
        assert alice.get("/api/users", params={"username": name}).status_code == 200
    r = alice.get("/api/users", params={"username": "bob"})
    body = assert_problem(r, 429, "rate_limited")
    assert 1 <= int(r.headers["retry-after"]) <= LOOKUP_WINDOW
    assert body["details"]["retry_after"] == int(r.headers["retry-after"])
    # another user has their own allowance
    assert carol.get("/api/users", params={"username": "bob"}).json["items"]
    # naming a member by username draws on the same allowance
    space = team_space(alice)
    assert_problem(alice.put(f"/api/spaces/{space['id']}/members",
                             json={"username": "bob", "role": "viewer"}), 429, "rate_limited")


@pytest.mark.both_databases
def test_member_by_username(world):
    alice, bob = world.user("alice"), world.user("Bob")
    space = team_space(alice)
    url = f"/api/spaces/{space['id']}/members"
    r = alice.put(url, json={"username": "BOB", "role": "editor"})
    assert r.status_code == 201, r.text
    assert r.json["user_id"] == bob.user_id and r.json["role"] == "editor"
    r = alice.put(url, json={"username": "bob", "role": "viewer"})
    assert r.status_code == 200 and r.json["role"] == "viewer"
    assert_problem(alice.put(url, json={"username": "nobody", "role": "viewer"}), 404,
                   "user_not_found")
    # a non-admin learns nothing about names
    assert_problem(bob.put(url, json={"username": "nobody", "role": "viewer"}), 403)
    # the route by id still works
    carol = world.user("carol")
    add_member(alice, space["id"], carol.user_id, "viewer")
    roles = {m["user_id"]: m["role"] for m in alice.get(url).json["items"]}
    assert roles == {bob.user_id: "viewer", carol.user_id: "viewer"}


@pytest.mark.both_databases
def test_node_grant_by_username(world):
    alice, bob = world.user("alice"), world.user("Bob")
    node = make_node(alice, alice.personal_space_id, "Notes")
    url = f"/api/nodes/{node['id']}/grants"
    r = alice.put(url, json={"username": "bob", "role": "viewer"})
    assert r.status_code == 201, r.text
    assert r.json["user_id"] == bob.user_id and r.json["role"] == "viewer"
    assert alice.put(url, json={"username": "BOB", "role": "editor"}).status_code == 200
    assert_problem(alice.put(url, json={"username": "nobody", "role": "viewer"}), 404,
                   "user_not_found")
    assert [(g["user_id"], g["role"]) for g in alice.get(url).json["items"]] == \
        [(bob.user_id, "editor")]
    assert bob.get(f"/api/nodes/{node['id']}").status_code == 200


@pytest.mark.both_databases
def test_issue_assignee_by_username(world):
    alice, bob, dave = world.user("alice"), world.user("Bob"), world.user("dave")
    space = team_space(alice)
    add_member(alice, space["id"], bob.user_id, "editor")
    r = alice.post(f"/api/spaces/{space['id']}/issues", json={"title": "Crash"})
    assert r.status_code == 201, r.text
    url = f"/api/spaces/{space['id']}/issues/{r.json['number']}/assignees"
    r = alice.put(url, json={"username": "BOB"})
    assert r.status_code == 200, r.text
    assert [a["id"] for a in r.json["assignees"]] == [bob.user_id]
    assert_problem(alice.put(url, json={"username": "nobody"}), 404, "user_not_found")
    assert_problem(alice.put(url, json={"username": "dave"}), 409, "assignee_not_member")
    assert dave.user_id
    # by id still works (idempotent)
    assert alice.put(f"{url}/{bob.user_id}").status_code == 200
