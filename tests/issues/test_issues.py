"""Team-space issues: numbering, the round trip, listing and search, the timeline, labels,
assignees, node references and their history, limits and hostile input (docs/issues.md).
Permissions: tests/issues/test_issues_permissions.py."""
from __future__ import annotations

import copy
import threading
import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from storage.models import Issue, IssueCounter, IssueEvent
from tests.support.client import ApiClient
from tests.support.foundation import (
    add_member,
    assert_problem,
    audit_rows,
    bearer,
    make_node,
    make_token,
    row_counts,
    team_space,
)
from wharf.infra.context import Principal, RequestContext
from wharf.issues import labels, writes


def issues_path(space_id: str) -> str:
    return f"/api/spaces/{space_id}/issues"


def open_issue(client, space_id: str, title: str = "A bug", body: str = "") -> dict:
    r = client.post(issues_path(space_id), json={"title": title, "body": body})
    assert r.status_code == 201, r.text
    return r.json


def make_label(client, space_id: str, name: str, color: str = "blue") -> dict:
    r = client.post(f"{issues_path(space_id)}/labels", json={"name": name, "color": color})
    assert r.status_code == 201, r.text
    return r.json


def timeline(client, space_id: str, number: int, limit: int = 200) -> list[dict]:
    items, cursor = [], None
    while True:
        params = {"limit": str(limit), **({"cursor": cursor} if cursor else {})}
        r = client.get(f"{issues_path(space_id)}/{number}/timeline", params=params)
        assert r.status_code == 200, r.text
        items += r.json["items"]
        cursor = r.json["next_cursor"]
        if cursor is None:
            return items


def key() -> str:
    return uuid.uuid4().hex


# --- numbering --------------------------------------------------------------------------

@pytest.mark.both_databases  # concurrency: the database decides
def test_twenty_concurrent_creations_get_numbers_one_to_twenty(world, app, db):
    """20 threads create issues in one space at once (on PostgreSQL 20 connections really
    race; SQLite serialises the writers): #1..#20, each exactly once."""
    alice = world.user("alice")
    space = team_space(alice)
    other = team_space(alice, "Other")
    open_issue(alice, other["id"])  # another space's numbering is its own
    token = make_token(alice)["token"]
    barrier = threading.Barrier(20)
    results: list[object] = []
    lock = threading.Lock()

    def create(i: int) -> None:
        client = ApiClient(app, headers=bearer(token))
        barrier.wait(timeout=30)
        r = client.post(issues_path(space["id"]), json={"title": f"Issue {i}"})
        with lock:
            results.append(r.json["number"] if r.status_code == 201 else (r.status_code,
                                                                             r.text))

    threads = [threading.Thread(target=create, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(results) == list(range(1, 21)), results  # type: ignore[type-var]
    with db.read() as s:
        numbers = sorted(s.scalars(select(Issue.number).where(Issue.space_id == space["id"])))
        assert numbers == list(range(1, 21))
        assert s.get(IssueCounter, space["id"]).last_number == 20
    assert open_issue(alice, space["id"])["number"] == 21
    assert open_issue(alice, other["id"])["number"] == 2


def test_a_failed_creation_gives_its_number_back(world, db):
    """The counter moves in the creating transaction: a creation that fails after taking
    a number rolls it back, so the next issue gets that number (no gap)."""
    alice = world.user("alice")
    space = team_space(alice)
    assert open_issue(alice, space["id"])["number"] == 1
    ctx = RequestContext(principal=Principal(kind="user", user_id=alice.user_id,
                                             username="alice"))
    with pytest.raises(RuntimeError), db.write() as s:
        taken = writes.create_issue(s, ctx, space["id"], "Doomed", "")
        assert taken.issue.number == 2
        raise RuntimeError("the request fails after the insert")
    assert open_issue(alice, space["id"])["number"] == 2
    # a refused creation (invalid title) takes no number either
    assert_problem(alice.post(issues_path(space["id"]), json={"title": "   "}), 400,
                   "validation_failed")
    assert open_issue(alice, space["id"])["number"] == 3


# --- the round trip ---------------------------------------------------------------------

def test_open_read_edit_close_reopen_with_events_and_audit(world, db):
    alice = world.user("alice")
    space = team_space(alice)
    r = alice.post(issues_path(space["id"]), json={"title": "  Totals off  ",
                                                   "body": "**steps**\n1. open"})
    assert r.status_code == 201
    issue = r.json
    assert r.headers["location"] == f"{issues_path(space['id'])}/1"
    assert (issue["number"], issue["title"], issue["body"], issue["state"],
            issue["state_reason"]) == (1, "Totals off", "**steps**\n1. open", "open", None)
    assert issue["author"] == {"id": alice.user_id, "username": "alice"}
    assert (issue["labels"], issue["assignees"], issue["node_refs"], issue["comments"]) == \
        ([], [], [], 0)
    path = f"{issues_path(space['id'])}/1"
    assert alice.get(path).json == issue

    edited = alice.patch(path, json={"title": "Totals off by one", "body": "new"}).json
    assert (edited["title"], edited["body"]) == ("Totals off by one", "new")
    assert edited["updated_at"] >= issue["updated_at"]
    # the same title again is no change and no event
    alice.patch(path, json={"title": "Totals off by one"})

    closed = alice.post(f"{path}/close", json={"reason": "not_planned"}).json
    assert (closed["state"], closed["state_reason"]) == ("closed", "not_planned")
    assert closed["closed_by"]["id"] == alice.user_id and closed["closed_at"]
    assert_problem(alice.post(f"{path}/close", json={}), 409, "issue_state")
    reopened = alice.post(f"{path}/reopen").json
    assert (reopened["state"], reopened["state_reason"], reopened["closed_by"],
            reopened["closed_at"]) == ("open", None, None, None)
    assert_problem(alice.post(f"{path}/reopen"), 409, "issue_state")

    kinds = [(e["kind"], e["payload"]) for e in timeline(alice, space["id"], 1)]
    assert kinds == [("renamed", {"from": "Totals off", "to": "Totals off by one"}),
                     ("closed", {"reason": "not_planned"}), ("reopened", {})]
    actions = [a.action for a in audit_rows(db, space_id=space["id"])
               if a.action.startswith("issue.")]
    assert actions == ["issue.create", "issue.update", "issue.close", "issue.reopen"]


def test_the_state_reason_check_holds_in_the_database(world, db):
    """A closed issue without a reason (or an open one with one) is refused by the table's
    CHECK, whatever code writes it."""
    from sqlalchemy.exc import IntegrityError
    alice = world.user("alice")
    space = team_space(alice)
    open_issue(alice, space["id"])
    for state, reason in (("closed", None), ("open", "completed"), ("closed", "wontfix")):
        with pytest.raises(IntegrityError), db.write() as s:
            issue = s.scalar(select(Issue))
            issue.state, issue.state_reason = state, reason
            s.flush()


def test_comments_edit_and_delete(world):
    alice, bob = world.user("alice"), world.user("bob")
    space = team_space(alice)
    add_member(alice, space["id"], bob.user_id, "editor")
    n = open_issue(alice, space["id"])["number"]
    path = f"{issues_path(space['id'])}/{n}"
    r = bob.post(f"{path}/comments", json={"body": "Seen it too"})
    assert r.status_code == 201
    comment = r.json
    assert comment["author"]["username"] == "bob" and comment["body"] == "Seen it too"
    assert alice.get(path).json["comments"] == 1
    assert_problem(alice.patch(f"{path}/comments/{comment['id']}", json={"body": "x"}), 403)
    edited = bob.patch(f"{path}/comments/{comment['id']}", json={"body": "Seen it twice"})
    assert edited.status_code == 200 and edited.json["body"] == "Seen it twice"
    assert_problem(bob.post(f"{path}/comments", json={"body": ""}), 400, "validation_failed")
    # a comment of another issue is not found through this one
    n2 = open_issue(alice, space["id"])["number"]
    other = f"{issues_path(space['id'])}/{n2}"
    assert_problem(alice.delete(f"{other}/comments/{comment['id']}"), 404)
    assert alice.delete(f"{path}/comments/{comment['id']}").status_code == 204  # the owner
    assert_problem(bob.delete(f"{path}/comments/{comment['id']}"), 404)
    assert timeline(alice, space["id"], n) == []


# --- listing ----------------------------------------------------------------------------

def test_listing_filters_search_and_pages(world):
    alice, bob = world.user("alice"), world.user("bob")
    space = team_space(alice)
    sid = space["id"]
    add_member(alice, sid, bob.user_id, "editor")
    bug = make_label(alice, sid, "Bug", "red")
    titles = ["Crash on open", "100% CPU", "snake_case names", "CRASH again", "Slow save"]
    numbers = {t: open_issue(alice if i % 2 == 0 else bob, sid, t)["number"]
               for i, t in enumerate(titles)}
    base = issues_path(sid)
    alice.put(f"{base}/{numbers['Crash on open']}/labels/{bug['id']}")
    alice.put(f"{base}/{numbers['CRASH again']}/assignees/{bob.user_id}")
    alice.post(f"{base}/{numbers['Slow save']}/close", json={"reason": "completed"})

    def listed(**params) -> list[str]:
        r = alice.get(base, params={k: str(v) for k, v in params.items()})
        assert r.status_code == 200, r.text
        return [i["title"] for i in r.json["items"]]

    assert listed() == ["CRASH again", "snake_case names", "100% CPU", "Crash on open"]
    assert listed(state="closed") == ["Slow save"]
    assert len(listed(state="all")) == 5
    assert listed(q="crash") == ["CRASH again", "Crash on open"]  # case-insensitive
    assert listed(q="%") == ["100% CPU"]  # LIKE wildcards are plain characters
    assert listed(q="_") == ["snake_case names"]
    assert listed(q="e_c") == ["snake_case names"]
    assert listed(label="bug") == ["Crash on open"]  # a label name, any case
    assert listed(label="nope") == []
    assert listed(assignee=bob.user_id) == ["CRASH again"]
    assert listed(author=bob.user_id, state="all") == ["CRASH again", "100% CPU"]
    summary = alice.get(base, params={"label": "Bug"}).json["items"][0]
    assert summary["labels"][0]["name"] == "Bug" and "body" not in summary

    seen, cursor = [], None
    while True:
        params = {"limit": "2", "state": "all", **({"cursor": cursor} if cursor else {})}
        page = alice.get(base, params=params).json
        assert len(page["items"]) <= 2
        seen += [i["number"] for i in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [5, 4, 3, 2, 1]


# --- the timeline -----------------------------------------------------------------------

def test_timeline_puts_comments_first_at_the_same_instant_and_pages(world, monkeypatch):
    alice = world.user("alice")
    space = team_space(alice)
    sid = space["id"]
    n = open_issue(alice, sid)["number"]
    path = f"{issues_path(sid)}/{n}"
    label = make_label(alice, sid, "ui")
    alice.post(f"{path}/comments", json={"body": "first"})
    alice.put(f"{path}/labels/{label['id']}")
    # closing with a comment writes both at one instant: the comment comes first
    alice.post(f"{path}/close", json={"reason": "completed", "comment": "done"})
    # at one frozen instant, several of each: comments (by id) before events (by id)
    frozen = datetime(2030, 1, 1, tzinfo=UTC)
    monkeypatch.setattr("wharf.issues.writes.utcnow", lambda: frozen)
    monkeypatch.setattr("wharf.issues.labels.utcnow", lambda: frozen)
    alice.post(f"{path}/reopen")
    for body in ("a", "b", "c"):
        alice.post(f"{path}/comments", json={"body": body})
    alice.patch(path, json={"title": "Renamed"})
    alice.delete(f"{path}/labels/{label['id']}")
    monkeypatch.undo()

    whole = timeline(alice, sid, n)
    shape = [(i["type"], i.get("body") or i.get("kind")) for i in whole]
    assert shape[:4] == [("comment", "first"), ("event", "labeled"), ("comment", "done"),
                         ("event", "closed")]
    tail = whole[4:]
    assert [i["type"] for i in tail] == ["comment"] * 3 + ["event"] * 3
    assert {i["created_at"] for i in tail} == {"2030-01-01T00:00:00Z"}
    assert [i["id"] for i in tail[:3]] == sorted(i["id"] for i in tail[:3])
    assert [i["id"] for i in tail[3:]] == sorted(i["id"] for i in tail[3:])
    # every page size walks the same order, each item once (the cursor crosses the tie)
    for size in (1, 2, 3, 4):
        assert [i["id"] for i in timeline(alice, sid, n, limit=size)] == \
            [i["id"] for i in whole]


# --- history ----------------------------------------------------------------------------

def wait_operation(client, op_id: str) -> dict:
    r = client.get(f"/api/operations/{op_id}", params={"wait": "30"})
    assert r.status_code == 200, r.text
    return r.json


def test_history_stays_readable_after_label_deleted_node_renamed_and_purged(world, worker,
                                                                           db):
    alice, bob = world.user("alice"), world.user("bob")
    space = team_space(alice)
    sid = space["id"]
    add_member(alice, sid, bob.user_id, "editor")
    n = open_issue(alice, sid)["number"]
    path = f"{issues_path(sid)}/{n}"
    label = make_label(alice, sid, "regression", "orange")
    folder = make_node(alice, sid, "Q3")
    sheet = make_node(alice, sid, "Budget", folder["id"])
    alice.put(f"{path}/labels/{label['id']}")
    bob.put(f"{path}/assignees/{bob.user_id}")
    alice.put(f"{path}/node-refs/{sheet['id']}")
    alice.put(f"{path}/node-refs/{folder['id']}")

    # the label is deleted: the issue loses it, the event keeps its name and colour
    assert alice.delete(f"{issues_path(sid)}/labels/{label['id']}").status_code == 204
    assert alice.get(path).json["labels"] == []
    # the node is renamed: the reference shows the new name, the event the old one
    alice.patch(f"/api/nodes/{sheet['id']}", json={"name": "Budget v2"})
    refs = {r["node_id"]: r for r in alice.get(path).json["node_refs"]}
    assert refs[sheet["id"]] == {"node_id": sheet["id"], "available": True,
                                 "name": "Budget v2"}
    # trashed: not available, no name; then purged: the reference goes, with an event
    assert alice.post(f"/api/nodes/{folder['id']}/trash").status_code == 200
    refs = alice.get(path).json["node_refs"]
    assert [(r["available"], r["name"]) for r in refs] == [(False, None), (False, None)]
    r = alice.delete(f"/api/nodes/{folder['id']}", headers={"Idempotency-Key": key()})
    assert r.status_code == 202
    assert wait_operation(alice, r.json["id"])["status"] == "completed"
    assert alice.get(path).json["node_refs"] == []

    events = [(e["kind"], e["payload"], e["actor"]) for e in timeline(alice, sid, n)]
    label_snap = {"id": label["id"], "name": "regression", "color": "orange"}
    assert events[:4] == [
        ("labeled", {"label": label_snap}, {"id": alice.user_id, "username": "alice"}),
        ("assigned", {"user": {"id": bob.user_id, "username": "bob"}},
         {"id": bob.user_id, "username": "bob"}),
        ("node_referenced", {"node": {"id": sheet["id"], "name": "Budget"}},
         {"id": alice.user_id, "username": "alice"}),
        ("node_referenced", {"node": {"id": folder["id"], "name": "Q3"}},
         {"id": alice.user_id, "username": "alice"}),
    ]
    purged = sorted((e[1]["node"]["id"], e[1]["node"]["name"], e[1].get("purged"), e[2])
                     for e in events[4:])
    # named as when referenced (the rename after it does not show), like remove_node_ref
    assert purged == sorted([(sheet["id"], "Budget", True, None),
                             (folder["id"], "Q3", True, None)])
    assert all(e[0] == "node_unreferenced" for e in events[4:])
    with db.read() as s:
        assert len(list(s.scalars(select(IssueEvent)))) == 6


def test_node_references_same_space_not_trashed(world, db):
    alice = world.user("alice")
    space, other = team_space(alice), team_space(alice, "Other")
    sid = space["id"]
    n = open_issue(alice, sid)["number"]
    path = f"{issues_path(sid)}/{n}"
    elsewhere = make_node(alice, other["id"], "Elsewhere")
    assert_problem(alice.put(f"{path}/node-refs/{elsewhere['id']}"), 409,
                   "node_in_other_space")
    trashed = make_node(alice, sid, "Old")
    alice.post(f"/api/nodes/{trashed['id']}/trash")
    assert_problem(alice.put(f"{path}/node-refs/{trashed['id']}"), 409, "node_trashed")
    assert_problem(alice.put(f"{path}/node-refs/{'f' * 32}"), 404)
    # a node in a space the caller cannot see is simply not found
    bob = world.user("bob")
    hidden = make_node(bob, bob.personal_space_id, "Private")
    assert_problem(alice.put(f"{path}/node-refs/{hidden['id']}"), 404)
    # restore makes a reference available again; PUT twice is one reference
    node = make_node(alice, sid, "Doc")
    assert alice.put(f"{path}/node-refs/{node['id']}").status_code == 200
    assert len(alice.put(f"{path}/node-refs/{node['id']}").json["node_refs"]) == 1
    batch = alice.post(f"/api/nodes/{node['id']}/trash").json
    assert alice.get(path).json["node_refs"][0]["available"] is False
    # PUT of a reference already there changes nothing, even to a node trashed since
    before = row_counts(db)
    r = alice.put(f"{path}/node-refs/{node['id']}")
    assert r.status_code == 200, r.text
    assert r.json["node_refs"] == [{"node_id": node["id"], "available": False, "name": None}]
    assert row_counts(db) == before
    alice.post(f"/api/trash-batches/{batch['id']}/restore")
    assert alice.get(path).json["node_refs"][0] == {"node_id": node["id"], "available": True,
                                                    "name": "Doc"}
    assert alice.delete(f"{path}/node-refs/{node['id']}").json["node_refs"] == []
    assert_problem(alice.delete(f"{path}/node-refs/{node['id']}"), 404)


# --- labels and limits ------------------------------------------------------------------

def test_label_names_are_unique_per_space_ignoring_case(world):
    alice = world.user("alice")
    space, other = team_space(alice), team_space(alice, "Other")
    bug = make_label(alice, space["id"], "Bug", "red")
    assert_problem(alice.post(f"{issues_path(space['id'])}/labels",
                              json={"name": "bUG", "color": "red"}), 409, "label_name_taken")
    make_label(alice, other["id"], "bug")  # another space: fine
    feature = make_label(alice, space["id"], "Feature")
    assert_problem(alice.patch(f"{issues_path(space['id'])}/labels/{feature['id']}",
                               json={"name": "BUG"}), 409, "label_name_taken")
    renamed = alice.patch(f"{issues_path(space['id'])}/labels/{bug['id']}",
                          json={"name": "bug", "color": "purple"}).json
    assert (renamed["name"], renamed["color"]) == ("bug", "purple")
    assert_problem(alice.post(f"{issues_path(space['id'])}/labels",
                              json={"name": "x", "color": "teal"}), 400, "validation_failed")
    # a label of another space cannot be put on this space's issue
    other_label = alice.get(f"{issues_path(other['id'])}/labels").json["items"][0]
    n = open_issue(alice, space["id"])["number"]
    assert_problem(alice.put(f"{issues_path(space['id'])}/{n}/labels/{other_label['id']}"),
                   404)


def test_every_limit_is_refused_with_its_code(world, db):
    alice = world.user("alice")
    space = team_space(alice)
    sid = space["id"]
    n = open_issue(alice, sid)["number"]
    path = f"{issues_path(sid)}/{n}"
    labels = [make_label(alice, sid, f"label {i}") for i in range(100)]
    assert_problem(alice.post(f"{issues_path(sid)}/labels", json={"name": "one more"}), 409,
                   "label_limit")
    for label in labels[:20]:
        assert alice.put(f"{path}/labels/{label['id']}").status_code == 200
    before = row_counts(db)
    assert_problem(alice.put(f"{path}/labels/{labels[20]['id']}"), 409, "issue_label_limit")
    assert row_counts(db) == before
    assert alice.put(f"{path}/labels/{labels[0]['id']}").status_code == 200  # already there

    members = [world.user(f"member{i}") for i in range(10)]
    for m in members:
        add_member(alice, sid, m.user_id, "viewer")
    for m in members:
        assert alice.put(f"{path}/assignees/{m.user_id}").status_code == 200
    assert_problem(alice.put(f"{path}/assignees/{alice.user_id}"), 409, "assignee_limit")
    outsider = world.user("stranger")
    n2 = open_issue(alice, sid)["number"]
    assert_problem(alice.put(f"{issues_path(sid)}/{n2}/assignees/{outsider.user_id}"), 409,
                   "assignee_not_member")

    nodes = [make_node(alice, sid, f"node {i}") for i in range(21)]
    for node in nodes[:20]:
        assert alice.put(f"{path}/node-refs/{node['id']}").status_code == 200
    assert_problem(alice.put(f"{path}/node-refs/{nodes[20]['id']}"), 409, "node_ref_limit")
    issue = alice.get(path).json
    assert (len(issue["labels"]), len(issue["assignees"]), len(issue["node_refs"])) == \
        (20, 10, 20)


# --- hostile input ----------------------------------------------------------------------

def test_hostile_input_is_a_4xx_problem_and_changes_nothing(world, db):
    alice = world.user("alice")
    space = team_space(alice)
    sid = space["id"]
    n = open_issue(alice, sid)["number"]
    path = f"{issues_path(sid)}/{n}"
    before = row_counts(db)
    cases = [
        (alice.post(issues_path(sid), json={"title": "x" * 257}), 400, "validation_failed"),
        (alice.post(issues_path(sid), json={"title": ""}), 400, "validation_failed"),
        (alice.post(issues_path(sid), json={"title": "a\x00b"}), 400, None),
        (alice.post(issues_path(sid), json={"title": "ok", "body": "x" * 65_537}), 400,
         "validation_failed"),
        (alice.post(issues_path(sid), json={"title": "ok", "body": "nul \x00"}), 400,
         "validation_failed"),
        (alice.post(issues_path(sid), json={"title": "ok", "extra": 1}), 400,
         "validation_failed"),
        (alice.post(issues_path(sid), json={"title": "ok", "body": "x" * 2_000_000}), 413,
         "payload_too_large"),
        (alice.post(issues_path(sid), json=["not", "an", "object"]), 400, None),
        (alice.post(issues_path(sid), body="{", headers={"Content-Type": "application/json"}),
         400, None),
        (alice.patch(path, json={}), 400, "validation_failed"),
        (alice.post(f"{path}/close", json={"reason": "wontfix"}), 400, "validation_failed"),
        (alice.post(f"{path}/comments", json={"body": "y" * 65_537}), 400,
         "validation_failed"),
        (alice.post(f"{issues_path(sid)}/labels", json={"name": "z" * 51}), 400,
         "validation_failed"),
        (alice.get(issues_path(sid), params={"q": "q" * 257}), 400, "validation_failed"),
        (alice.get(issues_path(sid), params={"state": "maybe"}), 400, "validation_failed"),
        (alice.get(issues_path(sid), params={"limit": "0"}), 400, "validation_failed"),
        (alice.get(issues_path(sid), params={"limit": "1e3"}), 400, "validation_failed"),
    ]
    for cursor in ("garbage", "eyJ4Ijoi", "W10", "WyJpc3N1ZXMiLCJhYmMiXQ",  # ["issues","abc"]
                   "WyJpc3N1ZS10aW1lbGluZSIsIjIwMzAtMDEtMDFUMDA6MDA6MDBaIiwiNyIsImEiXQ",
                   "x" * 2000):
        cases.append((alice.get(issues_path(sid), params={"cursor": cursor}), 400,
                      "invalid_cursor"))
        cases.append((alice.get(f"{path}/timeline", params={"cursor": cursor}), 400,
                      "invalid_cursor"))
    for bad in ("0", "-1", "1.0", "abc", "99999999999", "%C2%B2", "1e3", "٣"):
        cases.append((alice.get(f"{issues_path(sid)}/{bad}"), 404, "not_found"))
        cases.append((alice.post(f"{issues_path(sid)}/{bad}/comments", json={"body": "x"}),
                      404, "not_found"))
    for bad in ("nope", "F" * 32, "0" * 32, "x" * 64):
        cases += [
            (alice.get(f"/api/spaces/{bad}/issues"), 404, "not_found"),
            (alice.put(f"{path}/labels/{bad}"), 404, "not_found"),
            (alice.put(f"{path}/assignees/{bad}"), 404, "not_found"),
            (alice.put(f"{path}/node-refs/{bad}"), 404, "not_found"),
            (alice.delete(f"{path}/comments/{bad}"), 404, "not_found"),
            (alice.patch(f"{issues_path(sid)}/labels/{bad}", json={"color": "red"}), 404,
             "not_found"),
        ]
    for r, status, code in cases:
        assert_problem(r, status, code)
    assert row_counts(db) == before


def test_schemathesis_issues(world, app, backend):
    """The fuzzer against every issue route, with a real issue, label, comment and node."""
    import schemathesis
    from schemathesis import GenerationMode

    from api.contract import document
    from tests.hostile.test_schemathesis import (
        EXAMPLES,
        NEGATIVE_EXAMPLES,
        RANDOM_ID_EXAMPLES,
        _run,
    )

    alice, bob = world.user("alice"), world.user("bob")
    token = make_token(alice)["token"]
    space = team_space(alice, "Fuzz")
    sid = space["id"]
    add_member(alice, sid, bob.user_id, "editor")
    n = open_issue(alice, sid)["number"]
    label = make_label(alice, sid, "fuzz")
    comment = alice.post(f"{issues_path(sid)}/{n}/comments", json={"body": "c"}).json
    node = make_node(alice, sid, "Doc")
    known_ids = {"space_id": sid, "number": str(n), "label_id": label["id"],
                 "comment_id": comment["id"], "user_id": bob.user_id, "node_id": node["id"]}
    headers = bearer(token)
    schema = schemathesis.openapi.from_dict(copy.deepcopy(document(app)))
    ran = set()
    for result in schema.get_all_operations():
        operation = result.ok()
        if not operation.path.startswith("/api/spaces/{space_id}/issues"):
            continue
        ran.add((operation.method.upper(), operation.path))
        names = [p.name for p in operation.path_parameters]
        known = {name: known_ids[name] for name in names}
        _run(operation, app, headers, GenerationMode.POSITIVE, EXAMPLES, known)
        _run(operation, app, headers, GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES, known)
        _run(operation, app, headers, GenerationMode.POSITIVE, RANDOM_ID_EXAMPLES)
    assert len(ran) == 21, sorted(ran)


# --- review findings (issue 17) ---------------------------------------------------------

@pytest.mark.both_databases  # FOR SHARE and foreign keys: the database decides
@pytest.mark.parametrize("locked", [True, False], ids=["locked", "safety-net"])
def test_a_label_deleted_while_being_added_is_404_or_added_never_500(world, app, db,
                                                                     monkeypatch, locked):
    """The label is deleted by another session between ``add_label`` reading it and
    inserting the link. With the label row locked (FOR SHARE) the delete waits for the
    PUT; without it (``safety-net``) PostgreSQL's foreign key refuses the link and the PUT
    is 404 "No such label" (SQLite serialises the writers either way). Never a 500."""
    alice = world.user("alice")
    sid = team_space(alice)["id"]
    n = open_issue(alice, sid)["number"]
    label = make_label(alice, sid, "racy")
    deleter = ApiClient(app, headers=bearer(make_token(alice)["token"]))
    original, main = labels._label, threading.get_ident()
    threads: list[threading.Thread] = []
    deleted: list[int] = []
    waited: list[bool] = []

    def racing_label(s, acc, label_id, **kw):
        found = original(s, acc, label_id, **(kw if locked else {}))
        if threading.get_ident() == main and not threads:
            t = threading.Thread(target=lambda: deleted.append(
                deleter.delete(f"{issues_path(sid)}/labels/{label_id}").status_code))
            threads.append(t)
            t.start()
            t.join(timeout=1.0)
            waited.append(t.is_alive())
        return found

    monkeypatch.setattr(labels, "_label", racing_label)
    r = alice.put(f"{issues_path(sid)}/{n}/labels/{label['id']}")
    threads[0].join(timeout=30)
    monkeypatch.undo()
    assert deleted == [204]
    assert r.status_code in (200, 404), r.text
    if r.status_code == 404:
        assert_problem(r, 404, "not_found")
        assert r.json["detail"] == "No such label."
    if locked or db.is_sqlite:
        assert waited == [True] and r.status_code == 200  # the delete waited for the PUT
    else:
        assert waited == [False] and r.status_code == 404
    # either way the label is gone, from the issue too
    assert alice.get(f"{issues_path(sid)}/{n}").json["labels"] == []
    assert alice.get(f"{issues_path(sid)}/labels").json["items"] == []


def _captured(db, run) -> list[tuple[str, object]]:
    from sqlalchemy import event

    seen: list[tuple[str, object]] = []

    def record(conn, cursor, statement, parameters, *args):
        seen.append((statement, parameters))

    engines = {id(e): e for e in (db.read_engine, db.write_engine)}.values()
    for engine in engines:
        event.listen(engine, "before_cursor_execute", record)
    try:
        run()
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", record)
    return seen


def _scanned(plan: dict, tables: set[str]) -> tuple[int, list[str]]:
    """Rows the scans of ``tables`` returned in an EXPLAIN ANALYZE plan, and node types."""
    rows = plan.get("Actual Rows", 0) * plan.get("Actual Loops", 1) \
        if plan.get("Relation Name") in tables else 0
    kinds = [plan["Node Type"]]
    for child in plan.get("Plans", []):
        r, k = _scanned(child, tables)
        rows, kinds = rows + r, kinds + k
    return rows, kinds


def test_a_timeline_page_reads_the_index_not_the_whole_history(world, db):
    """However long an issue's history, a page reads at most ``limit + 1`` keys of each
    table from its ``(issue_id, created_at, id)`` index (EXPLAIN ANALYZE on PostgreSQL,
    with sequential scans disabled; the query plan on SQLite: no sort of the history)."""
    from datetime import timedelta

    from sqlalchemy import insert

    from storage.models import IssueComment

    alice = world.user("alice")
    sid = team_space(alice)["id"]
    n = open_issue(alice, sid)["number"]
    base = datetime(2030, 1, 1, tzinfo=UTC)
    with db.write() as s:
        issue_id = s.scalar(select(Issue.id).where(Issue.space_id == sid))
        s.execute(insert(IssueComment), [
            {"id": uuid.uuid4().hex, "issue_id": issue_id, "author_user_id": alice.user_id,
             "body": f"c{i}", "created_at": base + timedelta(seconds=i // 2),
             "updated_at": base} for i in range(600)])
        s.execute(insert(IssueEvent), [
            {"id": uuid.uuid4().hex, "issue_id": issue_id, "kind": "renamed",
             "actor_user_id": alice.user_id, "payload": {"from": "a", "to": "b"},
             "created_at": base + timedelta(seconds=i // 2)} for i in range(600)])
    path = f"{issues_path(sid)}/{n}/timeline"
    limit = 5
    first = alice.get(path, params={"limit": str(limit)}).json
    assert [i["type"] for i in first["items"]] == ["comment"] * 2 + ["event"] * 2 + ["comment"]
    pages: list[dict] = []
    seen = _captured(db, lambda: pages.append(alice.get(
        path, params={"limit": str(limit), "cursor": first["next_cursor"]}).json))
    assert [i["type"] for i in pages[0]["items"]] == ["comment", "event", "event", "comment",
                                                      "comment"]
    keyset = [(q, p) for q, p in seen if "issue_comments" in q or "issue_events" in q]
    keyset = [(q, p) for q, p in keyset if "LIMIT" in q.upper()]
    assert keyset
    tables = {"issue_comments", "issue_events"}
    with db.read_engine.connect() as conn:
        if db.is_postgres:
            conn.exec_driver_sql("SET enable_seqscan = off")
            total = 0
            for statement, parameters in keyset:
                plan = conn.exec_driver_sql("EXPLAIN (ANALYZE, FORMAT JSON) " + statement,
                                            parameters).scalar_one()
                rows, kinds = _scanned(plan[0]["Plan"], tables)
                assert "Seq Scan" not in kinds and "Sort" not in kinds, kinds
                total += rows
            assert total <= 2 * (limit + 1), total
        else:
            for statement, parameters in keyset:
                plan = " ".join(str(r[-1]) for r in conn.exec_driver_sql(
                    "EXPLAIN QUERY PLAN " + statement, parameters))
                assert "_timeline" in plan and "TEMP B-TREE" not in plan, plan
        conn.rollback()


def test_reading_an_issue_costs_the_same_with_twenty_node_references(world, db):
    """The references are resolved in a constant number of statements (the space role
    once, every node's ancestor chain at once), and still resolved right: a node in the
    trash, or under a folder in the trash, is not available."""
    alice = world.user("alice")
    sid = team_space(alice)["id"]
    bare = open_issue(alice, sid)["number"]
    n = open_issue(alice, sid)["number"]
    path = f"{issues_path(sid)}/{n}"
    top = make_node(alice, sid, "Top")
    folder = make_node(alice, sid, "Folder", top["id"])
    nodes = [make_node(alice, sid, f"n{i}", folder["id"] if i % 2 else None)
             for i in range(20)]
    for node in nodes:
        assert alice.put(f"{path}/node-refs/{node['id']}").status_code == 200
    assert alice.post(f"/api/nodes/{nodes[0]['id']}/trash").status_code == 200
    assert alice.post(f"/api/nodes/{top['id']}/trash").status_code == 200

    def statements(number: int) -> int:
        return len(_captured(db, lambda: alice.get(f"{issues_path(sid)}/{number}")))

    without, with_refs = statements(bare), statements(n)
    assert with_refs <= without + 3, (without, with_refs)
    refs = alice.get(path).json["node_refs"]
    assert [r["node_id"] for r in refs] == [x["id"] for x in nodes]
    available = {r["node_id"] for r in refs if r["available"]}
    assert available == {x["id"] for i, x in enumerate(nodes) if i and not i % 2}
    assert all(r["name"] is None for r in refs if not r["available"])
    # a viewer (a member without triage) reads the same
    bob = world.user("bob")
    add_member(alice, sid, bob.user_id, "viewer")
    assert bob.get(path).json["node_refs"] == refs


def test_unreferencing_names_the_node_as_when_it_was_referenced(world, db):
    """Both paths write the name the reference snapshot: DELETE of a reference to a node
    renamed and then trashed (the caller no longer reads it), and the purge."""
    alice = world.user("alice")
    sid = team_space(alice)["id"]
    n = open_issue(alice, sid)["number"]
    path = f"{issues_path(sid)}/{n}"
    doc = make_node(alice, sid, "Doc")
    assert alice.put(f"{path}/node-refs/{doc['id']}").status_code == 200
    alice.patch(f"/api/nodes/{doc['id']}", json={"name": "Doc v2"})
    assert alice.post(f"/api/nodes/{doc['id']}/trash").status_code == 200
    assert alice.delete(f"{path}/node-refs/{doc['id']}").json["node_refs"] == []
    events = [e for e in timeline(alice, sid, n) if e.get("kind") == "node_unreferenced"]
    assert [e["payload"] for e in events] == [{"node": {"id": doc["id"], "name": "Doc"}}]
    # the purge path: the same rule (service-level, in the purge's transaction)
    other = make_node(alice, sid, "Other")
    assert alice.put(f"{path}/node-refs/{other['id']}").status_code == 200
    alice.patch(f"/api/nodes/{other['id']}", json={"name": "Other v2"})
    with db.write() as s:
        assert labels.unreference_purged(s, [other["id"]]) == 1
    events = [e for e in timeline(alice, sid, n) if e.get("kind") == "node_unreferenced"]
    assert events[-1]["payload"] == {"node": {"id": other["id"], "name": "Other"},
                                     "purged": True}


def test_listings_read_a_kept_comment_count_instead_of_counting(world, db):
    """``comments`` is the issue's ``comment_count``, kept by every comment write (one
    with a close, too), so a listing never reads the comments themselves."""
    alice, bob = world.user("alice"), world.user("bob")
    sid = team_space(alice)["id"]
    add_member(alice, sid, bob.user_id, "viewer")
    n = open_issue(alice, sid)["number"]
    path = f"{issues_path(sid)}/{n}"
    first = alice.post(f"{path}/comments", json={"body": "one"}).json
    bob.post(f"{path}/comments", json={"body": "two"})
    alice.post(f"{path}/close", json={"reason": "completed", "comment": "three"})
    assert alice.get(path).json["comments"] == 3
    assert alice.delete(f"{path}/comments/{first['id']}").status_code == 204
    assert_problem(alice.delete(f"{path}/comments/{first['id']}"), 404)
    seen = _captured(db, lambda: alice.get(issues_path(sid), params={"state": "all"}))
    assert not [q for q, _ in seen if "issue_comments" in q]
    listed = alice.get(issues_path(sid), params={"state": "all"}).json["items"]
    assert [i["comments"] for i in listed] == [2]
    assert alice.get(path).json["comments"] == len(
        [i for i in timeline(alice, sid, n) if i["type"] == "comment"]) == 2


def test_a_comment_deleted_while_a_timeline_page_is_read_is_left_out(world, db, monkeypatch):
    """The page reads its keys, then loads the rows: a comment deleted in between (another
    request, committed meanwhile) is left out of the page instead of failing it (500)."""
    from storage.models import IssueComment
    from wharf.issues import timeline as timeline_module

    alice = world.user("alice")
    sid = team_space(alice)["id"]
    n = open_issue(alice, sid)["number"]
    path = f"{issues_path(sid)}/{n}"
    ids = [alice.post(f"{path}/comments", json={"body": f"c{i}"}).json["id"]
           for i in range(3)]
    real_keys = timeline_module._keys

    def keys_then_delete(s, table, rank, *args):
        found = real_keys(s, table, rank, *args)
        if table is IssueComment.__table__:
            with db.write() as other:  # committed between the key read and the load
                other.execute(IssueComment.__table__.delete().where(
                    IssueComment.id == ids[1]))
        return found
    monkeypatch.setattr(timeline_module, "_keys", keys_then_delete)
    r = alice.get(f"{path}/timeline")
    assert r.status_code == 200, r.text
    shown = [i["id"] for i in r.json["items"] if i["type"] == "comment"]
    assert shown[0] == ids[0] and shown[-1] == ids[2]
    assert shown in ([ids[0], ids[2]], ids)  # PostgreSQL sees the delete; SQLite's snapshot not
