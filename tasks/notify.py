"""Cross-process completion notices over Redis pub/sub, for long-polls in API processes."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import redis

from wharf.operations.notify import LocalNotifier

log = logging.getLogger("wharf.notify")
CHANNEL = "operations:done"  # after the namespace: ``wharf:operations:done``


class RedisNotifier(LocalNotifier):
    """Publishes to Redis; a subscriber thread (started on first wait) wakes local waiters."""

    def __init__(self, url: str, namespace: str = "wharf", max_waiters: int | None = None):
        super().__init__(max_waiters)
        self.channel = f"{namespace}:{CHANNEL}"
        self.client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10,
                                           health_check_interval=30)
        self._sub_thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = threading.Event()

    def publish(self, operation_id: str) -> None:
        self.client.publish(self.channel, operation_id)

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
