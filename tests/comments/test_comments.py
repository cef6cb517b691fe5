"""Comment threads on a unit through the API: start, reply, list (paged, by solved
state), edit with its generation, solve by compare-and-set, delete; the limits with their
codes; an audit row per write. The concurrency test runs on both databases."""
from __future__ import annotations

import threading

import pytest
from sqlalchemy import func, select

from storage.models import UnitComment, UnitCommentThread
from tests.comments.support import comments, new_unit, reply, solved, start
from tests.support.client import ApiClient
from tests.support.foundation import assert_problem, audit_rows, bearer, make_token, row_counts
from wharfd.runtime import Components


@pytest.fixture
def doc(world, worker):
    alice = world.user("alice")
    return alice, new_unit(alice, alice.personal_space_id)["unit_id"]


def test_a_thread_and_its_replies_are_listed_with_their_authors(world, doc, db):
    alice, unit = doc
    first = start(alice, unit, "Totals are off", {"sheet": "s1", "range": "B2:C4"})
    assert first["id"] == first["thread_id"]  # a thread is named by its first comment
    assert first["author"] == {"id": alice.user_id, "username": "alice"}
    assert first["generation"] == 1 and first["body"] == "Totals are off"
    second = reply(alice, unit, first["thread_id"], "Fixed in Q3")
    assert second["thread_id"] == first["thread_id"] and second["id"] != first["id"]
    page = alice.get(comments(unit)).json
    assert page["next_cursor"] is None and len(page["items"]) == 1
    thread = page["items"][0]
    assert thread["thread_id"] == first["thread_id"]
    assert thread["anchor"] == {"sheet": "s1", "range": "B2:C4"}
    assert thread["solved"] is False and thread["generation"] == 2  # the reply bumped it
    assert [c["body"] for c in thread["comments"]] == ["Totals are off", "Fixed in Q3"]
    actions = [r.action for r in audit_rows(db, target_type="comment")]
    assert actions == ["comment.create", "comment.reply"]


def test_listing_pages_by_creation_and_filters_by_solved_state(doc):
    alice, unit = doc
    threads = [start(alice, unit, f"note {i}")["thread_id"] for i in range(5)]
    for t in threads[1::2]:
        assert alice.put(solved(t), json={"solved": True, "generation": 1}).status_code == 200
    seen, cursor = [], None
    while True:
        params = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        page = alice.get(comments(unit), params=params).json
        seen += [t["thread_id"] for t in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == threads
    only = alice.get(comments(unit), params={"solved": "true"}).json["items"]
    assert [t["thread_id"] for t in only] == threads[1::2]
    assert all(t["solved"] and t["generation"] == 2 for t in only)
    open_ = alice.get(comments(unit), params={"solved": "false"}).json["items"]
    assert [t["thread_id"] for t in open_] == threads[0::2]
    assert_problem(alice.get(comments(unit), params={"solved": "maybe"}), 400,
                   "validation_failed")
    assert_problem(alice.get(comments(unit), params={"cursor": "forged"}), 400,
                   "invalid_cursor")


def test_an_edit_names_the_generation_it_read(doc, db):
    alice, unit = doc
    c = start(alice, unit)
    r = alice.patch(f"/api/comments/{c['id']}", json={"body": "v2", "generation": 1})
    assert r.status_code == 200, r.text
    assert r.json["body"] == "v2" and r.json["generation"] == 2
    stale = assert_problem(alice.patch(f"/api/comments/{c['id']}",
                                       json={"body": "v3", "generation": 1}),
                           409, "comment_conflict")
    assert stale["details"]["generation"] == 2
    thread = alice.get(comments(unit)).json["items"][0]
    assert thread["comments"][0]["body"] == "v2" and thread["generation"] == 2
    # the thread's generation moved too: a solve with the old one is refused
    assert_problem(alice.put(solved(c["thread_id"]), json={"solved": True, "generation": 1}),
                   409, "comment_conflict")
    r = alice.put(solved(c["thread_id"]), json={"solved": True, "generation": 2})
    assert r.status_code == 200 and r.json["solved"] is True and r.json["generation"] == 3
    assert [a.action for a in audit_rows(db, target_type="comment", target_id=c["id"])] == [
        "comment.create", "comment.edit"]
    assert [a.action for a in audit_rows(db, target_type="comment_thread")] == [
        "comment_thread.solve"]


def test_deleting_a_reply_keeps_the_thread_and_the_first_comment_takes_it_all(doc, db):
    alice, unit = doc
    first = start(alice, unit)
    replies = [reply(alice, unit, first["thread_id"], f"r{i}") for i in range(3)]
    assert alice.delete(f"/api/comments/{replies[0]['id']}").status_code == 204
    thread = alice.get(comments(unit)).json["items"][0]
    assert [c["body"] for c in thread["comments"]] == ["Is this right?", "r1", "r2"]
    assert thread["generation"] == 5  # three replies and a deletion
    assert_problem(alice.delete(f"/api/comments/{replies[0]['id']}"), 404)
    assert alice.delete(f"/api/comments/{first['id']}").status_code == 204
    assert alice.get(comments(unit)).json["items"] == []
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(UnitComment)) == 0
        assert s.scalar(select(func.count()).select_from(UnitCommentThread)) == 0
    assert_problem(alice.post(comments(unit), json={"thread_id": first["thread_id"],
                                                    "body": "late"}), 404)
    deleted = audit_rows(db, action="comment.delete")
    assert deleted[-1].details["thread_deleted"] is True
    assert deleted[-1].details["replies_deleted"] == 2


def test_bodies_and_anchors_are_bounded(doc, db):
    alice, unit = doc
    before = row_counts(db)
    assert_problem(alice.post(comments(unit), json={"anchor": {}, "body": "x" * 10_001}),
                   400, "comment_too_long")
    assert_problem(alice.post(comments(unit), json={"anchor": {}, "body": ""}), 400,
                   "validation_failed")
    assert_problem(alice.post(comments(unit), json={"anchor": {}, "body": "a\x00b"}), 400,
                   "validation_failed")
    assert_problem(alice.post(comments(unit), json={"anchor": {"k": "x" * 4090},
                                                    "body": "hi"}), 413, "anchor_too_large")
    assert_problem(alice.post(comments(unit), json={"body": "neither"}), 400,
                   "validation_failed")
    assert_problem(alice.post(comments(unit), json={"anchor": {}, "thread_id": "x" * 32,
                                                    "body": "both"}), 400,
                   "validation_failed")
    assert_problem(alice.post(comments(unit), json={"anchor": [1], "body": "hi"}), 400,
                   "validation_failed")
    assert row_counts(db) == before
    # at the bounds: accepted
    c = start(alice, unit, "x" * 10_000, {"k": "x" * (4096 - len('{"k":""}'))})
    assert_problem(alice.patch(f"/api/comments/{c['id']}",
                               json={"body": "y" * 10_001, "generation": 1}),
                   400, "comment_too_long")


def test_threads_per_unit_and_replies_per_thread_are_settings(settings, db, doc):
    alice, unit = doc
    limited = Components(settings.replace(comment_max_threads_per_unit=2,
                                          comment_max_replies_per_thread=2), db=db)
    try:
        # alice, through an app of the same databases with smaller limits
        c = ApiClient(limited.api_app(), headers=bearer(make_token(alice)["token"]))
        t1 = start(c, unit)
        start(c, unit)
        r = assert_problem(c.post(comments(unit), json={"anchor": {}, "body": "3rd"}),
                           409, "comment_thread_limit")
        assert r["details"]["limit"] == 2
        reply(c, unit, t1["thread_id"])
        reply(c, unit, t1["thread_id"])
        assert_problem(c.post(comments(unit), json={"thread_id": t1["thread_id"],
                                                    "body": "3rd reply"}),
                       409, "comment_reply_limit")
        # deleting one makes room again
        first_reply = c.get(comments(unit)).json["items"][0]["comments"][1]
        assert c.delete(f"/api/comments/{first_reply['id']}").status_code == 204
        reply(c, unit, t1["thread_id"])
        # the default app's limits are the defaults
        start(alice, unit)
    finally:
        limited.close()


@pytest.mark.both_databases  # concurrency: the database decides
def test_twenty_concurrent_solves_with_one_generation_make_exactly_one_change(world, doc,
                                                                             app, db):
    """20 threads set the solved state with the generation they all read (PostgreSQL: 20
    connections really race; SQLite serialises the writers): one 200, nineteen 409
    ``comment_conflict``, and the thread changed once."""
    alice, unit = doc
    thread = start(alice, unit)["thread_id"]
    token = make_token(alice)["token"]
    barrier = threading.Barrier(20)
    results: list[tuple[int, str | None]] = []
    lock = threading.Lock()

    def toggle() -> None:
        client = ApiClient(app, headers=bearer(token))
        barrier.wait(timeout=30)
        r = client.put(solved(thread), json={"solved": True, "generation": 1})
        with lock:
            results.append((r.status_code, r.json.get("code") if r.status_code != 200
                            else None))

    workers = [threading.Thread(target=toggle) for _ in range(20)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=120)
    assert sorted(results, key=str) == [(200, None)] + [(409, "comment_conflict")] * 19, results
    listed = alice.get(comments(unit)).json["items"][0]
    assert listed["solved"] is True and listed["generation"] == 2
    assert len(audit_rows(db, action="comment_thread.solve")) == 1


@pytest.mark.both_databases  # what each database's JSON and text columns take
def test_text_the_databases_cannot_store_is_refused_and_anchors_round_trip(doc, db):
    alice, unit = doc
    before = row_counts(db)
    for anchor in ({"k": "\ud800"}, {"\ud800": 1}):  # refused as the body is read
        assert_problem(alice.post(comments(unit), json={"anchor": anchor, "body": "hi"}),
                       400, "malformed_json")
    assert_problem(alice.post(comments(unit), json={"anchor": {}, "body": "a\x00"}), 400,
                   "validation_failed")
    assert row_counts(db) == before
    # NUL inside an anchor is JSON text like any other (escaped): kept and given back
    anchor = {"k": "a\x00b", "a\x00": [1, "\x00"]}
    start(alice, unit, anchor=anchor)
    assert alice.get(comments(unit)).json["items"][0]["anchor"] == anchor


def test_worktree_routes_have_no_comments(doc):
    alice, unit = doc
    for path in (f"/api/worktrees/{'0' * 31}1/units/{unit}/comments",
                 f"/api/worktrees/{'0' * 31}1/comments"):
        assert alice.get(path).status_code == 404
        assert alice.post(path, json={"anchor": {}, "body": "x"}).status_code in (404, 405)
