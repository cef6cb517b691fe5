"""Shared harness for the tests that run real ``wharf`` processes: throw-away PostgreSQL
databases (product + UnitStore), a fresh Redis namespace in the suite's Redis DB, and
:class:`ProcessCluster`, the environment and ``wharf`` subprocesses of one test
(``tests/test_operations_processes.py``, ``tests/test_blobs_processes.py``)."""
from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from sqlalchemy import create_engine, text

from tests.support import services

T = TypeVar("T")


def _db_url(name: str) -> str:
    return services.POSTGRES_URL.rsplit("/", 1)[0] + "/" + name


@contextlib.contextmanager
def throwaway_databases(prefix: str) -> Iterator[tuple[str, str] | None]:
    """Two PostgreSQL databases (product, UnitStore), migrated, dropped afterwards; None
    when PostgreSQL is unreachable (the tests then skip or fail via ``services.need``)."""
    if services.postgres_error() is not None:
        yield None
        return
    from migrations.prepare import prepare
    from storage.db import Database
    from storage.unitstore import prepare_unitstore_db

    base = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    names = (base, base + "_units")
    admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
        product_url, units_url = (_db_url(n) for n in names)
        engine = create_engine(product_url)
        try:
            prepare(engine, report=lambda *_: None)
        finally:
            engine.dispose()
        udb = Database(units_url)
        try:
            prepare_unitstore_db(udb, report=lambda *_: None)
        finally:
            udb.dispose()
        yield product_url, units_url
    finally:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextlib.contextmanager
def redis_namespace(label: str) -> Iterator[services.RedisNamespace | None]:
    """A fresh namespace in WHARF_TEST_REDIS_URL's DB (``WHARF_BROKER_NAMESPACE``), its keys
    deleted afterwards; nothing else in Redis is touched. The tests of one ``label`` run
    one at a time across pytest-xdist workers (a file lock): they measure recovery times
    and would only slow each other down."""
    if services.redis_error() is not None:
        yield None  # the tests skip or fail via ``services.need``
        return
    lock_path = Path(tempfile.gettempdir()) / f"wharf-test-{label}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ns = services.RedisNamespace(label)
        try:
            yield ns
        finally:
            ns.close()


# --- the processes of one test ---------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
LEASE_SECONDS = 3


def wharf_env(tmp_path: Path, product_url: str, units_url: str,
              redis_ns: services.RedisNamespace, pause_file: Path) -> dict[str, str]:
    """The settings every process test starts from: its databases and Redis namespace,
    cheap password hashing, short leases and fast retries, recovery and relay every half
    second, and the fault-injection hooks (``WHARF_TEST_PAUSE_FILE``)."""
    return {
        "WHARF_DATA_DIR": str(tmp_path / "data"),
        "WHARF_DATABASE_URL": product_url,
        "WHARF_UNITSTORE_URL": units_url,
        "WHARF_BROKER_URL": redis_ns.url,
        "WHARF_BROKER_NAMESPACE": redis_ns.name,
        "WHARF_ARGON2_TIME_COST": "1", "WHARF_ARGON2_MEMORY_COST": "8",
        "WHARF_ARGON2_PARALLELISM": "1",
        "WHARF_OPERATION_LEASE_SECONDS": str(LEASE_SECONDS),
        "WHARF_OPERATION_BACKOFF_BASE": "0.2", "WHARF_OPERATION_BACKOFF_MAX": "1",
        "WHARF_RECOVERY_INTERVAL": "0.5", "WHARF_RELAY_INTERVAL": "0.5",
        "WHARF_TEST_HOOKS": "1", "WHARF_TEST_PAUSE_FILE": str(pause_file),
        "WHARF_LOG_LEVEL": "INFO",
    }


class ProcessCluster:
    """The databases, environment and ``wharf`` processes of one test.

    Every process runs ``python -m wharfd.cli`` in its own session (so the whole process
    group can be killed), with ``self.env`` over an environment stripped of ``WHARF_*``,
    ``AWS_*``, ``GUNICORN_*`` and proxy variables, its output in ``<tmp>/<n>-<name>.log``.
    Subclasses add what their tests observe (``state`` feeds :meth:`logs`)."""

    def __init__(self, tmp_path: Path, product_url: str, units_url: str,
                 redis_ns: services.RedisNamespace, **env: str):
        self.tmp = tmp_path
        self.redis = redis_ns
        self.pause_file = tmp_path / "pause"
        self.env = {**wharf_env(tmp_path, product_url, units_url, redis_ns, self.pause_file),
                    **env}
        self.processes: list[subprocess.Popen[bytes]] = []
        self.engine = create_engine(product_url)
        self.units_engine = create_engine(units_url)

    # -- processes -------------------------------------------------------------------------
    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("WHARF_", "AWS_", "GUNICORN_"))
               and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
        env.update(self.env, PYTHONUNBUFFERED="1",
                   GUNICORN_CMD_ARGS="--no-control-socket")  # none shared under $HOME
        log = open(self.tmp / f"{len(self.processes)}-{name}.log", "wb")
        try:
            proc = subprocess.Popen([sys.executable, "-m", "wharfd.cli", *args], cwd=REPO,
                                    env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        finally:
            log.close()
        proc.log_path = log.name  # type: ignore[attr-defined]
        proc.name = name  # type: ignore[attr-defined]
        self.processes.append(proc)
        return proc

    def start_worker(self, name: str = "worker") -> subprocess.Popen[bytes]:
        """``wharf worker`` with one process of one thread (its own process group)."""
        return self._start(name, ["worker", "--processes", "1", "--threads", "1"])

    def start_scheduler(self) -> subprocess.Popen[bytes]:
        """``wharf scheduler``: enqueues the recovery sweep (every second here)."""
        return self._start("scheduler", ["scheduler"])

    @staticmethod
    def kill_group(proc: subprocess.Popen[bytes]) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # start_new_session: pgid == pid
        except ProcessLookupError:
            pass
        proc.wait(10)

    @staticmethod
    def log_text(proc: subprocess.Popen[bytes]) -> str:
        return Path(proc.log_path).read_text(errors="replace")  # type: ignore[attr-defined]

    # -- diagnostics -----------------------------------------------------------------------
    def state(self) -> list[str]:
        """Lines describing the database state, printed by :meth:`logs`."""
        return []

    def logs(self) -> str:
        out = []
        try:
            out.extend(self.state())
        except Exception as exc:
            out.append(f"--- state unavailable: {exc}")
        for p in self.processes:
            path = p.log_path  # type: ignore[attr-defined]
            try:
                out.append(f"--- {path} ---\n" + Path(path).read_text(errors="replace")[-6000:])
            except OSError:
                pass
        return "\n".join(out)

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        for p in self.processes:
            if p.poll() is None:
                self.kill_group(p)
            else:  # the parent exited; make sure no child of its group is left behind
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        self.engine.dispose()
        self.units_engine.dispose()

    def truncate(self) -> None:
        from storage.models import Base
        names = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
        with self.engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {names} CASCADE"))
        with self.units_engine.begin() as conn:
            conn.execute(text("TRUNCATE unit_revisions, units"))


C = TypeVar("C", bound=ProcessCluster)


@contextlib.contextmanager
def one_test(cluster: C) -> Iterator[C]:
    """A test's cluster on empty databases; afterwards every Redis connection of its
    processes must have used the suite's DB (checked when the test got that far), the
    processes are killed and the logs printed (pytest shows them when the test failed)."""
    cluster.truncate()
    try:
        yield cluster
        # Every Redis connection of the test's processes uses the suite's DB, no other.
        assert cluster.redis.clients_elsewhere() == []
    finally:
        cluster.close()
        print(cluster.logs())  # shown by pytest only when the test failed


def wait_until(predicate: Callable[[], T], timeout: float, what: str, cluster: ProcessCluster,
               interval: float = 0.1) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}\n{cluster.logs()}")
