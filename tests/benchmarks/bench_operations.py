#!/usr/bin/env python
"""Benchmark of the operations engine on PostgreSQL + Redis (DESIGN §3).

A script, not a test (pytest collects ``test_*.py`` only). One run measures:

(a) raw Dramatiq: N no-op messages (the actor only INCRs a Redis counter) enqueued from
    this process while ``--worker-processes`` plain ``dramatiq.Worker`` processes (same
    thread count and default middleware as ``wharf worker``) consume them, on the same
    Redis DB under a separate namespace. Time: first enqueue -> counter reaches N.
(b) Wharf end-to-end ``create_resource`` throughput: M operations POSTed to the real
    ``wharf api`` (gunicorn subprocess) by ``--clients`` closed-loop client threads while
    ``wharf worker --processes 2`` executes them (and ``wharf scheduler`` runs beside them,
    as in production, unless ``--no-scheduler``). Time: first POST -> the database shows
    all M operations completed/failed (polled every 20 ms).
(c) latency at ``--latency-fraction`` (default 0.5) of the throughput measured in (b):
    open-loop paced submissions (evenly spaced, each on its own client thread from a pool,
    so a slow answer never delays the next submission). Per operation: POST -> 202, then a
    long-poll ``GET /api/operations/{id}?wait=30`` on the same thread; submit -> completed
    is the client-observed time from sending the POST to receiving the long-poll answer
    with ``done: true``. The server-side ``completed_at - created_at`` from the database is
    printed next to it.

CPU seconds per process group (from /proc) are printed for each phase: on a small shared
machine they say what bounds the figures.

Everything runs on throw-away resources: two PostgreSQL databases (product + unitstore,
dropped at the end) and one Redis DB number (flushed before and after).

    .venv/bin/python tests/benchmarks/bench_operations.py            # defaults: ~2-3 minutes
    .venv/bin/python tests/benchmarks/bench_operations.py --help
"""
from __future__ import annotations

import argparse
import http.client
import itertools
import json
import multiprocessing as mp
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.benchmarks.harness import CpuMeter, WharfProcesses, free_port, log, pct  # noqa: E402

RAW_NAMESPACE = "wharf-bench-raw"
RAW_QUEUE = "noop"
RAW_COUNTER = f"{RAW_NAMESPACE}:done"
RAW_READY = f"{RAW_NAMESPACE}:ready"
PASSWORD = "benchmark password 1234"

TARGET_RATIO = 0.25
TARGET_POST_P99_MS = 30.0
TARGET_DONE_P99_MS = 250.0


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------
def plain_pg(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://").replace("postgres://",
                                                                         "postgresql://")


def with_dbname(url: str, name: str) -> str:
    return url.rsplit("/", 1)[0] + "/" + name


# ---------------------------------------------------------------------------------------
# (a) raw Dramatiq
# ---------------------------------------------------------------------------------------
def _noop(i: int) -> None:  # the parent declares the actor only to enqueue; never runs it
    pass


def _raw_child(url: str, threads: int) -> None:
    import dramatiq
    import redis
    from dramatiq.brokers.redis import RedisBroker

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    client = redis.Redis.from_url(url)
    # Default middleware (the same list Wharf's broker uses), same heartbeat as Wharf.
    broker = RedisBroker(url=url, namespace=RAW_NAMESPACE, heartbeat_timeout=30000)

    def noop(i: int) -> None:
        client.incr(RAW_COUNTER)

    dramatiq.Actor(noop, broker=broker, actor_name="noop", queue_name=RAW_QUEUE, priority=0,
                   options={"max_retries": 0})
    worker = dramatiq.Worker(broker, worker_threads=threads, worker_timeout=100)
    worker.start()
    client.incr(RAW_READY)
    stop.wait()
    worker.stop(timeout=10_000)
    broker.close()


def bench_raw(redis_url: str, n: int, processes: int, threads: int) -> dict:
    import dramatiq
    import redis
    from dramatiq.brokers.redis import RedisBroker

    client = redis.Redis.from_url(redis_url)
    client.delete(RAW_COUNTER, RAW_READY)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_raw_child, args=(redis_url, threads), name=f"raw-{i}")
             for i in range(processes)]
    for p in procs:
        p.start()
    try:
        deadline = time.monotonic() + 60
        while int(client.get(RAW_READY) or 0) < processes:
            if time.monotonic() > deadline:
                raise RuntimeError("raw dramatiq workers did not start")
            time.sleep(0.05)
        time.sleep(0.5)  # let the consumers settle into their fetch loop
        broker = RedisBroker(url=redis_url, namespace=RAW_NAMESPACE, heartbeat_timeout=30000)
        dramatiq.Actor(_noop, broker=broker, actor_name="noop", queue_name=RAW_QUEUE,
                       priority=0, options={"max_retries": 0})
        msgs = [dramatiq.Message(queue_name=RAW_QUEUE, actor_name="noop", args=(i,), kwargs={},
                                 options={}) for i in range(n)]
        meter = CpuMeter({**{f"raw worker {i}": p.pid for i, p in enumerate(procs)},
                          "bench process (enqueuer)": os.getpid()})
        meter.start()
        t0 = time.perf_counter()
        for m in msgs:  # one enqueue per message, as BrokerDispatcher.send does
            broker.enqueue(m)
        t_enq = time.perf_counter()
        deadline = time.monotonic() + 300
        while int(client.get(RAW_COUNTER) or 0) < n:
            if time.monotonic() > deadline:
                raise RuntimeError(f"raw: only {client.get(RAW_COUNTER)} of {n} processed")
            time.sleep(0.005)
        t1 = time.perf_counter()
        cpu = meter.stop()
        broker.close()
    finally:
        for p in procs:
            if p.is_alive():
                os.kill(p.pid, signal.SIGTERM)
        for p in procs:
            p.join(15)
            if p.is_alive():
                p.kill()
                p.join(2)
    workers_cpu = sum(v for k, v in cpu["groups"].items() if k.startswith("raw worker"))
    cpu["groups"] = {"raw dramatiq workers": workers_cpu,
                     **{k: v for k, v in cpu["groups"].items()
                        if not k.startswith("raw worker")}}
    return {"n": n, "seconds": t1 - t0, "throughput": n / (t1 - t0),
            "enqueue_rate": n / (t_enq - t0), "cpu": cpu}


# ---------------------------------------------------------------------------------------
# HTTP client (one keep-alive connection per thread; http.client keeps client CPU low)
# ---------------------------------------------------------------------------------------
class Http:
    RETRYABLE = (http.client.RemoteDisconnected, http.client.CannotSendRequest,
                 http.client.BadStatusLine, ConnectionResetError, BrokenPipeError,
                 ConnectionRefusedError)

    def __init__(self, host: str, port: int, headers: dict[str, str] | None = None):
        self.host, self.port = host, port
        self.headers = dict(headers or {})
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: object = None,
                headers: dict[str, str] | None = None, timeout: float = 90.0):
        h = {**self.headers, **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        for attempt in range(3):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
            try:
                self.conn.request(method, path, body=data, headers=h)
                resp = self.conn.getresponse()
                payload = resp.read()
                if (resp.getheader("Connection") or "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return resp.status, resp, payload
            except self.RETRYABLE:
                # A keep-alive connection the server closed; POSTs carry an
                # Idempotency-Key, so sending again is safe.
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def create_user(host: str, port: int) -> tuple[str, str]:
    """Register a user, log in, mint a read/write API token; returns (token, space id)."""
    h = Http(host, port)
    st, _, body = h.request("POST", "/api/users", {"username": "bench", "password": PASSWORD})
    assert st == 201, (st, body)
    space_id = json.loads(body)["personal_space_id"]
    st, resp, body = h.request("POST", "/api/login-sessions",
                               {"username": "bench", "password": PASSWORD})
    assert st == 201, (st, body)
    cookie = resp.getheader("Set-Cookie").split(";", 1)[0]
    st, _, body = h.request("POST", "/api/api-tokens",
                            {"name": "bench", "scopes": ["read", "write"]},
                            headers={"Cookie": cookie})
    assert st == 201, (st, body)
    h.close()
    return json.loads(body)["token"], space_id


class Submitter:
    def __init__(self, host: str, port: int, token: str, space_id: str):
        self.host, self.port, self.space_id = host, port, space_id
        self.headers = {"Authorization": f"Bearer {token}"}
        self.local = threading.local()

    def http(self) -> Http:
        h = getattr(self.local, "http", None)
        if h is None:
            h = self.local.http = Http(self.host, self.port, self.headers)
        return h

    def post(self, prefix: str, i: int) -> tuple[int, dict, float]:
        """POST /api/resources; returns (status, body, seconds)."""
        key = f"{prefix}-{uuid.uuid4().hex}"
        body = {"space_id": self.space_id, "parent_id": None, "name": f"{prefix}-{i:06d}",
                "unit_type": "doc"}
        t0 = time.perf_counter()
        st, _, data = self.http().request("POST", "/api/resources", body,
                                          headers={"Idempotency-Key": key})
        return st, json.loads(data), time.perf_counter() - t0

    def wait_done(self, op_id: str) -> dict:
        while True:
            t0 = time.perf_counter()
            st, resp, data = self.http().request("GET", f"/api/operations/{op_id}?wait=30")
            doc = json.loads(data)
            if st != 200:
                raise RuntimeError(f"long-poll {op_id}: {st} {doc}")
            if doc["done"]:
                return doc
            if time.perf_counter() - t0 < 29:
                # Answered at once: the API's long-poll slots (WHARF_LONG_POLL_MAX_WAITERS)
                # were taken. Honour Retry-After as a real client does instead of spinning.
                time.sleep(float(resp.getheader("Retry-After") or 1))


# ---------------------------------------------------------------------------------------
# database probes
# ---------------------------------------------------------------------------------------
class Probe:
    def __init__(self, url: str):
        import psycopg
        self.conn = psycopg.connect(plain_pg(url), autocommit=True)

    def counts(self, prefix: str) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT status, count(*) FROM operations WHERE idempotency_key LIKE %s "
            "GROUP BY status", (prefix + "-%",)).fetchall()
        return {status: n for status, n in rows}

    def wait_all_done(self, prefix: str, total: int, timeout: float) -> float:
        deadline = time.monotonic() + timeout
        while True:
            c = self.counts(prefix)
            if c.get("completed", 0) + c.get("failed", 0) >= total:
                return time.perf_counter()
            if time.monotonic() > deadline:
                raise RuntimeError(f"{prefix}: not all {total} done after {timeout}s: {c}")
            time.sleep(0.02)

    def summary(self, prefix: str) -> dict:
        row = self.conn.execute(
            "SELECT count(*) FILTER (WHERE status = 'completed'), "
            "count(*) FILTER (WHERE status = 'failed'), "
            "count(*) FILTER (WHERE attempts > 1), "
            "coalesce(max(attempts), 0) "
            "FROM operations WHERE idempotency_key LIKE %s", (prefix + "-%",)).fetchone()
        nodes = self.conn.execute("SELECT count(*) FROM nodes WHERE name LIKE %s",
                                  (prefix + "-%",)).fetchone()[0]
        return {"completed": row[0], "failed": row[1], "multi_attempt": row[2],
                "max_attempts": row[3], "nodes": nodes}

    def server_latencies(self, ids: list[str]) -> dict[str, list[float]]:
        """Server-side phases of each operation, from database timestamps: created ->
        claimed by a worker (queueing + pickup), claimed -> completed (execution)."""
        rows = self.conn.execute(
            "SELECT extract(epoch FROM o.completed_at - o.created_at), "
            "extract(epoch FROM a.started_at - o.created_at), "
            "extract(epoch FROM o.completed_at - a.started_at) "
            "FROM operations o JOIN operation_attempts a "
            "ON a.operation_id = o.id AND a.number = o.attempts "
            "WHERE o.id = ANY(%s) AND o.completed_at IS NOT NULL", (ids,)).fetchall()
        return {"total": [float(r[0]) for r in rows], "wait": [float(r[1]) for r in rows],
                "run": [float(r[2]) for r in rows]}

    def close(self) -> None:
        self.conn.close()


# ---------------------------------------------------------------------------------------
# (b) throughput, (c) latency
# ---------------------------------------------------------------------------------------
def bench_throughput(sub: Submitter, probe: Probe, m: int, clients: int,
                     prefix: str = "tput", meter: CpuMeter | None = None,
                     queue_depth=None) -> dict:
    counter = itertools.count()
    post_lat: list[float] = []
    bad: list[tuple[int, dict]] = []
    lock = threading.Lock()
    last_post = [0.0]

    def client() -> None:
        local_lat = []
        while True:
            i = next(counter)
            if i >= m:
                break
            st, body, dt = sub.post(prefix, i)
            local_lat.append(dt)
            if st != 202:
                with lock:
                    bad.append((st, body))
        with lock:
            post_lat.extend(local_lat)
            last_post[0] = max(last_post[0], time.perf_counter())

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    if meter is not None:
        meter.start()
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    t_done = probe.wait_all_done(prefix, m, timeout=900)
    cpu = meter.stop() if meter is not None else None
    leftover = queue_depth() if queue_depth is not None else None
    for t in threads:
        t.join()
    if bad:
        raise RuntimeError(f"throughput: {len(bad)} POSTs not 202, e.g. {bad[0]}")
    return {"m": m, "seconds": t_done - t0, "throughput": m / (t_done - t0),
            "submit_rate": m / (last_post[0] - t0),
            "post_p50": pct(post_lat, 50), "post_p99": pct(post_lat, 99),
            "cpu": cpu, "leftover_messages": leftover, **probe.summary(prefix)}


def bench_latency(sub: Submitter, probe: Probe, rate: float, seconds: float, pool: int,
                  prefix: str = "lat", meter: CpuMeter | None = None) -> dict:
    n = max(1, int(rate * seconds))
    start = time.perf_counter() + 0.5
    schedule = [start + i / rate for i in range(n)]
    todo: queue.Queue[int] = queue.Queue()
    for i in range(n):
        todo.put(i)
    post_lat, done_lat, lag, ids, bad = [], [], [], [], []
    lock = threading.Lock()

    def runner() -> None:
        mine_post, mine_done, mine_lag, mine_ids = [], [], [], []
        while True:
            try:
                i = todo.get_nowait()
            except queue.Empty:
                break
            delay = schedule[i] - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            t0 = time.perf_counter()
            mine_lag.append(t0 - schedule[i])
            st, body, dt = sub.post(prefix, i)
            if st != 202:
                with lock:
                    bad.append((st, body))
                continue
            mine_post.append(dt)
            mine_ids.append(body["id"])
            doc = body if body["done"] else sub.wait_done(body["id"])
            mine_done.append(time.perf_counter() - t0)
            if doc["status"] != "completed":
                with lock:
                    bad.append((200, doc))
        with lock:
            post_lat.extend(mine_post)
            done_lat.extend(mine_done)
            lag.extend(mine_lag)
            ids.extend(mine_ids)

    threads = [threading.Thread(target=runner, daemon=True) for _ in range(pool)]
    if meter is not None:
        meter.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cpu = meter.stop() if meter is not None else None
    elapsed = time.perf_counter() - start
    if bad:
        raise RuntimeError(f"latency: {len(bad)} operations not accepted/completed, "
                           f"e.g. {bad[0]}")
    server = probe.server_latencies(ids)
    return {"rate": rate, "n": n, "achieved_rate": n / (schedule[-1] - start + 1e-9)
            if n > 1 else rate, "elapsed": elapsed,
            "post_p50": pct(post_lat, 50), "post_p99": pct(post_lat, 99),
            "done_p50": pct(done_lat, 50), "done_p99": pct(done_lat, 99),
            "server_p50": pct(server["total"], 50), "server_p99": pct(server["total"], 99),
            "wait_p50": pct(server["wait"], 50), "wait_p99": pct(server["wait"], 99),
            "run_p50": pct(server["run"], 50), "run_p99": pct(server["run"], 99),
            "lag_p99": pct(lag, 99), "lag_max": max(lag) if lag else 0.0,
            "cpu": cpu, **probe.summary(prefix)}


# ---------------------------------------------------------------------------------------
# environment: databases, Redis, Wharf processes
# ---------------------------------------------------------------------------------------
class Environment:
    def __init__(self, args):
        self.args = args
        self.tag = f"wharf_bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        self.product_url = with_dbname(args.postgres_url, self.tag)
        self.unit_url = with_dbname(args.postgres_url, self.tag + "_units")
        self.created: list[str] = []
        self.logdir = Path(tempfile.mkdtemp(prefix="wharf-bench-"))
        self.port = free_port()
        self.processes = WharfProcesses(self.logdir, self.env())

    # -- throw-away resources --
    def _admin(self):
        import psycopg
        return psycopg.connect(plain_pg(self.args.postgres_url), autocommit=True)

    def create_databases(self) -> None:
        with self._admin() as conn:
            for name in (self.tag, self.tag + "_units"):
                conn.execute(f'CREATE DATABASE "{name}"')
                self.created.append(name)

    def drop_databases(self) -> None:
        if not self.created:
            return
        with self._admin() as conn:
            for name in self.created:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.created = []

    def flush_redis(self) -> None:
        import redis
        redis.Redis.from_url(self.args.redis_url).flushdb()

    # -- Wharf --
    def env(self) -> dict[str, str]:
        env = {
            "WHARF_DATA_DIR": str(self.logdir / "data"),
            "WHARF_DATABASE_URL": self.product_url,
            "WHARF_UNITSTORE_URL": self.unit_url,
            "WHARF_BROKER_URL": self.args.redis_url,
            "WHARF_ARGON2_TIME_COST": "1", "WHARF_ARGON2_MEMORY_COST": "8",
            "WHARF_ARGON2_PARALLELISM": "1",
            "WHARF_LOG_LEVEL": os.environ.get("WHARF_BENCH_LOG_LEVEL", "WARNING"),
            "WHARF_HOST": "127.0.0.1", "WHARF_PORT": str(self.port),
        }
        for item in self.args.env:
            key, _, value = item.partition("=")
            env[key] = value
        return env

    def queue_depth(self) -> int:
        """Messages Redis still holds for Wharf's queue (queued, delayed or unacked)."""
        import redis

        from tasks.broker import NAMESPACE
        from wharf.operations.service import QUEUE
        r = redis.Redis.from_url(self.args.redis_url)
        return sum(r.hlen(f"{NAMESPACE}:{q}.msgs") for q in (QUEUE, QUEUE + ".DQ"))

    def wait_queue_drained(self, timeout: float = 300.0) -> float:
        t0 = time.perf_counter()
        deadline = time.monotonic() + timeout
        while self.queue_depth() > 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the broker queue did not drain: {self.queue_depth()}")
            time.sleep(0.1)
        return time.perf_counter() - t0

    def meter(self) -> CpuMeter:
        return CpuMeter({**{name: p.pid for name, p in self.processes.procs},
                         "bench client (this process)": os.getpid()},
                        names={"postgres (all databases)": ("postgres",),
                               "redis-server": ("redis-server",)})

    def migrate(self) -> None:
        self.processes.migrate()

    def start(self, name: str, *argv: str) -> subprocess.Popen:
        return self.processes.start(name, *argv)

    def wait_ready(self, timeout: float = 60.0) -> None:
        self.processes.wait_http(self.port, "/readyz", timeout)

    def stop_all(self) -> None:
        self.processes.stop_all(45)


# ---------------------------------------------------------------------------------------
def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--postgres-url", default=os.environ.get(
        "WHARF_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"),
                    help="admin URL; throw-away databases are created next to it")
    ap.add_argument("--redis-url", default=os.environ.get(
        "WHARF_BENCH_REDIS_URL", "redis://127.0.0.1:6379/12"),
                    help="a dedicated Redis DB (flushed before and after)")
    ap.add_argument("--raw-messages", type=int, default=20000, help="(a) N")
    ap.add_argument("--ops", type=int, default=3000, help="(b) M")
    ap.add_argument("--clients", type=int, default=8, help="(b) concurrent client threads")
    ap.add_argument("--warmup", type=int, default=100, help="operations before (b)")
    ap.add_argument("--latency-seconds", type=float, default=30.0, help="(c) duration")
    ap.add_argument("--latency-fraction", type=float, default=0.5,
                    help="(c) offered rate as a fraction of (b)")
    ap.add_argument("--latency-rate", type=float, default=None,
                    help="(c) offered rate in ops/s (overrides --latency-fraction)")
    ap.add_argument("--latency-pool", type=int, default=64,
                    help="(c) client threads available for open-loop submissions")
    ap.add_argument("--worker-processes", type=int, default=2)
    ap.add_argument("--worker-threads", type=int, default=None,
                    help="threads per worker process (default: Wharf's setting, 4)")
    ap.add_argument("--api-workers", type=int, default=2, help="gunicorn workers")
    ap.add_argument("--api-threads", type=int, default=8, help="gunicorn threads per worker")
    ap.add_argument("--no-scheduler", action="store_true",
                    help="do not run `wharf scheduler` (no recovery sweep during the run)")
    ap.add_argument("--skip-raw", action="store_true", help="skip (a)")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra environment for the wharf processes (repeatable), e.g. "
                         "WHARF_RECOVERY_INTERVAL=3600")
    ap.add_argument("--keep-logs", action="store_true", help="print the log directory")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    from wharf.config import Settings
    threads = args.worker_threads or Settings.from_env({}).worker_threads
    env = Environment(args)
    results: dict = {}
    try:
        env.flush_redis()
        if not args.skip_raw:
            log(f"(a) raw dramatiq: {args.raw_messages} no-op messages, "
                f"{args.worker_processes} processes x {threads} threads")
            results["raw"] = bench_raw(args.redis_url, args.raw_messages,
                                       args.worker_processes, threads)
            log(f"    {results['raw']['throughput']:.0f} msg/s")
            env.flush_redis()

        log(f"setting up throw-away databases {env.tag} / {env.tag}_units")
        env.create_databases()
        env.migrate()
        env.start("wharf worker", "worker", "--processes", str(args.worker_processes),
                  "--threads", str(threads))
        env.start("wharf api", "api", "--host", "127.0.0.1", "--port", str(env.port),
                  "--workers", str(args.api_workers), "--threads", str(args.api_threads))
        if not args.no_scheduler:
            env.start("wharf scheduler", "scheduler")
        env.wait_ready()
        token, space_id = create_user("127.0.0.1", env.port)
        sub = Submitter("127.0.0.1", env.port, token, space_id)
        probe = Probe(env.product_url)

        log(f"warm-up: {args.warmup} operations")
        bench_throughput(sub, probe, args.warmup, args.clients, prefix="warm")

        log(f"(b) throughput: {args.ops} create_resource operations, {args.clients} clients")
        results["tput"] = b = bench_throughput(sub, probe, args.ops, args.clients,
                                               meter=env.meter(), queue_depth=env.queue_depth)
        log(f"    {b['throughput']:.1f} ops/s end to end ({b['submit_rate']:.1f} POST/s); "
            f"{b['leftover_messages']} broker messages still queued")
        b["drain_seconds"] = env.wait_queue_drained()
        log(f"    broker queue drained {b['drain_seconds']:.1f}s after the last completion")
        time.sleep(2)

        rate = args.latency_rate or args.latency_fraction * b["throughput"]
        log(f"(c) latency: open loop at {rate:.1f} ops/s for {args.latency_seconds:.0f}s")
        results["lat"] = bench_latency(sub, probe, rate, args.latency_seconds,
                                       args.latency_pool, meter=env.meter())
        probe.close()
        report(args, results, threads)
        if args.keep_logs:
            log(f"logs in {env.logdir}")
        return 0
    finally:
        env.stop_all()
        try:
            env.drop_databases()
        finally:
            env.flush_redis()


def report(args, r: dict, threads: int) -> None:
    ms = 1000.0
    rows = []
    raw = r.get("raw")
    if raw:
        rows.append(("(a) raw dramatiq no-op throughput",
                     f"{raw['throughput']:.0f} msg/s",
                     f"N={raw['n']} in {raw['seconds']:.2f}s; enqueue alone "
                     f"{raw['enqueue_rate']:.0f} msg/s"))
    b = r["tput"]
    rows.append(("(b) wharf create_resource throughput", f"{b['throughput']:.1f} ops/s",
                 f"M={b['m']} in {b['seconds']:.2f}s; POST rate {b['submit_rate']:.1f}/s; "
                 f"completed {b['completed']}, failed {b['failed']}, "
                 f">1 attempt {b['multi_attempt']}"))
    rows.append(("    POST->202 under saturation p50/p99",
                 f"{b['post_p50'] * ms:.1f} / {b['post_p99'] * ms:.1f} ms", ""))
    c = r["lat"]
    rows.append(("(c) offered rate (open loop)", f"{c['rate']:.1f} ops/s",
                 f"n={c['n']}; schedule lag p99 {c['lag_p99'] * ms:.1f} ms, "
                 f"max {c['lag_max'] * ms:.1f} ms"))
    rows.append(("(c) POST->202 p50 / p99",
                 f"{c['post_p50'] * ms:.1f} / {c['post_p99'] * ms:.1f} ms",
                 f"target p99 <= {TARGET_POST_P99_MS:.0f} ms"))
    rows.append(("(c) submit->completed p50 / p99",
                 f"{c['done_p50'] * ms:.1f} / {c['done_p99'] * ms:.1f} ms",
                 f"client: POST sent -> long-poll answer; target p99 <= "
                 f"{TARGET_DONE_P99_MS:.0f} ms"))
    rows.append(("    completed_at - created_at p50 / p99",
                 f"{c['server_p50'] * ms:.1f} / {c['server_p99'] * ms:.1f} ms",
                 "server timestamps from the database"))
    rows.append(("      created -> claimed by a worker",
                 f"{c['wait_p50'] * ms:.1f} / {c['wait_p99'] * ms:.1f} ms",
                 "broker queueing + consumer pickup"))
    rows.append(("      claimed -> completed",
                 f"{c['run_p50'] * ms:.1f} / {c['run_p99'] * ms:.1f} ms",
                 "executor: claim, authorize, unit store, commit"))
    w1 = max(len(x[0]) for x in rows)
    w2 = max(len(x[1]) for x in rows)
    print()
    print(f"Wharf operations benchmark - {os.cpu_count()} CPUs; wharf worker "
          f"{args.worker_processes}x{threads} threads; wharf api {args.api_workers} gunicorn "
          f"workers x {args.api_threads} threads; scheduler "
          f"{'off' if args.no_scheduler else 'on'}")
    print("-" * (w1 + w2 + 60))
    for a, v, note in rows:
        print(f"{a:<{w1}}  {v:>{w2}}  {note}")
    print("-" * (w1 + w2 + 60))
    checks = []
    if raw:
        ratio = b["throughput"] / raw["throughput"]
        checks.append((f"ratio (b)/(a) = {ratio:.3f} ({ratio * 100:.1f} %)",
                       ratio >= TARGET_RATIO, f">= {TARGET_RATIO * 100:.0f} %"))
    checks.append((f"POST->202 p99 = {c['post_p99'] * ms:.1f} ms",
                   c["post_p99"] * ms <= TARGET_POST_P99_MS, f"<= {TARGET_POST_P99_MS:.0f} ms"))
    checks.append((f"submit->completed p99 = {c['done_p99'] * ms:.1f} ms",
                   c["done_p99"] * ms <= TARGET_DONE_P99_MS, f"<= {TARGET_DONE_P99_MS:.0f} ms"))
    for text_, ok, target in checks:
        print(f"{text_:<48} target {target:<10} {'MET' if ok else 'MISSED'}")
    print()
    if raw:
        cpu_table("(a) raw dramatiq", raw["cpu"], raw["n"], "msg")
    cpu_table("(b) throughput", b["cpu"], b["m"], "op")
    cpu_table("(c) latency", c["cpu"], c["n"], "op")
    if b.get("leftover_messages") is not None:
        print(f"(b) broker messages still queued when the last operation completed: "
              f"{b['leftover_messages']} (drained {b.get('drain_seconds', 0):.1f}s later)")
    print()


def cpu_table(title: str, cpu: dict | None, count: int, unit: str) -> None:
    if not cpu:
        return
    ncpu = os.cpu_count() or 1
    print(f"CPU during {title}: {cpu['wall']:.1f}s wall, machine busy "
          f"{100 * cpu['busy'] / cpu['capacity']:.0f}% of {ncpu} cores")
    for name, sec in sorted(cpu["groups"].items(), key=lambda kv: -kv[1]):
        print(f"    {name:<30} {sec:7.1f} cpu-s  {100 * sec / cpu['wall']:5.0f}% of a core  "
              f"{1000 * sec / count:7.2f} cpu-ms/{unit}")


if __name__ == "__main__":
    sys.exit(main())
