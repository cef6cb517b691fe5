"""Background loops in worker and embedded processes: the outbox relay and the recovery
sweep (the scheduler issue will move recovery onto the schedule)."""
from __future__ import annotations

import logging
import threading

from wharf import blobs, deletion
from wharf.operations import recovery

log = logging.getLogger("wharf.loops")


class BackgroundLoops:
    def __init__(self, db, dispatcher, blob_store, *, relay_interval: float,
                 recovery_interval: float, grace_seconds: float = 5.0):
        self.db = db
        self.blob_store = blob_store
        self.dispatcher = dispatcher
        self.relay_interval = relay_interval
        self.recovery_interval = recovery_interval
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
                 lambda: recovery.relay(self.db, send, grace_seconds=self.grace)),
                ("recovery", self.recovery_interval, self._recover)):
            t = threading.Thread(target=self._loop, args=(name, interval, fn), name=name,
                                 daemon=True)
            t.start()
            self._threads.append(t)

    def _recover(self) -> None:
        recovery.recover(self.db, self.dispatcher.send, grace_seconds=self.grace)
        blobs.recover_interrupted_sessions(self.db)
        deletion.run_due(self.db, self.blob_store, limit=200)

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(5)
