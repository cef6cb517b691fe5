"""Completion notices for long-polls: a worker that completes a batch wakes the long-poll of
every operation in it, in this process (``LocalNotifier``) and in an API process elsewhere
(``RedisNotifier``: one ``PUBLISH`` per operation, sent in one round trip)."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from tests.support import services
from wharf.operations.notify import LocalNotifier


@pytest.fixture(params=["local", "redis"])
def notifiers(request) -> Iterator[tuple[LocalNotifier, LocalNotifier]]:
    if request.param == "local":
        local = LocalNotifier()
        yield local, local
        return
    services.need(services.redis_error())
    from tasks.notify import RedisNotifier
    ns = services.RedisNamespace("notify")
    waiter, publisher = RedisNotifier(ns.url, ns.name), RedisNotifier(ns.url, ns.name)
    waiter._ensure_subscriber()
    try:
        yield waiter, publisher
    finally:
        waiter.close()
        publisher.close()
        ns.close()


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
