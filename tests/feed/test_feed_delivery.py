"""What a connection hears: a unit's changes, its own operations, resume by cursor (the
missed events, or ``resync``), SSE with ``Last-Event-ID``, the slow-consumer close and
the per-user cap."""
from __future__ import annotations

import json
import socket
import time

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from tests.feed.conftest import make_feed, recv, recv_until, silent, ticket
from tests.hostile.test_units import _unit
from wharf.feed.events import Event, EventType
from wharf.observability.metrics import REGISTRY


def test_a_unit_and_my_operations(world, worker, feed):
    alice, unit_id = _unit(world, worker)
    mallory = world.user("mallory")
    with pytest.raises(InvalidStatus) as hidden:
        connect(feed.url(f"ticket={ticket(mallory)}&units={unit_id}"))
    assert hidden.value.response.status_code == 404
    with connect(feed.url(f"ticket={ticket(alice)}&units={unit_id}&operations=mine")) as ws, \
            connect(feed.url(f"ticket={ticket(mallory)}&operations=mine")) as other:
        assert recv(ws)["type"] == "ready" and recv(other)["type"] == "ready"
        r = alice.post(f"/api/units/{unit_id}/changesets", json={
            "base_revision": 0, "changes": [{"op": "add", "path": "/body/a", "value": 1}]})
        assert r.status_code == 200, r.text
        event = recv(ws)
        assert (event["type"], event["unit_id"], event["revision"]) == \
            ("unit.changed", unit_id, 1)
        r = alice.post("/api/resources", json={"space_id": alice.personal_space_id,
                                               "name": "Second", "unit_type": "doc"},
                       headers={"Idempotency-Key": "feed-second-resource"})
        assert r.status_code == 202, r.text
        done = recv_until(ws, "operation.done", timeout=30)[-1]
        assert (done["operation_id"], done["status"]) == (r.json["id"], "completed")
        assert silent(other, 0.3) == []  # not mallory's operation


def test_resume_by_cursor_replays_what_was_missed(world, feed):
    alice = world.user("alice")
    space = alice.personal_space_id
    with connect(feed.url(f"ticket={ticket(alice)}&spaces={space}")) as ws:
        cursor = recv(ws)["cursor"]
    for name in ("A", "B"):
        assert alice.post("/api/nodes", json={"space_id": space, "name": name}).status_code \
            == 201
    with connect(feed.url(f"ticket={ticket(alice)}&spaces={space}&cursor={cursor}")) as ws:
        got = recv_until(ws, "ready")
        assert [e["type"] for e in got] == ["tree.changed", "tree.changed", "ready"]
        assert got[-1]["cursor"] == got[1]["cursor"]
        assert silent(ws, 0.3) == []  # each once
        assert alice.post("/api/nodes", json={"space_id": space, "name": "C"}).status_code \
            == 201
        assert recv(ws)["type"] == "tree.changed"
    # a cursor this log never had (or one past the window): resync, then ready
    with connect(feed.url(f"ticket={ticket(alice)}&spaces={space}"
                          f"&cursor=99999999999999-0")) as ws:
        assert [e["type"] for e in recv_until(ws, "ready")] == ["resync", "ready"]


def test_sse_with_last_event_id(world, feed):
    alice = world.user("alice")
    space = alice.personal_space_id
    base = f"http://127.0.0.1:{feed.port}/api/feed"
    with httpx.Client(timeout=10, trust_env=False) as http:
        r = http.get(f"{base}?ticket={ticket(alice)}&spaces={space}")
        assert r.status_code == 406
        r = http.get(f"{base}?ticket=nope", headers={"Accept": "text/event-stream"})
        assert r.status_code == 401 and r.json()["code"] == "invalid_ticket"
        assert r.headers["content-type"] == "application/problem+json"
        with http.stream("GET", f"{base}?ticket={ticket(alice)}&spaces={space}",
                         headers={"Accept": "text/event-stream"}) as stream:
            lines = stream.iter_lines()
            ready = json.loads(next(x for x in lines if x.startswith("data:"))[5:])
            assert ready["type"] == "ready"
        assert alice.post("/api/nodes", json={"space_id": space, "name": "A"}).status_code \
            == 201
        with http.stream("GET", f"{base}?ticket={ticket(alice)}&spaces={space}",
                         headers={"Accept": "text/event-stream",
                                  "Last-Event-ID": ready["cursor"]}) as stream:
            lines = stream.iter_lines()
            ids = []
            seen = []
            for line in lines:
                if line.startswith("id:"):
                    ids.append(line[3:].strip())
                if line.startswith("data:"):
                    seen.append(json.loads(line[5:]))
                    if seen[-1]["type"] == "ready":
                        break
            assert [e["type"] for e in seen] == ["tree.changed", "ready"]
            assert ids[0] == seen[0]["cursor"]


#: Batches of 1,000 events (90 KiB) published to a client that does not read: enough to fill the
#: socket buffers of a small receive window, the transport's and a queue of 10.
SLOW_BATCHES = 100


def _dropped() -> float:
    return REGISTRY.get_sample_value("wharf_feed_connections_dropped_total") or 0.0


def test_a_slow_consumer_is_closed_with_4008(world, components):
    feed = make_feed(components, feed_buffer=10)
    try:
        alice = world.user("alice")
        space = alice.personal_space_id
        # a client that stops reading, with a small receive window: what the feed writes
        # fills the sockets' buffers, then the transport's, then the connection's queue
        dropped = _dropped()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", feed.port))
        with connect(feed.url(f"ticket={ticket(alice)}&spaces={space}"), sock=sock,
                     max_queue=4) as ws:
            assert recv(ws)["type"] == "ready"
            for _ in range(SLOW_BATCHES):
                components.feed_bus.publish([Event(EventType.TREE_CHANGED, space_id=space)
                                             for _ in range(1000)])
            components.feed_bus.flush()
            deadline = time.monotonic() + 30
            while _dropped() == dropped and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _dropped() == dropped + 1  # counted
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    ws.recv(timeout=5)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4008
    finally:
        feed.stop()


def test_connections_per_user_are_capped(world, components):
    feed = make_feed(components, feed_max_connections_per_user=2)
    try:
        alice, bob = world.user("alice"), world.user("bob")
        with connect(feed.url(f"ticket={ticket(alice)}")) as first, \
                connect(feed.url(f"ticket={ticket(alice)}")):
            with pytest.raises(InvalidStatus) as capped:
                connect(feed.url(f"ticket={ticket(alice)}"))
            assert capped.value.response.status_code == 429
            with connect(feed.url(f"ticket={ticket(bob)}")) as ws:  # bob has his own
                assert recv(ws)["type"] == "ready"
            first.close()
            deadline = time.monotonic() + 5
            while True:  # the server sees the close a moment later
                try:
                    with connect(feed.url(f"ticket={ticket(alice)}")) as ws:
                        assert recv(ws)["type"] == "ready"
                    break
                except InvalidStatus:
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
    finally:
        feed.stop()


def test_a_vanished_sse_client_is_let_go_within_a_ping_interval(world, components):
    feed = make_feed(components, feed_ping_interval=1.0)
    try:
        alice = world.user("alice")
        with httpx.Client(timeout=10, trust_env=False) as http, \
                http.stream("GET", feed.url(f"ticket={ticket(alice)}", scheme="http"),
                            headers={"Accept": "text/event-stream"}) as stream:
            lines = stream.iter_lines()
            assert next(x for x in lines if x.startswith(":")) == ": ping"
            assert feed.app.hub.by_user == {alice.user_id: 1}
        deadline = time.monotonic() + 3
        while feed.app.hub.by_user:
            assert time.monotonic() < deadline, feed.app.hub.by_user
            time.sleep(0.05)
    finally:
        feed.stop()
