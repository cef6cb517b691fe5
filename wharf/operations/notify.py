"""Wake long-polling readers when an operation finishes.

``LocalNotifier`` works inside one process (embedded mode, tests). A cross-process
implementation (Redis pub/sub, in ``tasks.notify``) forwards remote publishes to it.
"""
from __future__ import annotations

import threading
from collections import defaultdict
from typing import Callable


class LocalNotifier:
    def __init__(self):
        self._lock = threading.Lock()
        self._waiters: dict[str, list[threading.Event]] = defaultdict(list)

    def publish(self, operation_id: str) -> None:
        self.wake(operation_id)

    def wake(self, operation_id: str) -> None:
        with self._lock:
            events = self._waiters.pop(operation_id, [])
        for ev in events:
            ev.set()

    def wait(self, operation_id: str, timeout: float, is_done: Callable[[], bool]) -> bool:
        """Block until ``is_done()`` or ``timeout``; registers before checking (no lost wake)."""
        ev = threading.Event()
        with self._lock:
            self._waiters[operation_id].append(ev)
        try:
            if is_done():
                return True
            ev.wait(timeout)
            return is_done()
        finally:
            with self._lock:
                lst = self._waiters.get(operation_id)
                if lst and ev in lst:
                    lst.remove(ev)
                    if not lst:
                        self._waiters.pop(operation_id, None)

    def close(self) -> None:
        pass
