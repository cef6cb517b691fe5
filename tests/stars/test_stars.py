"""Stars (issue 41 item 4): ``PUT|DELETE /api/me/stars/{resource_id}``, ``GET
/api/me/stars``: idempotent, permission- and trash-aware like recent, capped per user,
gone with the resource. On both databases."""
from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import func, select

from storage.models import AuditLog, Star
from tests.support.foundation import add_member, assert_problem, make_node, make_token, team_space
from wharf.recent import stars

pytestmark = pytest.mark.both_databases


def key() -> str:
    return uuid.uuid4().hex


def unit(client, space_id, name, parent_id=None) -> str:
    """A unit resource, created by its operation (the in-process worker runs it)."""
    r = client.post("/api/resources", json={"space_id": space_id, "parent_id": parent_id,
                                            "name": name, "unit_type": "doc"},
                    headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    done = client.get(f"/api/operations/{r.json['id']}", params={"wait": "30"}).json
    assert done["status"] == "completed", done
    return str(done["result"]["resource_id"])


def starred(client, **params) -> list[str]:
    r = client.get("/api/me/stars", params=params)
    assert r.status_code == 200, r.text
    return [i["resource_id"] for i in r.json["items"]]


def star_rows(db, user_id: str | None = None) -> int:
    with db.read() as s:
        q = select(func.count()).select_from(Star)
        if user_id is not None:
            q = q.where(Star.user_id == user_id)
        return int(s.scalar(q) or 0)


def test_star_unstar_list_newest_first_and_trash_aware(world, worker, db):
    alice = world.user("alice")
    sp = alice.personal_space_id
    folder = make_node(alice, sp, "Folder")["id"]
    first, second = unit(alice, sp, "first", folder), unit(alice, sp, "second")
    assert alice.put(f"/api/me/stars/{first}").status_code == 204
    assert alice.put(f"/api/me/stars/{second}").status_code == 204
    assert alice.put(f"/api/me/stars/{first}").status_code == 204  # again: no change
    assert star_rows(db, alice.user_id) == 2
    page = alice.get("/api/me/stars").json
    assert [i["resource_id"] for i in page["items"]] == [second, first]
    assert page["next_cursor"] is None
    item = page["items"][1]
    assert (item["kind"], item["name"], item["space_id"], item["parent_id"]) == \
        ("unit", "first", sp, folder)
    assert set(item) == {"resource_id", "kind", "node_id", "name", "space_id", "parent_id",
                         "starred_at"}
    # names come from the node at read time
    alice.patch(f"/api/nodes/{item['node_id']}", json={"name": "renamed"})
    assert alice.get("/api/me/stars").json["items"][1]["name"] == "renamed"
    # keyset pages
    p1 = alice.get("/api/me/stars", params={"limit": "1"}).json
    p2 = alice.get("/api/me/stars", params={"limit": "1", "cursor": p1["next_cursor"]}).json
    assert [i["resource_id"] for i in p1["items"] + p2["items"]] == [second, first]
    assert p2["next_cursor"] is None
    assert_problem(alice.get("/api/me/stars", params={"cursor": p1["next_cursor"] + "x"}),
                   400, "invalid_cursor")
    # the folder in the trash hides the star below it; restore brings it back
    assert alice.post(f"/api/nodes/{folder}/trash").status_code == 200
    assert starred(alice) == [second]
    assert_problem(alice.put(f"/api/me/stars/{first}"), 404)  # trashed: not discoverable
    batch = next(b for b in alice.get(f"/api/spaces/{sp}/trash").json["items"]
                 if b["root_node_id"] == folder)
    assert alice.post(f"/api/trash-batches/{batch['id']}/restore").status_code == 200
    assert starred(alice) == [second, first]
    # unstar, twice
    assert alice.delete(f"/api/me/stars/{second}").status_code == 204
    assert alice.delete(f"/api/me/stars/{second}").status_code == 204
    assert alice.delete(f"/api/me/stars/{'0' * 32}").status_code == 204
    assert alice.delete("/api/me/stars/not-an-id").status_code == 204
    assert starred(alice) == [first]
    # a personal preference: not audited (as a recent open is not)
    with db.read() as s:
        assert not [a for a in s.scalars(select(AuditLog.action)) if "star" in a]


def test_stars_follow_what_the_caller_can_discover(world, worker, db):
    alice, bob = world.user("alice"), world.user("bob")
    sp = alice.personal_space_id
    shared = make_node(alice, sp, "Shared")["id"]
    rid = unit(alice, sp, "doc", shared)
    hidden = unit(alice, sp, "hidden")
    # what bob cannot see: 404 like every other route, and nothing recorded
    assert_problem(bob.put(f"/api/me/stars/{hidden}"), 404)
    assert_problem(bob.put(f"/api/me/stars/{'f' * 32}"), 404)
    assert_problem(bob.put("/api/me/stars/bad"), 404)
    assert star_rows(db, bob.user_id) == 0
    # a grant lets him star it; revoking it hides the star; granting again shows it
    alice.put(f"/api/nodes/{shared}/grants/{bob.user_id}", json={"role": "viewer"})
    assert bob.put(f"/api/me/stars/{rid}").status_code == 204
    assert starred(bob) == [rid]
    alice.delete(f"/api/nodes/{shared}/grants/{bob.user_id}")
    assert starred(bob) == []
    assert star_rows(db, bob.user_id) == 1  # kept, just not shown
    alice.put(f"/api/nodes/{shared}/grants/{bob.user_id}", json={"role": "viewer"})
    assert starred(bob) == [rid]
    # team membership: a removed member no longer sees the team's starred resource
    team = team_space(alice)["id"]
    add_member(alice, team, bob.user_id, "viewer")
    in_team = unit(alice, team, "team doc")
    assert bob.put(f"/api/me/stars/{in_team}").status_code == 204
    assert starred(bob) == [in_team, rid]
    assert alice.delete(f"/api/spaces/{team}/members/{bob.user_id}").status_code == 204
    assert starred(bob) == [rid]
    # each user sees only their own stars
    assert starred(alice) == []
    # anonymous: 401; a read-only token may list but not star
    anon = world.anonymous()
    assert_problem(anon.get("/api/me/stars"), 401)
    assert_problem(anon.put(f"/api/me/stars/{rid}"), 401)
    assert_problem(anon.delete(f"/api/me/stars/{rid}"), 401)
    token = make_token(bob, scopes=("read",))["token"]
    reader = world.anonymous()
    auth = {"Authorization": f"Bearer {token}"}
    assert reader.get("/api/me/stars", headers=auth).status_code == 200
    assert_problem(reader.put(f"/api/me/stars/{rid}", headers=auth), 403, "insufficient_scope")


def test_stars_per_user_are_capped(world, worker, db, monkeypatch):
    monkeypatch.setattr(stars, "MAX_STARS_PER_USER", 3)
    alice, bob = world.user("alice"), world.user("bob")
    sp = alice.personal_space_id
    rids = [unit(alice, sp, f"d{i}") for i in range(4)]
    for rid in rids[:3]:
        assert alice.put(f"/api/me/stars/{rid}").status_code == 204
    problem = assert_problem(alice.put(f"/api/me/stars/{rids[3]}"), 409, "star_limit")
    assert problem["details"] == {"limit": 3}
    assert alice.put(f"/api/me/stars/{rids[0]}").status_code == 204  # already starred
    assert star_rows(db, alice.user_id) == 3
    # the cap is per user
    assert bob.put(f"/api/me/stars/{unit(bob, bob.personal_space_id, 'mine')}"
                   ).status_code == 204
    assert alice.delete(f"/api/me/stars/{rids[1]}").status_code == 204
    assert alice.put(f"/api/me/stars/{rids[3]}").status_code == 204
    assert star_rows(db, alice.user_id) == 3


def test_concurrent_stars_of_one_resource_make_one_row(world, worker, db):
    alice = world.user("alice")
    rid = unit(alice, alice.personal_space_id, "doc")
    clients = [world.user("alice") for _ in range(4)]
    statuses: list[int] = []
    barrier = threading.Barrier(len(clients))

    def put(c):
        barrier.wait()
        statuses.append(c.put(f"/api/me/stars/{rid}").status_code)

    threads = [threading.Thread(target=put, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert statuses == [204] * len(clients)
    assert star_rows(db, alice.user_id) == 1


def test_a_purged_resource_takes_its_stars_with_it(world, worker, db):
    alice, bob = world.user("alice"), world.user("bob")
    sp = alice.personal_space_id
    folder = make_node(alice, sp, "Doomed")["id"]
    rid = unit(alice, sp, "doc", folder)
    alice.put(f"/api/nodes/{folder}/grants/{bob.user_id}", json={"role": "viewer"})
    for c in (alice, bob):
        assert c.put(f"/api/me/stars/{rid}").status_code == 204
    assert star_rows(db) == 2
    assert alice.post(f"/api/nodes/{folder}/trash").status_code == 200
    r = alice.delete(f"/api/nodes/{folder}", headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    done = alice.get(f"/api/operations/{r.json['id']}", params={"wait": "30"}).json
    assert done["status"] == "completed", done
    assert star_rows(db) == 0
    assert starred(alice) == starred(bob) == []
