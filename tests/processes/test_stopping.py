"""``wharf.infra.stopping.StopSignal``: how ``wharf worker`` (parent and children), ``wharf
scheduler`` and ``wharf serve`` learn of SIGTERM/SIGINT.

With a ``threading.Event`` set by the signal handler, a signal arriving while the main
thread was inside ``Event.wait()`` (holding the event's plain lock) deadlocked the
handler: the worker's supervising loop, which waits 0.5 s at a time, then never exited
(``test_processes_start_with_the_console_exporter[worker]`` killed after 30 s), and a
signal the kernel handed to another thread did not wake a main thread blocked in
``Event.wait()`` at all. Each case runs in a child process, which must exit 0 promptly.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.support.processes import REPO

#: The supervising loop's shape: waits that keep returning, a signal at any point of them.
TIGHT_LOOP = """
import os, signal, threading, time
from wharf.infra.stopping import StopSignal
stop = StopSignal().install()
for trial in range(300):
    stop._set = False
    threading.Timer(0.0005 * (trial % 9), os.kill, (os.getpid(), signal.SIGTERM)).start()
    while not stop.wait(0):
        pass
print("stopped 300 times")
"""

#: A signal delivered to a thread that is not the main one, which waits without timeout.
OTHER_THREAD = """
import signal, threading, time
from wharf.infra.stopping import StopSignal
stop = StopSignal().install()
other = threading.Thread(target=time.sleep, args=(5,), daemon=True)
other.start()
threading.Timer(0.3, signal.pthread_kill, (other.ident, signal.SIGTERM)).start()
t0 = time.monotonic()
assert stop.wait()
print("stopped after %.1f s" % (time.monotonic() - t0))
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO,
                          capture_output=True, text=True, timeout=20)


def test_a_stop_signal_at_any_point_of_the_wait_loop_stops_it():
    r = _run(TIGHT_LOOP)
    assert r.returncode == 0 and "stopped 300 times" in r.stdout, r.stderr[-2000:]


def test_a_stop_signal_delivered_to_another_thread_wakes_the_main_thread():
    r = _run(OTHER_THREAD)
    assert r.returncode == 0 and "stopped after" in r.stdout, r.stderr[-2000:]


def test_wait_times_out_and_set_stops_it():
    r = _run("""
        import threading, time
        from wharf.infra.stopping import StopSignal
        stop = StopSignal().install()
        t0 = time.monotonic()
        assert stop.wait(0.2) is False and time.monotonic() - t0 >= 0.2
        threading.Timer(0.1, stop.set).start()
        assert stop.wait(10) is True and stop.is_set()
        print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-2000:]
