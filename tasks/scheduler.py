"""``wharf scheduler``: runs the retention sweeps on their schedule."""
from __future__ import annotations

import signal
import threading

from wharf.config import Settings


def run_scheduler(settings: Settings) -> int:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print("wharf: scheduler started", flush=True)
    stop.wait()
    print("wharf: scheduler stopped", flush=True)
    return 0
