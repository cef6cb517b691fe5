"""Feed tickets: one use, 30 seconds, bound to the login session or API token that asked;
only a digest is stored; two feed processes racing for one ticket: one wins."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select, update
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from storage.models import FeedTicket
from tests.feed.conftest import recv, ticket
from wharf.feed import tickets
from wharf.infra.clock import utcnow


def _refused(feed, t: str) -> int:
    with pytest.raises(InvalidStatus) as refused:
        connect(feed.url(f"ticket={t}"))
    return refused.value.response.status_code


def test_a_ticket_is_good_once_for_thirty_seconds(world, feed, db):
    alice = world.user("alice")
    r = alice.post("/api/feed-tickets")
    assert r.status_code == 201, r.text
    expires = datetime.fromisoformat(r.json["expires_at"].replace("Z", "+00:00"))
    assert timedelta(seconds=28) < expires - utcnow() <= timedelta(seconds=30)
    t = r.json["ticket"]
    with db.read() as s:  # a digest is kept, not the ticket
        assert t not in set(s.scalars(select(FeedTicket.digest)))
    with connect(feed.url(f"ticket={t}")) as ws:
        assert recv(ws)["type"] == "ready"
    assert _refused(feed, t) == 401

    late = ticket(alice)
    with db.write() as s:
        s.execute(update(FeedTicket).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert _refused(feed, late) == 401
    assert world.anonymous().post("/api/feed-tickets").status_code == 401


def test_a_ticket_dies_with_its_session_or_token(world, feed):
    alice = world.user("alice")
    t = ticket(alice)
    assert alice.delete("/api/login-sessions/current").status_code == 204
    assert _refused(feed, t) == 401

    alice = world.user("alice")
    r = alice.post("/api/api-tokens", json={"name": "watch", "scopes": ["read", "write"]})
    assert r.status_code == 201, r.text
    token_id, secret = r.json["id"], r.json["token"]
    bot = world.anonymous()
    bot.headers["Authorization"] = f"Bearer {secret}"
    by_token = ticket(bot)
    with connect(feed.url(f"ticket={ticket(bot)}")) as ws:
        assert recv(ws)["type"] == "ready"
    assert alice.delete(f"/api/api-tokens/{token_id}").status_code == 204
    assert _refused(feed, by_token) == 401


@pytest.mark.both_databases
def test_racing_consumers_admit_a_ticket_once(world, components):
    alice = world.user("alice")
    for _ in range(5):
        t = ticket(alice)
        results: list[object] = []
        start = threading.Barrier(4)

        def take(t: str = t) -> None:
            start.wait()
            results.append(tickets.consume(components.db, t))

        threads = [threading.Thread(target=take) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        admitted = [r for r in results if r is not None]
        assert len(admitted) == 1 and len(results) == 4
        assert admitted[0].user_id == alice.user_id  # type: ignore[attr-defined]
