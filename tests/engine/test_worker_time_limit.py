"""The workers' time limit (tasks.time_limit): armed while a worker runs, in every kind of
process that builds its own workers (``wharf worker``, ``wharf serve``), and gone with
the last worker."""
from __future__ import annotations

import threading
import time

import dramatiq
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware.time_limit import TimeLimitExceeded

from tasks.broker import middleware
from tasks.worker import make_worker


def _time_limit_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "time-limit" and t.is_alive()]


def test_a_message_past_its_time_limit_is_interrupted_and_the_thread_goes_with_the_worker():
    broker = StubBroker(middleware=middleware())
    outcome: dict[str, float | str] = {}

    def stuck() -> None:
        started = time.monotonic()
        try:
            while time.monotonic() - started < 20:
                time.sleep(0.01)
            outcome["result"] = "ran to the end"
        except TimeLimitExceeded:
            outcome["result"] = "interrupted"
            outcome["after"] = time.monotonic() - started

    actor = dramatiq.Actor(stuck, broker=broker, actor_name="stuck", queue_name="default",
                           priority=0, options={"max_retries": 0, "time_limit": 300})
    before = len(_time_limit_threads())
    worker = make_worker(broker, 1)
    worker.start()
    try:
        assert len(_time_limit_threads()) == before + 1
        actor.send()
        broker.join("default", timeout=10_000)
    finally:
        worker.stop(timeout=5000)
    assert outcome["result"] == "interrupted"
    assert 0.3 <= float(outcome["after"]) < 3.0
    deadline = time.monotonic() + 3
    while len(_time_limit_threads()) > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(_time_limit_threads()) == before  # stopped with the worker


def test_a_message_within_its_limit_is_left_alone():
    broker = StubBroker(middleware=middleware())
    done = threading.Event()

    def quick() -> None:
        time.sleep(0.2)
        done.set()

    actor = dramatiq.Actor(quick, broker=broker, actor_name="quick", queue_name="default",
                           priority=0, options={"max_retries": 0, "time_limit": 5000})
    worker = make_worker(broker, 1)
    worker.start()
    try:
        actor.send()
        broker.join("default", timeout=10_000)
    finally:
        worker.stop(timeout=5000)
    assert done.is_set()
