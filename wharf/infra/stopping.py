"""SIGTERM/SIGINT as a flag a process's main thread can wait on, safely.

Why not ``threading.Event`` set from a signal handler: a Python signal handler runs in
the main thread between two bytecodes, possibly while that thread is inside
``Event.wait()`` holding the event's lock (a plain, non-reentrant ``Lock``). The
handler's ``Event.set()`` then waits for that lock forever: the process never stops
(what hung ``wharf worker``'s supervising loop, which waits 0.5 s at a time, under load).

Here the handler only sets an attribute, and :func:`signal.set_wakeup_fd` has the
interpreter's C-level handler write the signal's number to a pipe, whichever thread the
kernel delivered it to; :meth:`StopSignal.wait` waits on that pipe with ``select``.
Only the main thread may create one (Python's rule for signal handlers) and wait on it.
"""
from __future__ import annotations

import os
import select
import signal
import time
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopSignal:
    """Set once SIGTERM or SIGINT arrives (after :meth:`install`)."""

    def __init__(self) -> None:
        self._set = False
        self._read, self._write = os.pipe()
        for fd in (self._read, self._write):
            os.set_blocking(fd, False)
            os.set_inheritable(fd, False)

    def install(self) -> StopSignal:
        """Route SIGTERM and SIGINT here (main thread only); returns self."""
        signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._handle)
        return self

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        # No lock taken: safe wherever the main thread was. The byte wakes a wait even if
        # something replaced the wakeup fd (select is retried after a handler, PEP 475).
        self._set = True
        self._wake(signum)

    def _wake(self, signum: int) -> None:
        try:
            os.write(self._write, bytes([signum]))
        except BlockingIOError:  # the pipe is full: a wake-up is already pending
            pass

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        """Stop as a signal would (from the main thread: another thread wakes ``wait``
        through the pipe too)."""
        self._set = True
        self._wake(signal.SIGTERM)

    def wait(self, timeout: float | None = None) -> bool:
        """Whether a stop signal arrived, waiting up to ``timeout`` seconds (None: until
        one does)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._set:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._read], [], [], remaining)
            if ready:
                try:
                    data = os.read(self._read, 512)
                except BlockingIOError:
                    data = b""
                if any(byte in STOP_SIGNALS for byte in data):
                    self._set = True
            elif deadline is not None and time.monotonic() >= deadline:
                break
        return self._set
