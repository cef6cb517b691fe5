"""A Redis broker whose idle consumers block until a message arrives, instead of polling.

Dramatiq's Redis consumer answers an empty fetch by sleeping (a backoff up to the worker's
``worker_timeout``, 100 ms in ``wharf worker``) and fetching again. So an idle worker
process polls Redis about ten times a second per queue, and a message that arrives while
its consumer sleeps waits out the rest of the sleep: on average half of it, at every
hop of an operation's life where the queue was idle.

``WakingRedisBroker`` keeps Dramatiq's queues, scripts and acknowledgements unchanged and
adds one list per queue, ``<namespace>:<queue>.wake``:

- every enqueue also pushes a token on the queue's wake list, in the same round trip
  (a pipeline: the dispatch script, ``LPUSH``, ``LTRIM`` to :data:`WAKE_TOKENS`);
- a consumer whose fetch came back empty, with room for more messages, blocks in
  ``BLPOP`` on that list for at most :data:`IDLE_WAIT` seconds (or until the next delayed
  message it handed out falls due), then fetches again.

A token only says "fetch now": a consumer woken for a message another consumer already
took finds nothing and blocks again, and a lost token (FLUSHDB, a restart) costs at most
one :data:`IDLE_WAIT`. Messages are still only ever taken by Dramatiq's fetch script, so
delivery and acknowledgement are Dramatiq's. So is the re-delivery of a dead consumer's
unacknowledged messages, which Dramatiq's fetch does by chance (``maintenance_chance``
per million fetches): idle consumers fetch about ten times less often here, so the chance
is ten times Dramatiq's default, keeping that clean-up about as frequent as before (the
database, not the broker, re-runs what a dead worker held either way). A consumer whose
threads are all busy polls as Dramatiq's does (a new message could not be taken anyway).
"""
from __future__ import annotations

import heapq
import time
from typing import Any

import redis
from dramatiq.broker import Consumer, MessageProxy
from dramatiq.brokers.redis import DEFAULT_MAINTENANCE_CHANCE, RedisBroker
from dramatiq.common import compute_backoff, current_millis
from dramatiq.errors import ConnectionClosed
from dramatiq.message import Message

#: Longest an idle consumer blocks before it fetches anyway (seconds). It bounds the cost
#: of a lost wake token, the re-delivery of a dead consumer's messages (Dramatiq's fetch
#: does that maintenance) and how long a stopping worker waits for its consumers.
IDLE_WAIT = 1.0
#: Tokens kept per queue: enough to wake every idle consumer of a burst at once; more
#: would only cost empty fetches.
WAKE_TOKENS = 32


class WakingRedisBroker(RedisBroker):
    """Dramatiq's RedisBroker with blocking idle consumers (module docstring)."""

    def __init__(self, **parameters: Any) -> None:
        parameters.setdefault("maintenance_chance", 10 * DEFAULT_MAINTENANCE_CHANCE)
        super().__init__(**parameters)  # type: ignore[no-untyped-call]  # dramatiq: unannotated

    def wake_key(self, queue_name: str) -> str:
        return f"{self.namespace}:{queue_name}.wake"

    def do_enqueue(self, queue_name: str, *args: Any) -> Any:
        """Dramatiq's enqueue script and a wake token for ``queue_name``, one round trip
        (``EVALSHA`` in a pipeline: a script object would first ask ``SCRIPT EXISTS``)."""
        script = self.scripts["dispatch"]
        argv = ["enqueue", current_millis(), queue_name, self.broker_id,
                self.heartbeat_timeout, self.dead_message_ttl,
                self._should_do_maintenance("enqueue"), RedisBroker._max_unpack_size(self),
                *args]
        key = self.wake_key(queue_name)
        pipe = self.client.pipeline(transaction=False)
        pipe.evalsha(script.sha, 1, self.namespace, *argv)
        pipe.lpush(key, b"1")
        pipe.ltrim(key, 0, WAKE_TOKENS - 1)
        try:
            return pipe.execute()[0]
        except redis.exceptions.NoScriptError:
            # Redis does not know the script yet (first use, a restart, SCRIPT FLUSH): the
            # script object loads it and enqueues; the token above went out anyway.
            return script(keys=[self.namespace], args=argv)

    def wake(self, queue_name: str) -> None:
        """Push a wake token for ``queue_name`` (messages put back without an enqueue)."""
        key = self.wake_key(queue_name)
        pipe = self.client.pipeline(transaction=False)
        pipe.lpush(key, b"1")
        pipe.ltrim(key, 0, WAKE_TOKENS - 1)
        pipe.execute()

    def wait_for_wake(self, queue_name: str, timeout: float) -> bool:
        """Block until a token for ``queue_name`` arrives (True) or ``timeout`` passes."""
        return self.client.blpop([self.wake_key(queue_name)], timeout=max(0.01, timeout)) \
            is not None

    def consume(self, queue_name: str, prefetch: int = 1, timeout: int = 5000) -> Consumer:
        return _WakingConsumer(self, queue_name, prefetch, timeout)


class _WakingConsumer(Consumer):
    """Dramatiq's Redis consumer (fetch, ack, nack, requeue through the broker's script)
    with a blocking wait where it would sleep and poll."""

    def __init__(self, broker: WakingRedisBroker, queue_name: str, prefetch: int,
                 timeout: int) -> None:
        self.broker = broker
        self.queue_name = queue_name
        self.prefetch = prefetch
        self.timeout = timeout  # ms: the busy poll's longest backoff (worker_timeout)
        self.message_cache: list[bytes | None] = []
        self.queued_message_ids: set[str] = set()
        self.misses = 0
        # The etas (ms) of delayed messages handed to the worker: the worker moves each to
        # its queue when due, between two of our answers, so a wait must end by the next.
        self.etas: list[int] = []

    @property
    def outstanding_message_count(self) -> int:
        return len(self.queued_message_ids) + len(self.message_cache)

    def ack(self, message: Any) -> None:
        try:
            self.broker.do_ack(self.queue_name, message.options["redis_message_id"])
        except redis.ConnectionError as e:
            raise ConnectionClosed(e) from None
        finally:
            self.queued_message_ids.discard(message.message_id)

    def nack(self, message: Any) -> None:
        try:
            self.broker.do_nack(self.queue_name, message.options["redis_message_id"])
        except redis.ConnectionError as e:
            raise ConnectionClosed(e) from None
        finally:
            self.queued_message_ids.discard(message.message_id)

    def requeue(self, messages: Any) -> None:
        ids = [message.options["redis_message_id"] for message in messages]
        if ids:
            self.broker.do_requeue(self.queue_name, *ids)
            self.broker.wake(self.queue_name)  # another process's idle consumer takes them

    def __next__(self) -> MessageProxy | None:
        try:
            while True:
                if self.message_cache:
                    data = self.message_cache.pop(0)
                    if data is None:  # see Dramatiq's consumer (#266)
                        continue
                    self.misses = 0
                    message = Message.decode(data)
                    self.queued_message_ids.add(message.message_id)
                    eta = message.options.get("eta")
                    if eta is not None:
                        heapq.heappush(self.etas, int(eta))
                    return MessageProxy(message)
                if self.outstanding_message_count >= self.prefetch:
                    # Every thread busy: nothing could be taken now; poll as Dramatiq does.
                    self.misses, backoff_ms = compute_backoff(self.misses,
                                                              max_backoff=self.timeout)
                    time.sleep(backoff_ms / 1000)
                    return None
                self.message_cache = self.broker.do_fetch(
                    self.queue_name, self.prefetch - self.outstanding_message_count)
                if not self.message_cache:
                    self.broker.wait_for_wake(self.queue_name, self._wait_seconds())
                    return None  # the worker checks for shutdown and due delayed messages
        except redis.ConnectionError as e:
            raise ConnectionClosed(e) from None

    def _wait_seconds(self) -> float:
        now = current_millis()
        while self.etas and self.etas[0] <= now:
            heapq.heappop(self.etas)
        if not self.etas:
            return IDLE_WAIT
        return min(IDLE_WAIT, (self.etas[0] - now) / 1000)
