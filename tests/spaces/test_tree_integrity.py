"""Tree integrity: the depth limit, who may delete permanently, nested trash batches and
trash listings that never end early (issue 10: items 7, 8 and the trash parts of 10)."""
from __future__ import annotations

import uuid

import dramatiq
import pytest
from sqlalchemy import func, select

from storage.models import Node, Operation, TrashBatch
from tests.support.foundation import add_member, assert_problem, make_node, team_space
from wharf.infra import pagination
from wharf.infra.ids import new_id
from wharf.spaces.access import MAX_TREE_DEPTH

pytestmark = pytest.mark.both_databases  # recursive tree queries: dialect SQL


def key() -> str:
    return uuid.uuid4().hex


def wait(client, op_id):
    r = client.get(f"/api/operations/{op_id}", params={"wait": "30"})
    assert r.status_code == 200, r.text
    return r.json


def chain(db, space_id: str, user_id: str, length: int, parent_id: str | None = None,
          batch_id: str | None = None) -> list[str]:
    """``length`` nodes, each the child of the one before, written straight to the
    database (a client would need ``length`` requests); returns their ids, top first."""
    ids = [new_id() for _ in range(length)]
    with db.write() as s:
        for i, nid in enumerate(ids):
            s.add(Node(id=nid, space_id=space_id, parent_id=ids[i - 1] if i else parent_id,
                       name=f"level-{i}", created_by=user_id, trash_batch_id=batch_id))
            s.flush()
    return ids


# --- item 7: one depth limit ----------------------------------------------------------

def test_create_below_the_deepest_allowed_level_is_refused_on_every_path(world, worker, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    levels = chain(db, sp, alice.user_id, MAX_TREE_DEPTH)
    deepest, above = levels[-1], levels[-2]
    with db.read() as s:
        before = s.scalar(select(func.count()).select_from(Node))
    r = alice.post("/api/nodes", json={"space_id": sp, "parent_id": deepest, "name": "x"})
    assert_problem(r, 409, "tree_too_deep")
    r = alice.post("/api/resources", json={"space_id": sp, "parent_id": deepest, "name": "d",
                                           "unit_type": "doc"},
                   headers={"Idempotency-Key": key()})
    assert_problem(r, 409, "tree_too_deep")
    r = alice.post("/api/blob-upload-sessions",
                   json={"space_id": sp, "parent_id": deepest, "filename": "f.txt", "size": 1},
                   headers={"Idempotency-Key": key()})
    assert_problem(r, 409, "tree_too_deep")
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(Node)) == before
        assert s.scalar(select(func.count()).select_from(Operation)) == 0
    # one level higher is still fine: the limit is MAX_TREE_DEPTH, not one less
    assert alice.post("/api/nodes", json={"space_id": sp, "parent_id": above,
                                          "name": "x"}).status_code == 201
    op = alice.post("/api/resources", json={"space_id": sp, "parent_id": above, "name": "d",
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": key()}).json
    assert wait(alice, op["id"])["status"] == "completed"


def test_move_counts_the_whole_subtree_trashed_nodes_included(world, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    target = chain(db, sp, alice.user_id, 230)
    moved = chain(db, sp, alice.user_id, 40)
    # the deepest 10 levels of the moved subtree are in the trash: they still count,
    # since a restore brings them back at that depth
    r = alice.post(f"/api/nodes/{moved[30]}/trash")
    assert r.status_code == 200 and r.json["node_count"] == 10
    too_deep = target[MAX_TREE_DEPTH - 40]  # depth 217: 217 + 40 > 256
    r = alice.patch(f"/api/nodes/{moved[0]}", json={"parent_id": too_deep, "name": "renamed"})
    assert_problem(r, 409, "tree_too_deep")
    got = alice.get(f"/api/nodes/{moved[0]}").json
    assert (got["parent_id"], got["name"]) == (None, "level-0")
    fits = target[MAX_TREE_DEPTH - 41]  # depth 216: the deepest node lands at 256
    assert alice.patch(f"/api/nodes/{moved[0]}", json={"parent_id": fits}).status_code == 200
    assert alice.get(f"/api/nodes/{moved[29]}").status_code == 200
    batch = alice.get(f"/api/spaces/{sp}/trash").json["items"][0]
    assert alice.post(f"/api/trash-batches/{batch['id']}/restore").status_code == 200
    assert alice.get(f"/api/nodes/{moved[-1]}").status_code == 200
    # the whole tree is now at the limit: nothing more below, and moving deeper is refused
    assert_problem(alice.post("/api/nodes", json={"space_id": sp, "parent_id": moved[-1],
                                                  "name": "x"}), 409, "tree_too_deep")
    assert_problem(alice.patch(f"/api/nodes/{moved[0]}", json={"parent_id": target[-1]}),
                   409, "tree_too_deep")


def test_moving_a_large_folder_checks_its_height_in_a_bounded_number_of_statements(world, db):
    """The height check is one query in the database, however many nodes the moved folder
    holds: nothing proportional to the subtree crosses into Python under the space lock."""
    import threading

    from sqlalchemy import event, insert
    alice = world.user("alice")
    sp = alice.personal_space_id
    dest = make_node(alice, sp, "dest")["id"]
    top = new_id()
    deep = [new_id() for _ in range(200)]  # a 200-level chain ...
    wide = [new_id() for _ in range(1800)]  # ... and 1800 files beside it
    rows = [dict(id=top, space_id=sp, parent_id=None, name="big", created_by=alice.user_id)]
    rows += [dict(id=nid, space_id=sp, parent_id=deep[i - 1] if i else top, name=f"d{i}",
                  created_by=alice.user_id) for i, nid in enumerate(deep)]
    rows += [dict(id=nid, space_id=sp, parent_id=top, name=f"w{i}",
                  created_by=alice.user_id) for i, nid in enumerate(wide)]
    with db.write() as s:
        s.execute(insert(Node), rows)
    statements: list[str] = []
    me = threading.get_ident()

    def count(conn, cursor, statement, parameters, context, executemany):
        if threading.get_ident() == me:
            statements.append(statement)

    event.listen(db.write_engine, "before_cursor_execute", count)
    try:
        r = alice.patch(f"/api/nodes/{top}", json={"parent_id": dest})
    finally:
        event.remove(db.write_engine, "before_cursor_execute", count)
    assert r.status_code == 200, r.text
    assert len(statements) <= 30, len(statements)
    assert alice.get(f"/api/nodes/{deep[-1]}").status_code == 200
    # the check still refuses what would go too deep: 201 levels below depth 56 reach 257
    chain_ = chain(db, sp, alice.user_id, MAX_TREE_DEPTH - 200)
    assert_problem(alice.patch(f"/api/nodes/{top}", json={"parent_id": chain_[-1]}),
                   409, "tree_too_deep")
    assert alice.patch(f"/api/nodes/{top}", json={"parent_id": chain_[-2]}).status_code == 200


def test_a_create_waits_for_a_move_in_progress_and_sees_its_depth(world, db):
    """A create racing a move that pushes its parent down: the create waits for the move
    (both lock the space row) and then refuses, instead of checking the depth before the
    move and inserting after it, past the limit (where nobody could reach the node)."""
    import threading
    import time

    from storage.models import Space
    if db.write_engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one write transaction at a time")
    alice = world.user("alice")
    sp = alice.personal_space_id
    target = chain(db, sp, alice.user_id, MAX_TREE_DEPTH - 10)
    moved = chain(db, sp, alice.user_id, 10)
    result = {}

    def create():
        result["r"] = alice.post("/api/nodes", json={"space_id": sp, "parent_id": moved[-1],
                                                     "name": "late"})

    with db.write() as s:  # a move in progress: the space row locked, the node moved
        s.get(Space, sp, with_for_update=True)
        s.get(Node, moved[0]).parent_id = target[-1]  # moved[-1] now at depth 256
        s.flush()
        t = threading.Thread(target=create)
        t.start()
        time.sleep(1.0)
        assert t.is_alive()  # the create waits for the move
    t.join(30)
    assert_problem(result["r"], 409, "tree_too_deep")
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(Node).where(
            Node.parent_id == moved[-1])) == 0


def test_nodes_below_the_limit_fail_closed(world, db):
    """Data deeper than the limit (written before the limit was enforced, or by hand) is
    never readable through a walk that stopped early."""
    alice, bob = world.user("alice"), world.user("bob")
    sp = alice.personal_space_id
    alice.patch(f"/api/spaces/{sp}", json={"public_read": True})
    levels = chain(db, sp, alice.user_id, 270)
    deep, shallow = levels[269], levels[MAX_TREE_DEPTH - 1]
    anon = world.anonymous()
    assert alice.get(f"/api/nodes/{shallow}").status_code == 200
    assert anon.get(f"/api/nodes/{shallow}").status_code == 200
    # below the limit nothing is reachable, whoever asks
    for c in (alice, anon, bob):
        assert_problem(c.get(f"/api/nodes/{deep}"), 404)
        assert_problem(c.get(f"/api/nodes/{levels[260]}/children"), 404)
    assert_problem(alice.patch(f"/api/nodes/{deep}", json={"name": "x"}), 404)
    # trash the top: everything below is gone for everyone, the deep part included
    assert alice.post(f"/api/nodes/{levels[0]}/trash").status_code == 200
    for c in (alice, anon):
        for nid in (levels[1], shallow, deep):
            assert_problem(c.get(f"/api/nodes/{nid}"), 404)
    assert_problem(alice.patch(f"/api/nodes/{deep}", json={"name": "x"}), 404)
    assert_problem(alice.post(f"/api/nodes/{deep}/trash"), 404)


def test_a_cycle_in_the_data_fails_closed(world, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    a, b = chain(db, sp, alice.user_id, 2)
    with db.write() as s:
        s.get(Node, a).parent_id = b  # a <-> b: no root above either
    for nid in (a, b):
        assert_problem(alice.get(f"/api/nodes/{nid}"), 404)


# --- item 8: who may delete permanently -----------------------------------------------

def test_permanent_delete_needs_the_owner_or_a_team_admin(world, worker, db):
    alice = world.user("alice")
    link_editor, grant_editor = world.user("lee"), world.user("gina")
    sp = alice.personal_space_id
    shared = make_node(alice, sp, "shared")["id"]
    assert alice.put(f"/api/nodes/{shared}/link-sharing",
                     json={"enabled": True, "role": "editor"}).status_code == 200
    assert alice.put(f"/api/nodes/{shared}/grants/{grant_editor.user_id}",
                     json={"role": "editor"}).status_code == 201
    assert alice.get(f"/api/nodes/{shared}").json["capabilities"]["can_purge"] is True
    for who in (link_editor, grant_editor):
        caps = who.get(f"/api/nodes/{shared}").json["capabilities"]
        assert caps["can_trash"] is True and caps["can_purge"] is False
        victim = make_node(alice, sp, f"victim-{who.user_id}", shared)["id"]
        assert who.post(f"/api/nodes/{victim}/trash").status_code == 200
        assert_problem(who.delete(f"/api/nodes/{victim}", headers={"Idempotency-Key": key()}),
                       403, "purge_forbidden")
        with db.read() as s:
            assert s.get(Node, victim) is not None
        r = alice.delete(f"/api/nodes/{victim}", headers={"Idempotency-Key": key()})
        assert r.status_code == 202 and wait(alice, r.json["id"])["status"] == "completed"
    assert_problem(world.anonymous().delete(f"/api/nodes/{shared}",
                                            headers={"Idempotency-Key": key()}), 401)

    team = team_space(alice)["id"]
    members = {role: world.user(f"team-{role}") for role in ("admin", "editor", "viewer")}
    for role, c in members.items():
        add_member(alice, team, c.user_id, role)
    expected = {"admin": 202, "editor": 403, "viewer": 403}
    for role, c in members.items():
        victim = make_node(alice, team, f"victim-{role}")["id"]
        assert alice.post(f"/api/nodes/{victim}/trash").status_code == 200
        r = c.delete(f"/api/nodes/{victim}", headers={"Idempotency-Key": key()})
        assert r.status_code == expected[role], (role, r.text)
        if r.status_code == 202:
            assert wait(c, r.json["id"])["status"] == "completed"


def test_worker_rechecks_the_purge_permission(world, components, db):
    alice, ann = world.user("alice"), world.user("ann")
    team = team_space(alice)["id"]
    add_member(alice, team, ann.user_id, "admin")
    victim = make_node(alice, team, "victim")["id"]
    alice.post(f"/api/nodes/{victim}/trash")
    r = ann.delete(f"/api/nodes/{victim}", headers={"Idempotency-Key": key()})
    assert r.status_code == 202
    add_member(alice, team, ann.user_id, "editor")  # demoted before any worker ran
    w = dramatiq.Worker(components.broker, worker_threads=1, worker_timeout=50)
    w.start()
    try:
        done = wait(ann, r.json["id"])
    finally:
        w.stop()
    assert done["status"] == "failed" and done["error"]["code"] == "permission_revoked"
    with db.read() as s:
        assert s.get(Node, victim) is not None


# --- item 10: nested batches, restore, purge ------------------------------------------

def test_restore_below_a_trashed_folder_is_refused_and_purge_says_what_it_deletes(
        world, worker, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    p = make_node(alice, sp, "P")["id"]
    r_ = make_node(alice, sp, "R", p)["id"]
    inner = alice.post(f"/api/nodes/{r_}/trash").json
    outer = alice.post(f"/api/nodes/{p}/trash").json
    assert outer["node_count"] == 1
    listed = {b["id"]: b for b in alice.get(f"/api/spaces/{sp}/trash").json["items"]}
    assert listed[outer["id"]]["nested_batches"] == 1
    assert listed[outer["id"]]["enclosing_batch_id"] is None
    assert listed[inner["id"]]["enclosing_batch_id"] == outer["id"]
    assert listed[inner["id"]]["nested_batches"] == 0

    body = assert_problem(alice.post(f"/api/trash-batches/{inner['id']}/restore"), 409,
                          "ancestor_trashed")
    assert body["details"]["enclosing_batch_id"] == outer["id"]
    # nothing changed: R is still trashed, its batch still listed
    with db.read() as s:
        assert s.get(Node, r_).trash_batch_id == inner["id"]
    assert inner["id"] in [b["id"] for b in alice.get(f"/api/spaces/{sp}/trash").json["items"]]

    r = alice.delete(f"/api/nodes/{p}", headers={"Idempotency-Key": key()})
    done = wait(alice, r.json["id"])
    assert done["status"] == "completed", done
    assert done["result"]["nodes_deleted"] == 2
    assert done["result"]["batches_deleted"] == 2
    assert done["result"]["nested_batch_ids"] == [inner["id"]]
    assert alice.get(f"/api/spaces/{sp}/trash").json["items"] == []
    assert_problem(alice.post(f"/api/trash-batches/{inner['id']}/restore"), 404)


def test_restore_in_order_brings_everything_back(world, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    p = make_node(alice, sp, "P")["id"]
    r_ = make_node(alice, sp, "R", p)["id"]
    inner = alice.post(f"/api/nodes/{r_}/trash").json
    outer = alice.post(f"/api/nodes/{p}/trash").json
    assert alice.post(f"/api/trash-batches/{outer['id']}/restore").json["restored_nodes"] == 1
    listed = alice.get(f"/api/spaces/{sp}/trash").json["items"]
    assert [(b["id"], b["enclosing_batch_id"]) for b in listed] == [(inner["id"], None)]
    assert alice.post(f"/api/trash-batches/{inner['id']}/restore").json["restored_nodes"] == 1
    assert alice.get(f"/api/nodes/{r_}").json["parent_id"] == p


def test_restore_is_refused_while_the_purge_is_queued(world, components, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    victim = make_node(alice, sp, "victim")["id"]
    batch = alice.post(f"/api/nodes/{victim}/trash").json
    op = alice.delete(f"/api/nodes/{victim}", headers={"Idempotency-Key": key()}).json
    body = assert_problem(alice.post(f"/api/trash-batches/{batch['id']}/restore"), 409,
                          "purge_in_progress")
    assert body["details"]["operation_id"] == op["id"]
    w = dramatiq.Worker(components.broker, worker_threads=1, worker_timeout=50)
    w.start()
    try:
        assert wait(alice, op["id"])["status"] == "completed"
    finally:
        w.stop()
    with db.read() as s:
        assert s.get(Node, victim) is None


# --- item 10: the trash listing never ends early --------------------------------------

@pytest.mark.parametrize("budget", [None, 3])
def test_trash_listing_pages_past_batches_the_caller_cannot_see(world, db, monkeypatch,
                                                                  budget):
    if budget:
        monkeypatch.setattr(pagination, "SCAN_BUDGET", budget)
    alice, bob = world.user("alice"), world.user("bob")
    sp = alice.personal_space_id
    alice.patch(f"/api/spaces/{sp}", json={"public_read": True})  # bob: viewer of the space
    shared = make_node(alice, sp, "shared")["id"]
    alice.put(f"/api/nodes/{shared}/grants/{bob.user_id}", json={"role": "editor"})
    mine = []
    for i in range(2):  # bob's batches are the oldest ...
        mine.append(alice.post(f"/api/nodes/{make_node(alice, sp, f'b{i}', shared)['id']}"
                               "/trash").json["id"])
    for i in range(7):  # ... behind seven he cannot see
        alice.post(f"/api/nodes/{make_node(alice, sp, f'a{i}')['id']}/trash")
    mine.append(alice.post(f"/api/nodes/{make_node(alice, sp, 'b-new', shared)['id']}"
                           "/trash").json["id"])
    seen, cursor, pages = [], None, 0
    while True:
        r = bob.get(f"/api/spaces/{sp}/trash",
                    params={"limit": "1", **({"cursor": cursor} if cursor else {})})
        assert r.status_code == 200, r.text
        assert len(r.json["items"]) <= 1
        seen += [b["id"] for b in r.json["items"]]
        cursor, pages = r.json["next_cursor"], pages + 1
        if cursor is None:
            break
        assert pages < 20
    assert seen == sorted(mine, reverse=True)
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(TrashBatch)) == 10
    # alice (owner) sees all ten, newest first, in full pages
    first = alice.get(f"/api/spaces/{sp}/trash", params={"limit": "4"}).json
    assert len(first["items"]) == 4 and first["next_cursor"]


def test_restore_racing_a_trash_of_the_folder_above_never_strands_nodes(world, db):
    """Restore R while P (above R) is being trashed: either R comes back first and goes
    into P's batch, or P's batch is first and R's restore is refused — R never ends up
    restored below a trashed P (where P's purge would delete it unannounced)."""
    from tests.spaces.test_nodes import _race
    from tests.support.foundation import bearer, make_token
    alice = world.user("alice")
    sp = alice.personal_space_id
    token = make_token(alice)["token"]
    for round_ in range(4):
        p = make_node(alice, sp, f"P{round_}")["id"]
        r_ = make_node(alice, sp, "R", p)["id"]
        inner = alice.post(f"/api/nodes/{r_}/trash").json
        c1, c2 = world.anonymous(), world.anonymous()
        restored, trashed = _race([
            lambda: c1.post(f"/api/trash-batches/{inner['id']}/restore", headers=bearer(token)),
            lambda: c2.post(f"/api/nodes/{p}/trash", headers=bearer(token)),
        ])
        assert trashed.status_code == 200, trashed.text
        with db.read() as s:
            r_batch = s.get(Node, r_).trash_batch_id
        if restored.status_code == 200:
            assert r_batch == trashed.json["id"] and trashed.json["node_count"] == 2
        else:
            assert_problem(restored, 409, "ancestor_trashed")
            assert r_batch == inner["id"] and trashed.json["node_count"] == 1


def test_a_rename_and_move_locks_the_space_before_it_writes_the_node(world, db):
    """Trash locks the space row, then the node. A PATCH that renames and moves must take
    the same order: with the rename flushed first it locked the node, then waited for the
    space, and a concurrent trash of that node deadlocked on PostgreSQL (a 503 for one of
    the two clients)."""
    import threading

    from sqlalchemy import event
    alice = world.user("alice")
    sp = alice.personal_space_id
    dest = make_node(alice, sp, "dest")["id"]
    node = make_node(alice, sp, "n")["id"]
    statements: list[str] = []
    me = threading.get_ident()

    def record(conn, cursor, statement, parameters, context, executemany):
        if threading.get_ident() == me:
            statements.append(" ".join(statement.split()).upper())

    event.listen(db.write_engine, "before_cursor_execute", record)
    try:
        r = alice.patch(f"/api/nodes/{node}", json={"name": "renamed", "parent_id": dest})
    finally:
        event.remove(db.write_engine, "before_cursor_execute", record)
    assert r.status_code == 200, r.text
    node_write = next(i for i, s in enumerate(statements) if s.startswith("UPDATE NODES"))
    if db.write_engine.dialect.name == "postgresql":
        space_lock = next(i for i, s in enumerate(statements)
                          if "FROM SPACES" in s and "FOR UPDATE" in s)
        assert space_lock < node_write, statements
    assert alice.get(f"/api/nodes/{node}").json["name"] == "renamed"
