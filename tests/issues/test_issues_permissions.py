"""Team-space issues: who may read and who may do each write (docs/issues.md, "Who may do
what"), table-driven over owner, admin, editor, viewer, public reader, outsider, anonymous.

Every refused write is a problem+json and changes no row."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.foundation import add_member, assert_problem, make_node, row_counts, team_space

ROLES = ("owner", "admin", "editor", "viewer", "public", "outsider", "anonymous")


@dataclass
class Target:
    """A fresh issue (by the owner) in one space, with what the writes act on."""

    space_id: str
    number: int
    comment_id: str
    label_id: str
    spare_label_id: str
    node_id: str


class Scene:
    def __init__(self, world):
        self.world = world
        self.alice = world.user("alice")  # owner of both spaces
        users = {name: world.user(name) for name in ("adam", "eve", "vic", "pub", "out")}
        self.public = team_space(self.alice, "Public team")
        self.private = team_space(self.alice, "Private team")
        r = self.alice.patch(f"/api/spaces/{self.public['id']}", json={"public_read": True})
        assert r.status_code == 200
        for space in (self.public, self.private):
            add_member(self.alice, space["id"], users["adam"].user_id, "admin")
            add_member(self.alice, space["id"], users["eve"].user_id, "editor")
            add_member(self.alice, space["id"], users["vic"].user_id, "viewer")
        self.vic_id = users["vic"].user_id
        self.nodes = {sp["id"]: make_node(self.alice, sp["id"], "Plans")["id"]
                      for sp in (self.public, self.private)}
        self.clients = {"owner": self.alice, "admin": users["adam"], "editor": users["eve"],
                        "viewer": users["vic"], "public": users["pub"],
                        "outsider": users["out"], "anonymous": world.anonymous()}
        self.counter = 0

    def space_for(self, role: str) -> str:
        # The outsider is outside a private space; everyone else acts in the public one
        # (where "public" reads without being a member).
        return self.private["id"] if role == "outsider" else self.public["id"]

    def target(self, role: str) -> Target:
        sid = self.space_for(role)
        self.counter += 1
        a = self.alice
        issue = a.post(f"/api/spaces/{sid}/issues", json={"title": f"Issue {self.counter}"})
        assert issue.status_code == 201, issue.text
        n = issue.json["number"]
        comment = a.post(f"/api/spaces/{sid}/issues/{n}/comments", json={"body": "hi"}).json
        label = a.post(f"/api/spaces/{sid}/issues/labels",
                       json={"name": f"l{self.counter}", "color": "blue"}).json
        spare = a.post(f"/api/spaces/{sid}/issues/labels",
                       json={"name": f"s{self.counter}", "color": "red"}).json
        base = f"/api/spaces/{sid}/issues/{n}"
        for path in (f"{base}/labels/{label['id']}", f"{base}/assignees/{self.vic_id}",
                     f"{base}/node-refs/{self.nodes[sid]}"):
            assert a.put(path).status_code == 200
        return Target(sid, n, comment["id"], label["id"], spare["id"], self.nodes[sid])

    def drop_labels(self, t: Target) -> None:
        path = f"/api/spaces/{t.space_id}/issues/labels"
        for label in self.alice.get(path).json["items"]:
            assert self.alice.delete(f"{path}/{label['id']}").status_code == 204


def _issue(t: Target) -> str:
    return f"/api/spaces/{t.space_id}/issues/{t.number}"


def _labels(t: Target) -> str:
    return f"/api/spaces/{t.space_id}/issues/labels"


# name -> (request, success status, who may): "member" = any member, "author" = the
# issue's author or triage, "triage", "admin" = owner or admin, "comment_author" (the owner
# wrote the comment), "comment_delete" (its author, owner or admin).
WRITES: dict[str, tuple[Any, int, str]] = {
    "create issue": (lambda c, t: c.post(f"/api/spaces/{t.space_id}/issues",
                                         json={"title": "New"}), 201, "member"),
    "comment": (lambda c, t: c.post(f"{_issue(t)}/comments", json={"body": "+1"}), 201,
                "member"),
    "edit title and body": (lambda c, t: c.patch(_issue(t), json={"title": "T", "body": "b"}),
                            200, "author"),
    "close": (lambda c, t: c.post(f"{_issue(t)}/close", json={"reason": "not_planned"}), 200,
              "author"),
    "reopen": (None, 200, "author"),  # closed by the owner first (see below)
    "edit comment": (lambda c, t: c.patch(f"{_issue(t)}/comments/{t.comment_id}",
                                          json={"body": "edited"}), 200, "comment_author"),
    "delete comment": (lambda c, t: c.delete(f"{_issue(t)}/comments/{t.comment_id}"), 204,
                       "comment_delete"),
    "add label": (lambda c, t: c.put(f"{_issue(t)}/labels/{t.spare_label_id}"), 200, "triage"),
    "remove label": (lambda c, t: c.delete(f"{_issue(t)}/labels/{t.label_id}"), 200,
                     "triage"),
    "assign": (lambda c, t: c.put(f"{_issue(t)}/assignees/{c.user_id}") if c.user_id
               else c.put(f"{_issue(t)}/assignees/{'0' * 32}"), 200, "triage"),
    "unassign": (None, 200, "triage"),  # vic, assigned by the owner
    "reference node": (lambda c, t: c.put(f"{_issue(t)}/node-refs/{t.node_id}"), 200,
                       "triage"),
    "unreference node": (lambda c, t: c.delete(f"{_issue(t)}/node-refs/{t.node_id}"), 200,
                         "triage"),
    "create label": (lambda c, t: c.post(_labels(t), json={"name": f"new{t.number}", "color": "green"}),
                     201, "admin"),
    "update label": (lambda c, t: c.patch(f"{_labels(t)}/{t.label_id}", json={"color": "pink"}),
                     200, "admin"),
    "delete label": (lambda c, t: c.delete(f"{_labels(t)}/{t.label_id}"), 204, "admin"),
}
ALLOWED = {
    "member": {"owner", "admin", "editor", "viewer"},
    "author": {"owner", "admin", "editor"},
    "triage": {"owner", "admin", "editor"},
    "admin": {"owner", "admin"},
    "comment_author": {"owner"},
    "comment_delete": {"owner", "admin"},
}


def _do(scene: Scene, name: str, client, t: Target):
    if name == "reopen":
        return client.post(f"{_issue(t)}/reopen")
    if name == "unassign":
        return client.delete(f"{_issue(t)}/assignees/{scene.vic_id}")
    request, _, _ = WRITES[name]
    return request(client, t)


def _expected_refusal(role: str, rule: str) -> tuple[int, str]:
    if role == "anonymous":
        return 401, "unauthenticated"
    if role == "outsider":
        return 404, "not_found"
    if role == "public":
        return 403, "not_a_member"
    return 403, "forbidden"


@pytest.fixture
def scene(world) -> Scene:
    return Scene(world)


def test_the_permission_matrix_of_every_write(scene, db):
    """Each role x each write: the success status where the seeds allow it, else 401
    (anonymous), 404 (outsider: the space is undiscoverable), 403 ``not_a_member`` (public
    reader), 403 ``forbidden`` (a member without the right) -- and nothing changed."""
    failures = []
    for name, (_, ok_status, rule) in WRITES.items():
        for role in ROLES:
            client = scene.clients[role]
            if not hasattr(client, "user_id"):
                client.user_id = None
            t = scene.target(role)
            if name == "reopen":
                assert scene.alice.post(f"{_issue(t)}/close", json={}).status_code == 200
            before = row_counts(db)
            r = _do(scene, name, client, t)
            if role in ALLOWED[rule]:
                if r.status_code != ok_status:
                    failures.append((name, role, r.status_code, r.text))
            else:
                status, code = _expected_refusal(role, rule)
                if r.status_code != status or r.json.get("code") != code:
                    failures.append((name, role, r.status_code, r.text))
                elif row_counts(db) != before:
                    failures.append((name, role, "changed rows"))
            scene.drop_labels(t)  # a space holds at most 100
    assert not failures, failures


def test_reads_need_a_login_and_a_discoverable_team_space(scene):
    reads = ["", "/{n}", "/{n}/timeline", "/labels"]
    for role in ROLES:
        t = scene.target(role)
        for suffix in reads:
            path = f"/api/spaces/{t.space_id}/issues" + suffix.format(n=t.number)
            r = scene.clients[role].get(path)
            if role == "anonymous":
                assert_problem(r, 401, "unauthenticated")
            elif role == "outsider":
                assert_problem(r, 404, "not_found")
            else:
                assert r.status_code == 200, (role, path, r.text)


def test_a_viewer_edits_closes_and_reopens_their_own_issue(scene):
    vic = scene.clients["viewer"]
    sid = scene.public["id"]
    r = vic.post(f"/api/spaces/{sid}/issues", json={"title": "Mine"})
    assert r.status_code == 201
    path = f"/api/spaces/{sid}/issues/{r.json['number']}"
    assert vic.patch(path, json={"title": "Still mine"}).json["title"] == "Still mine"
    closed = vic.post(f"{path}/close", json={"reason": "completed"}).json
    assert (closed["state"], closed["state_reason"]) == ("closed", "completed")
    assert closed["closed_by"]["id"] == vic.user_id
    assert vic.post(f"{path}/reopen").json["state"] == "open"
    # ... but triage stays with the triage roles, even on their own issue
    assert_problem(vic.put(f"{path}/assignees/{vic.user_id}"), 403, "forbidden")
    # the viewer deletes their own comment; an editor may not
    c = vic.post(f"{path}/comments", json={"body": "note"}).json
    assert_problem(scene.clients["editor"].delete(f"{path}/comments/{c['id']}"), 403)
    assert vic.delete(f"{path}/comments/{c['id']}").status_code == 204


def test_personal_spaces_have_no_issues(world):
    alice = world.user("alice")
    sid = alice.personal_space_id
    assert_problem(alice.get(f"/api/spaces/{sid}/issues"), 409, "not_a_team_space")
    assert_problem(alice.post(f"/api/spaces/{sid}/issues", json={"title": "x"}), 409,
                   "not_a_team_space")
    assert_problem(alice.get(f"/api/spaces/{sid}/issues/labels"), 409, "not_a_team_space")
    # someone else's personal space is not even discoverable
    bob = world.user("bob")
    assert_problem(bob.get(f"/api/spaces/{sid}/issues"), 404, "not_found")


def test_an_assignee_who_leaves_the_space_stays_assigned_but_cannot_be_assigned_again(scene):
    alice, sid = scene.alice, scene.public["id"]
    n = alice.post(f"/api/spaces/{sid}/issues", json={"title": "Leaving"}).json["number"]
    path = f"/api/spaces/{sid}/issues/{n}"
    vic = scene.clients["viewer"]
    assert alice.put(f"{path}/assignees/{vic.user_id}").status_code == 200
    assert vic.delete(f"/api/spaces/{sid}/members/{vic.user_id}").status_code == 204
    issue = alice.get(path).json
    assert [u["id"] for u in issue["assignees"]] == [vic.user_id]
    assert alice.delete(f"{path}/assignees/{vic.user_id}").status_code == 200
    assert_problem(alice.put(f"{path}/assignees/{vic.user_id}"), 409, "assignee_not_member")
    # the owner can be assigned (not a member row)
    assert alice.put(f"{path}/assignees/{alice.user_id}").status_code == 200
