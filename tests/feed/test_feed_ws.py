"""The feed over WebSocket: admission, ready, delivery decided at delivery time."""
from __future__ import annotations

import statistics
import time

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.feed.conftest import recv, recv_until, silent, ticket
from tests.support.foundation import make_node, team_space


def test_ready_then_a_tree_change_of_a_subscribed_space(world, feed, components):
    alice = world.user("alice")
    sid = team_space(alice)["id"]
    with connect(feed.url(f"ticket={ticket(alice)}&spaces={sid}")) as ws:
        ready = recv(ws)
        assert ready["type"] == "ready" and ready["cursor"]
        r = alice.post("/api/nodes", json={"space_id": sid, "name": "Projects"})
        assert r.status_code == 201, r.text
        event = recv(ws)
        assert event["type"] == "tree.changed" and event["space_id"] == sid
        assert event["cursor"] > ready["cursor"] or len(event["cursor"]) > len(ready["cursor"])
        assert "actor_id" not in event and "node_id" not in event


def test_refusals_before_the_upgrade(world, feed):
    alice, bob = world.user("alice"), world.user("bob")
    sid = team_space(alice)["id"]
    with pytest.raises(InvalidStatus) as bad:
        connect(feed.url("ticket=nonsense"))
    assert bad.value.response.status_code == 401
    assert b'"invalid_ticket"' in bad.value.response.body
    used = ticket(alice)
    with connect(feed.url(f"ticket={used}")) as ws:
        assert recv(ws)["type"] == "ready"
    with pytest.raises(InvalidStatus) as again:
        connect(feed.url(f"ticket={used}"))
    assert again.value.response.status_code == 401
    # bob may not follow alice's team space: as if it did not exist
    with pytest.raises(InvalidStatus) as hidden:
        connect(feed.url(f"ticket={ticket(bob)}&spaces={sid}"))
    with pytest.raises(InvalidStatus) as missing:
        connect(feed.url(f"ticket={ticket(bob)}&spaces={'0' * 32}"))
    assert hidden.value.response.status_code == missing.value.response.status_code == 404
    assert hidden.value.response.body == missing.value.response.body


def test_removed_member_stops_hearing_at_once(world, feed):
    alice, bob = world.user("alice"), world.user("bob")
    sid = team_space(alice)["id"]
    r = alice.put(f"/api/spaces/{sid}/members/{bob.user_id}", json={"role": "viewer"})
    assert r.status_code == 201, r.text
    with connect(feed.url(f"ticket={ticket(bob)}&spaces={sid}")) as ws, \
            connect(feed.url(f"ticket={ticket(alice)}&spaces={sid}")) as owner:
        assert recv(ws)["type"] == "ready" and recv(owner)["type"] == "ready"
        assert alice.post("/api/nodes", json={"space_id": sid, "name": "A"}).status_code == 201
        assert recv(ws)["type"] == "tree.changed"
        assert recv(owner)["type"] == "tree.changed"
        assert alice.delete(f"/api/spaces/{sid}/members/{bob.user_id}").status_code == 204
        assert alice.post("/api/nodes", json={"space_id": sid, "name": "B"}).status_code == 201
        # the owner hears the removal's and the new folder's events; bob nothing more
        recv_until(owner, "tree.changed")
        assert silent(ws, 0.5) == []


def test_issues_of_a_team_space_reach_its_members(world, feed):
    alice, bob = world.user("alice"), world.user("bob")
    sid = team_space(alice)["id"]
    assert alice.put(f"/api/spaces/{sid}/members/{bob.user_id}",
                     json={"role": "editor"}).status_code == 201
    with connect(feed.url(f"ticket={ticket(bob)}&spaces={sid}")) as ws, \
            connect(feed.url(f"ticket={ticket(alice)}&worktrees=1")) as other:
        assert recv(ws)["type"] == "ready" and recv(other)["type"] == "ready"
        r = alice.post(f"/api/spaces/{sid}/issues", json={"title": "Broken", "body": "x"})
        assert r.status_code == 201, r.text
        event = recv(ws)
        assert (event["type"], event["space_id"], event["number"]) == \
            ("issues.changed", sid, r.json["number"])
        assert silent(other, 0.3) == []  # subscribed to worktrees only


@pytest.mark.both_databases
def test_a_signed_in_stranger_follows_a_public_read_space_as_the_routes_let_them_read(
        world, feed):
    """Per the resolvers: a public-read team space's tree (root and folders) and issues
    are readable by any signed-in user, so its events reach them; turning public read off
    stops them at the next event (and a new subscription is then refused as not found)."""
    alice, carol = world.user("alice"), world.user("carol")
    sid = team_space(alice)["id"]
    folder = make_node(alice, sid, "Plans")["id"]
    assert alice.patch(f"/api/spaces/{sid}", json={"public_read": True}).status_code == 200
    assert carol.get(f"/api/spaces/{sid}/issues").status_code == 200  # the routes' rule
    with connect(feed.url(f"ticket={ticket(carol)}&spaces={sid}")) as ws:
        assert recv(ws)["type"] == "ready"
        make_node(alice, sid, "Root child")
        assert recv(ws)["type"] == "tree.changed"
        make_node(alice, sid, "Inner", parent_id=folder)
        event = recv(ws)
        assert (event["type"], event["parent_id"]) == ("tree.changed", folder)
        r = alice.post(f"/api/spaces/{sid}/issues", json={"title": "Seen by readers"})
        assert r.status_code == 201, r.text
        event = recv(ws)
        assert (event["type"], event["number"]) == ("issues.changed", r.json["number"])

        assert alice.patch(f"/api/spaces/{sid}",
                           json={"public_read": False}).status_code == 200
        make_node(alice, sid, "After")
        assert alice.post(f"/api/spaces/{sid}/issues", json={"title": "x"}).status_code == 201
        assert silent(ws, 0.5) == []
    with pytest.raises(InvalidStatus) as refused:
        connect(feed.url(f"ticket={ticket(carol)}&spaces={sid}"))
    assert refused.value.response.status_code == 404


@pytest.mark.both_databases
def test_a_stranger_cannot_tell_a_hidden_space_from_a_missing_one(world, feed, components):
    """Subscribing to a space you cannot see and to one that does not exist: the same
    answer, the same database statements (so the same work), and times that differ by no
    more than the run's own spread (interleaved attempts)."""
    from sqlalchemy import event as sa_event
    alice, bob = world.user("alice"), world.user("bob")
    hidden, missing = team_space(alice)["id"], "0" * 32
    statements: dict[str, list[str]] = {}
    current: list[str] = []

    def count(conn, cursor, statement, *args) -> None:
        current.append(statement)

    engines = {components.db.write_engine, components.db.read_engine}
    for engine in engines:
        sa_event.listen(engine, "before_cursor_execute", count)
    answers: dict[str, list[tuple[int, bytes]]] = {hidden: [], missing: []}
    times: dict[str, list[float]] = {hidden: [], missing: []}
    try:
        for i in range(2 * ROUNDS):
            sid = (hidden, missing)[i % 2]
            url = feed.url(f"ticket={ticket(bob)}&spaces={sid}")
            current.clear()
            t0 = time.perf_counter()
            with pytest.raises(InvalidStatus) as refused:
                connect(url)
            times[sid].append(time.perf_counter() - t0)
            statements[sid] = list(current)
            response = refused.value.response
            answers[sid].append((response.status_code, bytes(response.body)))
    finally:
        for engine in engines:
            sa_event.remove(engine, "before_cursor_execute", count)
    assert set(answers[hidden]) == set(answers[missing]) and len(set(answers[hidden])) == 1
    assert answers[hidden][0][0] == 404 and statements[hidden]
    assert [_shape(s) for s in statements[hidden]] == [_shape(s) for s in statements[missing]]
    hid, mis = statistics.median(times[hidden]), statistics.median(times[missing])
    spread = statistics.quantiles(times[hidden] + times[missing], n=4)
    assert abs(hid - mis) <= spread[2] - spread[0], (hid, mis, spread)


#: Attempts at each kind of space, interleaved.
ROUNDS = 25


def _shape(statement: str) -> str:
    return " ".join(statement.split())
