"""Cross-process completion notices over Redis pub/sub, for long-polls in API processes.

:func:`notifier_for` picks the notifier of a broker: in-process for the embedded one,
Redis pub/sub for Redis (plain or behind Sentinel), and for RabbitMQ none of the broker's:
long-polls re-read the database (``PollingNotifier``; the database is the truth anyway).

A finished batch is one ``PUBLISH``: a JSON array of its notices (``wharf.operations.notify
.Done``), at most ``MESSAGE_MAX_BYTES`` a message. A notice larger than
``NOTICE_MAX_BYTES`` (a large result) goes as its id alone, as does every notice of an
older worker (a message of one bare id): the long-poll then reads the operation.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import msgspec

from tasks.broker import REDIS_OPTIONS, redis_client
from wharf.infra.broker_urls import broker_kind
from wharf.infra.settings import Settings
from wharf.operations.notify import Done, LocalNotifier, Notice, PollingNotifier

log = logging.getLogger("wharf.notify")
CHANNEL = "operations:done"  # after the namespace: ``wharf:operations:done``
#: A notice larger than this (encoded) is sent as its operation's id alone.
NOTICE_MAX_BYTES = 8 * 1024
#: One message carries notices up to about this many bytes; a batch beyond, more messages.
MESSAGE_MAX_BYTES = 64 * 1024
_ENCODE = msgspec.json.Encoder().encode
_DECODE = msgspec.json.Decoder(list[Done | str]).decode
_DECODE_ANY = msgspec.json.Decoder(list[Any]).decode


def messages(notices: Sequence[Notice]) -> Iterator[bytes]:
    """``notices`` as JSON arrays of at most about ``MESSAGE_MAX_BYTES`` each."""
    parts: list[bytes] = []
    size = 0
    for notice in notices:
        part = _ENCODE(notice)
        if len(part) > NOTICE_MAX_BYTES:
            part = _ENCODE(notice if isinstance(notice, str) else notice.id)
        if parts and size + len(part) > MESSAGE_MAX_BYTES:
            yield b"[" + b",".join(parts) + b"]"
            parts, size = [], 0
        parts.append(part)
        size += len(part) + 1
    if parts:
        yield b"[" + b",".join(parts) + b"]"


def read_message(data: bytes | str) -> list[Notice]:
    """The notices of one message: a JSON array, or (an older worker's) one bare id. A
    notice this process cannot read whole (another version's) counts as its id alone;
    one without an id is skipped."""
    raw = data if isinstance(data, bytes) else data.encode()
    if not raw.startswith(b"["):
        return [raw.decode()]
    try:
        return _DECODE(raw)
    except msgspec.ValidationError:  # valid JSON, not all of it this version's notices
        pass
    notices: list[Notice] = []
    for item in _DECODE_ANY(raw):
        if isinstance(item, str):
            notices.append(item)
        elif isinstance(item, dict):
            try:
                notices.append(msgspec.convert(item, Done))
            except msgspec.ValidationError:
                if isinstance(item.get("id"), str):
                    notices.append(item["id"])
    return notices


class RedisNotifier(LocalNotifier):
    """Publishes to Redis; a subscriber thread (started on first wait) wakes local waiters."""

    def __init__(self, url: str, namespace: str = "wharf", max_waiters: int | None = None):
        super().__init__(max_waiters)
        self.channel = f"{namespace}:{CHANNEL}"
        self.client = redis_client(url, **REDIS_OPTIONS)
        self._sub_thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = threading.Event()
        self._subscribed = threading.Event()
        self._pubsub: Any = None  # the subscriber's, once started

    def publish(self, notice: Notice) -> None:
        self.publish_many([notice])

    def publish_many(self, notices: Sequence[Notice]) -> None:
        """The batch's notices in one message (more only past ``MESSAGE_MAX_BYTES``),
        sent in one round trip."""
        batch = list(messages(notices))
        if len(batch) == 1:
            self.client.publish(self.channel, batch[0])
            return
        pipe = self.client.pipeline(transaction=False)
        for message in batch:
            pipe.publish(self.channel, message)
        pipe.execute()

    def wait(self, operation_id: str, timeout: float, is_done: Callable[[], bool], *,
             answer: Callable[[Done], None] | None = None, reader: str | None = None) -> bool:
        self._ensure_subscriber()
        return super().wait(operation_id, timeout, is_done, answer=answer, reader=reader)

    def expect(self, operation_id: str, actor_id: str) -> None:
        self._ensure_subscriber(wait=False)
        super().expect(operation_id, actor_id)

    def listening(self) -> bool:
        return self._subscribed.is_set()

    def _ensure_subscriber(self, wait: bool = True) -> None:
        if self._sub_thread is not None:
            return
        with self._start_lock:
            if self._sub_thread is None:
                ready = threading.Event()
                self._sub_thread = threading.Thread(target=self._listen, args=(ready,),
                                                    name="notify-subscriber", daemon=True)
                self._sub_thread.start()
                if wait:
                    ready.wait(2.0)

    def _listen(self, ready: threading.Event) -> None:
        while not self._closed.is_set():
            try:
                pubsub = self._pubsub = self.client.pubsub(ignore_subscribe_messages=True)
                pubsub.subscribe(self.channel)
                self._subscribed.set()
                ready.set()
                while not self._closed.is_set():
                    msg = pubsub.get_message(timeout=1.0)
                    if msg and msg.get("type") == "message":
                        self._heard_message(msg["data"])
            except Exception:
                # Notices published meanwhile are lost: expect nothing until subscribed
                # again (long-polls read the operation first, as without expectations).
                # The flag first: an ``expect`` checks it under the lock that forgets.
                self._subscribed.clear()
                self.forget_expected()
                ready.set()
                log.warning("notify subscriber lost Redis; reconnecting", exc_info=True)
                time.sleep(1.0)
        self._subscribed.clear()

    def _heard_message(self, data: bytes | str) -> None:
        try:
            notices = read_message(data)
        except (msgspec.DecodeError, UnicodeDecodeError):
            log.warning("ignoring a malformed completion notice (%d bytes)", len(data))
            return
        for notice in notices:
            self.wake(notice)

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
