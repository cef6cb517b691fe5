"""The member list is keyset-paged like every other listing (issue 41 item 4), on both
databases."""
from __future__ import annotations

import pytest

from tests.support.foundation import add_member, assert_problem, team_space

pytestmark = pytest.mark.both_databases


def test_members_page_by_user_id_and_every_member_comes_once(world):
    alice = world.user("alice")
    sid = team_space(alice)["id"]
    users = [world.user(f"member{i}") for i in range(5)]
    for u in users:
        add_member(alice, sid, u.user_id, "viewer")
    everyone = alice.get(f"/api/spaces/{sid}/members").json
    assert everyone["next_cursor"] is None
    assert [m["user_id"] for m in everyone["items"]] == sorted(u.user_id for u in users)
    seen, cursor, pages = [], None, 0
    while True:
        r = users[0].get(f"/api/spaces/{sid}/members",
                         params={"limit": "2", **({"cursor": cursor} if cursor else {})})
        assert r.status_code == 200, r.text
        assert len(r.json["items"]) <= 2
        seen += r.json["items"]
        pages += 1
        cursor = r.json["next_cursor"]
        if cursor is None:
            break
    assert pages == 3 and seen == everyone["items"]
    # a member removed between pages is simply not there; the cursor still works
    first = alice.get(f"/api/spaces/{sid}/members", params={"limit": "2"}).json
    assert alice.delete(f"/api/spaces/{sid}/members/{first['items'][1]['user_id']}"
                        ).status_code == 204
    rest = alice.get(f"/api/spaces/{sid}/members",
                     params={"limit": "10", "cursor": first["next_cursor"]}).json
    assert [m["user_id"] for m in rest["items"]] == sorted(u.user_id for u in users)[2:]


def test_member_paging_refuses_what_it_did_not_issue(world):
    alice = world.user("alice")
    sid = team_space(alice)["id"]
    add_member(alice, sid, world.user("bob").user_id, "editor")
    add_member(alice, sid, world.user("carol").user_id, "editor")
    spaces_cursor = None
    for _ in range(3):
        team_space(alice, "More")
    spaces_cursor = alice.get("/api/spaces", params={"limit": "1"}).json["next_cursor"]
    assert spaces_cursor
    assert_problem(alice.get(f"/api/spaces/{sid}/members", params={"cursor": spaces_cursor}),
                   400, "invalid_cursor")
    assert_problem(alice.get(f"/api/spaces/{sid}/members", params={"limit": "0"}), 400)
    assert_problem(alice.get(f"/api/spaces/{sid}/members", params={"limit": "201"}), 400)
    # outsiders still see nothing, paged or not
    assert_problem(world.user("eve").get(f"/api/spaces/{sid}/members",
                                         params={"limit": "1"}), 404)
