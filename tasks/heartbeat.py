"""The heartbeat of a process that consumes messages (``wharf worker`` children, ``wharf
serve``): a Dramatiq middleware that starts the process's :class:`wharf.observability.heartbeats.
Heartbeat` when the worker boots and stops it (marking the row stopped) when the worker
shuts down, and counts the messages it handles for the row's details.

Rules: the middleware is added by the process that runs the worker (not by the shared
wiring, so a test's in-process worker writes no heartbeat); the details are counters of
this process only (``threads``, ``queues``, ``messages_handled`` so far, ``in_flight``
now) plus what the process adds (``extra``), read without locks (a heartbeat is a
glance, not an account). ``in_flight`` counts the ids of the messages this middleware saw
start and not yet end: a message skipped by a middleware that runs before this one (it is
added last) was never counted in, so its skip does not count it out.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import dramatiq
from dramatiq.broker import MessageProxy
from dramatiq.middleware import Middleware

from wharf.observability.heartbeats import Details, Heartbeat

#: Makes the process's heartbeat writer from the details it should report.
MakeHeartbeat = Callable[[Details], Heartbeat]


class HeartbeatMiddleware(Middleware):
    def __init__(self, make: MakeHeartbeat, extra: dict[str, Any] | None = None) -> None:
        self.make = make
        self.extra = dict(extra or {})
        self.heartbeat: Heartbeat | None = None
        self.threads = 0
        self.queues: list[str] = []
        self.handled = 0
        self._in_flight: set[str] = set()  # the ids of the messages counted in
        self._lock = threading.Lock()

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def details(self) -> dict[str, Any]:
        return {**self.extra, "threads": self.threads, "queues": self.queues,
                "messages_handled": self.handled, "in_flight": self.in_flight}

    def after_worker_boot(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        self.threads = worker.worker_threads
        self.queues = sorted(q for q in broker.get_declared_queues()
                             if not q.endswith((".DQ", ".XQ")))
        self.heartbeat = self.make(self.details).start()

    def before_worker_shutdown(self, broker: dramatiq.Broker, worker: dramatiq.Worker) -> None:
        if self.heartbeat is not None:
            self.heartbeat.stop()
            self.heartbeat = None

    def before_process_message(self, broker: dramatiq.Broker,
                               message: MessageProxy) -> None:
        with self._lock:
            self._in_flight.add(message.message_id)

    def after_process_message(self, broker: dramatiq.Broker, message: MessageProxy,
                              *, result: Any = None,
                              exception: BaseException | None = None) -> None:
        with self._lock:
            self._in_flight.discard(message.message_id)
            self.handled += 1

    def after_skip_message(self, broker: dramatiq.Broker,
                           message: MessageProxy) -> None:
        # A middleware before this one may skip the message before it was counted in:
        # only a message counted in is counted out.
        with self._lock:
            self._in_flight.discard(message.message_id)
            self.handled += 1
