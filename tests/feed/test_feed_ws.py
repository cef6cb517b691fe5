"""The feed over WebSocket: admission, ready, delivery decided at delivery time."""
from __future__ import annotations

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.feed.conftest import recv, recv_until, silent, ticket
from tests.support.foundation import team_space


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
