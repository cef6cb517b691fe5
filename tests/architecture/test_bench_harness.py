"""The benchmarks' meters. The CPU meter (``tests/benchmarks/harness.py``): a process of a
measured tree that exits inside the window keeps its CPU time in its group. The collection
timer (``bench_operations.py --gc-trace``): a process's long collections are logged and
summed by group.

gunicorn recycles a worker after ``max_requests``; the meter used to lose the recycled
worker's whole life's CPU with it (the API's figure fell, "other processes" rose by as much:
the unexplained 2.6 CPU-ms per operation of earlier (c) runs)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time

from tests.benchmarks.bench_operations import GC_TRACE, gc_group, gc_pauses
from tests.benchmarks.harness import CpuMeter

#: A parent that runs one busy child to its end and waits for it (as gunicorn's arbiter
#: reaps a recycled worker), then starts another, busy, that lives on.
_TREE = textwrap.dedent("""
    import subprocess, sys, time
    BUSY = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.6: pass"
    sys.stdin.readline()
    subprocess.run([sys.executable, "-c", BUSY], check=True)
    late = subprocess.Popen([sys.executable, "-c", BUSY + "\\ntime.sleep(60)"])
    print("started", flush=True)
    sys.stdin.readline()
    late.kill()
""")


def test_a_reaped_child_keeps_its_cpu_in_its_tree_and_a_new_one_counts_as_replaced():
    root = subprocess.Popen([sys.executable, "-c", _TREE], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.2)
        meter = CpuMeter({"tree": root.pid})
        meter.start()
        assert root.stdin is not None and root.stdout is not None
        root.stdin.write("go\n")
        root.stdin.flush()
        assert root.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the live child has done its 0.6 s as well
            time.sleep(0.1)
            if meter._groups()["tree"] - meter.g0["tree"] >= 1.1:
                break
        result = meter.stop()
        # the reaped child's 0.6 s and the live child's 0.6 s (a tick's rounding each)
        assert result["groups"]["tree"] >= 1.1
        assert result["replaced"] == {"tree": 1}  # the live child; the reaped one is gone
        root.stdin.write("done\n")
        root.stdin.flush()
        root.wait(10)
    finally:
        root.kill()


# Builds a heap of cyclic objects, then times a full collection over it: the kind of pause
# (tens of milliseconds) that stopped an API worker. Then a young collection of almost
# nothing, which stays under the 1 ms threshold. The automatic collections are off while the
# heap is built: on a loaded machine one of those (young, over a growing heap) could be
# preempted for longer than the full one and be the longest pause.
_COLLECTOR = textwrap.dedent("""
    import gc, sys
    sys.argv = ["gunicorn", "wharfd.wsgi:application"]
    gc.disable()
    heap = []
    for i in range(300_000):
        node = {"i": i}
        node["self"] = node
        heap.append(node)
    gc.collect(2)
    gc.collect(0)
""")


def test_gc_trace_logs_a_long_collection_with_its_process_group(tmp_path):
    env = {"PYTHONPATH": str(GC_TRACE), "WHARF_BENCH_GC_TRACE_DIR": str(tmp_path),
           "PATH": "/usr/bin:/bin"}
    started = time.time()
    subprocess.run([sys.executable, "-c", _COLLECTOR], env=env, check=True, timeout=120)
    pauses = gc_pauses(tmp_path, started, time.time())
    assert set(pauses) == {"API"}
    api = pauses["API"]
    assert api["longest_generation"] == 2 and api["longest_ms"] >= 1.0
    assert api["count"] >= 1 and api["total_ms"] >= api["longest_ms"]
    assert gc_pauses(tmp_path, started - 60, started - 30) == {}  # outside the window


def test_gc_trace_is_off_without_its_directory(tmp_path):
    env = {"PYTHONPATH": str(GC_TRACE), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", _COLLECTOR], env=env, check=True, timeout=120,
                   cwd=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_gc_group_names_the_wharf_process():
    assert gc_group("gunicorn wharfd.wsgi:application --bind") == "API"
    assert gc_group("/repo/wharfd/cli.py api --host") == "API"  # python -m wharfd.cli api
    # a spawned `wharf worker` child gets its parent's command line back
    assert gc_group("/repo/wharfd/cli.py worker --processes") == "worker"
    assert gc_group("/repo/wharfd/cli.py scheduler") == "scheduler"
    assert gc_group("/repo/wharfd/cli.py migrate") == "other"
    assert gc_group("") == "other"


def test_the_peer_benchmark_names_the_install_command_of_a_missing_peer(monkeypatch, capsys):
    """bench_peers.py imports its peers (Celery, pgqueuer, procrastinate) only when it runs
    them: the suite needs none of them, and a run without one says how to install it."""
    from tests.benchmarks import bench_peers
    monkeypatch.setitem(bench_peers.NEEDS, "celery", ("wharf_no_such_module",))
    assert bench_peers.main(["--only", "celery"]) == 2
    err = capsys.readouterr().err
    assert "missing wharf_no_such_module" in err
    assert "pip install -e '.[bench]'" in err
