"""Idle consumers that block until a message arrives (``tasks.redis_wake``), on real Redis.

- an idle worker does not poll: about one fetch per consumer per ``IDLE_WAIT``, where
  Dramatiq's own consumer fetches several times a second;
- a message wakes a blocked consumer at once (the test stretches ``IDLE_WAIT`` to 30 s,
  so only the wake token can explain a prompt pickup), and so does a delayed message when
  it falls due;
- a lost wake token (the namespace's keys deleted, as FLUSHDB would) delays a message by
  at most ``IDLE_WAIT``, never loses it;
- a worker whose consumers block still stops promptly.
"""
from __future__ import annotations

import threading
import time

import dramatiq
import pytest
from dramatiq.broker import MessageProxy
from dramatiq.brokers.redis import RedisBroker
from dramatiq.message import Message

from tasks import redis_wake
from tasks.broker import middleware
from tasks.redis_wake import WakingRedisBroker
from tasks.worker import make_worker
from tests.support import services

pytestmark = pytest.mark.redis


class Rig:
    def __init__(self, broker_class: type[RedisBroker] = WakingRedisBroker) -> None:
        services.need(services.redis_error())
        self.ns = services.RedisNamespace("wake")
        self.broker = broker_class(url=services.REDIS_URL, middleware=middleware(),
                                   namespace=self.ns.name, socket_timeout=10)
        self.ran: dict[str, float] = {}
        self.done = threading.Condition()
        self.fetches = 0
        fetch = self.broker.do_fetch

        def counted_fetch(*args):
            self.fetches += 1
            return fetch(*args)

        self.broker.do_fetch = counted_fetch  # an instance attribute: Dramatiq's __getattr__

        @dramatiq.actor(broker=self.broker, queue_name="wake-test", actor_name="note")
        def note(tag: str) -> None:
            with self.done:
                self.ran[tag] = time.monotonic()
                self.done.notify_all()

        self.note = note
        self.worker = make_worker(self.broker, threads=2)

    def start(self) -> None:
        self.worker.start()

    def wait_for(self, tag: str, timeout: float) -> float | None:
        deadline = time.monotonic() + timeout
        with self.done:
            while tag not in self.ran and time.monotonic() < deadline:
                self.done.wait(deadline - time.monotonic())
        return self.ran.get(tag)

    def close(self) -> None:
        self.worker.stop(timeout=10_000)
        self.broker.close()
        self.ns.close()


@pytest.fixture
def rig(request):
    made: list[Rig] = []

    def make(broker_class: type[RedisBroker] = WakingRedisBroker) -> Rig:
        r = Rig(broker_class)
        made.append(r)
        return r

    yield make
    for r in made:
        r.close()


def test_an_idle_worker_fetches_about_once_a_second_per_consumer_not_ten_times(rig):
    waking, polling = rig(), rig(RedisBroker)
    waking.start()
    polling.start()
    time.sleep(0.5)  # the consumers settled
    before = waking.fetches, polling.fetches
    time.sleep(3.0)
    waking_rate = (waking.fetches - before[0]) / 3.0
    polling_rate = (polling.fetches - before[1]) / 3.0
    # Two consumers each (the queue and its delay queue).
    assert waking_rate <= 2 / redis_wake.IDLE_WAIT + 1, waking_rate
    assert polling_rate > 3 * waking_rate, (polling_rate, waking_rate)


def test_a_message_wakes_a_blocked_consumer_at_once(rig, monkeypatch):
    monkeypatch.setattr(redis_wake, "IDLE_WAIT", 30.0)
    r = rig()
    r.start()
    time.sleep(1.0)  # the consumers fetched, found nothing, and block (for up to 30 s)
    for i in range(3):
        sent = time.monotonic()
        r.note.send(f"m{i}")
        ran = r.wait_for(f"m{i}", timeout=10)
        assert ran is not None and ran - sent < 5, "only the wake token explains a prompt run"
        time.sleep(0.3)


def test_a_delayed_message_runs_when_due_although_the_consumers_block(rig, monkeypatch):
    monkeypatch.setattr(redis_wake, "IDLE_WAIT", 30.0)
    r = rig()
    r.start()
    time.sleep(1.0)
    sent = time.monotonic()
    r.note.send_with_options(args=("later",), delay=1500)
    ran = r.wait_for("later", timeout=20)
    assert ran is not None
    assert 1.4 <= ran - sent < 6, ran - sent


def test_a_lost_wake_token_delays_a_message_by_at_most_the_idle_wait(rig, monkeypatch):
    monkeypatch.setattr(redis_wake, "IDLE_WAIT", 2.0)
    r = rig()
    # Enqueue while no consumer runs, then lose the token only (the message stays).
    r.note.send("orphan")
    r.broker.client.delete(r.broker.wake_key("wake-test"))
    started = time.monotonic()
    r.start()
    ran = r.wait_for("orphan", timeout=15)
    assert ran is not None and ran - started < 2.0 + 3, ran - started


def test_a_worker_with_blocked_consumers_stops_promptly(rig):
    r = rig()
    r.start()
    time.sleep(1.0)
    began = time.monotonic()
    r.worker.stop(timeout=10_000)
    assert time.monotonic() - began < redis_wake.IDLE_WAIT + 3


def test_an_enqueue_is_one_round_trip_to_redis(rig):
    """The enqueue script and the wake token go in one pipeline of ``EVALSHA``: a script
    object in a pipeline would first ask ``SCRIPT EXISTS`` (a second round trip)."""
    from redis.connection import Connection
    r = rig()
    r.note.send("load")  # the first use may load the script
    sent = []
    original = Connection.send_packed_command

    def counting(self, command, check_health=True):
        sent.append(command)
        return original(self, command, check_health)

    Connection.send_packed_command = counting
    try:
        for i in range(10):
            r.note.send(f"m{i}")
    finally:
        Connection.send_packed_command = original
    assert len(sent) == 10, len(sent)
    assert r.broker.client.llen(r.broker.wake_key("wake-test")) > 0


def test_an_enqueue_loads_a_script_redis_does_not_know(rig):
    """After a Redis restart (or SCRIPT FLUSH) the script is unknown: the enqueue loads it
    and the message still arrives, once."""
    r = rig()
    r.broker.scripts["dispatch"].sha = "0" * 40  # what Redis answers NOSCRIPT to
    r.note.send("after-a-restart")
    r.start()
    assert r.wait_for("after-a-restart", timeout=10) is not None
    time.sleep(0.5)
    assert list(r.ran) == ["after-a-restart"]


def test_requeued_messages_ring_the_wake_list(rig):
    """Messages a stopping consumer puts back wake another process's idle consumer."""
    r = rig()
    r.note.send("a")
    r.note.send("b")
    consumer = r.broker.consume("wake-test", prefetch=2, timeout=100)
    first = next(consumer)
    assert first is not None and consumer.message_cache  # the second one is held
    held = [MessageProxy(Message.decode(consumer.message_cache.pop(0)))]
    r.broker.client.delete(r.broker.wake_key("wake-test"))
    consumer.requeue([first, *held])
    assert r.broker.client.llen(r.broker.wake_key("wake-test")) == 1
    consumer.close()
