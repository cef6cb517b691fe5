"""One "role in this space" (hardening items 6, 7, 20), on SQLite and PostgreSQL, through the
HTTP API: a team space whose owner's account was deleted with no admin to inherit it is
read only for everyone -- nodes, worktrees (create, rename, ready, reopen, discard) and
issues (create, comment, edit, close, reopen) alike -- until ``wharf space-owner`` gives it
an owner; a space's new owner (an admin who inherits it, or the operator's pick) is no
longer listed as its member."""
from __future__ import annotations

import uuid

from sqlalchemy import update

from storage.models import SpaceMember
from tests.support.foundation import add_member, assert_problem, make_node, team_space
from tests.worktrees.test_worktrees import create_without_worker, discard, submit_create
from wharf.accounts import service as accounts


def key() -> str:
    return uuid.uuid4().hex


def delete_account(components, client) -> None:
    """``DELETE /api/me``, its operation run here."""
    r = client.delete("/api/me", json_body={}, headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    assert components.executor.execute(r.json["id"]) == "completed"


def members(client, space_id: str) -> dict[str, str]:
    r = client.get(f"/api/spaces/{space_id}/members")
    assert r.status_code == 200, r.text
    return {m["user_id"]: m["role"] for m in r.json["items"]}


class Orphaned:
    """alice's team space; carol (editor) made a team worktree there and opened an issue,
    eve is a viewer; then alice's account is deleted and, with no active admin, the space
    is read-only. dave is an admin nonetheless (one who was not active when alice went:
    set in the database), to show that managers are read-only too."""

    def __init__(self, world, components, db):
        self.alice, self.carol = world.user("alice"), world.user("carol")
        self.dave, self.eve = world.user("dave"), world.user("eve")
        self.space = team_space(self.alice, "Orphaned")["id"]
        add_member(self.alice, self.space, self.carol.user_id, "editor")
        add_member(self.alice, self.space, self.dave.user_id, "editor")
        add_member(self.alice, self.space, self.eve.user_id, "viewer")
        self.folder = make_node(self.alice, self.space, "docs")
        self.draft = create_without_worker(components, self.carol, kind="team", name="Draft",
                                           team_space_id=self.space, visibility="space")
        self.ready = create_without_worker(components, self.carol, kind="team", name="Ready",
                                           team_space_id=self.space, visibility="space")
        r = self.carol.post(f"/api/worktrees/{self.ready}/ready")
        assert r.status_code == 200, r.text
        r = self.carol.post(f"/api/spaces/{self.space}/issues", json={"title": "A bug"})
        assert r.status_code == 201, r.text
        self.issue = f"/api/spaces/{self.space}/issues/{r.json['number']}"
        delete_account(components, self.alice)
        with db.write() as s:
            s.execute(update(SpaceMember).where(
                SpaceMember.space_id == self.space,
                SpaceMember.user_id == self.dave.user_id).values(role="admin"))


def test_a_read_only_space_takes_no_worktree_writes(world, components, db):
    o = Orphaned(world, components, db)
    # still read: the space, the folder, the worktrees
    assert o.carol.get(f"/api/spaces/{o.space}").json["role"] == "viewer"
    assert_problem(o.carol.post("/api/nodes", json={"space_id": o.space, "name": "x",
                                                    "parent_id": o.folder["id"]}), 403)
    for who in (o.carol, o.dave, o.eve):
        got = who.get(f"/api/worktrees/{o.draft}")
        assert got.status_code == 200, got.text
        caps = got.json["capabilities"]
        assert caps["review"] is True
        assert not any(v for k, v in caps.items() if k != "review"), caps
    listed = {w["id"]: w for w in o.dave.get("/api/worktrees").json["items"]}
    assert set(listed) == {o.draft, o.ready}
    assert not any(v for k, v in listed[o.draft]["capabilities"].items() if k != "review")
    # no new team worktree, not even by the editor who made the others
    assert_problem(submit_create(o.carol, kind="team", name="New", team_space_id=o.space),
                   403, "space_read_only")
    # neither the creator nor an admin renames, marks ready, reopens or discards
    for who in (o.carol, o.dave):
        assert_problem(who.patch(f"/api/worktrees/{o.draft}", json={"name": "Renamed"}),
                       403, "space_read_only")
        assert_problem(who.post(f"/api/worktrees/{o.draft}/ready"), 403, "space_read_only")
        assert_problem(who.post(f"/api/worktrees/{o.ready}/reopen"), 403, "space_read_only")
        assert_problem(discard(who, o.draft), 403, "space_read_only")
    assert o.carol.get(f"/api/worktrees/{o.draft}").json["name"] == "Draft"
    # an owner again: writable again
    accounts.give_owner(db, o.space, "dave")
    r = o.dave.patch(f"/api/worktrees/{o.draft}", json={"name": "Renamed"})
    assert r.status_code == 200, r.text
    r = submit_create(o.carol, kind="team", name="New", team_space_id=o.space)
    assert r.status_code == 202, r.text


def test_a_read_only_space_takes_no_issue_writes(world, components, db):
    o = Orphaned(world, components, db)
    issues = f"/api/spaces/{o.space}/issues"
    assert o.carol.get(o.issue).status_code == 200
    assert o.eve.get(issues).status_code == 200
    for who in (o.carol, o.dave, o.eve):
        assert_problem(who.post(issues, json={"title": "Another"}), 403, "space_read_only")
        assert_problem(who.post(f"{o.issue}/comments", json={"body": "me too"}), 403,
                       "space_read_only")
    # the author and an admin alike
    for who in (o.carol, o.dave):
        assert_problem(who.patch(o.issue, json={"title": "Edited"}), 403, "space_read_only")
        assert_problem(who.post(f"{o.issue}/close", json={}), 403, "space_read_only")
    assert_problem(o.dave.post(f"{issues}/labels", json={"name": "bug", "color": "red"}),
                   403, "space_read_only")
    got = o.carol.get(o.issue).json
    assert (got["title"], got["state"], got["comments"]) == ("A bug", "open", 0)
    accounts.give_owner(db, o.space, "dave")
    r = o.carol.post(f"{o.issue}/close", json={})
    assert r.status_code == 200, r.text
    assert_problem(o.eve.post(f"{o.issue}/reopen"), 403)  # a viewer, not the author
    r = o.carol.post(f"{o.issue}/reopen")
    assert r.status_code == 200, r.text


def test_an_inheriting_admin_and_an_operators_pick_are_owners_not_members(
        world, components, db):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    inherited = team_space(alice, "Inherited")["id"]
    add_member(alice, inherited, bob.user_id, "admin")
    add_member(alice, inherited, carol.user_id, "editor")
    orphaned = team_space(alice, "Orphaned")["id"]
    add_member(alice, orphaned, carol.user_id, "editor")
    delete_account(components, alice)

    # bob inherited the space: its owner, no longer listed as a member
    assert bob.get(f"/api/spaces/{inherited}").json["role"] == "owner"
    assert members(bob, inherited) == {carol.user_id: "editor"}
    # the owner manages the members like any owner
    assert bob.put(f"/api/spaces/{inherited}/members/{carol.user_id}",
                   json={"role": "admin"}).status_code == 200
    assert_problem(bob.delete(f"/api/spaces/{inherited}/members/{bob.user_id}"), 409,
                   "owner_not_member")
    # the operator names carol the owner of the read-only one
    accounts.give_owner(db, orphaned, "carol")
    assert carol.get(f"/api/spaces/{orphaned}").json["role"] == "owner"
    assert members(carol, orphaned) == {}
    make_node(carol, orphaned, "writable again")


def test_a_read_only_spaces_worktrees_do_not_use_up_their_creators_limit(world, components,
                                                                          db):
    """carol cannot discard her two worktrees of the read-only space (nobody writes there),
    so they count against neither her open-worktree limit nor her draft quota: she still
    opens a worktree of her own."""
    o = Orphaned(world, components, db)
    object.__setattr__(components.settings, "worktree_max_open_per_user", 2)
    r = submit_create(o.carol, kind="user", name="Mine")
    assert r.status_code == 202, r.text
    assert components.executor.execute(r.json["id"]) == "completed"
