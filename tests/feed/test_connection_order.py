"""A connection's order of events (``api.feed.hub.Connection.deliver``): an event already
sent is not sent again, and an event of a log that started again (its cursors lower than
what the connection was sent) is not lost while the ``resync`` that tells the client
still waits in the connection's queue behind earlier messages."""
from __future__ import annotations

from api.feed.hub import Connection, Subscription


def _connection() -> Connection:
    return Connection(user_id="u", subscription=Subscription(frozenset({"s"})),
                      transport="ws", buffer=10)


def test_an_event_sent_already_is_skipped_when_nothing_waits():
    conn = _connection()
    conn.last = (1000, 0)
    assert conn.deliver("999-0", (999, 0), '{"n": 1}', b"") is False
    assert list(conn.items) == []
    assert conn.deliver("1001-0", (1001, 0), '{"n": 2}', b"") is True
    assert list(conn.items) == [("1001-0", '{"n": 2}')]


def test_a_new_logs_event_queues_behind_a_waiting_resync():
    conn = _connection()
    conn.last = (1000, 0)  # sent up to here from the old log
    conn.offer("1001-0", '{"old": true}')  # still being sent when the log went back
    conn.offer(None, '{"type": "resync"}')  # Hub.resync: told after what waits before it
    # the log started again: its first event's cursor is far below what was sent
    assert conn.deliver("1-0", (1, 0), '{"new": 1}', b"") is True
    assert [c for c, _ in conn.items] == ["1001-0", None, "1-0"]
