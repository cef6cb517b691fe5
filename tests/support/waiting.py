"""The suite's one port helper and one polling wait.

``free_port()`` asks the kernel for a port nobody listens on (bound and released at once;
a server started right after takes it). ``wait_until(predicate, timeout, what)`` polls
``predicate`` until it returns something truthy and returns that value, or fails the test
with ``what`` after ``timeout`` seconds; given ``source`` (anything with a ``logs()``: a
``ProcessCluster``), the failure carries the output of the processes being waited on.
``stop(proc, grace)`` ends a server the test started: SIGTERM, then SIGKILL after ``grace``
seconds.
"""
from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")


class HasLogs(Protocol):
    def logs(self) -> str: ...


def free_port(host: str = "127.0.0.1") -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def wait_until(predicate: Callable[[], T], timeout: float = 15.0, what: str = "",
               source: HasLogs | None = None, *, interval: float = 0.05) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            detail = f"\n{source.logs()}" if source is not None else ""
            raise AssertionError(
                f"timed out after {timeout}s waiting for {what or predicate}{detail}")
        time.sleep(interval)


def stop(proc: subprocess.Popen, grace: float = 20.0) -> None:
    """SIGTERM ``proc`` and wait; SIGKILL it if it is still there after ``grace`` s."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
