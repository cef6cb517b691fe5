"""``bench_operations.py --gc-trace``: put on a Wharf process's ``PYTHONPATH``, this module
(imported by ``site`` at start-up) times every cyclic garbage collection of the process and
appends those of at least ``MIN_MS`` to ``$WHARF_BENCH_GC_TRACE_DIR/<pid>.log``, one line
each: wall-clock end, generation, milliseconds, the process's command line. A collection
stops every thread of its process, so a long one is a latency spike for each request in
flight there. Benchmark-only: Wharf itself never imports it (it shadows any other
``sitecustomize`` for the processes it is given to)."""
from __future__ import annotations

import gc
import os
import sys
import time

MIN_MS = 1.0
_DIR = os.environ.get("WHARF_BENCH_GC_TRACE_DIR")
_started = [0.0]


def _timed(phase: str, info: dict) -> None:
    if phase == "start":
        _started[0] = time.perf_counter()
        return
    ms = (time.perf_counter() - _started[0]) * 1000.0
    if ms < MIN_MS:
        return
    command = " ".join(getattr(sys, "argv", [])[:3]).replace("\t", " ")
    with open(os.path.join(str(_DIR), f"{os.getpid()}.log"), "a") as f:
        f.write(f"{time.time():.6f}\t{info['generation']}\t{ms:.2f}\t{command}\n")


if _DIR:
    gc.callbacks.append(_timed)
