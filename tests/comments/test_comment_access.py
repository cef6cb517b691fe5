"""Who may do what with a unit's comments (docs/comments.md, "Who may do what"), table
driven: owner, team admin/editor/viewer, grantee editor/viewer, link editor/viewer, a
signed-in public reader, anonymous readers of public and linked units, a removed member,
a user with no access (404) and an anonymous visitor of a private unit.

Whoever can open the unit lists, starts threads, replies and sets the solved state; only
a comment's author edits it; its author, the owner or a space admin deletes it; an
anonymous reader only lists. A refused write changes nothing."""
from __future__ import annotations

import pytest
from sqlalchemy import update

from storage.models import Space
from tests.comments.support import comments, new_unit, reply, solved, start
from tests.support.foundation import (
    add_member,
    assert_problem,
    make_node,
    row_counts,
    team_space,
)

OPENER = dict(list=200, create=201, reply=201, solve=200, edit_own=200, edit_other=403,
              delete_own=204, delete_other=403)
MODERATOR = {**OPENER, "delete_other": 204}
HIDDEN = {k: 404 for k in OPENER}
ANON_READER = {**{k: 401 for k in OPENER}, "list": 200}
ANON_HIDDEN = {**{k: 401 for k in OPENER}, "list": 404}

MATRIX = [
    ("owner", "team", MODERATOR), ("ann", "team", MODERATOR), ("edd", "team", OPENER),
    ("vic", "team", OPENER), ("rem", "team", HIDDEN), ("out", "team", HIDDEN),
    ("anon", "team", ANON_HIDDEN),
    ("owner", "granted", MODERATOR), ("gre", "granted", OPENER), ("grv", "granted", OPENER),
    ("out", "granted", HIDDEN),
    ("lnk", "link_editor", OPENER), ("lnk", "link_viewer", OPENER),
    ("anon", "link_viewer", ANON_READER), ("anon", "link_editor", ANON_READER),
    ("out", "public", OPENER), ("anon", "public", ANON_READER),
]


class Scene:
    """A unit per kind of access, all alice's."""

    def __init__(self, world):
        self.world = world
        self.alice = alice = world.user("alice")
        self.users = {n: world.user(n) for n in ("ann", "edd", "vic", "rem", "gre", "grv",
                                                 "lnk", "out")}
        self.team = team = team_space(alice, "Team")["id"]
        public = team_space(alice, "Public")["id"]
        assert alice.patch(f"/api/spaces/{public}", json={"public_read": True}).status_code == 200
        for name, role in (("ann", "admin"), ("edd", "editor"), ("vic", "viewer"),
                           ("rem", "editor")):
            add_member(alice, team, self.users[name].user_id, role)
        personal = alice.personal_space_id
        folders = {"team": (team, None), "public": (public, None)}
        for label in ("granted", "link_editor", "link_viewer"):
            folders[label] = (personal, make_node(alice, personal, label)["id"])
        self.units = {label: new_unit(alice, space, parent)["unit_id"]
                      for label, (space, parent) in folders.items()}
        granted = folders["granted"][1]
        for name, role in (("gre", "editor"), ("grv", "viewer")):
            r = alice.put(f"/api/nodes/{granted}/grants/{self.users[name].user_id}",
                          json={"role": role})
            assert r.status_code == 201, r.text
        for label, role in (("link_editor", "editor"), ("link_viewer", "viewer")):
            r = alice.put(f"/api/nodes/{folders[label][1]}/link-sharing",
                          json={"enabled": True, "role": role})
            assert r.status_code == 200, r.text
        # a member who could open the team's unit, then was removed
        assert alice.delete(f"/api/spaces/{team}/members/"
                            f"{self.users['rem'].user_id}").status_code == 204

    def client(self, who: str):
        if who == "owner":
            return self.alice
        if who == "anon":
            return self.world.anonymous()
        return self.users[who]


@pytest.fixture
def scene(world, worker):
    return Scene(world)


def _act(scene: Scene, who: str, where: str) -> dict[str, int]:
    unit = scene.units[where]
    c = scene.client(who)
    # what someone else wrote: a thread by alice with a reply by alice (when alice is the
    # one acting: by a viewer of the unit, vic or grv)
    other = scene.alice if who != "owner" else scene.users[
        "vic" if where == "team" else "grv"]
    theirs = start(scene.alice, unit)
    their_reply = reply(other, unit, theirs["thread_id"], "theirs")
    got = {"list": c.get(comments(unit)).status_code}
    r = c.post(comments(unit), json={"anchor": {"at": who}, "body": "mine"})
    got["create"] = r.status_code
    mine = r.json if r.status_code == 201 else their_reply
    r = c.post(comments(unit), json={"thread_id": theirs["thread_id"], "body": "re"})
    got["reply"] = r.status_code
    own_reply = r.json if r.status_code == 201 else their_reply
    generation = next(t["generation"] for t in scene.alice.get(comments(unit)).json["items"]
                      if t["thread_id"] == theirs["thread_id"])
    got["solve"] = c.put(solved(theirs["thread_id"]),
                         json={"solved": True, "generation": generation}).status_code
    got["edit_own"] = c.patch(f"/api/comments/{mine['id']}",
                              json={"body": "edited", "generation": 1}).status_code
    got["edit_other"] = c.patch(f"/api/comments/{their_reply['id']}",
                                json={"body": "edited", "generation": 1}).status_code
    got["delete_own"] = c.delete(f"/api/comments/{own_reply['id']}").status_code
    got["delete_other"] = c.delete(f"/api/comments/{their_reply['id']}").status_code
    return got


def test_role_matrix(scene):
    failures = []
    for who, where, expected in MATRIX:
        got = _act(scene, who, where)
        if got != expected:
            failures.append((who, where, {k: (got[k], v) for k, v in expected.items()
                                          if got[k] != v}))
    assert not failures, failures


def test_refused_writes_change_nothing(scene, db):
    unit = scene.units["team"]
    theirs = start(scene.alice, unit)
    before = row_counts(db)
    for who in ("out", "rem", "anon"):
        c = scene.client(who)
        c.post(comments(unit), json={"anchor": {"a": 1}, "body": "x"})
        c.post(comments(unit), json={"thread_id": theirs["thread_id"], "body": "x"})
        c.put(solved(theirs["thread_id"]), json={"solved": True, "generation": 1})
        c.patch(f"/api/comments/{theirs['id']}", json={"body": "x", "generation": 1})
        c.delete(f"/api/comments/{theirs['id']}")
    vic = scene.client("vic")  # can open, but may not edit or delete alice's
    vic.patch(f"/api/comments/{theirs['id']}", json={"body": "x", "generation": 1})
    vic.delete(f"/api/comments/{theirs['id']}")
    assert row_counts(db) == before


def test_a_read_only_team_space_is_listed_and_takes_no_comments(scene, db):
    """Its owner's account was deleted and no admin took it over (docs/accounts.md)."""
    unit = scene.units["team"]
    theirs = start(scene.alice, unit)
    with db.write() as s:
        s.execute(update(Space).where(Space.id == scene.team).values(read_only=True))
    edd = scene.client("edd")
    assert edd.get(comments(unit)).status_code == 200
    before = row_counts(db)
    for r in (edd.post(comments(unit), json={"anchor": {}, "body": "x"}),
              edd.post(comments(unit), json={"thread_id": theirs["thread_id"], "body": "x"}),
              edd.put(solved(theirs["thread_id"]), json={"solved": True, "generation": 1}),
              scene.alice.patch(f"/api/comments/{theirs['id']}",
                                json={"body": "x", "generation": 1}),
              scene.alice.delete(f"/api/comments/{theirs['id']}")):
        assert_problem(r, 403, "space_read_only")
    assert row_counts(db) == before
