"""Completion notices for long-polls: a worker that completes a batch wakes the long-poll of
every operation in it, in this process (``LocalNotifier``) and in an API process elsewhere
(``RedisNotifier``: one ``PUBLISH`` for the batch). A notice carries the finished operation,
so the long-poll answers without reading it again; an operation the waiting process
accepted for its reader is not read before its notice either."""
from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tasks.notify import RedisNotifier
from tests.support import services
from tests.support.waiting import wait_until
from wharf.operations import notify
from wharf.operations.notify import Done, LocalNotifier


@contextlib.contextmanager
def redis_notifiers() -> Iterator[tuple[RedisNotifier, RedisNotifier]]:
    """A subscribed waiter and a publisher on this test's Redis namespace: yielded once
    Redis counts the waiter's subscription (``_ensure_subscriber`` waits at most 2 s for
    its thread to send SUBSCRIBE; on a loaded machine a notice published before Redis has
    it is lost, and a test that publishes first would then wait on nothing)."""
    services.need(services.redis_error())
    ns = services.RedisNamespace("notify")
    waiter, publisher = RedisNotifier(ns.url, ns.name), RedisNotifier(ns.url, ns.name)
    try:
        waiter._ensure_subscriber()
        wait_until(lambda: publisher.client.pubsub_numsub(waiter.channel)[0][1] >= 1, 10,
                   "Redis to count the waiter's subscription")
        yield waiter, publisher
    finally:
        waiter.close()
        publisher.close()
        ns.close()


@pytest.fixture(params=["local", "redis"])
def notifiers(request) -> Iterator[tuple[LocalNotifier, LocalNotifier]]:
    if request.param == "local":
        local = LocalNotifier()
        yield local, local
        return
    with redis_notifiers() as pair:
        yield pair


def test_a_finished_batch_wakes_every_long_poll_of_it_at_once(notifiers):
    waiter, publisher = notifiers
    ids = [f"op-{i}" for i in range(8)]
    done: set[str] = set()
    waited: dict[str, float] = {}

    def one(op_id: str) -> None:
        t0 = time.monotonic()
        if waiter.wait(op_id, 20, lambda: op_id in done):
            waited[op_id] = time.monotonic() - t0

    threads = [threading.Thread(target=one, args=(op_id,)) for op_id in [*ids, "op-other"]]
    for t in threads:
        t.start()
    time.sleep(0.5)  # every long-poll registered, none done
    assert not waited
    done.update(ids)
    publisher.publish_many(ids)
    for t in threads[:-1]:
        t.join(5)
    assert sorted(waited) == sorted(ids), "a long-poll of the batch was not woken"
    assert max(waited.values()) < 5
    assert "op-other" not in waited  # only the batch's own long-polls woke
    done.add("op-other")
    publisher.publish_many(["op-other"])
    threads[-1].join(5)
    assert "op-other" in waited


def done(op_id: str, actor: str = "alice", **fields) -> Done:
    at = datetime(2026, 12, 5, 6, 40, 1, 123456, tzinfo=UTC)
    values = {"id": op_id, "actor_id": actor, "kind": "create_resource",
              "status": "completed", "attempts": 1, "max_attempts": 5, "created_at": at,
              "updated_at": at, "completed_at": at, "result": {"resource_id": "r1"},
              **fields}
    return Done(**values)


class Poll:
    """One long-poll in a thread, recording its reads (``is_done``) and its answer."""

    def __init__(self, notifier: LocalNotifier, op_id: str, *, reader: str | None = None,
                 timeout: float = 20, in_db: bool = False):
        self.reads = 0
        self.answer: Done | None = None
        self.result: bool | None = None
        self.in_db = in_db  # what a read finds: done or not
        self.elapsed = 0.0

        def is_done() -> bool:
            self.reads += 1
            return self.in_db

        def run() -> None:
            t0 = time.monotonic()
            self.result = notifier.wait(op_id, timeout, is_done,
                                        answer=lambda n: setattr(self, "answer", n),
                                        reader=reader)
            self.elapsed = time.monotonic() - t0

        self.thread = threading.Thread(target=run)
        self.thread.start()

    def registered(self, notifier: LocalNotifier, op_id: str, reads: int = 0) -> Poll:
        """Once the long-poll waits (its waiter registered, ``reads`` reads made)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with notifier._lock:
                if notifier._waiters.get(op_id) and self.reads >= reads:
                    return self
            time.sleep(0.01)
        raise AssertionError(f"the long-poll of {op_id} never waited")

    def join(self) -> Poll:
        self.thread.join(10)
        assert not self.thread.is_alive()
        return self


def test_a_notice_answers_the_long_poll_with_what_was_committed_without_a_read(notifiers):
    waiter, publisher = notifiers
    poll = Poll(waiter, "op-1").registered(waiter, "op-1", reads=1)  # not done
    notice = done("op-1", result={"resource_id": "r1", "note": "é" * 10})
    publisher.publish_many([notice])
    poll.join()
    assert poll.result is True and poll.answer == notice  # equal across the wire
    assert poll.reads == 1  # the first read only; the answer came with the notice


def test_a_notice_of_the_id_alone_makes_the_long_poll_read_once_more(notifiers):
    waiter, publisher = notifiers
    poll = Poll(waiter, "op-1").registered(waiter, "op-1", reads=1)
    poll.in_db = True
    publisher.publish_many(["op-1"])
    poll.join()
    assert poll.result is True and poll.answer is None and poll.reads == 2


def test_an_expected_operation_is_not_read_before_its_notice_by_its_actor_only(notifiers):
    waiter, publisher = notifiers
    waiter.expect("op-1", "alice")
    mine, theirs = Poll(waiter, "op-1", reader="alice"), Poll(waiter, "op-1", reader="bob")
    theirs.registered(waiter, "op-1", reads=1)
    mine.registered(waiter, "op-1")
    time.sleep(0.1)
    assert mine.reads == 0  # waits for the notice: it will come
    assert theirs.reads == 1  # not the actor's own: read (and its 404) first
    publisher.publish_many([done("op-1")])
    assert mine.join().answer == done("op-1") and mine.reads == 0
    assert theirs.join().answer == done("op-1") and theirs.reads == 1


def test_a_notice_heard_before_its_expectation_is_not_waited_for(notifiers):
    waiter, publisher = notifiers
    publisher.publish_many([done("op-1")])  # the worker beat the API's expect()
    wait_until(lambda: "op-1" in waiter._heard, 10, "the waiter to hear the notice")
    waiter.expect("op-1", "alice")
    poll = Poll(waiter, "op-1", reader="alice", in_db=True).join()
    assert poll.result is True and poll.reads == 1
    assert poll.elapsed < notify.CONFIRM_SECONDS


def test_a_lost_notice_delays_an_expected_long_poll_by_the_confirmation_only(
        notifiers, monkeypatch):
    waiter, _ = notifiers
    monkeypatch.setattr(notify, "CONFIRM_SECONDS", 0.3)
    waiter.expect("op-1", "alice")
    poll = Poll(waiter, "op-1", reader="alice", in_db=True).join()  # done, never announced
    assert poll.result is True and poll.reads == 1
    assert 0.25 <= poll.elapsed < 5
    # Not done either: read after the confirmation, then waits for the notice as usual.
    waiter.expect("op-2", "alice")
    pending = Poll(waiter, "op-2", reader="alice", timeout=1.0).join()
    assert pending.result is False and pending.reads == 2


def test_expectations_are_bounded_in_number_and_time(monkeypatch):
    notifier = LocalNotifier()
    monkeypatch.setattr(notify, "EXPECT_MAX", 5)
    for i in range(12):
        notifier.expect(f"op-{i}", "alice")
        notifier.wake(f"other-{i}")
    assert list(notifier._expected) == [f"op-{i}" for i in range(7, 12)]
    assert list(notifier._heard) == [f"other-{i}" for i in range(7, 12)]
    monkeypatch.setattr(notify, "EXPECT_SECONDS", 0.2)
    notifier.forget_expected()
    notifier.expect("op-old", "alice")
    time.sleep(0.3)
    poll = Poll(notifier, "op-old", reader="alice", in_db=True).join()
    assert poll.reads == 1 and poll.elapsed < 0.2  # past its time: read first
    notifier.expect("op-new", "alice")  # the stale one goes
    assert list(notifier._expected) == ["op-new"]


def test_a_polling_notifier_expects_nothing():
    from wharf.operations.notify import PollingNotifier
    notifier = PollingNotifier(interval=0.1)
    notifier.expect("op-1", "alice")  # completions elsewhere never reach it
    assert not notifier._expected
    poll = Poll(notifier, "op-1", reader="alice", in_db=True).join()
    assert poll.reads == 1 and poll.elapsed < 1
    # Nor does it skip a read for an operation it would have expected.
    notifier._expected["op-2"] = ("alice", time.monotonic() + 60)
    poll = Poll(notifier, "op-2", reader="alice", in_db=True).join()
    assert poll.reads == 1 and poll.elapsed < notify.CONFIRM_SECONDS


def test_a_notice_of_an_unfinished_operation_is_not_an_answer():
    notifier = LocalNotifier()
    poll = Poll(notifier, "op-1", timeout=1).registered(notifier, "op-1", reads=1)
    notifier.publish(done("op-1", status="running"))
    assert poll.join().answer is None and poll.reads == 2


@pytest.fixture
def redis_pair() -> Iterator[tuple[RedisNotifier, RedisNotifier]]:
    with redis_notifiers() as pair:
        yield pair


def test_a_batch_is_one_message_and_a_large_notice_goes_as_its_id(redis_pair, monkeypatch):
    from tasks import notify as redis_notify
    waiter, publisher = redis_pair
    sent: list[bytes] = []
    real = publisher.client.publish
    monkeypatch.setattr(publisher.client, "publish",
                        lambda channel, message: sent.append(message) or real(channel, message))
    big = done("op-big", result={"text": "x" * redis_notify.NOTICE_MAX_BYTES})
    polls = {i: Poll(waiter, i) for i in ("op-1", "op-2", "op-big")}
    for op_id, poll in polls.items():
        poll.registered(waiter, op_id, reads=1)
    polls["op-big"].in_db = True
    publisher.publish_many([done("op-1"), done("op-2"), big])
    assert len(sent) == 1  # the whole batch: one PUBLISH
    assert redis_notify.read_message(sent[0]) == [done("op-1"), done("op-2"), "op-big"]
    assert polls["op-1"].join().answer == done("op-1")
    assert polls["op-2"].join().answer == done("op-2")
    assert polls["op-big"].join().answer is None and polls["op-big"].reads == 2
    # Past MESSAGE_MAX_BYTES a batch is split; every notice arrives.
    many = [done(f"op-{i}", result={"text": "y" * 4000}) for i in range(40)]
    parts = list(redis_notify.messages(many))
    assert len(parts) > 1 and all(len(p) <= redis_notify.MESSAGE_MAX_BYTES for p in parts)
    assert [n for p in parts for n in redis_notify.read_message(p)] == many


def test_an_older_workers_bare_id_wakes_and_a_malformed_message_is_ignored(redis_pair):
    waiter, publisher = redis_pair
    poll = Poll(waiter, "op-1").registered(waiter, "op-1", reads=1)
    publisher.client.publish(waiter.channel, b"[not json")
    publisher.client.publish(waiter.channel, b'[{"id": 7}]')
    time.sleep(0.3)
    assert poll.thread.is_alive()  # nothing understood, nothing woken; still listening
    poll.in_db = True
    publisher.client.publish(waiter.channel, b"op-1")  # what an older worker sends
    assert poll.join().result is True and poll.reads == 2


def test_losing_the_subscription_forgets_what_was_expected(redis_pair):
    waiter, publisher = redis_pair
    waiter.expect("op-1", "alice")
    assert waiter.listening() and "op-1" in waiter._expected
    # The subscriber's own connection (the Redis server is shared): notices published
    # while it is gone are lost.
    host, port = waiter._pubsub.connection._sock.getsockname()[:2]
    publisher.client.client_kill_filter(_type="pubsub", addr=f"{host}:{port}")
    deadline = time.monotonic() + 10
    while "op-1" in waiter._expected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "op-1" not in waiter._expected
    # Subscribed again: it hears (and expects) as before.
    while not waiter.listening() and time.monotonic() < deadline:
        time.sleep(0.05)
    waiter.expect("op-2", "alice")
    poll = Poll(waiter, "op-2", reader="alice").registered(waiter, "op-2")
    publisher.publish_many([done("op-2")])
    assert poll.join().answer == done("op-2") and poll.reads == 0
