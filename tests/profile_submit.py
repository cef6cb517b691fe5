"""CPU per ``POST /api/resources`` (create_resource, request to 202), in process.

A script, not a test (pytest collects ``test_*.py`` only). It builds the API app the way
``wharfd.runtime.Components`` does (in-process StubBroker: the Redis enqueue is not
measured), in a throw-away PostgreSQL database (or a SQLite file), registers a user, mints
an API token and sends N POSTs through ``falcon.testing.TestClient`` (root-level creates,
as ``tests/benchmarks/bench_operations.py`` sends them). It prints this process's CPU per
POST (all threads: the outbox marker thread included), the PostgreSQL backends' CPU per
POST (read from /proc when the server runs on this machine), SQL statements per POST, and
with ``--profile`` the top of a cProfile of the POSTs (main thread only). With
``--execute B`` it then executes N more submissions in process, B per claim
(``Executor.run_batch``), and prints the executor's CPU per operation.

    .venv/bin/python tests/profile_submit.py --n 1000 [--sqlite] [--profile 30] [--execute 1 [--profile-execute 40]]
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from falcon import testing  # noqa: E402
from sqlalchemy import create_engine, event, text  # noqa: E402
from sqlalchemy.pool import NullPool  # noqa: E402

from migrations.prepare import prepare  # noqa: E402
from tests.support import services  # noqa: E402
from wharf.infra.settings import Settings  # noqa: E402

PASSWORD = "correct horse battery staple"
TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    try:
        raw = open(f"/proc/{pid}/stat").read()
    except OSError:
        return 0.0
    fields = raw[raw.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _self_cpu() -> float:
    t = os.times()
    return t.user + t.system


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--sqlite", action="store_true")
    ap.add_argument("--profile", type=int, default=0, help="print the top N of a cProfile")
    ap.add_argument("--sort", default="cumulative", choices=("cumulative", "tottime"),
                    help="the profile's order")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra WHARF_* settings (e.g. WHARF_QUOTA_PENDING_OPERATIONS=0)")
    ap.add_argument("--auth-cache-seconds", default=None,
                    help="WHARF_AUTH_CACHE_SECONDS (default: the setting's default)")
    ap.add_argument("--profile-execute", type=int, default=0, metavar="N",
                    help="with --execute: print the top N of a cProfile of the executor")
    ap.add_argument("--round-trips", action="store_true",
                    help="with --execute (PostgreSQL): count the executor's round trips")
    ap.add_argument("--execute", type=int, default=0, metavar="BATCH",
                    help="then execute N more submissions in process, claiming BATCH at a "
                         "time (Executor.run_batch), and print its CPU per operation")
    ap.add_argument("--no-cte", action="store_true",
                    help="PostgreSQL: three INSERTs instead of the one CTE statement")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="wharf-prof-"))
    admin = None
    dbname = None
    if args.sqlite:
        url = f"sqlite:///{tmp / 'wharf.db'}"
    else:
        dbname = f"wharf_test_subprof_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{dbname}"'))
            conn.execute(text(f'CREATE DATABASE "{dbname}_units"'))
        url = services.POSTGRES_URL.rsplit("/", 1)[0] + "/" + dbname
    try:
        engine = create_engine(url)
        prepare(engine, report=lambda *_: None)
        engine.dispose()
        return run(args, url, tmp, dbname)
    finally:
        if admin is not None:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)'))
                conn.execute(text(f'DROP DATABASE IF EXISTS "{dbname}_units" WITH (FORCE)'))
            admin.dispose()


def run(args: argparse.Namespace, url: str, tmp: Path, dbname: str | None) -> int:
    from wharfd.runtime import Components
    settings = Settings.from_env({
        "WHARF_DATA_DIR": str(tmp / "data"), "WHARF_DATABASE_URL": url,
        # the unit store beside the product database, as deployed (PostgreSQL: a database
        # of its own, whose backends count as PostgreSQL's too)
        "WHARF_UNITSTORE_URL": f"sqlite:///{tmp / 'units.db'}" if dbname is None
        else f"{url}_units",
        "WHARF_ARGON2_TIME_COST": "1", "WHARF_ARGON2_MEMORY_COST": "8",
        "WHARF_ARGON2_PARALLELISM": "1",
        **({"WHARF_AUTH_CACHE_SECONDS": args.auth_cache_seconds}
           if args.auth_cache_seconds is not None else {}),
        **dict(kv.split("=", 1) for kv in getattr(args, "env", None) or [])})
    comps = Components(settings)
    if getattr(args, "no_cte", False) and hasattr(comps.operations, "_record_all"):
        comps.operations._record_all = None
    from storage.unitschema import prepare_unitstore_db
    assert comps.unit_db is not None
    prepare_unitstore_db(comps.unit_db, report=lambda *_: None)
    client = testing.TestClient(comps.api_app())
    r = client.simulate_post("/api/users", json={"username": "prof", "password": PASSWORD})
    assert r.status_code == 201, r.text
    space_id = r.json["personal_space_id"]
    r = client.simulate_post("/api/login-sessions",
                             json={"username": "prof", "password": PASSWORD})
    assert r.status_code == 201, r.text
    cookie = r.headers["set-cookie"].split(";", 1)[0]
    r = client.simulate_post("/api/api-tokens", json={"name": "p", "scopes": ["read", "write"]},
                             headers={"Cookie": cookie, "Origin": "http://falconframework.org"})
    assert r.status_code == 201, r.text
    headers = {"Authorization": f"Bearer {r.json['token']}"}

    def post(i: int) -> None:
        r = client.simulate_post(
            "/api/resources",
            json={"space_id": space_id, "parent_id": None, "name": f"n-{i:07d}",
                  "unit_type": "doc"},
            headers={**headers, "Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 202, r.text

    for i in range(args.warmup):
        post(i)
    comps.dispatcher.flush()

    def backends() -> list[int]:
        """Every backend of the pool. (Asked on a connection of its own: one taken from
        the pool would leave itself out, and a later call that took another would then
        count its whole life's CPU as new.)"""
        if dbname is None:
            return []
        with observer.connect() as conn:
            return [p for (p,) in conn.execute(text(
                "SELECT pid FROM pg_stat_activity WHERE datname IN (:d, :u) AND pid <> "
                "pg_backend_pid() AND backend_type = 'client backend'"),
                {"d": dbname, "u": f"{dbname}_units"})]

    observer = create_engine(url, poolclass=NullPool)

    pids = backends()
    pg0 = {p: _cpu(p) for p in pids}
    c0, w0 = _self_cpu(), time.perf_counter()
    for i in range(args.n):
        post(args.warmup + i)
    comps.dispatcher.flush()
    c1, w1 = _self_cpu(), time.perf_counter()
    pg1 = {p: _cpu(p) for p in set(pids) | set(backends())}
    pg = sum(pg1[p] - pg0.get(p, 0.0) for p in pg1)

    if args.execute:  # (before the counter below: a listener turns storage.driver off)
        execute(args, comps, post, backends)
    statements = 0

    def count(*_a: object) -> None:
        nonlocal statements
        statements += 1

    event.listen(comps.db.engine, "before_cursor_execute", count)
    m = 100
    for i in range(m):
        post(10_000_000 + i)
    comps.dispatcher.flush()
    event.remove(comps.db.engine, "before_cursor_execute", count)

    backend = "sqlite" if dbname is None else "postgresql"
    print(f"{backend}: {args.n} POSTs in {w1 - w0:.2f}s wall")
    print(f"  API process CPU per POST : {1000 * (c1 - c0) / args.n:.3f} ms")
    if dbname is not None:
        print(f"  PostgreSQL CPU per POST  : {1000 * pg / args.n:.3f} ms "
              f"({len(pg1)} backends)")
    print(f"  SQL statements per POST  : {statements / m:.2f} (incl. outbox marking)")
    if args.profile:
        prof = cProfile.Profile(time.process_time)  # CPU, not wall: waits do not count
        prof.enable()
        for i in range(args.n):
            post(20_000_000 + i)
        prof.disable()
        comps.dispatcher.flush()
        pstats.Stats(prof).sort_stats(args.sort).print_stats(args.profile)
    comps.close()
    return 0


class _ServerWaits:
    """Counts the executor's round trips with libpq's own trace: each ``ReadyForQuery``
    the server sends ends one exchange the client waited for (a simple ``BEGIN`` or
    ``COMMIT``, a statement, or a pipeline's sync). A pool listener, not a statement
    listener: ``storage.driver`` stays on. Every engine given counts (the product
    database's and the unit store's)."""

    def __init__(self, *engines) -> None:
        self.path = Path(tempfile.mkstemp(prefix="wharf-libpq-trace-")[1])
        self.file = self.path.open("w")
        self.engines = engines
        self.traced: list = []
        for engine in engines:
            event.listen(engine, "checkout", self._checkout)

    def _checkout(self, dbapi_conn, record, proxy) -> None:
        if hasattr(dbapi_conn, "pgconn") and dbapi_conn not in self.traced:
            dbapi_conn.pgconn.trace(self.file.fileno())
            self.traced.append(dbapi_conn)

    def close(self) -> int:
        for engine in self.engines:
            event.remove(engine, "checkout", self._checkout)
        for conn in self.traced:
            conn.pgconn.untrace()
        self.file.close()
        with self.path.open() as f:
            n = sum(1 for line in f if "\tB\t" in line and "ReadyForQuery" in line)
        self.path.unlink()
        return n


def execute(args: argparse.Namespace, comps, post, backends) -> None:
    """The executor's CPU per create_resource: everything pending is executed first, then
    N new submissions are executed ``args.execute`` at a time (one claim, the unit store,
    one completion per batch; no broker: ``run_batch`` directly)."""
    while comps.executor.run_batch(limit=100, worker_id="prof"):
        pass
    for i in range(args.n):
        post(30_000_000 + i)
    comps.dispatcher.flush()
    pids = backends()
    pg0 = {p: _cpu(p) for p in pids}
    c0, w0 = _self_cpu(), time.perf_counter()
    done = 0
    prof = cProfile.Profile(time.process_time) if args.profile_execute else None
    waits = _ServerWaits(*{comps.db.engine, comps.unit_db.engine}) \
        if args.round_trips else None
    if prof is not None:
        prof.enable()
    while n := comps.executor.run_batch(limit=args.execute, worker_id="prof"):
        done += n
    if prof is not None:
        prof.disable()
    c1, w1 = _self_cpu(), time.perf_counter()
    if waits is not None:
        print(f"  round trips per batch (ReadyForQuery received): "
              f"{waits.close() / max(1, -(-done // args.execute)):.2f}")
    pg1 = {p: _cpu(p) for p in set(pids) | set(backends())}
    pg = sum(pg1[p] - pg0.get(p, 0.0) for p in pg1)
    print(f"executor: {done} operations, {args.execute} per claim, in {w1 - w0:.2f}s wall")
    print(f"  worker process CPU per operation : {1000 * (c1 - c0) / max(done, 1):.3f} ms")
    if pids:
        print(f"  PostgreSQL CPU per operation     : {1000 * pg / max(done, 1):.3f} ms")
    if prof is not None:
        pstats.Stats(prof).sort_stats(args.sort).print_stats(args.profile_execute)


if __name__ == "__main__":
    raise SystemExit(main())
