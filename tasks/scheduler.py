"""``wharf scheduler``: decides ticks and enqueues sweeps. Run any number for availability:
the database decides which scheduler enqueues each tick."""
from __future__ import annotations

import logging
import os
import signal
import socket
import threading

from wharf.clock import utcnow
from wharf.config import Settings

log = logging.getLogger("wharf.scheduler")


class SchedulerLoop:
    """Calls ``Scheduler.tick`` a few times per period, in a thread, until stopped."""

    def __init__(self, scheduler, period: float):
        self.scheduler = scheduler
        self.period = period
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run(self) -> None:
        while not self._stop.is_set():
            try:
                self.scheduler.tick(utcnow())
            except Exception:
                log.warning("scheduler tick failed; will try again", exc_info=True)
            self._stop.wait(self.period)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="scheduler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)


def tick_period(settings: Settings) -> float:
    return max(0.2, min(1.0, settings.sweep_interval / 4, settings.recovery_interval / 4))


def run_scheduler(settings: Settings) -> int:
    from tasks.runtime import Components
    components = Components(settings)
    scheduler = components.scheduler(f"{socket.gethostname()}:{os.getpid()}")
    loop = SchedulerLoop(scheduler, tick_period(settings))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    loop.start()
    print(f"wharf: scheduler started ({len(scheduler.plan)} schedules)", flush=True)
    stop.wait()
    loop.stop()
    components.close()
    print("wharf: scheduler stopped", flush=True)
    return 0
