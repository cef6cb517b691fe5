"""Cross-process completion notices over Redis pub/sub, for long-polls in API processes.

:func:`notifier_for` picks the notifier of a broker: in-process for the embedded one,
Redis pub/sub for Redis (plain or behind Sentinel), and for RabbitMQ none of the broker's:
long-polls re-read the database (``PollingNotifier``; the database is the truth anyway).
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from tasks.broker import REDIS_OPTIONS, redis_client
from wharf.config import Settings, broker_kind
from wharf.operations.notify import LocalNotifier, PollingNotifier

log = logging.getLogger("wharf.notify")
CHANNEL = "operations:done"  # after the namespace: ``wharf:operations:done``


class RedisNotifier(LocalNotifier):
    """Publishes to Redis; a subscriber thread (started on first wait) wakes local waiters."""

    def __init__(self, url: str, namespace: str = "wharf", max_waiters: int | None = None):
        super().__init__(max_waiters)
        self.channel = f"{namespace}:{CHANNEL}"
        self.client = redis_client(url, **REDIS_OPTIONS)
        self._sub_thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = threading.Event()

    def publish(self, operation_id: str) -> None:
        self.client.publish(self.channel, operation_id)

    def publish_many(self, operation_ids: Sequence[str]) -> None:
        """One ``PUBLISH`` per operation (what every subscriber understands), sent in one
        round trip."""
        if len(operation_ids) == 1:
            self.publish(operation_ids[0])
            return
        pipe = self.client.pipeline(transaction=False)
        for operation_id in operation_ids:
            pipe.publish(self.channel, operation_id)
        pipe.execute()

    def wait(self, operation_id: str, timeout: float, is_done: Callable[[], bool]) -> bool:
        self._ensure_subscriber()
        return super().wait(operation_id, timeout, is_done)

    def _ensure_subscriber(self) -> None:
        if self._sub_thread is not None:
            return
        with self._start_lock:
            if self._sub_thread is None:
                ready = threading.Event()
                self._sub_thread = threading.Thread(target=self._listen, args=(ready,),
                                                    name="notify-subscriber", daemon=True)
                self._sub_thread.start()
                ready.wait(2.0)

    def _listen(self, ready: threading.Event) -> None:
        while not self._closed.is_set():
            try:
                pubsub = self.client.pubsub(ignore_subscribe_messages=True)
                pubsub.subscribe(self.channel)
                ready.set()
                while not self._closed.is_set():
                    msg = pubsub.get_message(timeout=1.0)
                    if msg and msg.get("type") == "message":
                        data = msg["data"]
                        self.wake(data.decode() if isinstance(data, bytes) else str(data))
            except Exception:
                ready.set()
                log.warning("notify subscriber lost Redis; reconnecting", exc_info=True)
                time.sleep(1.0)

    def close(self) -> None:
        self._closed.set()


#: How often a long-poll re-reads the database on a broker without pub/sub (seconds).
POLL_INTERVAL = 0.5


def notifier_for(settings: Settings) -> LocalNotifier:
    """The notifier of the configured broker (module docstring)."""
    kind = broker_kind(settings.broker_url)
    if kind == "embedded":
        return LocalNotifier(settings.long_poll_max_waiters)
    if kind == "rabbitmq":
        return PollingNotifier(settings.long_poll_max_waiters, POLL_INTERVAL)
    return RedisNotifier(settings.broker_url, settings.broker_namespace,
                         max_waiters=settings.long_poll_max_waiters)
