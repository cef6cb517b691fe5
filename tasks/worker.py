"""``wharf worker``: worker processes that stop cleanly on SIGTERM/SIGINT."""
from __future__ import annotations

import signal
import threading

from wharf.config import Settings


def run_workers(settings: Settings, processes: int | None = None,
                threads: int | None = None) -> int:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print("wharf: worker started", flush=True)
    stop.wait()
    print("wharf: worker stopped", flush=True)
    return 0
