"""Shared harness for the tests that run real ``wharf`` processes: throw-away PostgreSQL
databases (product + UnitStore), a fresh Redis namespace in the suite's Redis DB, and
:class:`ProcessCluster`, the environment and ``wharf`` subprocesses of one test
(``tests/processes/test_operations.py``, ``tests/processes/test_blobs.py``); the fixture
factories of those (``databases_fixture``, ``redis_fixture``, ``cluster_fixture``), an HTTP
client of a ``wharf api`` subprocess (:class:`ProcessApi`), sign-up through an in-process
API (:func:`sign_up`) and the worker supervisor's children (:func:`worker_children`,
:func:`kill_a_busy_child`), and the exactly-once check of a run of ``create_resource``
operations (:func:`assert_completed_exactly_once`)."""
from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import create_engine, text

from tests.support import services, zygote
from tests.support.waiting import wait_until

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
    base = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    names = (base, base + "_units")
    admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        templates = _migrated_templates(admin)
        with admin.connect() as conn:
            for name, template in zip(names, templates):
                services.create_test_database(conn, name, template=template)
        yield _db_url(names[0]), _db_url(names[1])
    finally:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


_templates: list[str] = []
_templates_lock = threading.Lock()


def _migrated_templates(admin: Any) -> list[str]:
    """This process's two migrated databases (product, UnitStore) that every
    :func:`throwaway_databases` copies (``CREATE DATABASE … TEMPLATE``: a file copy, where
    running every migration took a second or more per test); made on first use, dropped
    when the process exits."""
    from migrations.prepare import prepare
    from storage.db import Database
    from storage.unitschema import prepare_unitstore_db
    with _templates_lock:
        if _templates:
            return _templates
        base = f"wharf_tmpl_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        names = [base, base + "_units"]
        with admin.connect() as conn:
            for name in names:
                services.create_test_database(conn, name)
        atexit.register(_drop, names)
        engine = create_engine(_db_url(names[0]))
        try:
            prepare(engine, report=lambda *_: None)
        finally:
            engine.dispose()
        udb = Database(_db_url(names[1]))
        try:
            prepare_unitstore_db(udb, report=lambda *_: None)
        finally:
            udb.dispose()
        _templates.extend(names)
        return _templates


def _drop(names: list[str]) -> None:
    admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    except Exception:  # the server is gone at exit: nothing to drop
        pass
    finally:
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


def databases_fixture(prefix: str) -> Any:
    """A module-scoped ``pg_databases`` fixture: :func:`throwaway_databases` named after
    ``prefix``, migrated once per module (``pg_databases = databases_fixture("wharf_x")``)."""
    @pytest.fixture(scope="module", name="pg_databases")
    def pg_databases() -> Iterator[tuple[str, str] | None]:
        with throwaway_databases(prefix) as urls:
            yield urls
    return pg_databases


def redis_fixture(label: str) -> Any:
    """A ``redis_ns`` fixture: this test's :func:`redis_namespace` of ``label`` (the tests of
    one label run one at a time; ``redis_ns = redis_fixture("x-processes")``)."""
    @pytest.fixture(name="redis_ns")
    def redis_ns() -> Iterator[services.RedisNamespace | None]:
        with redis_namespace(label) as ns:
            yield ns
    return redis_ns


# --- the processes of one test ---------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
LEASE_SECONDS = 3
PASSWORD = "correct horse battery staple"


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
        self.components: list[Any] = []  # of the in-process APIs, closed by close()

    # -- in-process API ----------------------------------------------------------------------
    def api(self, **env: str) -> Any:
        """An ``ApiClient`` on an in-process ``Components.api_app()`` with ``self.env`` and
        ``env`` over it (the components are closed by :meth:`close`)."""
        from tests.support.client import ApiClient
        from wharf.infra.settings import Settings
        from wharfd.runtime import Components
        comps = Components(Settings.from_env({**self.env, **env}))
        self.components.append(comps)
        return ApiClient(comps.api_app())

    # -- processes -------------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("WHARF_", "AWS_", "GUNICORN_"))
               and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
        env.update(self.env, PYTHONUNBUFFERED="1",
                   GUNICORN_CMD_ARGS="--no-control-socket")  # none shared under $HOME
        return env

    def run_command(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """A short ``wharf`` command (``user disable alice``) with the cluster's settings."""
        return zygote.run(list(args), self._env(), REPO, timeout)

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        env = self._env()
        path = self.tmp / f"{len(self.processes)}-{name}.log"
        proc: Any
        if zygote.usable(env):  # forked from the tests' fork server (tests/support/zygote.py)
            proc = zygote.zygote().start(args, env, REPO, path)
        else:
            with open(path, "wb") as log:
                proc = subprocess.Popen([sys.executable, "-m", "wharfd.cli", *args], cwd=REPO,
                                        env=env, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        proc.log_path = str(path)  # type: ignore[attr-defined]
        proc.name = name  # type: ignore[attr-defined]
        self.processes.append(proc)
        return proc

    def start_worker(self, name: str = "worker", processes: int = 1,
                     threads: int = 1) -> subprocess.Popen[bytes]:
        """``wharf worker`` with ``processes`` processes of ``threads`` threads, one process
        by default (its own process group; a supervisor restarts a child that dies)."""
        return self._start(name, ["worker", "--processes", str(processes),
                                  "--threads", str(threads)])

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

    def wait_worker(self, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
        """Wait until the ``wharf worker`` ``proc`` consumes its queues."""
        wait_until(lambda: "consuming with" in self.log_text(proc), timeout,
                   f"{proc.name} to consume", self)  # type: ignore[attr-defined]

    def wait_http(self, proc: subprocess.Popen[bytes], api: ProcessApi,
                  timeout: float = 30) -> None:
        """Wait until the ``wharf api`` ``proc`` answers ``api``'s ``/healthz`` with 200
        (fail at once when it exited)."""
        import requests
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"the API exited with {proc.returncode}\n{self.logs()}")
            try:
                if api.get("/healthz", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise AssertionError(f"the API did not come up in {timeout}s\n{self.logs()}")

    # -- observations ------------------------------------------------------------------------
    def sql(self, query: str, **params: Any) -> list[Any]:
        """The rows of ``query`` on the product database."""
        with self.engine.connect() as conn:
            return list(conn.execute(text(query), params).all())

    def count(self, table: str) -> int:
        """The rows of ``table`` (``units`` and ``unit_revisions`` in the UnitStore)."""
        engine = self.units_engine if table in ("units", "unit_revisions") else self.engine
        with engine.connect() as conn:
            return int(conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())

    def by_status(self) -> dict[str, int]:
        """The number of operations in each status."""
        return {s: n for s, n in self.sql(
            "SELECT status, count(*) FROM operations GROUP BY status")}

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
        for comps in self.components:
            comps.close()

    def truncate(self) -> None:
        """Empty the product and unit store tables (services.empty_tables)."""
        from storage.models import Base
        services.empty_tables(self.engine, Base.metadata.sorted_tables)
        services.empty_tables(self.units_engine, services.unit_tables())


C = TypeVar("C", bound=ProcessCluster)


def cluster_for_test(cls: Callable[..., C], tmp_path: Path, pg_databases: Any,
                     namespace: Any, *args: Any, need_redis: bool = True,
                     **kwargs: Any) -> contextlib.AbstractContextManager[C]:
    """:func:`one_test` of ``cls(tmp_path, product_url, units_url, namespace, *args,
    **kwargs)``, after skipping (or failing) the test when PostgreSQL -- and, with
    ``need_redis``, Redis -- is unreachable."""
    services.need(services.postgres_error())
    if need_redis:
        services.need(services.redis_error())
    product_url, units_url = pg_databases
    return one_test(cls(tmp_path, product_url, units_url, namespace, *args, **kwargs))


def cluster_fixture(cls: Callable[..., C], *args: Any, **kwargs: Any) -> Any:
    """A ``cluster`` fixture: :func:`cluster_for_test` of ``cls`` on the module's
    ``pg_databases`` and ``redis_ns`` fixtures, with ``args`` and ``kwargs`` (settings) to
    ``cls`` (``cluster = cluster_fixture(Cluster)``)."""
    @pytest.fixture(name="cluster")
    def cluster(tmp_path: Path, pg_databases: Any, redis_ns: Any) -> Iterator[C]:
        with cluster_for_test(cls, tmp_path, pg_databases, redis_ns, *args, **kwargs) as c:
            yield c
    return cluster


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


class ProcessApi:
    """HTTP (requests, no proxy from the environment) against a ``wharf api`` subprocess on
    127.0.0.1:``port``: JSON requests, sign-up and the operation endpoints. A long-poll
    of :meth:`wait_done` waits ``max_wait`` seconds at the most."""

    max_wait = 30.0

    def __init__(self, port: int):
        import requests
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.http = requests.Session()
        self.http.trust_env = False  # no HTTP(S)_PROXY from the environment

    def get(self, path: str, **kw: Any) -> Any:
        return self.http.get(self.base + path, timeout=kw.pop("timeout", 30), **kw)

    def post(self, path: str, **kw: Any) -> Any:
        return self.http.post(self.base + path, timeout=kw.pop("timeout", 30), **kw)

    def delete(self, path: str, **kw: Any) -> Any:
        return self.http.delete(self.base + path, timeout=kw.pop("timeout", 30), **kw)

    def login(self, username: str = "alice") -> str:
        """Register ``username`` and log in; returns the personal space id."""
        r = self.post("/api/users", json={"username": username, "password": PASSWORD})
        assert r.status_code == 201, r.text
        space_id = r.json()["personal_space_id"]
        r = self.post("/api/login-sessions", json={"username": username, "password": PASSWORD})
        assert r.status_code == 201, r.text
        return str(space_id)

    def op(self, op_id: str, wait: float = 0) -> dict[str, Any]:
        r = self.get(f"/api/operations/{op_id}", params={"wait": str(wait)} if wait else None,
                     timeout=wait + 30)
        assert r.status_code == 200, r.text
        return dict(r.json())

    def wait_done(self, op_id: str, timeout: float) -> dict[str, Any]:
        """Long-poll until the operation is done or ``timeout`` seconds passed."""
        deadline = time.monotonic() + timeout
        op = self.op(op_id)
        while not op["done"] and time.monotonic() < deadline:
            op = self.op(op_id, wait=max(0.5, min(self.max_wait, deadline - time.monotonic())))
        return op

    def attempts(self, op_id: str) -> list[dict[str, Any]]:
        r = self.get(f"/api/operations/{op_id}/attempts")
        assert r.status_code == 200, r.text
        return list(r.json()["items"])


def sign_up(client: Any, username: str = "alice") -> dict[str, Any]:
    """Register ``username`` (password :data:`PASSWORD`) and log ``client`` in (an
    ``ApiClient``); returns the new user's JSON (``id``, ``personal_space_id``...)."""
    r = client.post("/api/users", json={"username": username, "password": PASSWORD})
    assert r.status_code == 201, r.text
    user = dict(r.json)
    r = client.post("/api/login-sessions", json={"username": username, "password": PASSWORD})
    assert r.status_code == 201, r.text
    return user


def worker_children(supervisor: int) -> list[int]:
    """The live worker processes a ``wharf worker`` supervisor spawned, read from /proc
    (multiprocessing ``spawn_main`` children; not its resource tracker)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == supervisor and fields[0] != "Z" and b"spawn_main" in cmd:
            found.append(int(entry))
    return found


def busy_pids(cluster: ProcessCluster) -> set[int]:
    """Pids that hold an unfinished attempt, read from the attempt's worker id where it
    carries one (``host:pid:thread`` today); empty if the format says nothing."""
    pids = set()
    for (worker_id,) in cluster.sql(
            "SELECT worker_id FROM operation_attempts WHERE finished_at IS NULL"):
        for part in str(worker_id).split(":")[1:2]:
            if part.isdigit():
                pids.add(int(part))
    return pids


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else json.loads(value)


def assert_completed_exactly_once(cluster: ProcessCluster,
                                  submitted: list[dict[str, Any]]) -> int:
    """Every submitted ``create_resource`` operation completed once, with exactly the
    product rows (nodes, resources, unit_resources, units, one ``resource.create`` audit
    row each) carrying the ids fixed in its payload, and a consistent attempt history
    (numbered 1..attempts, all finished, the last ``completed``, earlier ones ``lost`` or
    ``retry``); returns how many attempts were lost."""
    n = len(submitted)
    ids = {op["id"] for op in submitted}
    assert len(ids) == n
    ops = cluster.sql("SELECT id, status, attempts, payload, result, error FROM operations")
    assert {row[0] for row in ops} == ids, "operations other than the submitted ones"
    not_completed = [(row[0], row[1], row[2], row[5]) for row in ops if row[1] != "completed"]
    assert not not_completed, f"not completed: {not_completed[:10]}"
    payloads = {row[0]: as_dict(row[3]) for row in ops}
    for op_id, _, _, _, result, _ in ops:
        p = payloads[op_id]
        assert as_dict(result) == {"node_id": p["node_id"], "resource_id": p["resource_id"],
                                   "unit_id": p["unit_id"]}, op_id
    nodes = [row[0] for row in cluster.sql("SELECT id FROM nodes")]
    resources = cluster.sql("SELECT id, node_id FROM resources")
    unit_rows = cluster.sql("SELECT resource_id, unit_id FROM unit_resources")
    assert len(nodes) == len(resources) == len(unit_rows) == n, (
        len(nodes), len(resources), len(unit_rows))
    assert {(r[0], r[1]) for r in resources} == {
        (p["resource_id"], p["node_id"]) for p in payloads.values()}
    assert {(r[0], r[1]) for r in unit_rows} == {
        (p["resource_id"], p["unit_id"]) for p in payloads.values()}
    with cluster.units_engine.connect() as conn:
        units = [row[0] for row in conn.execute(text("SELECT id FROM units"))]
    assert sorted(units) == sorted(p["unit_id"] for p in payloads.values())
    audits = cluster.sql("SELECT target_id, count(*) FROM audit_logs "
                         "WHERE action = 'resource.create' GROUP BY target_id")
    assert {r[0] for r in audits} == {p["resource_id"] for p in payloads.values()}
    assert all(r[1] == 1 for r in audits), [r for r in audits if r[1] != 1][:10]
    history = attempt_history(cluster)
    bad = []
    for op_id, _, attempts, _, _, _ in ops:
        rows = history.get(op_id, [])
        outcomes = [o for _, o, _ in rows]
        if ([num for num, _, _ in rows] != list(range(1, attempts + 1))
                or outcomes[-1:] != ["completed"]
                or any(o not in ("lost", "retry") for o in outcomes[:-1])
                or any(f is None for _, _, f in rows)):
            bad.append((op_id, attempts, rows))
    assert not bad, f"{len(bad)} inconsistent attempt histories, e.g. {bad[:3]}"
    return sum(1 for rows in history.values() for _, o, _ in rows if o == "lost")


def attempt_history(cluster: ProcessCluster) -> dict[str, list[tuple[int, str | None, Any]]]:
    """Each operation's attempts, ``(number, outcome, finished_at)`` in number order, by
    operation id."""
    history: dict[str, list[tuple[int, str | None, Any]]] = {}
    for op_id, number, outcome, finished in cluster.sql(
            "SELECT operation_id, number, outcome, finished_at FROM operation_attempts "
            "ORDER BY operation_id, number"):
        history.setdefault(op_id, []).append((number, outcome, finished))
    return history


def kill_a_busy_child(cluster: ProcessCluster, supervisor: int, rng: random.Random,
                      look_seconds: float,
                      while_held: Callable[[], None] | None = None) -> tuple[int, bool]:
    """SIGKILL one of the ``supervisor``'s worker children, chosen with ``rng`` among those
    holding an unfinished attempt (:func:`busy_pids`), looked for during ``look_seconds``,
    else among all; returns its pid and whether it was busy.

    Operations finish in milliseconds: a child seen busy could commit before the kill
    lands, and on a loaded machine the workers may keep up with the submitter so well that
    no look catches one in flight (CI once saw five blind kills in a row, and the test
    proved nothing). So the children are held before their completion commits (the
    pause-file hook) from the look until the kill: a child seen busy is still busy when it
    dies, wherever it is between its claim and that commit. ``while_held`` runs once the
    children are held: a :class:`GatedSubmitter` lets its next operations go then, so work
    arrives during the look however fast the workers finished what came before (CI saw
    all 500 operations done before the first look)."""
    children = worker_children(supervisor)
    assert children, f"no worker process alive\n{cluster.logs()}"
    busy: list[int] = []
    cluster.pause_file.touch()
    try:
        if while_held is not None:
            while_held()
        look_until = time.monotonic() + look_seconds
        while not busy and time.monotonic() < look_until:
            held = busy_pids(cluster)
            busy = [pid for pid in children if pid in held]
            if not busy:
                time.sleep(0.005)
        victim = rng.choice(busy or children)
        os.kill(victim, signal.SIGKILL)
    finally:
        cluster.pause_file.unlink(missing_ok=True)
    return victim, bool(busy)


class GatedSubmitter:
    """Submits ``total`` operations from a thread (``submit_one(i)`` returns the 202's
    JSON), never beyond its gate: the test lets the next ones go (:meth:`release`) as its
    kills come, so submission runs beside every kill instead of finishing before the
    first. A failure is kept in ``problems`` for the test's own thread to report."""

    def __init__(self, submit_one: Callable[[int], dict[str, Any]], total: int, gate: int):
        self.submitted: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self._submit_one = submit_one
        self._total = total
        self._gate = min(gate, total)
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="submitter", daemon=True)

    def start(self) -> GatedSubmitter:
        self._thread.start()
        return self

    def release(self, upto: int) -> None:
        """Let operations go up to ``upto`` (all of them past ``total``)."""
        with self._cond:
            self._gate = max(self._gate, min(upto, self._total))
            self._cond.notify_all()

    def join(self, timeout: float) -> bool:
        """Whether every operation was submitted (or submission stopped on a problem)."""
        self.release(self._total)
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        try:
            for i in range(self._total):
                with self._cond:
                    self._cond.wait_for(lambda: i < self._gate)
                self.submitted.append(self._submit_one(i))
        except BaseException as exc:  # reported by the test's thread
            self.problems.append(f"submitter: {exc!r}")


def wait_replaced(cluster: ProcessCluster, supervisor: int, victim: int, processes: int,
                  timeout: float) -> None:
    """Wait until the ``supervisor`` replaced its killed child ``victim``: ``processes``
    worker children again, ``victim`` not among them."""
    wait_until(lambda: victim not in worker_children(supervisor)
               and len(worker_children(supervisor)) == processes,
               timeout, f"the supervisor to replace worker {victim}", cluster, interval=0.2)


