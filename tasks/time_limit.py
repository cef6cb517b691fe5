"""Dramatiq's ``TimeLimit``, armed for as long as a worker runs.

Dramatiq's own middleware starts its deadline thread on ``process_boot``, an event only
Dramatiq's CLI emits, and never stops it: under ``wharf worker`` (which builds its workers
itself) the limit was never armed, and a thread started per broker would outlive the
broker. This one starts its thread when the first worker of its broker boots and stops it
when the last one has shut down; the limits themselves (per actor or per message,
``time_limit`` in milliseconds) work as in Dramatiq: a message still running past its
limit gets ``TimeLimitExceeded`` raised in its thread.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any

import dramatiq
from dramatiq.middleware import Middleware
from dramatiq.middleware.threading import raise_thread_exception
from dramatiq.middleware.time_limit import TimeLimitExceeded

log = logging.getLogger("wharf.worker")


class _Deadlines(threading.Thread):
    """Checks the running messages' deadlines every ``interval`` seconds until stopped."""

    def __init__(self, interval: float) -> None:
        super().__init__(name="time-limit", daemon=True)
        self.interval = interval
        self.deadlines: dict[int, float] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(self.interval):
            now = time.monotonic()
            with self.lock:
                expired = [t for t, deadline in self.deadlines.items() if now >= deadline]
                for thread_id in expired:
                    del self.deadlines[thread_id]
            for thread_id in expired:
                log.warning("time limit exceeded: interrupting worker thread %r", thread_id)
                raise_thread_exception(thread_id, TimeLimitExceeded)  # type: ignore[no-untyped-call]


class TimeLimit(Middleware):
    """Interrupt a message that runs longer than its ``time_limit`` (ms; default
    ``time_limit`` here), checked every ``interval`` ms."""

    def __init__(self, *, time_limit: int = 600_000, interval: int = 1000) -> None:
        self.time_limit = time_limit
        self.interval = interval / 1000
        self._lock = threading.Lock()
        self._workers = 0
        self._deadlines: _Deadlines | None = None

    @property
    def actor_options(self) -> set[str]:
        return {"time_limit"}

    def before_worker_boot(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        with self._lock:
            self._workers += 1
            if self._deadlines is None:
                self._deadlines = _Deadlines(self.interval)
                self._deadlines.start()

    def after_worker_shutdown(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        with self._lock:
            self._workers -= 1
            if self._workers <= 0 and self._deadlines is not None:
                self._deadlines.stopping.set()
                self._deadlines = None
                self._workers = 0

    def before_process_message(self, broker: dramatiq.Broker, message: Any) -> None:
        deadlines = self._deadlines
        if deadlines is None:
            return
        actor = broker.get_actor(message.actor_name)
        limit = message.options.get("time_limit") or actor.options.get(
            "time_limit", self.time_limit)
        with deadlines.lock:
            deadlines.deadlines[threading.get_ident()] = time.monotonic() + limit / 1000

    def after_process_message(self, broker: dramatiq.Broker, message: Any, *,
                              result: Any = None, exception: BaseException | None = None
                              ) -> None:
        deadlines = self._deadlines
        if deadlines is None:
            return
        with deadlines.lock:
            deadlines.deadlines.pop(threading.get_ident(), None)

    after_skip_message = after_process_message
