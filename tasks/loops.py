"""The background loop of worker and embedded processes: the outbox relay (the slow path of
the transactional outbox). Recovery and the other sweeps run on the schedule."""
from __future__ import annotations

import logging
import threading

from wharf.operations import recovery

log = logging.getLogger("wharf.loops")


class BackgroundLoops:
    def __init__(self, db, dispatcher, *, relay_interval: float, grace_seconds: float = 5.0):
        self.db = db
        self.dispatcher = dispatcher
        self.relay_interval = relay_interval
        self.grace = grace_seconds
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def _loop(self, name: str, interval: float, fn) -> None:
        while not self._stop.wait(interval):
            try:
                fn()
            except Exception:
                log.warning("%s failed; will run again", name, exc_info=True)

    def start(self) -> None:
        send = self.dispatcher.send
        for name, interval, fn in (
                ("relay", self.relay_interval,
                 lambda: recovery.relay(self.db, send, grace_seconds=self.grace)),):
            t = threading.Thread(target=self._loop, args=(name, interval, fn), name=name,
                                 daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(5)
