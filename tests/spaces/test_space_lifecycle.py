"""A team space's lifecycle (issue 41 item 2), on SQLite and PostgreSQL: a description and
names up to 128 characters; handing the space to a member (owner only, the new owner's
member row goes, the old owner becomes an admin, a concurrent removal of the new owner
gives one consistent outcome); archive and unarchive (owner or admin; every write
refused with ``space_read_only``, reads go on, nothing deleted, idempotent, audited)."""
from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import select

from storage.models import AuditLog, Node, Space
from tests.support.foundation import (
    add_member,
    assert_problem,
    bearer,
    make_node,
    make_token,
    team_space,
)

pytestmark = pytest.mark.both_databases


class Team:
    """alice owns a team space where bob is admin, carol editor, dave viewer; erin is a
    stranger; a root folder exists."""

    def __init__(self, world, suffix: str = ""):
        self.world = world
        self.alice, self.bob = world.user(f"alice{suffix}"), world.user(f"bob{suffix}")
        self.carol, self.dave = world.user(f"carol{suffix}"), world.user(f"dave{suffix}")
        self.erin = world.user(f"erin{suffix}")
        self.sid = team_space(self.alice, "Lifecycle")["id"]
        for who, role in ((self.bob, "admin"), (self.carol, "editor"), (self.dave, "viewer")):
            add_member(self.alice, self.sid, who.user_id, role)
        self.folder = make_node(self.alice, self.sid, "Folder")
        self.url = f"/api/spaces/{self.sid}"

    def members(self) -> dict[str, str]:
        r = self.alice.get(f"{self.url}/members")
        assert r.status_code == 200, r.text
        return {m["user_id"]: m["role"] for m in r.json["items"]}


def actions(db, space_id: str) -> list[str]:
    with db.read() as s:
        return list(s.scalars(select(AuditLog.action).where(AuditLog.space_id == space_id)
                              .order_by(AuditLog.at, AuditLog.id)))


# --- description and names -------------------------------------------------------------

def test_description_and_long_names_are_kept_listed_and_bounded(world):
    alice = world.user("alice")
    long_name = "N" * 128
    space = team_space(alice, long_name)
    assert space["name"] == long_name and space["description"] == ""
    assert (space["archived"], space["read_only"], space["archived_at"]) == (False, False, None)
    url = f"/api/spaces/{space['id']}"
    text = "Plans\nand designs " + "x" * 4000
    r = alice.patch(url, json={"description": text})
    assert r.status_code == 200, r.text
    assert r.json["description"] == text
    assert alice.get(url).json["description"] == text
    listed = {s["id"]: s for s in alice.get("/api/spaces").json["items"]}
    assert listed[space["id"]]["description"] == text
    # hostile: too long, wrong type, a NUL; a 129-character name
    for body, field in (({"description": "d" * 4097}, "description"),
                        ({"description": 5}, "description"),
                        ({"name": "n" * 129}, "name")):
        problem = assert_problem(alice.patch(url, json=body), 400, "validation_failed")
        assert field in str(problem), problem
    assert_problem(alice.patch(url, json={"description": "a\x00b"}), 400, "validation_failed")
    assert_problem(alice.post("/api/spaces", json={"name": "n" * 129}), 400,
                   "validation_failed")
    assert alice.get(url).json["description"] == text
    # an editor cannot change it; a stranger does not see the space
    bob, erin = world.user("bob"), world.user("erin")
    add_member(alice, space["id"], bob.user_id, "editor")
    assert_problem(bob.patch(url, json={"description": "mine"}), 403)
    assert_problem(erin.patch(url, json={"description": "mine"}), 404)


# --- transfer ---------------------------------------------------------------------------

def test_transfer_hands_the_space_to_a_member_and_keeps_the_old_owner_as_admin(world, db):
    t = Team(world)
    r = t.alice.post(f"{t.url}/transfer", json={"user_id": t.carol.user_id})
    assert r.status_code == 200, r.text
    assert r.json["owner_id"] == t.carol.user_id and r.json["role"] == "admin"
    assert t.carol.get(t.url).json["role"] == "owner"
    assert t.members() == {t.alice.user_id: "admin", t.bob.user_id: "admin",
                           t.dave.user_id: "viewer"}
    assert "space.transfer" in actions(db, t.sid)
    # the new owner manages everything, the old one is an admin now
    assert_problem(t.alice.post(f"{t.url}/transfer", json={"user_id": t.bob.user_id}), 403,
                   "owner_required")
    r = t.carol.post(f"{t.url}/transfer", json={"username": "ALICE"})
    assert r.status_code == 200, r.text
    assert t.alice.get(t.url).json["role"] == "owner"
    assert t.members()[t.carol.user_id] == "admin"


def test_transfer_permission_matrix_and_hostile_bodies(world, db):
    t = Team(world)
    path = f"{t.url}/transfer"
    body = {"user_id": t.dave.user_id}
    assert_problem(t.bob.post(path, json=body), 403, "owner_required")
    assert_problem(t.carol.post(path, json=body), 403, "owner_required")
    assert_problem(t.dave.post(path, json={"user_id": t.carol.user_id}), 403, "owner_required")
    assert_problem(t.erin.post(path, json=body), 404)
    assert_problem(world.anonymous().post(path, json=body), 401)
    tok = make_token(t.alice, scopes=["read"])
    assert_problem(world.anonymous().post(path, json=body, headers=bearer(tok["token"])), 403,
                   "insufficient_scope")
    # the new owner must be a member; unknown users are 404
    assert_problem(t.alice.post(path, json={"user_id": t.erin.user_id}), 409, "new_owner_not_member")
    assert_problem(t.alice.post(path, json={"user_id": uuid.uuid4().hex}), 404)
    assert_problem(t.alice.post(path, json={"username": "nobody"}), 404, "user_not_found")
    assert_problem(t.alice.post(path, json={"user_id": t.alice.user_id}), 409,
                   "owner_not_member")
    for bad in ({}, {"user_id": t.dave.user_id, "username": "dave"}, {"user_id": 5},
                {"user_id": t.dave.user_id, "extra": 1}):
        assert_problem(t.alice.post(path, json=bad), 400, "validation_failed")
    # a personal space changes no hands
    assert_problem(t.alice.post(f"/api/spaces/{t.alice.personal_space_id}/transfer",
                                json=body), 409, "not_a_team_space")
    assert_problem(t.alice.post(f"/api/spaces/{uuid.uuid4().hex}/transfer", json=body), 404)
    assert t.alice.get(t.url).json["role"] == "owner"
    assert "space.transfer" not in actions(db, t.sid)


def test_a_transfer_and_the_removal_of_the_new_owner_racing_end_one_way(world, db):
    """The transfer to carol and carol's removal lock the same space row: whichever
    commits second sees the first, so carol is either the owner (the removal answers 409
    ``owner_not_member``) or gone (the transfer answers 409 ``new_owner_not_member``)."""
    for round_ in range(3):
        t = Team(world, f"r{round_}")
        barrier, results = threading.Barrier(2), {}

        def transfer(t=t, barrier=barrier, results=results):
            barrier.wait()
            results["transfer"] = t.alice.post(f"{t.url}/transfer",
                                               json={"user_id": t.carol.user_id})

        def remove(t=t, barrier=barrier, results=results):
            barrier.wait()
            results["remove"] = t.bob.delete(f"{t.url}/members/{t.carol.user_id}")

        threads = [threading.Thread(target=transfer), threading.Thread(target=remove)]
        [th.start() for th in threads]
        [th.join() for th in threads]
        got = (results["transfer"].status_code, results["remove"].status_code)
        with db.read() as s:
            owner = s.scalar(select(Space.owner_id).where(Space.id == t.sid))
        members = t.members() if owner == t.alice.user_id else \
            {m["user_id"]: m["role"] for m in t.carol.get(f"{t.url}/members").json["items"]}
        if got == (200, 409):
            assert_problem(results["remove"], 409, "owner_not_member")
            assert owner == t.carol.user_id and t.carol.user_id not in members
            assert members[t.alice.user_id] == "admin"
        else:
            assert got == (409, 204), [r.text for r in results.values()]
            assert_problem(results["transfer"], 409, "new_owner_not_member")
            assert owner == t.alice.user_id and t.carol.user_id not in members


# --- archive ----------------------------------------------------------------------------

def test_archive_makes_every_write_refused_keeps_reads_and_unarchive_restores(world, db):
    t = Team(world)
    doc = make_node(t.carol, t.sid, "Doc", t.folder["id"])
    r = t.alice.put(f"/api/nodes/{doc['id']}/link-sharing",
                    json={"enabled": True, "role": "editor"})
    assert r.status_code == 200, r.text
    assert t.erin.get(f"/api/nodes/{doc['id']}").json["capabilities"]["can_edit"] is True
    with db.read() as s:
        nodes_before = len(list(s.scalars(select(Node.id).where(Node.space_id == t.sid))))
    r = t.bob.post(f"{t.url}/archive")  # an admin archives
    assert r.status_code == 200, r.text
    assert (r.json["archived"], r.json["read_only"]) == (True, True)
    assert r.json["archived_at"] is not None
    listed = {s["id"]: s for s in t.dave.get("/api/spaces").json["items"]}
    assert listed[t.sid]["archived"] is True and listed[t.sid]["read_only"] is True
    # idempotent: a second archive changes and audits nothing
    again = t.alice.post(f"{t.url}/archive")
    assert again.status_code == 200 and again.json["archived_at"] == r.json["archived_at"]
    assert actions(db, t.sid).count("space.archive") == 1

    # reads go on
    assert t.dave.get(t.url).status_code == 200
    assert t.carol.get(f"/api/nodes/{doc['id']}").status_code == 200
    roots = t.carol.get(f"{t.url}/nodes").json["items"]
    assert [n["name"] for n in roots] == ["Folder"]
    assert roots[0]["capabilities"]["can_edit"] is False
    assert t.dave.get(f"{t.url}/members").status_code == 200

    # every write is refused, the owner's too
    for who in (t.alice, t.bob, t.carol):
        assert_problem(who.post("/api/nodes", json={"space_id": t.sid, "name": "New"}), 403,
                       "space_read_only")
        assert_problem(who.post("/api/nodes", json={"space_id": t.sid, "name": "New",
                                                     "parent_id": t.folder["id"]}),
                       403, "space_read_only")
        assert_problem(who.patch(f"/api/nodes/{doc['id']}", json={"name": "Renamed"}), 403,
                       "space_read_only")
        assert_problem(who.post(f"/api/nodes/{doc['id']}/trash"), 403, "space_read_only")
        assert_problem(who.post("/api/resources", json={
            "space_id": t.sid, "name": "Sheet", "unit_type": "doc"},
            headers={"Idempotency-Key": uuid.uuid4().hex}), 403, "space_read_only")
    for who in (t.alice, t.bob):
        assert_problem(who.patch(t.url, json={"description": "x"}), 403, "space_read_only")
        assert_problem(who.put(f"{t.url}/members/{t.erin.user_id}", json={"role": "viewer"}),
                       403, "space_read_only")
        assert_problem(who.put(f"/api/nodes/{doc['id']}/link-sharing",
                               json={"enabled": False}), 403, "space_read_only")
    # the link made before gives no write either
    assert t.erin.get(f"/api/nodes/{doc['id']}").json["capabilities"]["can_edit"] is False
    assert_problem(t.erin.patch(f"/api/nodes/{doc['id']}", json={"name": "Mine"}), 403,
                   "space_read_only")
    assert_problem(t.erin.post("/api/nodes", json={"space_id": t.sid, "name": "Mine",
                                                    "parent_id": doc["id"]}),
                   403, "space_read_only")
    with db.read() as s:
        assert len(list(s.scalars(select(Node.id).where(Node.space_id == t.sid)))) \
            == nodes_before
    # viewers and strangers cannot unarchive
    assert_problem(t.carol.post(f"{t.url}/unarchive"), 403)
    assert_problem(t.dave.post(f"{t.url}/unarchive"), 403)
    assert_problem(t.erin.post(f"{t.url}/unarchive"), 404)  # a link gives no space role
    assert_problem(world.anonymous().post(f"{t.url}/unarchive"), 401)

    r = t.bob.post(f"{t.url}/unarchive")  # an admin, read as viewer while archived
    assert r.status_code == 200, r.text
    assert (r.json["archived"], r.json["read_only"], r.json["archived_at"]) == \
        (False, False, None)
    assert r.json["role"] == "admin"
    assert t.bob.post(f"{t.url}/unarchive").status_code == 200  # idempotent
    make_node(t.carol, t.sid, "Writable again", t.folder["id"])
    r = t.carol.patch(f"/api/nodes/{doc['id']}", json={"name": "Renamed"})
    assert r.status_code == 200, r.text
    assert [a for a in actions(db, t.sid) if a.startswith("space.")
            and a.endswith("archive")] == ["space.archive", "space.unarchive"]


def test_archive_permission_matrix(world, db):
    t = Team(world)
    for path in ("archive", "unarchive"):
        url = f"{t.url}/{path}"
        assert_problem(t.carol.post(url), 403)
        assert_problem(t.dave.post(url), 403)
        assert_problem(t.erin.post(url), 404)
        assert_problem(world.anonymous().post(url), 401)
        tok = make_token(t.alice, scopes=["read"])
        assert_problem(world.anonymous().post(url, headers=bearer(tok["token"])), 403,
                       "insufficient_scope")
        assert_problem(t.alice.post(f"/api/spaces/{t.alice.personal_space_id}/{path}"), 409,
                       "not_a_team_space")
        assert_problem(t.alice.post(f"/api/spaces/{uuid.uuid4().hex}/{path}"), 404)
    assert not any(a in ("space.archive", "space.unarchive") for a in actions(db, t.sid))
    # a public space's reader sees it but cannot archive it
    assert t.alice.patch(t.url, json={"public_read": True}).status_code == 200
    assert_problem(t.erin.post(f"{t.url}/archive"), 403)
    assert t.alice.post(f"{t.url}/archive").status_code == 200
    # the owner still hands an archived space over; it stays archived
    r = t.alice.post(f"{t.url}/transfer", json={"user_id": t.bob.user_id})
    assert r.status_code == 200, r.text
    assert r.json["archived"] is True and r.json["read_only"] is True
    assert t.bob.get(t.url).json["role"] == "owner"


def test_an_archived_space_takes_no_issue_or_worktree_writes(world, db):
    from tests.worktrees.test_worktrees import submit_create
    t = Team(world)
    issues = f"{t.url}/issues"
    r = t.carol.post(issues, json={"title": "Before"})
    assert r.status_code == 201, r.text
    assert t.alice.post(f"{t.url}/archive").status_code == 200
    for who in (t.alice, t.bob, t.carol):
        assert_problem(who.post(issues, json={"title": "After"}), 403, "space_read_only")
        assert_problem(submit_create(who, kind="team", name="New", team_space_id=t.sid), 403,
                       "space_read_only")
    assert t.dave.get(issues).status_code == 200
    assert t.alice.post(f"{t.url}/unarchive").status_code == 200
    r = t.carol.post(issues, json={"title": "After"})
    assert r.status_code == 201, r.text


def test_an_archived_space_stays_archived_when_its_owner_is_deleted(world, components, db):
    from tests.spaces.test_space_roles import delete_account
    t = Team(world)
    assert t.alice.post(f"{t.url}/archive").status_code == 200
    delete_account(components, t.alice)
    got = t.bob.get(t.url).json  # bob, the admin, inherited it; it is still archived
    assert got["owner_id"] == t.bob.user_id and got["role"] == "owner"
    assert (got["archived"], got["read_only"]) == (True, True)
    assert_problem(t.bob.post("/api/nodes", json={"space_id": t.sid, "name": "x"}), 403,
                   "space_read_only")
    assert t.bob.post(f"{t.url}/unarchive").status_code == 200
    make_node(t.bob, t.sid, "Writable again")


def test_an_orphaned_space_is_not_unarchived_by_its_members(world, components, db):
    from tests.spaces.test_space_roles import delete_account
    alice, carol = world.user("alice"), world.user("carol")
    sid = team_space(alice, "Orphan")["id"]
    add_member(alice, sid, carol.user_id, "editor")
    delete_account(components, alice)
    got = carol.get(f"/api/spaces/{sid}").json
    assert (got["read_only"], got["archived"]) == (True, False)
    for path in ("unarchive", "archive"):
        assert_problem(carol.post(f"/api/spaces/{sid}/{path}"), 403)
