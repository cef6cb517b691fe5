"""What the benchmark scripts share: logging, percentiles, CPU and memory meters read from
/proc (Linux), and the ``wharf`` subprocesses of one run.

Used by ``bench_operations.py``, ``bench_bulk.py`` and ``bench_blobs.py`` (scripts, not tests; pytest does not
collect them).
"""
from __future__ import annotations

import contextlib
import http.client
import itertools
import math
import os
import resource
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.waiting import free_port  # noqa: E402

__all__ = ["ROOT", "TICK", "CpuMeter", "RssSampler", "WharfProcesses", "children", "cmdline",
           "cpu_seconds", "free_port", "log", "machine_cpu", "pct", "postgres_of", "proc_table",
           "self_cpu", "status_kib", "uts_namespace_prefix"]

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def log(msg: str, file: TextIO | None = None) -> None:
    """A timestamped progress line (stdout unless ``file`` is given)."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=file or sys.stdout, flush=True)


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); NaN for an empty list."""
    if not values:
        return float("nan")
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(p / 100.0 * len(s)) - 1))
    return s[k]


def closed_loop(probe: Any, prefix: str, total: int, units: int, clients: int,
                send: Callable[[int], tuple[float, Any]], *, meter: CpuMeter | None = None,
                queue_depth: Callable[[], Any] | None = None,
                what: str = "sends refused") -> dict:
    """The closed-loop runner of (b) throughput and (d) bulk (``bench_operations.py``,
    ``bench_bulk.py``): ``clients`` threads take the units ``0..units-1`` in turn and
    ``send(i)`` each, which answers (seconds, refusal or None), until none is left. Time:
    the threads start -> ``probe`` sees all ``total`` operations named ``prefix-*`` done
    (``meter`` measures that window; ``queue_depth()`` is read at its end). Any refusal
    fails the run (``what``: how the error names them). Answers seconds, throughput, submit_rate (total / the last send's end),
    latencies (of each send), cpu, leftover_messages and the probe's summary."""
    counter = itertools.count()
    latencies: list[float] = []
    bad: list[Any] = []
    lock = threading.Lock()
    last_send = [0.0]

    def client() -> None:
        local: list[float] = []
        while (i := next(counter)) < units:
            dt, refusal = send(i)
            local.append(dt)
            if refusal is not None:
                with lock:
                    bad.append(refusal)
        with lock:
            latencies.extend(local)
            last_send[0] = max(last_send[0], time.perf_counter())

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    since = probe.now()
    if meter is not None:
        meter.start()
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    t_done = probe.wait_all_done(prefix, total, timeout=900, since=since)
    cpu = meter.stop() if meter is not None else None
    leftover = queue_depth() if queue_depth is not None else None
    for t in threads:
        t.join()
    if bad:
        raise RuntimeError(f"{prefix}: {len(bad)} {what}, e.g. {bad[0]}")
    return {"seconds": t_done - t0, "throughput": total / (t_done - t0),
            "submit_rate": total / (last_send[0] - t0), "latencies": latencies, "cpu": cpu,
            "leftover_messages": leftover, **probe.summary(prefix)}


# -- /proc -----------------------------------------------------------------------------------
def proc_table() -> dict[int, tuple[int, str, float, float]]:
    """pid -> (ppid, comm, cpu seconds, reaped children's cpu seconds) for every visible
    process. The last is what the children it has waited for used (cutime + cstime): a
    gunicorn worker recycled after ``max_requests`` leaves its CPU time there, in the
    arbiter."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = open(f"/proc/{entry}/stat").read()
        except OSError:
            continue
        comm = raw[raw.index("(") + 1:raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2:].split()
        table[int(entry)] = (int(fields[1]), comm,
                             (int(fields[11]) + int(fields[12])) / TICK,
                             (int(fields[13]) + int(fields[14])) / TICK)
    return table


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    raw = open(f"/proc/{pid}/stat").read()
    fields = raw[raw.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def self_cpu() -> float:
    """CPU seconds of this process (all its threads, not its children)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def machine_cpu() -> tuple[float, float, float]:
    """(busy, steal, irq) CPU seconds of the whole machine (all cores) since boot,
    /proc/stat. Busy is user + nice + system + irq + softirq; steal is time the hypervisor
    gave to someone else while this VM wanted to run; irq is irq + softirq alone (kernel
    work no process is charged with: loopback packets are delivered in softirq)."""
    vals = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return ((vals[0] + vals[1] + vals[2] + vals[5] + vals[6]) / TICK, vals[7] / TICK,
            (vals[5] + vals[6]) / TICK)


def status_kib(pid: int, field: str) -> int:
    """A ``kB`` field of /proc/<pid>/status (VmRSS, VmHWM)."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def cmdline(pid: int) -> str:
    """The command line of ``pid`` as ``ps`` shows it (a PostgreSQL backend's title names
    its database); empty when the process is gone."""
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(
            errors="replace").strip()
    except OSError:
        return ""


def postgres_of(databases: Iterable[str],
                exclude: Callable[[], Iterable[int]] = tuple) -> Callable[[int, str], bool]:
    """A CpuMeter selector for the PostgreSQL processes that work for ``databases``: their
    backends (and autovacuum workers), whose title names the database, plus the server's
    shared processes (postmaster, checkpointer, WAL writer, ...). Backends of other
    databases (other test suites on a shared server) are left to "other processes", and so
    are the pids ``exclude()`` returns (a benchmark's own probe connection)."""
    names = tuple(databases)

    def match(pid: int, comm: str) -> bool:
        if comm != "postgres" or pid in set(exclude()):
            return False
        title = cmdline(pid)
        words = title.split()
        if any(name in words for name in names):
            return True
        backend = ("(" in title and ")" in title) or "[local]" in title \
            or " worker " in title + " "
        return not backend

    return match


def uts_namespace_prefix(hostname: str) -> list[str] | None:
    """The command prefix that runs a command under its own hostname (``unshare --uts``,
    which needs root or CAP_SYS_ADMIN), or None where that does not work here."""
    probe = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec hostname', hostname]
    try:
        out = subprocess.run(probe, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or out.stdout.strip() != hostname:
        return None
    return ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', hostname]


def children(pid: int) -> list[int]:
    """The direct children of ``pid``."""
    return [child for child, (ppid, *_) in proc_table().items() if ppid == pid]


class CpuMeter:
    """CPU seconds per group between start and stop (or over a ``with`` block).

    ``roots`` are process trees (a pid and its descendants, each counted once, in the order
    given); ``names`` groups the remaining processes by command name (``postgres``); and
    ``select`` groups remaining processes by a predicate on (pid, comm), e.g.
    :func:`postgres_of`; ``this_process``, when given, names this process's own CPU time
    (its threads, not its children). What the rest of the machine used is reported as
    ``other``: busy CPU (user, nice, system, irq, softirq) outside the groups, and
    ``steal`` separately.

    A process of a tree that exits inside the window stays in its group: its parent's
    reaped-children time (cutime + cstime) counts it once the parent has waited for it
    (gunicorn's arbiter does at once), and ``replaced`` says how many of a tree's processes
    were not there at the start. Elsewhere (a PostgreSQL backend that disconnects) it
    takes its CPU time with it: it shows up in "other processes" (the machine's busy time
    minus the groups)."""

    def __init__(self, roots: dict[str, int], *,
                 names: dict[str, tuple[str, ...]] | None = None,
                 select: dict[str, Callable[[int, str], bool]] | None = None,
                 this_process: str | None = None):
        self.roots = roots
        self.names = names or {}
        self.select = select or {}
        self.this_process = this_process

    def _groups(self) -> dict[str, float]:
        table = proc_table()
        kids: dict[int, list[int]] = {}
        for pid, (ppid, *_) in table.items():
            kids.setdefault(ppid, []).append(pid)
        out: dict[str, float] = {}
        assigned: set[int] = set()
        self._members: dict[str, set[int]] = {}
        for name, root in self.roots.items():
            todo, total, members = [root], 0.0, set()
            while todo:
                pid = todo.pop()
                if pid in table and pid not in assigned:
                    assigned.add(pid)
                    members.add(pid)
                    total += table[pid][2] + table[pid][3]
                    todo.extend(kids.get(pid, []))
            out[name] = total
            self._members[name] = members
        for name, comms in self.names.items():
            out[name] = sum(cpu for pid, (_, comm, cpu, _) in table.items()
                            if comm in comms and pid not in assigned)
        for name, match in self.select.items():
            total = 0.0
            for pid, (_, comm, cpu, _) in table.items():
                if pid not in assigned and match(pid, comm):
                    assigned.add(pid)
                    total += cpu
            out[name] = out.get(name, 0.0) + total
        if self.this_process is not None:
            out[self.this_process] = out.get(self.this_process, 0.0) + self_cpu()
        return out

    def start(self) -> None:
        self.t0 = time.perf_counter()
        self.busy0, self.steal0, self.irq0 = machine_cpu()
        self.g0 = self._groups()
        self.members0 = self._members

    def stop(self) -> dict:
        """{wall, capacity (wall x cores), busy (including steal), steal, groups}; the
        groups include "other processes" (busy, steal included, outside the groups)."""
        g1 = self._groups()
        #: per tree, its processes at the end that were not there at the start (recycled
        #: gunicorn workers, restarted worker children)
        self.replaced = {name: len(pids - self.members0.get(name, set()))
                         for name, pids in self._members.items()}
        self.wall = time.perf_counter() - self.t0
        busy, steal, irq = machine_cpu()
        self.busy, self.steal, self.irq = busy - self.busy0, steal - self.steal0, irq - self.irq0
        self.cpu = {k: max(0.0, g1.get(k, 0.0) - self.g0.get(k, 0.0)) for k in g1}
        # Everything else on the machine (other processes: a concurrent benchmark skews
        # every figure on 2 cores), in cores busy on average.
        self.other_cores = max(0.0, self.busy - sum(self.cpu.values())) / self.wall
        self.steal_cores = self.steal / self.wall
        total = self.busy + self.steal
        groups = {**self.cpu, "other processes": max(0.0, total - sum(self.cpu.values()))}
        return {"wall": self.wall, "capacity": self.wall * (os.cpu_count() or 1),
                "busy": total, "steal": self.steal, "irq": self.irq, "groups": groups,
                "replaced": self.replaced}

    def __enter__(self) -> CpuMeter:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class RssSampler:
    """Max VmRSS of ``pid`` sampled every ``interval`` seconds while running."""

    def __init__(self, pid: int, interval: float = 0.05):
        self.pid, self.interval = pid, interval
        self.peak_kib = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak_kib = max(self.peak_kib, status_kib(self.pid, "VmRSS"))
                self.samples += 1
            except (OSError, KeyError):
                return
            self._stop.wait(self.interval)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()


# -- wharf processes -------------------------------------------------------------------------
def child_env(settings: dict[str, str]) -> dict[str, str]:
    """This process's environment without ``WHARF_*``, ``AWS_*``, ``GUNICORN_*`` and proxy
    variables, plus ``settings``: a ``wharf`` process sees only what the benchmark sets."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WHARF_", "AWS_", "GUNICORN_"))
           and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env.update({
        "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        "PYTHONUNBUFFERED": "1",
        "GUNICORN_CMD_ARGS": "--no-control-socket",  # none shared under $HOME
    })
    env.update(settings)
    return env


class WharfProcesses:
    """The ``wharf`` subprocesses of one run: each in its own session with its output in
    ``<logdir>/<name>.log``; stopped with SIGTERM, then SIGKILL of the group."""

    def __init__(self, logdir: Path, settings: dict[str, str]):
        self.logdir = logdir
        self.env = child_env(settings)
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []

    @staticmethod
    def command(*argv: str) -> list[str]:
        return [sys.executable, "-m", "wharfd.cli", *argv]

    def log_path(self, name: str) -> Path:
        return self.logdir / f"{name.replace(' ', '-')}.log"

    def migrate(self) -> None:
        out = subprocess.run(self.command("migrate"), cwd=ROOT, env=self.env,
                             capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"wharf migrate failed:\n{out.stdout}\n{out.stderr}")

    def start(self, name: str, *argv: str, prefix: Sequence[str] = (),
              env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start ``wharf <argv>``; ``prefix`` wraps the command (it must exec it, so the pid
        stays the process's: ``unshare --uts sh -c '... exec "$@"'``), ``env`` adds
        variables for this process only."""
        with open(self.log_path(name), "wb") as logf:
            p = subprocess.Popen([*prefix, *self.command(*argv)], cwd=ROOT,
                                 env={**self.env, **(env or {})}, stdout=logf,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append((name, p))
        return p

    def wait_http(self, port: int, path: str, timeout: float = 60.0) -> None:
        """Until ``GET path`` on ``port`` answers 200; RuntimeError when a process exits
        first or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, p in self.procs:
                if p.poll() is not None:
                    tail = self.log_path(name).read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"{name} exited with {p.returncode} "
                                       f"({self.log_path(name)}):\n{tail}")
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            try:
                conn.request("GET", path)
                if conn.getresponse().status == 200:
                    return
            except OSError:
                pass
            finally:
                conn.close()
            time.sleep(0.1)
        raise RuntimeError(f"{path} on port {port} did not answer 200 in {timeout:.0f}s")

    def stop_all(self, timeout: float = 45.0) -> None:
        for _, p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for name, p in self.procs:
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                log(f"{name} did not stop; killing its process group {p.pid}")
                try:
                    os.killpg(p.pid, signal.SIGKILL)  # start_new_session: pgid == pid
                except ProcessLookupError:
                    pass
                p.wait(5)
        self.procs = []


@contextlib.contextmanager
def migrated_postgres(prefix: str) -> Iterator[str]:
    """A throw-away PostgreSQL database ``<prefix>_<pid>_<hex>`` at the schema's head, with
    the ``_units`` database beside it (empty: the unit store prepares its own), on the
    suite's server; both are dropped (``WITH (FORCE)``) on the way out. Yields its URL."""
    from sqlalchemy import create_engine, text

    from migrations.prepare import prepare
    from tests.support import services

    name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
            conn.execute(text(f'CREATE DATABASE "{name}_units"'))
        url = services.POSTGRES_URL.rsplit("/", 1)[0] + "/" + name
        engine = create_engine(url)
        prepare(engine, report=lambda *_: None)
        engine.dispose()
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}_units" WITH (FORCE)'))
        admin.dispose()
