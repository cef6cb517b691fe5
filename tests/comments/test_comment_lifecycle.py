"""What becomes of comments when what they name goes: a purged unit takes its threads
and comments with it (in the purge's transaction); a deleted account's comments stay,
readable under the deleted-account placeholder. Both databases (foreign keys and the
purge's deletes are the database's)."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import func, select

from storage.models import Operation, UnitComment, UnitCommentThread
from tests.comments.support import comments, new_unit, reply, start
from tests.engine.test_operations import wait_done
from tests.support.foundation import add_member, make_node, team_space
from tests.support.waiting import wait_until
from wharf.accounts.purge import PLACEHOLDER_ID, PLACEHOLDER_NAME

pytestmark = pytest.mark.both_databases


def _count(db, model, *where) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(model).where(*where)) or 0


def test_purging_a_unit_deletes_its_comments_and_no_others(world, worker, db):
    alice, bob = world.user("alice"), world.user("bob")
    personal = alice.personal_space_id
    folder = make_node(alice, personal, "Doomed")["id"]
    assert alice.put(f"/api/nodes/{folder}/grants/{bob.user_id}",
                     json={"role": "viewer"}).status_code == 201
    doomed = new_unit(alice, personal, folder)
    kept = new_unit(alice, personal)["unit_id"]
    t = start(alice, doomed["unit_id"])
    reply(bob, doomed["unit_id"], t["thread_id"])
    start(bob, doomed["unit_id"])
    survivor = start(alice, kept)
    assert _count(db, UnitComment) == 4
    assert alice.post(f"/api/nodes/{folder}/trash").status_code == 200
    # trashed, not purged: the unit cannot be opened, its comments are still stored
    assert alice.get(comments(doomed["unit_id"])).status_code == 404
    assert _count(db, UnitComment, UnitComment.unit_id == doomed["unit_id"]) == 3
    r = alice.delete(f"/api/nodes/{folder}", headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    assert wait_done(alice, r.json["id"])["status"] == "completed"
    assert _count(db, UnitComment, UnitComment.unit_id == doomed["unit_id"]) == 0
    assert _count(db, UnitCommentThread,
                  UnitCommentThread.resource_id == doomed["resource_id"]) == 0
    items = alice.get(comments(kept)).json["items"]
    assert [i["thread_id"] for i in items] == [survivor["thread_id"]]


def test_a_deleted_accounts_comments_stay_under_the_placeholder(world, worker, db):
    alice, bob = world.user("alice"), world.user("bob")
    team = team_space(alice)["id"]
    add_member(alice, team, bob.user_id, "editor")
    unit = new_unit(alice, team)["unit_id"]
    his = start(bob, unit, "bob's note")
    reply(alice, unit, his["thread_id"], "alice answers")
    theirs = start(alice, unit, "alice's note")
    reply(bob, unit, theirs["thread_id"], "bob answers")
    # alice comments on bob's own unit: it goes with his personal space
    folder = make_node(bob, bob.personal_space_id, "Shared")["id"]
    assert bob.put(f"/api/nodes/{folder}/grants/{alice.user_id}",
                   json={"role": "viewer"}).status_code == 201
    bobs_unit = new_unit(bob, bob.personal_space_id, folder)["unit_id"]
    start(alice, bobs_unit, "on bob's doc")

    r = bob.delete("/api/me", json_body={}, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    op_id = r.json["id"]

    def finished() -> str | None:
        with db.read() as s:
            status = s.scalar(select(Operation.status).where(Operation.id == op_id))
        return status if status in ("completed", "failed") else None

    assert wait_until(finished, 60, "the account deletion") == "completed"
    threads = alice.get(comments(unit)).json["items"]
    placeholder = {"id": PLACEHOLDER_ID, "username": PLACEHOLDER_NAME}
    by_body = {c["body"]: c["author"] for t in threads for c in t["comments"]}
    assert by_body == {"bob's note": placeholder, "alice answers":
                       {"id": alice.user_id, "username": "alice"},
                       "alice's note": {"id": alice.user_id, "username": "alice"},
                       "bob answers": placeholder}
    with db.read() as s:
        assert s.get(UnitCommentThread, his["thread_id"]).created_by == PLACEHOLDER_ID
        assert s.scalar(select(func.count()).select_from(UnitComment)
                        .where(UnitComment.author_id == bob.user_id)) == 0
    assert _count(db, UnitComment, UnitComment.unit_id == bobs_unit) == 0
    # alice may still delete what bob wrote (she owns the document)
    assert alice.delete(f"/api/comments/{his['id']}").status_code == 204
