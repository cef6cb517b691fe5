"""Periodic background threads of worker, scheduler and embedded processes: the outbox relay
(the slow path of the transactional outbox) and the scheduler's tick. Recovery and the other
sweeps are Dramatiq actors run on the schedule."""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("wharf.loops")


class Periodic:
    """Call ``fn`` every ``interval`` seconds in a daemon thread until stopped; a failure is
    logged and the next round runs as usual."""

    def __init__(self, name: str, interval: float, fn: Callable[[], object]):
        self.name = name
        self.interval = interval
        self.fn = fn
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.fn()
            except Exception:
                log.warning("%s failed; will run again", self.name, exc_info=True)

    def start(self) -> Periodic:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
