#!/usr/bin/env python
"""Throughput against peers (issue 43): what a Python user would pick instead of Wharf.

A script, not a test (pytest collects ``test_*.py`` only). One run, one machine, one
client pattern and one worker budget for every system:

* client: ``--clients`` (8) threads in this process submit jobs closed-loop (each submits
  its next job as soon as the previous submission returns) from one shared counter:
  ``--warmup`` (1,000) jobs first, then ``--jobs`` (4,000) measured ones. The clock runs
  from the first measured submission until the system itself records the last measured
  job complete (see "completion" below);
* workers: ``--worker-processes`` (2) processes of ``--worker-concurrency`` (4) each:
  threads for Dramatiq and Celery (``--pool threads``), the asynchronous concurrency of
  the asyncio workers of pgqueuer (``batch_size`` 4, so ``max_concurrent_tasks`` 8, its
  minimum: held jobs, as Dramatiq prefetches 2 x its threads) and procrastinate
  (``concurrency``), Wharf's own ``wharf worker --processes 2 --threads 4``.

Systems, in the order run:

raw Dramatiq   a no-op actor that INCRs a Redis counter (the worker of
               ``bench_operations.py``'s phase (a)); completion: the counter.
Celery         a no-op task, Redis broker (DB 2) and Redis result backend (DB 3), default
               settings otherwise (acks *before* running: ``task_acks_late`` is off); the
               submitters have no result backend (they do not subscribe to results);
               completion: the result backend's keys (``DBSIZE`` of DB 3: one
               ``celery-task-meta-<id>`` per finished task).
pgqueuer       an async no-op entrypoint, and one that INSERTs one row (its own
               autocommit transaction, a pool of ``--worker-concurrency`` connections per
               process); ``SyncQueries.enqueue`` from each submitter's connection;
               completion: ``pgqueuer_log`` rows with status ``successful`` (pgqueuer
               writes them, deleting the job, when its status buffer flushes: every
               ``batch_size`` jobs or 0.1 s).
procrastinate  the same two tasks (async); ``task.defer`` through a
               ``SyncPsycopgConnector`` pool; completion: ``procrastinate_jobs`` rows with
               status ``succeeded``.
Wharf          ``create_resource`` end to end: ``bench_operations.py``'s phase (b) as it is
               (its environment, processes, submitters and probe): authenticated POST
               /api/resources with an Idempotency-Key to ``wharf api``, ``wharf worker``,
               ``wharf scheduler``; completion: the operation ``completed`` in the
               database.
raw Dramatiq   again at the end: the machine is shared, so the ratio uses the mean of the
               two raw runs (both printed).

``--bulk`` adds Wharf's bulk submission (``POST /api/operations:batch``, 100 operations a
request) when the route exists; it is skipped when it answers 404.

CPU per job (from /proc, ``harness.CpuMeter``) is printed per group: the system's side
(workers + broker or database + API/scheduler for Wharf) and the client (this process and
its probe's backend). Everything runs on throw-away resources: a private ``redis-server``
and throw-away PostgreSQL databases (dropped at the end), as ``bench_operations.py``.

The peers are optional dependencies (``[project.optional-dependencies] bench``):

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python tests/benchmarks/bench_peers.py              # about 2-3 minutes
    .venv/bin/python tests/benchmarks/bench_peers.py --only raw,celery
"""
from __future__ import annotations

import argparse
import asyncio
import importlib.util
import itertools
import json
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.benchmarks import bench_operations as ops  # noqa: E402
from tests.benchmarks.harness import CpuMeter, log, postgres_of  # noqa: E402

INSTALL = ("the peers are optional benchmark dependencies; install them with\n"
           "    .venv/bin/pip install -e '.[bench]'\n"
           "or  .venv/bin/pip install 'celery[redis]' pgqueuer procrastinate")
#: system -> the modules it needs beyond Wharf's own dependencies
NEEDS = {"raw": (), "celery": ("celery",), "pgqueuer": ("pgqueuer",),
         "procrastinate": ("procrastinate",), "wharf": ()}
SYSTEMS = tuple(NEEDS)
ROWS_DDL = "CREATE TABLE bench_rows (id bigserial PRIMARY KEY, job text NOT NULL)"
ROWS_INSERT = "INSERT INTO bench_rows (job) VALUES (%s)"
BULK_ROUTE = "/api/operations:batch"
BULK_SIZE = 100


def missing(systems: list[str]) -> list[str]:
    return sorted({m for s in systems for m in NEEDS[s] if importlib.util.find_spec(m) is None})


# ---------------------------------------------------------------------------------------
# the driver: the same client pattern for every peer
# ---------------------------------------------------------------------------------------
class Peer:
    """One system under test. ``submit`` is called from several client threads at once;
    ``done`` is the number of jobs the system records as finished since it started."""

    name = ""
    poll_floor = 0.005  # the shortest pause between two completion polls

    def __init__(self, spawn: Any, processes: int, concurrency: int):
        self.ctx = spawn
        self.processes, self.concurrency = processes, concurrency
        self.children: list[Any] = []

    def start(self) -> None:
        raise NotImplementedError

    def submit(self, i: int) -> None:
        raise NotImplementedError

    def done(self) -> int:
        raise NotImplementedError

    def groups(self) -> dict[str, Any]:
        """CpuMeter keyword arguments beyond the worker trees."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the client side (connections)."""

    def spawn(self, target: Callable[..., None], *args: Any) -> None:
        """Start the worker processes (``target(*args, ready_event)``) and wait until each
        has set its event."""
        events = []
        for i in range(self.processes):
            ready = self.ctx.Event()
            p = self.ctx.Process(target=target, args=(*args, ready), name=f"{self.name}-{i}",
                                 daemon=False)
            p.start()
            self.children.append(p)
            events.append(ready)
        deadline = time.monotonic() + 90
        for ev in events:
            while not ev.wait(0.2):
                if time.monotonic() > deadline or any(not p.is_alive() for p in self.children):
                    raise RuntimeError(f"{self.name}: the worker processes did not start")
        time.sleep(0.5)  # let the consumers settle into their fetch loop

    def meter(self) -> CpuMeter:
        roots = {f"workers {i}": p.pid for i, p in enumerate(self.children)}
        extra = self.groups()
        return CpuMeter(roots, names=extra.get("names"), select=extra.get("select"),
                        this_process="client")

    def stop(self) -> None:
        for p in self.children:
            if p.is_alive():
                os.kill(p.pid, signal.SIGTERM)
        for p in self.children:
            p.join(20)
            if p.is_alive():
                p.kill()
                p.join(5)
        self.children = []


def submit_all(peer: Peer, first: int, count: int, clients: int) -> float:
    """``clients`` threads submit jobs ``first`` .. ``first + count - 1``; returns the
    time the last submission returned."""
    counter = itertools.count(first)
    last = [0.0]
    errors: list[BaseException] = []
    lock = threading.Lock()

    def client() -> None:
        try:
            while (i := next(counter)) < first + count:
                peer.submit(i)
        except BaseException as exc:  # reported below, with the run stopped
            errors.append(exc)
        with lock:
            last[0] = max(last[0], time.perf_counter())

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"{peer.name}: a submission failed") from errors[0]
    return last[0]


def wait_done(peer: Peer, total: int, started: float, timeout: float = 600.0) -> float:
    """Poll ``peer.done()`` until it reaches ``total``; the pause follows what is left (a
    quarter of the time the rest should take at the rate so far, at most 0.5 s, at least
    ``peer.poll_floor``), as ``bench_operations.Probe.wait_all_done`` does."""
    deadline = time.monotonic() + timeout
    base = peer.done()
    while True:
        n = peer.done()
        if n >= total:
            return time.perf_counter()
        if time.monotonic() > deadline:
            raise RuntimeError(f"{peer.name}: {n} of {total} done after {timeout:.0f}s")
        rate = (n - base) / max(1e-3, time.perf_counter() - started)
        rest = (total - n) / rate if rate > 0 else 0.0
        time.sleep(min(0.5, max(peer.poll_floor, rest / 4)))


def drive(peer: Peer, warmup: int, jobs: int, clients: int) -> dict:
    """Warm-up, then the measured jobs; the clock runs from the first measured submission
    until the system records the last one done."""
    t = time.perf_counter()
    submit_all(peer, 0, warmup, clients)
    wait_done(peer, warmup, t)
    time.sleep(0.5)
    meter = peer.meter()
    meter.start()
    t0 = time.perf_counter()
    done_at: list[float] = []
    sub_end: list[float] = []
    submitter = threading.Thread(
        target=lambda: sub_end.append(submit_all(peer, warmup, jobs, clients)), daemon=True)
    submitter.start()
    done_at.append(wait_done(peer, warmup + jobs, t0))
    cpu = meter.stop()
    submitter.join()
    seconds = done_at[0] - t0
    groups: dict[str, float] = {}
    for name, sec in cpu["groups"].items():
        key = "workers" if name.startswith("workers ") else name
        key = "other" if key == "other processes" else key
        groups[key] = groups.get(key, 0.0) + sec
    return {"jobs": jobs, "seconds": seconds, "throughput": jobs / seconds,
            "submit_rate": jobs / (sub_end[0] - t0) if sub_end else float("nan"),
            "cpu": {**cpu, "groups": groups}}


# ---------------------------------------------------------------------------------------
# raw Dramatiq: bench_operations' worker, 8 submitters
# ---------------------------------------------------------------------------------------
class RawDramatiq(Peer):
    name = "raw Dramatiq no-op (Redis)"

    def __init__(self, spawn: Any, processes: int, concurrency: int, redis_url: str,
                 redis_pid: int | None):
        super().__init__(spawn, processes, concurrency)
        self.redis_url, self.redis_pid = redis_url, redis_pid

    def start(self) -> None:
        import dramatiq
        import redis
        from dramatiq.brokers.redis import RedisBroker

        self.client = redis.Redis.from_url(self.redis_url)
        self.client.delete(ops.RAW_COUNTER, ops.RAW_READY)
        self.procs = [self.ctx.Process(target=ops._raw_child,
                                       args=(self.redis_url, self.concurrency))
                      for _ in range(self.processes)]
        for p in self.procs:
            p.start()
        self.children = self.procs
        deadline = time.monotonic() + 60
        while int(self.client.get(ops.RAW_READY) or 0) < self.processes:
            if time.monotonic() > deadline:
                raise RuntimeError("raw dramatiq workers did not start")
            time.sleep(0.05)
        time.sleep(0.5)
        self.broker = RedisBroker(url=self.redis_url, namespace=ops.RAW_NAMESPACE,
                                  heartbeat_timeout=30000)
        dramatiq.Actor(ops._noop, broker=self.broker, actor_name="noop",
                       queue_name=ops.RAW_QUEUE, priority=0, options={"max_retries": 0})

    def submit(self, i: int) -> None:
        import dramatiq
        self.broker.enqueue(dramatiq.Message(queue_name=ops.RAW_QUEUE, actor_name="noop",
                                             args=(i,), kwargs={}, options={}))

    def done(self) -> int:
        return int(self.client.get(ops.RAW_COUNTER) or 0)

    def groups(self) -> dict[str, Any]:
        return ops.redis_meter(self.redis_pid)

    def close(self) -> None:
        self.broker.close()
        self.client.close()


# ---------------------------------------------------------------------------------------
# Celery
# ---------------------------------------------------------------------------------------
def with_db(redis_url: str, db: int) -> str:
    return redis_url.rsplit("/", 1)[0] + f"/{db}"


def _celery_child(broker: str, backend: str, name: str, concurrency: int,
                  ready: Any) -> None:
    from celery import Celery
    from celery.signals import worker_ready

    app = Celery("bench", broker=broker, backend=backend)
    app.conf.update(broker_connection_retry_on_startup=True, worker_hijack_root_logger=False)

    @app.task(name="noop")
    def noop(i: int) -> None:
        return None

    worker_ready.connect(lambda **_: ready.set(), weak=False)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the worker's banner and shutdown lines
    app.worker_main(["worker", "--pool", "threads", "--concurrency", str(concurrency),
                     "--hostname", f"{name}@bench", "--loglevel", "WARNING"])


class CeleryPeer(Peer):
    name = "Celery no-op (Redis broker + result backend)"

    def __init__(self, spawn: Any, processes: int, concurrency: int, redis_url: str,
                 redis_pid: int | None):
        super().__init__(spawn, processes, concurrency)
        self.broker_url, self.backend_url = with_db(redis_url, 2), with_db(redis_url, 3)
        self.redis_pid = redis_pid

    def start(self) -> None:
        import redis
        from celery import Celery

        self.results = redis.Redis.from_url(self.backend_url)
        self.results.flushdb()
        for i in range(self.processes):  # one spawn each: a name per worker
            ready = self.ctx.Event()
            p = self.ctx.Process(target=_celery_child,
                                 args=(self.broker_url, self.backend_url, f"w{i}",
                                       self.concurrency, ready))
            p.start()
            self.children.append(p)
            if not ready.wait(90):
                raise RuntimeError("celery worker did not start")
        time.sleep(0.5)
        # The submitters have no result backend: they do not subscribe to each task's
        # result channel (a fire-and-forget producer, like the other systems' clients).
        self.app = Celery("bench", broker=self.broker_url)
        self.app.conf.update(broker_connection_retry_on_startup=True)

    def submit(self, i: int) -> None:
        self.app.send_task("noop", args=(i,))

    def done(self) -> int:
        return int(self.results.dbsize())

    def groups(self) -> dict[str, Any]:
        return ops.redis_meter(self.redis_pid)

    def close(self) -> None:
        self.results.close()
        self.app.close()


# ---------------------------------------------------------------------------------------
# PostgreSQL peers: a throw-away database each
# ---------------------------------------------------------------------------------------
class PostgresPeer(Peer):
    poll_floor = 0.02

    def __init__(self, spawn: Any, processes: int, concurrency: int, dsn: str, dbname: str,
                 insert: bool):
        super().__init__(spawn, processes, concurrency)
        self.dsn, self.dbname, self.insert = dsn, dbname, insert
        self.local = threading.local()
        self.connections: list[Any] = []
        self.lock = threading.Lock()

    def probe(self) -> Any:
        import psycopg
        if not hasattr(self, "_probe"):
            self._probe = psycopg.connect(self.dsn, autocommit=True)
            self.probe_pid = self._probe.execute("SELECT pg_backend_pid()").fetchone()[0]
        return self._probe

    def connection(self) -> Any:
        """This client thread's own autocommit connection."""
        import psycopg
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = psycopg.connect(self.dsn, autocommit=True)
            with self.lock:
                self.connections.append(conn)
        return conn

    def count(self, sql: str) -> int:
        return int(self.probe().execute(sql).fetchone()[0])

    def groups(self) -> dict[str, Any]:
        self.probe()
        probe = self.probe_pid
        return {"select": {"PostgreSQL": postgres_of((self.dbname,), exclude=lambda: (probe,)),
                           "client": lambda pid, comm: pid == probe}}

    def close(self) -> None:
        for conn in self.connections:
            conn.close()
        self.connections = []
        if hasattr(self, "_probe"):
            self._probe.close()
            del self._probe


async def _rows_pool(dsn: str, size: int) -> Any:
    from psycopg_pool import AsyncConnectionPool
    pool = AsyncConnectionPool(dsn, min_size=size, max_size=size,
                               kwargs={"autocommit": True}, open=False)
    await pool.open(wait=True)
    return pool


def _pgq_child(dsn: str, insert: bool, concurrency: int, batch: int, ready: Any) -> None:
    """A pgqueuer worker process: dequeues ``batch`` jobs at a time, holds at most twice
    that many (running or done but not yet logged); the insert variant's pool has
    ``concurrency`` connections."""
    async def main() -> None:
        import psycopg
        from pgqueuer import PgQueuer
        from pgqueuer.db import PsycopgDriver

        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        pool = await _rows_pool(dsn, concurrency) if insert else None
        pgq = PgQueuer(PsycopgDriver(conn))

        @pgq.entrypoint("job")
        async def job(j: Any) -> None:
            if pool is not None:
                async with pool.connection() as c:
                    await c.execute(ROWS_INSERT, (str(j.id),))

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, pgq.shutdown.set)
        ready.set()
        await pgq.run(batch_size=batch, max_concurrent_tasks=2 * batch)
        if pool is not None:
            await pool.close()
        await conn.close()

    asyncio.run(main())


class PgQueuerPeer(PostgresPeer):
    def __init__(self, *args: Any, batch: int, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.batch = batch
        self.name = f"pgqueuer {'inserting one row' if self.insert else 'no-op'}"

    def start(self) -> None:
        import psycopg
        from pgqueuer import Queries
        from pgqueuer.db import PsycopgDriver

        async def install() -> None:
            conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
            await Queries(PsycopgDriver(conn)).install()
            await conn.close()

        asyncio.run(install())
        self.probe().execute(ROWS_DDL)
        self.spawn(_pgq_child, self.dsn, self.insert, self.concurrency, self.batch)

    def submit(self, i: int) -> None:
        from pgqueuer.db import SyncPsycopgDriver
        from pgqueuer.queries import SyncQueries
        q = getattr(self.local, "queries", None)
        if q is None:
            q = self.local.queries = SyncQueries(SyncPsycopgDriver(self.connection()))
        q.enqueue("job", json.dumps({"i": i}).encode())

    def done(self) -> int:
        return self.count("SELECT count(*) FROM pgqueuer_log WHERE status = 'successful'")


def _procrastinate_app(connector: Any, pool: list[Any]) -> Any:
    import procrastinate

    app = procrastinate.App(connector=connector)

    @app.task(name="noop", queue="bench")
    async def noop(i: int) -> None:
        return None

    @app.task(name="insert", queue="bench")
    async def insert(i: int) -> None:
        async with pool[0].connection() as c:
            await c.execute(ROWS_INSERT, (str(i),))

    return app


def _procrastinate_child(dsn: str, insert: bool, concurrency: int, ready: Any) -> None:
    async def main() -> None:
        import procrastinate

        pool = [await _rows_pool(dsn, concurrency)] if insert else []
        app = _procrastinate_app(procrastinate.PsycopgConnector(conninfo=dsn), pool)
        async with app.open_async():
            ready.set()
            await app.run_worker_async(queues=["bench"], concurrency=concurrency, wait=True)
        for p in pool:
            await p.close()

    asyncio.run(main())


class ProcrastinatePeer(PostgresPeer):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.name = f"procrastinate {'inserting one row' if self.insert else 'no-op'}"

    def start(self) -> None:
        import procrastinate
        self.app = _procrastinate_app(
            procrastinate.SyncPsycopgConnector(conninfo=self.dsn, min_size=1, max_size=16), [])
        self.app.open()
        self.app.schema_manager.apply_schema()
        self.probe().execute(ROWS_DDL)
        self.task = self.app.tasks["insert" if self.insert else "noop"]
        self.spawn(_procrastinate_child, self.dsn, self.insert, self.concurrency)

    def submit(self, i: int) -> None:
        self.task.defer(i=i)

    def done(self) -> int:
        return self.count("SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'")

    def close(self) -> None:
        super().close()
        self.app.close()


# ---------------------------------------------------------------------------------------
# Wharf: bench_operations' phase (b), and the bulk route when it exists
# ---------------------------------------------------------------------------------------
def wharf_args(args: argparse.Namespace) -> argparse.Namespace:
    """bench_operations' arguments for this run: its defaults (gunicorn 2 x 32, scheduler
    on), our worker budget, PostgreSQL, and a private redis-server."""
    wa = ops.parse_args(["--postgres-url", args.postgres_url,
                         "--worker-processes", str(args.worker_processes),
                         "--worker-threads", str(args.worker_concurrency),
                         "--clients", str(args.clients), "--ops", str(args.jobs),
                         "--warmup", str(args.warmup), "--idle-seconds", "0",
                         *[f"--env={e}" for e in args.env]])
    wa.redis_url = None
    return wa


def bulk_post(sub: ops.Submitter, prefix: str, first: int, count: int) -> int | None:
    """One ``POST /api/operations:batch`` of ``count`` ``create_resource`` operations, each
    with its own Idempotency-Key; returns the HTTP status, or None when the route does not
    exist (404). The body is the route's ``BatchRequest`` (``api/schemas/operations.py``)."""
    items = [{"kind": "create_resource", "idempotency_key": f"{prefix}-{uuid.uuid4().hex}",
              "input": {"space_id": sub.space_id, "parent_id": None,
                        "name": f"{prefix}-{i:06d}", "unit_type": "doc"}}
             for i in range(first, first + count)]
    st, _, body = sub.http().request("POST", BULK_ROUTE, {"items": items})
    if st == 404:
        return None
    if st not in (200, 207):
        raise RuntimeError(f"bulk: {st} {body[:300]!r}")
    return st


def bulk_throughput(sub: ops.Submitter, probe: ops.Probe, jobs: int, clients: int,
                    prefix: str, meter: CpuMeter | None) -> dict | None:
    """``clients`` threads post batches of BULK_SIZE until ``jobs`` operations are in;
    None when the route does not exist."""
    if bulk_post(sub, prefix + "probe", 0, 1) is None:
        return None
    counter = itertools.count(0, BULK_SIZE)
    since = probe.now()
    if meter is not None:
        meter.start()
    t0 = time.perf_counter()

    def client() -> None:
        while (first := next(counter)) < jobs:
            bulk_post(sub, prefix, first, min(BULK_SIZE, jobs - first))

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    t_done = probe.wait_all_done(prefix, jobs, timeout=600, since=since)
    cpu = meter.stop() if meter is not None else None
    for t in threads:
        t.join()
    return {"jobs": jobs, "seconds": t_done - t0, "throughput": jobs / (t_done - t0),
            "cpu": ops.fold_cpu(cpu)}


def run_wharf(args: argparse.Namespace, env: ops.Environment, results: dict) -> None:
    env.create_databases()
    env.migrate()
    env.start_processes(args.worker_concurrency)
    env.wait_ready()
    token, space_id = ops.create_user("127.0.0.1", env.port)
    sub = ops.Submitter("127.0.0.1", env.port, token, space_id)
    probe = ops.Probe(env.product_url)
    env.probe_pids.append(probe.backend_pid)
    try:
        log(f"Wharf create_resource: warm-up {args.warmup}")
        ops.bench_throughput(sub, probe, args.warmup, args.clients, prefix="warm")
        time.sleep(0.5)
        log(f"Wharf create_resource: {args.jobs} operations, {args.clients} clients")
        b = ops.bench_throughput(sub, probe, args.jobs, args.clients, prefix="tput",
                                 meter=env.meter())
        b["cpu"] = ops.fold_cpu(b["cpu"])
        if b["completed"] != args.jobs:
            raise RuntimeError(f"Wharf: {b['completed']} of {args.jobs} completed")
        results["Wharf create_resource (HTTP POST, Idempotency-Key, end to end)"] = {
            "jobs": args.jobs, "seconds": b["seconds"], "throughput": b["throughput"],
            "submit_rate": b["submit_rate"], "cpu": b["cpu"], "wharf": True}
        log(f"    {b['throughput']:.0f} jobs/s (POST rate {b['submit_rate']:.0f}/s)")
        if args.bulk:
            env.wait_queue_drained()
            r = bulk_throughput(sub, probe, args.jobs, args.clients, "bulk", env.meter())
            if r is None:
                log(f"    bulk: {BULK_ROUTE} answers 404 here; skipped")
            else:
                r["wharf"] = True
                results[f"Wharf create_resource, bulk ({BULK_SIZE} a request)"] = r
                log(f"    bulk: {r['throughput']:.0f} jobs/s")
    finally:
        probe.close()
        env.stop_all()


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------
WHARF_SIDE = ("API", "worker", "scheduler", "PostgreSQL", "Redis")
PEER_SIDE = ("workers", "PostgreSQL", "Redis")


def cpu_ms(r: dict) -> tuple[float, float, float]:
    """(system side, client, rest of the machine) CPU-ms per job."""
    g = r["cpu"]["groups"]
    side = WHARF_SIDE if r.get("wharf") else PEER_SIDE
    per = 1000.0 / r["jobs"]
    return (per * sum(g.get(k, 0.0) for k in side), per * g.get("client", 0.0),
            per * g.get("other", 0.0))


def report(args: argparse.Namespace, results: dict, raw_runs: list[float],
           load: str) -> None:
    raw = sum(raw_runs) / len(raw_runs) if raw_runs else None
    print()
    print(f"Throughput against peers - {os.cpu_count()} CPUs; {args.clients} submitters, "
          f"{args.jobs} jobs after {args.warmup} warm-up; workers {args.worker_processes} "
          f"processes x {args.worker_concurrency}; load at start: {load}")
    if raw_runs:
        print("raw Dramatiq runs: " + ", ".join(f"{x:.0f}" for x in raw_runs)
              + f" jobs/s; the ratio uses their mean, {raw:.0f}")
    head = (f"| {'system':<66} | {'jobs/s':>7} | {'÷ raw':>6} | {'CPU-ms/job':>10} | "
            f"{'client':>7} | {'other':>6} | {'submit/s':>8} |")
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    for name, r in results.items():
        side, client, other = cpu_ms(r)
        ratio = f"{r['throughput'] / raw:.2f}" if raw else "-"
        print(f"| {name:<66} | {r['throughput']:7.0f} | {ratio:>6} | {side:10.2f} | "
              f"{client:7.2f} | {other:6.2f} | {r['submit_rate']:8.0f} |"
              if "submit_rate" in r else
              f"| {name:<66} | {r['throughput']:7.0f} | {ratio:>6} | {side:10.2f} | "
              f"{client:7.2f} | {other:6.2f} | {'':>8} |")
    print("CPU-ms/job: the system's side (workers + Redis or this run's PostgreSQL "
          "database; Wharf: API + worker + scheduler + PostgreSQL + Redis); client: this "
          "process's submitters and poller (+ its probe's backend); other: the rest of the "
          "machine during the phase")
    for name, r in results.items():
        g = r["cpu"]["groups"]
        print(f"    {name}: " + ", ".join(
            f"{k} {1000 * v / r['jobs']:.2f}" for k, v in sorted(g.items()) if v > 0))


# ---------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--postgres-url", default=os.environ.get(
        "WHARF_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"),
                    help="admin URL; throw-away databases are created next to it")
    ap.add_argument("--jobs", type=int, default=4000, help="measured jobs per system")
    ap.add_argument("--warmup", type=int, default=1000, help="jobs before the measured ones")
    ap.add_argument("--clients", type=int, default=8, help="concurrent submitter threads")
    ap.add_argument("--worker-processes", type=int, default=2)
    ap.add_argument("--worker-concurrency", type=int, default=4,
                    help="threads (Dramatiq, Celery, Wharf) or async concurrency "
                         "(pgqueuer, procrastinate) per worker process")
    ap.add_argument("--pgqueuer-batch", type=int, default=None,
                    help="pgqueuer's dequeue batch_size (default: --worker-concurrency); "
                         "max_concurrent_tasks is twice it (pgqueuer's minimum): a process "
                         "holds at most that many jobs, as a Dramatiq worker prefetches "
                         "2 x its threads")
    ap.add_argument("--only", default=",".join(SYSTEMS),
                    help=f"comma-separated subset of {','.join(SYSTEMS)}")
    ap.add_argument("--bulk", action="store_true",
                    help=f"also measure Wharf's bulk submission ({BULK_ROUTE}, "
                         f"{BULK_SIZE} a request), skipped when the route answers 404")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra environment for the wharf processes (repeatable)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    args.systems = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(args.systems) - set(SYSTEMS)
    if unknown:
        ap.error(f"unknown systems {sorted(unknown)}; choose from {SYSTEMS}")
    args.pgqueuer_batch = args.pgqueuer_batch or args.worker_concurrency
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    lacking = missing(args.systems)
    if lacking:
        print(f"bench_peers: missing {', '.join(lacking)}: {INSTALL}\n(or leave them out "
              f"with --only)", file=sys.stderr)
        return 2
    load = open("/proc/loadavg").read().split()[:3]
    load_s = "load average " + " ".join(load)
    log(f"{load_s}; systems: {', '.join(args.systems)}")
    env = ops.Environment(wharf_args(args))
    spawn = mp.get_context("spawn")
    results: dict[str, dict] = {}
    raw_runs: list[float] = []
    budget = (spawn, args.worker_processes, args.worker_concurrency)

    def peer_dsn(suffix: str) -> tuple[str, str]:
        name = f"{env.tag}_{suffix}"
        with env._admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        env.created.append(name)
        return ops.plain_pg(ops.with_dbname(args.postgres_url, name)), name

    def measure(peer: Peer) -> dict:
        log(f"{peer.name}: warm-up {args.warmup}, then {args.jobs} jobs")
        peer.start()
        try:
            r = drive(peer, args.warmup, args.jobs, args.clients)
        finally:
            peer.stop()
            peer.close()
        log(f"    {r['throughput']:.0f} jobs/s (submitted at {r['submit_rate']:.0f}/s)")
        return r

    def raw() -> None:
        assert env.redis_url is not None
        r = measure(RawDramatiq(*budget, env.redis_url, env.redis_pid))
        name = RawDramatiq.name + (", again at the end" if raw_runs else "")
        raw_runs.append(r["throughput"])
        results[name] = r
        env.flush_redis()

    try:
        env.start_redis()
        env.flush_redis()
        assert env.redis_url is not None
        if "raw" in args.systems:
            raw()
        if "celery" in args.systems:
            results[CeleryPeer.name] = measure(
                CeleryPeer(*budget, env.redis_url, env.redis_pid))
        for insert in (False, True):
            if "pgqueuer" in args.systems:
                dsn, name = peer_dsn(f"pgq{int(insert)}")
                p: Peer = PgQueuerPeer(*budget, dsn, name, insert, batch=args.pgqueuer_batch)
                results[p.name] = measure(p)
        for insert in (False, True):
            if "procrastinate" in args.systems:
                dsn, name = peer_dsn(f"proc{int(insert)}")
                p = ProcrastinatePeer(*budget, dsn, name, insert)
                results[p.name] = measure(p)
        if "wharf" in args.systems:
            env.flush_redis()
            run_wharf(args, env, results)
        if "raw" in args.systems and len(args.systems) > 1:
            env.flush_redis()
            raw()
    finally:
        env.stop_all()
        try:
            env.drop_databases()
        finally:
            env.stop_redis()
    report(args, results, raw_runs, load_s)
    if args.json:
        args.json.write_text(json.dumps({"load": load_s, "raw_runs": raw_runs,
                                         "results": results}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
