"""``wharf scheduler``: decides ticks and enqueues sweeps. Run any number for availability:
the database decides which scheduler enqueues each tick."""
from __future__ import annotations

import os
import signal
import socket
import threading

from tasks.loops import Periodic
from wharf.clock import utcnow
from wharf.config import Settings



def tick_period(settings: Settings) -> float:
    return max(0.2, min(1.0, settings.sweep_interval / 4, settings.recovery_interval / 4))


def scheduler_loop(scheduler, settings: Settings) -> Periodic:
    """Ticks ``scheduler`` a few times per shortest period (it decides each tick once)."""
    return Periodic("scheduler", tick_period(settings), lambda: scheduler.tick(utcnow()))


def run_scheduler(settings: Settings) -> int:
    from tasks.runtime import Components
    components = Components(settings)
    scheduler = components.scheduler(f"{socket.gethostname()}:{os.getpid()}")
    loop = scheduler_loop(scheduler, settings)
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
