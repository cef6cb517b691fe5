#!/usr/bin/env python
"""Benchmark of the operations engine on PostgreSQL + Redis (DESIGN §3).

A script, not a test (pytest collects ``test_*.py`` only). One run measures:

(a) raw Dramatiq: N no-op messages (the actor only INCRs a Redis counter) enqueued from
    this process while ``--hosts`` x ``--worker-processes`` plain ``dramatiq.Worker``
    processes (same thread count and default middleware as ``wharf worker``) consume
    them, on the same Redis under a separate namespace. Time: first enqueue -> counter
    reaches N.
(b) Wharf end-to-end ``create_resource`` throughput: M operations POSTed to the real
    ``wharf api`` (gunicorn subprocess) by ``--clients`` closed-loop client threads while
    ``wharf worker --processes P`` (one per simulated host, ``--hosts``) executes them (and
    ``wharf scheduler`` runs beside them, as in production, unless ``--no-scheduler``).
    Time: first POST -> the database shows all M operations completed/failed (polled
    every 20 ms).
(c) latency at ``--latency-fraction`` (default 0.5) of the throughput measured in (b):
    open-loop paced submissions (evenly spaced, each on its own client thread from a pool,
    so a slow answer never delays the next submission). Per operation: POST -> 202, then a
    long-poll ``GET /api/operations/{id}?wait=30`` on the same thread; submit -> completed
    is the client-observed time from sending the POST to receiving the long-poll answer
    with ``done: true``. The server-side ``completed_at - created_at`` from the database is
    printed next to it.

CPU time per process group (from /proc) is printed for each phase, for (b) and (c) as
CPU-ms per operation of API, worker, scheduler, PostgreSQL (this run's databases), Redis,
client (this process) and other (the rest of the machine), with the Wharf-side total and
the same net of an idle baseline measured before (b). CPU-ms per operation is the figure
that holds on a busy machine; the final SUMMARY line checks the targets (issue 43's
ratio and latencies, issue 12's CPU per operation).

``--prefill N`` first fills the tables with N finished operations (SQL, generate_series):
the cost at a million rows. ``--hosts 2 --worker-processes 5``: 10 worker processes on
2 simulated hosts (own process groups, HOSTNAME and, as root, UTS namespace).
``--gc-trace`` times the wharf processes' garbage collections (``gctrace/``) and prints
those of 1 ms or more during (c) by group: each stops its whole process.

Everything runs on throw-away resources: two PostgreSQL databases (product + unitstore,
dropped at the end) and a private redis-server (or ``--redis-url``'s DB, flushed before
and after).

    .venv/bin/python tests/benchmarks/bench_operations.py            # defaults: ~2-3 minutes
    .venv/bin/python tests/benchmarks/bench_operations.py --help
"""
from __future__ import annotations

import argparse
import http.client
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
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.benchmarks.harness import (  # noqa: E402
    CpuMeter,
    WharfProcesses,
    closed_loop,
    free_port,
    log,
    pct,
    postgres_of,
    uts_namespace_prefix,
)

RAW_NAMESPACE = "wharf-bench-raw"
RAW_QUEUE = "noop"
RAW_COUNTER = f"{RAW_NAMESPACE}:done"
RAW_READY = f"{RAW_NAMESPACE}:ready"
PASSWORD = "benchmark password 1234"
#: Seconds a client waits for its operation: the long-poll's ``?wait=`` and, with
#: ``--prefer-wait``, the POST's ``Prefer: wait=``.
CLIENT_WAIT = 30

# issue 43 (issue 12's were 0.25, 30 ms and 100 ms)
TARGET_RATIO = 0.5
TARGET_POST_P99_MS = 20.0
TARGET_DONE_P99_MS = 50.0
TARGET_CPU_MS_PER_OP = 4.0  # Wharf side: API + worker + scheduler + PostgreSQL + Redis


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------
def plain_pg(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://").replace("postgres://",
                                                                         "postgresql://")


def with_dbname(url: str, name: str) -> str:
    return url.rsplit("/", 1)[0] + "/" + name


# CPU groups of (b) and (c), in the order printed; the first five are Wharf's side.
GROUPS = ("API", "worker", "scheduler", "PostgreSQL", "Redis", "client", "other")
WHARF_SIDE = GROUPS[:5]


def redis_meter(redis_pid: int | None) -> dict:
    """CpuMeter arguments for the Redis group: the private ``redis-server`` this benchmark
    started (by pid), or every ``redis-server`` on the machine (a shared server: its other
    clients' work is counted too)."""
    if redis_pid is not None:
        return {"select": {"Redis": lambda pid, comm: pid == redis_pid}}
    return {"names": {"Redis": ("redis-server",)}}


def fold(groups: dict[str, float], prefixes: dict[str, str]) -> dict[str, float]:
    """Sum the groups whose name starts with a key of ``prefixes`` into its value (the
    worker trees of several hosts into "worker"); "other processes" becomes "other"."""
    out: dict[str, float] = {}
    for name, sec in groups.items():
        target = next((v for k, v in prefixes.items() if name.startswith(k)), name)
        target = "other" if target == "other processes" else target
        out[target] = out.get(target, 0.0) + sec
    return out


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


def bench_raw(redis_url: str, n: int, processes: int, threads: int,
              redis_pid: int | None = None) -> dict:
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
        meter = CpuMeter({f"raw worker {i}": p.pid for i, p in enumerate(procs)},
                         **redis_meter(redis_pid), this_process="client")
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
    cpu["groups"] = fold(cpu["groups"], {"raw worker": "raw Dramatiq workers"})
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
        self.early = 0  # long-polls answered at once, not done (no free wait slot)
        self._early_lock = threading.Lock()

    def http(self) -> Http:
        h = getattr(self.local, "http", None)
        if h is None:
            h = self.local.http = Http(self.host, self.port, self.headers)
        return h

    def post(self, prefix: str, i: int, wait: int = 0) -> tuple[int, dict, float]:
        """POST /api/resources (with ``Prefer: wait=<wait>`` when ``wait``); returns
        (status, body, seconds)."""
        key = f"{prefix}-{uuid.uuid4().hex}"
        body = {"space_id": self.space_id, "parent_id": None, "name": f"{prefix}-{i:06d}",
                "unit_type": "doc"}
        headers = {"Idempotency-Key": key}
        if wait:
            headers["Prefer"] = f"wait={wait}"
        t0 = time.perf_counter()
        st, _, data = self.http().request("POST", "/api/resources", body, headers=headers)
        return st, json.loads(data), time.perf_counter() - t0

    def wait_done(self, op_id: str) -> dict:
        while True:
            t0 = time.perf_counter()
            st, resp, data = self.http().request("GET",
                                                 f"/api/operations/{op_id}?wait={CLIENT_WAIT}")
            doc = json.loads(data)
            if st != 200:
                raise RuntimeError(f"long-poll {op_id}: {st} {doc}")
            if doc["done"]:
                return doc
            if time.perf_counter() - t0 < CLIENT_WAIT - 1:
                # Answered at once: the API's long-poll slots (WHARF_LONG_POLL_MAX_WAITERS)
                # were taken. Honour Retry-After as a real client does instead of spinning.
                with self._early_lock:
                    self.early += 1
                time.sleep(float(resp.getheader("Retry-After") or 1))


# ---------------------------------------------------------------------------------------
# database probes
# ---------------------------------------------------------------------------------------
class Probe:
    """The benchmark's own connection to the product database (autocommit). Its backend's
    CPU is the client's, not PostgreSQL's (``backend_pid``)."""

    def __init__(self, url: str):
        import psycopg
        self.conn = psycopg.connect(plain_pg(url), autocommit=True)
        self.backend_pid: int = self.conn.execute("SELECT pg_backend_pid()").fetchone()[0]

    def now(self):
        """The database clock (completion times are compared with it)."""
        return self.conn.execute("SELECT now()").fetchone()[0]

    def counts(self, prefix: str, since=None) -> dict[str, int]:
        """Finished operations of ``prefix`` by status. With ``since`` (a database time
        before the first submission) only the operations finished since then are looked
        at, through the ``completed_at`` index: polling stays cheap with a million
        prefilled rows in the table."""
        if since is None:
            rows = self.conn.execute(
                "SELECT status, count(*) FROM operations WHERE idempotency_key LIKE %s "
                "GROUP BY status", (prefix + "-%",)).fetchall()
        else:
            rows = self.conn.execute(
                "SELECT status, count(*) FROM operations WHERE completed_at >= %s "
                "AND idempotency_key LIKE %s GROUP BY status", (since, prefix + "-%")).fetchall()
        return {status: n for status, n in rows}

    def connections(self) -> tuple[int, int]:
        """(connections to this run's two databases, the server's max_connections)."""
        name = self.conn.info.dbname
        row = self.conn.execute(
            "SELECT count(*) FILTER (WHERE datname IN (%s, %s)), "
            "current_setting('max_connections')::int FROM pg_stat_activity",
            (name, name + "_units")).fetchone()
        return row[0], row[1]

    def wait_all_done(self, prefix: str, total: int, timeout: float, since=None) -> float:
        """Poll until ``total`` operations of ``prefix`` are done; meanwhile, every half
        second, note the peak number of connections to this run's databases
        (``self.peak_connections``).

        Each poll counts every operation finished so far, so polling at a fixed 20 ms made
        the probe quadratic in the run: it took a tenth of a core of PostgreSQL from the
        machine the run measures. The pause follows what is left instead: a quarter of
        the time the rest should take at the rate so far (at most 0.5 s), down to 20 ms
        near the end, so the end is still seen within 20 ms."""
        deadline = time.monotonic() + timeout
        self.peak_connections = (0, 0)
        next_sample = 0.0
        started = time.monotonic()
        while True:
            if time.monotonic() >= next_sample:
                now, limit = self.connections()
                self.peak_connections = (max(now, self.peak_connections[0]), limit)
                next_sample = time.monotonic() + 0.5
            c = self.counts(prefix, since)
            finished = c.get("completed", 0) + c.get("failed", 0)
            if finished >= total:
                return time.perf_counter()
            if time.monotonic() > deadline:
                raise RuntimeError(f"{prefix}: not all {total} done after {timeout}s: "
                                   f"{self.counts(prefix)}")
            rate = finished / max(1e-3, time.monotonic() - started)
            rest = (total - finished) / rate if rate > 0 else 0.0
            time.sleep(min(0.5, max(0.02, rest / 4)))

    def unfinished_attempts(self, prefix: str) -> dict[str, int]:
        """Attempts of ``prefix``'s operations that did not complete, by outcome and error
        code (``retry database_unavailable``: e.g. the server's connection limit)."""
        rows = self.conn.execute(
            "SELECT a.outcome || ' ' || coalesce(a.error->>'code', '-'), count(*) "
            "FROM operation_attempts a JOIN operations o ON o.id = a.operation_id "
            "WHERE o.idempotency_key LIKE %s AND a.outcome IS DISTINCT FROM 'completed' "
            "GROUP BY 1 ORDER BY 2 DESC", (prefix + "-%",)).fetchall()
        return {what: n for what, n in rows}

    def hosts(self, prefix: str) -> dict[str, int]:
        """Attempts of ``prefix``'s operations per worker host (the part of
        ``operation_attempts.worker_id`` before the first colon)."""
        rows = self.conn.execute(
            "SELECT split_part(a.worker_id, ':', 1), count(*) FROM operation_attempts a "
            "JOIN operations o ON o.id = a.operation_id WHERE o.idempotency_key LIKE %s "
            "GROUP BY 1 ORDER BY 1", (prefix + "-%",)).fetchall()
        return {host: n for host, n in rows}

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
# --prefill: the tables as a month of traffic leaves them
# ---------------------------------------------------------------------------------------
# A UUIDv7-shaped id (32 hex digits, as storage.ids.new_id) whose time part is ``ts`` and
# whose random part comes from ``salt``: ids sort by time like the real ones.
PREFILL_ID_FUNCTION = """
CREATE FUNCTION pg_temp.bench_id(ts timestamptz, salt text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT lpad(to_hex((extract(epoch FROM ts) * 1000)::bigint), 12, '0') || '7'
         || substr(md5(salt), 1, 3) || '8' || substr(md5(salt), 4, 15)
$$"""

# One row per prefilled operation: its times, fate and ids. Created over the 29 days up
# to ten minutes ago (the retention sweep deletes finished operations after 30 days, so
# it has nothing to do during the run), 0.5 % failed (permission revoked, nothing
# published), 2 % lost a first attempt to a dead worker (lease expired, ~35 s later done).
PREFILL_ROWS = """
CREATE TEMP TABLE prefill AS
SELECT i, created_at, failed, lost, unit_type,
       created_at + CASE WHEN lost THEN interval '35 s' ELSE interval '0 s' END
         + (0.015 + 0.2 * r) * interval '1 s' AS completed_at,
       pg_temp.bench_id(created_at, %(seed)s || ':o:' || i) AS op_id,
       pg_temp.bench_id(created_at, %(seed)s || ':n:' || i) AS node_id,
       pg_temp.bench_id(created_at, %(seed)s || ':r:' || i) AS resource_id,
       pg_temp.bench_id(created_at, %(seed)s || ':u:' || i) AS unit_id,
       pg_temp.bench_id(created_at + interval '5 ms', %(seed)s || ':a1:' || i) AS attempt1_id,
       pg_temp.bench_id(created_at + interval '35 s', %(seed)s || ':a2:' || i) AS attempt2_id,
       pg_temp.bench_id(created_at, %(seed)s || ':s:' || i) AS submit_audit_id,
       pg_temp.bench_id(created_at + interval '100 ms', %(seed)s || ':c:' || i) AS create_audit_id
FROM (
  SELECT i, random() AS r,
         now() - interval '10 minutes'
           - interval '29 days' * ((%(n)s - i)::float8 / %(n)s) AS created_at,
         random() < 0.005 AS failed, random() < 0.02 AS lost,
         (ARRAY['sheet', 'doc', 'slide', 'board', 'base'])[1 + i %% 5] AS unit_type
  FROM generate_series(1, %(n)s) AS i
) AS g"""

PREFILL_INSERTS = [
    ("operations", """
INSERT INTO operations (id, kind, status, actor_id, scope_id, idempotency_key,
  request_fingerprint, payload, result, error, attempts, max_attempts, lease_owner,
  lease_expires_at, next_attempt_at, created_at, updated_at, completed_at, key_expires_at)
SELECT op_id, 'create_resource', CASE WHEN failed THEN 'failed' ELSE 'completed' END,
  %(actor)s::text, %(space)s::text,
  -- the key sweep has released the keys whose TTL ran out; the others still bind
  CASE WHEN completed_at + %(ttl)s * interval '1 s' > now()
       THEN 'prefill-' || md5(op_id) END,
  md5(%(seed)s || i) || md5(op_id),
  json_build_object('space_id', %(space)s::text, 'parent_id', NULL,
                    'name', 'prefill-' || lpad(i::text, 8, '0'), 'unit_type', unit_type,
                    'node_id', node_id, 'resource_id', resource_id, 'unit_id', unit_id),
  CASE WHEN NOT failed THEN json_build_object('node_id', node_id,
                                              'resource_id', resource_id,
                                              'unit_id', unit_id) END,
  CASE WHEN failed THEN json_build_object(
    'code', 'permission_revoked',
    'message', 'The submitter no longer has permission on the target.',
    'retryable', false) END,
  CASE WHEN lost THEN 2 ELSE 1 END, %(max_attempts)s, NULL, NULL, NULL,
  created_at, completed_at, completed_at, completed_at + %(ttl)s * interval '1 s'
FROM prefill"""),
    ("operation_attempts", """
INSERT INTO operation_attempts (id, operation_id, number, worker_id, started_at,
  finished_at, outcome, error)
SELECT attempt1_id, op_id, 1, 'prefill-host:' || (1000 + i %% 7) || ':' || (140000 + i %% 4),
  created_at + interval '5 ms',
  CASE WHEN lost THEN completed_at - interval '20 ms' ELSE completed_at END,
  CASE WHEN lost THEN 'lost' WHEN failed THEN 'failed' ELSE 'completed' END,
  CASE WHEN lost THEN json_build_object('code', 'lease_expired',
                                        'message', 'the worker stopped responding',
                                        'retryable', true)
       WHEN failed THEN json_build_object(
         'code', 'permission_revoked',
         'message', 'The submitter no longer has permission on the target.',
         'retryable', false) END
FROM prefill
UNION ALL
SELECT attempt2_id, op_id, 2, 'prefill-host:' || (2000 + i %% 7) || ':' || (150000 + i %% 4),
  completed_at - interval '20 ms', completed_at,
  CASE WHEN failed THEN 'failed' ELSE 'completed' END,
  CASE WHEN failed THEN json_build_object(
    'code', 'permission_revoked',
    'message', 'The submitter no longer has permission on the target.',
    'retryable', false) END
FROM prefill WHERE lost"""),
    ("nodes", """
INSERT INTO nodes (id, space_id, parent_id, name, created_by, trash_batch_id, created_at,
  updated_at)
SELECT node_id, %(space)s::text, NULL, 'prefill-' || lpad(i::text, 8, '0'), %(actor)s::text, NULL,
  completed_at, completed_at
FROM prefill WHERE NOT failed"""),
    ("resources", """
INSERT INTO resources (id, node_id, kind, created_by, created_at)
SELECT resource_id, node_id, 'unit', %(actor)s::text, completed_at FROM prefill WHERE NOT failed"""),
    ("unit_resources", """
INSERT INTO unit_resources (resource_id, unit_id, unit_type)
SELECT resource_id, unit_id, unit_type FROM prefill WHERE NOT failed"""),
    ("audit_logs", """
INSERT INTO audit_logs (id, at, actor_type, actor_id, action, target_type, target_id,
  space_id, request_id, client_ip, user_agent, details)
SELECT submit_audit_id, created_at, 'user', %(actor)s::text, 'operation.submit', 'operation', op_id,
  %(space)s::text, substr(md5(op_id || 'rq'), 1, 32), '127.0.0.1', 'Python-http.client',
  json_build_object('kind', 'create_resource')
FROM prefill
UNION ALL
SELECT create_audit_id, completed_at, 'system', op_id, 'resource.create', 'resource',
  resource_id, %(space)s::text, NULL, NULL, NULL,
  json_build_object('node_id', node_id, 'unit_id', unit_id, 'on_behalf_of', %(actor)s::text)
FROM prefill WHERE NOT failed"""),
]


def prefill(url: str, n: int, actor_id: str, space_id: str) -> dict[str, float]:
    """Fill the product database with ``n`` finished ``create_resource`` operations of the
    benchmark user, as 29 days of traffic leave them: the operations, their attempt rows,
    the published nodes/resources/unit_resources and both audit rows of each (submit,
    create), in plain SQL (``generate_series``); then VACUUM ANALYZE and a CHECKPOINT, so
    the run meets the steady state of a vacuumed table, not a fresh bulk load (this
    server runs with autovacuum off). The unit store is not prefilled. Returns seconds per
    step."""
    import psycopg

    from wharf.infra.settings import Settings
    settings = Settings.from_env({})
    params = {"n": n, "actor": actor_id, "space": space_id, "seed": uuid.uuid4().hex[:8],
              "ttl": settings.idempotency_key_ttl,
              "max_attempts": settings.operation_max_attempts}
    timings: dict[str, float] = {}
    with psycopg.connect(plain_pg(url)) as conn:
        conn.execute(PREFILL_ID_FUNCTION)
        t = time.perf_counter()
        conn.execute(PREFILL_ROWS, params)
        timings["generate"] = time.perf_counter() - t
        for table, sql in PREFILL_INSERTS:
            t = time.perf_counter()
            rows = conn.execute(sql, params).rowcount
            timings[table] = time.perf_counter() - t
            log(f"    prefill: {rows} rows into {table} in {timings[table]:.1f}s")
        conn.commit()
    with psycopg.connect(plain_pg(url), autocommit=True) as conn:
        t = time.perf_counter()
        for table, _ in PREFILL_INSERTS:
            conn.execute(f"VACUUM (ANALYZE) {table}")
        timings["vacuum analyze"] = time.perf_counter() - t
        t = time.perf_counter()
        conn.execute("CHECKPOINT")
        timings["checkpoint"] = time.perf_counter() - t
    log(f"    prefill: rows generated in {timings['generate']:.1f}s, VACUUM (ANALYZE) "
        f"{timings['vacuum analyze']:.1f}s, CHECKPOINT {timings['checkpoint']:.1f}s")
    return timings


# ---------------------------------------------------------------------------------------
# (b) throughput, (c) latency
# ---------------------------------------------------------------------------------------
def bench_throughput(sub: Submitter, probe: Probe, m: int, clients: int,
                     prefix: str = "tput", meter: CpuMeter | None = None,
                     queue_depth=None) -> dict:
    def send(i: int) -> tuple[float, Any]:
        st, body, dt = sub.post(prefix, i)
        return dt, None if st == 202 else (st, body)

    run = closed_loop(probe, prefix, m, m, clients, send, meter=meter,
                      queue_depth=queue_depth, what="POSTs not 202")
    lat = run.pop("latencies")
    return {"m": m, **run, "post_p50": pct(lat, 50), "post_p99": pct(lat, 99)}


def bench_latency(sub: Submitter, probe: Probe, rate: float, seconds: float, pool: int,
                  prefix: str = "lat", meter: CpuMeter | None = None,
                  prefer_wait: bool = False) -> dict:
    """Open-loop submissions at ``rate``; each then waits for its operation with a
    long-poll GET, or (``prefer_wait``) inside the POST itself (``Prefer: wait=``: a
    200 is the finished operation, and POST->202 is not observed)."""
    n = max(1, int(rate * seconds))
    start = time.perf_counter() + 0.5
    schedule = [start + i / rate for i in range(n)]
    todo: queue.Queue[int] = queue.Queue()
    for i in range(n):
        todo.put(i)
    post_lat, done_lat, lag, ids, bad, refused = [], [], [], [], [], []
    sub.early = 0
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
            st, body, dt = sub.post(prefix, i, wait=CLIENT_WAIT if prefer_wait else 0)
            if st != 202 and not (prefer_wait and st == 200):
                with lock:
                    bad.append((st, body))
                continue
            if st == 202 and not prefer_wait:
                mine_post.append(dt)
            elif st == 202:
                with lock:
                    refused.append(i)  # no free wait slot, or not done within the wait
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
            "post_p50": pct(post_lat, 50) if post_lat else None,
            "post_p99": pct(post_lat, 99) if post_lat else None,
            "done_p50": pct(done_lat, 50), "done_p99": pct(done_lat, 99),
            "prefer_wait": prefer_wait, "posts_202": len(refused), "early": sub.early,
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
        self.redis_proc: subprocess.Popen[bytes] | None = None
        self.redis_url = args.redis_url
        self.probe_pids: list[int] = []
        self.host_prefix: dict[str, list[str]] = {}
        self.processes: WharfProcesses | None = None

    # -- Redis: a private server unless --redis-url names one --
    def start_redis(self) -> None:
        if self.redis_url is not None:
            return
        port = free_port()
        with open(self.logdir / "redis-server.log", "wb") as logf:
            self.redis_proc = subprocess.Popen(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", str(self.logdir)],
                stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        self.redis_url = f"redis://127.0.0.1:{port}/0"
        import redis
        client = redis.Redis.from_url(self.redis_url)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.redis_proc.poll() is not None:
                    raise RuntimeError("the private redis-server did not start") from None
                time.sleep(0.05)
        client.close()

    def stop_redis(self) -> None:
        if self.redis_proc is not None and self.redis_proc.poll() is None:
            self.redis_proc.terminate()
            try:
                self.redis_proc.wait(10)
            except subprocess.TimeoutExpired:
                self.redis_proc.kill()
                self.redis_proc.wait(5)

    @property
    def redis_pid(self) -> int | None:
        return self.redis_proc.pid if self.redis_proc is not None else None

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
        if self.redis_url is not None:
            redis.Redis.from_url(self.redis_url).flushdb()

    # -- Wharf --
    def env(self) -> dict[str, str]:
        env = {
            "WHARF_DATA_DIR": str(self.logdir / "data"),
            "WHARF_DATABASE_URL": self.product_url,
            "WHARF_UNITSTORE_URL": self.unit_url,
            "WHARF_BROKER_URL": self.redis_url,
            "WHARF_ARGON2_TIME_COST": "1", "WHARF_ARGON2_MEMORY_COST": "8",
            "WHARF_ARGON2_PARALLELISM": "1",
            "WHARF_LOG_LEVEL": os.environ.get("WHARF_BENCH_LOG_LEVEL", "WARNING"),
            "WHARF_HOST": "127.0.0.1", "WHARF_PORT": str(self.port),
        }
        if self.args.gc_trace:
            (self.logdir / "gc").mkdir(exist_ok=True)
            env["WHARF_BENCH_GC_TRACE_DIR"] = str(self.logdir / "gc")
            env["PYTHONPATH"] = os.pathsep.join(
                [str(GC_TRACE), str(ROOT), os.environ.get("PYTHONPATH", "")])
        for item in self.args.env:
            key, _, value = item.partition("=")
            env[key] = value
        return env

    def start_processes(self, threads: int) -> None:
        """``wharf api``, one ``wharf worker`` supervisor per simulated host, and (unless
        --no-scheduler) ``wharf scheduler``."""
        args = self.args
        assert self.processes is not None
        hosts = [f"wharf-bench-host{h + 1}" for h in range(args.hosts)]
        for host in hosts:
            prefix: list[str] = []
            if args.hosts > 1:
                # A simulated host: its own process group, environment and (where
                # `unshare --uts` works, i.e. as root) its own hostname, which is what
                # the engine's worker ids carry.
                prefix = uts_namespace_prefix(host) or []
                self.host_prefix[host] = prefix
            self.processes.start(f"wharf worker {host}", "worker",
                                 "--processes", str(args.worker_processes),
                                 "--threads", str(threads), prefix=prefix,
                                 env={"HOSTNAME": host})
        self.processes.start("wharf api", "api", "--host", "127.0.0.1", "--port",
                             str(self.port), "--workers", str(args.api_workers),
                             "--threads", str(args.api_threads))
        if not args.no_scheduler:
            self.processes.start("wharf scheduler", "scheduler")

    def queue_depth(self) -> int:
        """Messages Redis still holds for Wharf's queue (queued, delayed or unacked)."""
        import redis

        from tasks.broker import NAMESPACE
        from wharf.operations.service import QUEUE
        r = redis.Redis.from_url(self.redis_url)
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
        """CPU of the groups in GROUPS: the process trees of the api, the worker
        supervisors and the scheduler; the PostgreSQL backends of this run's two databases
        plus the server's shared processes (not the probe's backend: that is the
        client's); Redis; this process's threads ("client")."""
        assert self.processes is not None
        roots = {}
        for name, p in self.processes.procs:
            role = name.split()[1]  # "wharf api", "wharf worker <host>", "wharf scheduler"
            group = {"api": "API", "worker": "worker", "scheduler": "scheduler"}[role]
            roots[f"{group} {name}"] = p.pid
        redis = redis_meter(self.redis_pid)
        probe = set(self.probe_pids)
        select = {"PostgreSQL": postgres_of((self.tag, self.tag + "_units"),
                                            exclude=lambda: probe),
                  "client": lambda pid, comm: pid in probe,
                  **redis.get("select", {})}
        return CpuMeter(roots, names=redis.get("names"), select=select, this_process="client")

    def migrate(self) -> None:
        """Make the process handler (the environment names the Redis URL, known by now) and
        migrate the two databases."""
        self.processes = WharfProcesses(self.logdir, self.env())
        self.processes.migrate()

    def wait_ready(self, timeout: float = 60.0) -> None:
        assert self.processes is not None
        self.processes.wait_http(self.port, "/readyz", timeout)

    def stop_all(self) -> None:
        if self.processes is not None:
            self.processes.stop_all(45)


def fold_cpu(cpu: dict | None) -> dict | None:
    """The meter's groups folded into GROUPS (several worker hosts into "worker")."""
    if cpu is None:
        return None
    prefixes = {"API ": "API", "worker ": "worker", "scheduler ": "scheduler"}
    return {**cpu, "groups": fold(cpu["groups"], prefixes),
            "replaced": fold({k: float(v) for k, v in cpu.get("replaced", {}).items()},
                             prefixes)}


# ---------------------------------------------------------------------------------------
def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--postgres-url", default=os.environ.get(
        "WHARF_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"),
                    help="admin URL; throw-away databases are created next to it")
    ap.add_argument("--redis-url", default=os.environ.get("WHARF_BENCH_REDIS_URL"),
                    help="a dedicated Redis DB (flushed before and after), e.g. "
                         "redis://127.0.0.1:6379/12; default: a private redis-server on a "
                         "free port, started and stopped by the benchmark, so the Redis "
                         "CPU figure is this run's alone")
    ap.add_argument("--raw-messages", type=int, default=20000, help="(a) N")
    ap.add_argument("--ops", type=int, default=3000, help="(b) M")
    ap.add_argument("--clients", type=int, default=8, help="(b) concurrent client threads")
    ap.add_argument("--warmup", type=int, default=100, help="operations before (b)")
    ap.add_argument("--latency-seconds", type=float, default=30.0, help="(c) duration")
    ap.add_argument("--latency-fraction", type=float, default=0.5,
                    help="(c) offered rate as a fraction of (b)")
    ap.add_argument("--latency-rate", type=float, default=None,
                    help="(c) offered rate in ops/s (overrides --latency-fraction)")
    ap.add_argument("--prefer-wait", action="store_true",
                    help=f"(c) wait for each operation inside its POST (Prefer: "
                         f"wait={CLIENT_WAIT}) "
                         "instead of with a long-poll GET after the 202")
    ap.add_argument("--latency-pool", type=int, default=64,
                    help="(c) client threads available for open-loop submissions")
    ap.add_argument("--hosts", type=int, default=1,
                    help="simulated worker hosts: one `wharf worker` supervisor each, in "
                         "its own process group with its own HOSTNAME (and, as root, its "
                         "own UTS namespace and hostname); (a) runs hosts x processes "
                         "raw workers")
    ap.add_argument("--worker-processes", type=int, default=2,
                    help="processes per `wharf worker` (per host)")
    ap.add_argument("--worker-threads", type=int, default=None,
                    help="threads per worker process (default: Wharf's setting, 4)")
    ap.add_argument("--api-workers", type=int, default=2, help="gunicorn workers")
    ap.add_argument("--api-threads", type=int, default=32, help="gunicorn threads per worker")
    ap.add_argument("--prefill", type=int, default=0, metavar="N",
                    help="before the warm-up, fill the database with N finished operations "
                         "(attempts, audit, nodes, resources) of the benchmark user in SQL, "
                         "then VACUUM ANALYZE: the cost at N rows (e.g. 1000000)")
    ap.add_argument("--idle-seconds", type=float, default=5.0,
                    help="before (b), measure the groups' CPU with nothing submitted for "
                         "this long (0: skip); (b) and (c) then also print CPU-ms/op net "
                         "of that background")
    ap.add_argument("--no-scheduler", action="store_true",
                    help="do not run `wharf scheduler` (no recovery sweep during the run)")
    ap.add_argument("--skip-raw", action="store_true", help="skip (a)")
    ap.add_argument("--bulk", type=int, default=0, metavar="M",
                    help="(d) bulk submission: M operations in batches (bench_bulk.py)")
    ap.add_argument("--bulk-size", type=int, default=100, help="(d) items per batch")
    ap.add_argument("--bulk-only", action="store_true",
                    help="with --bulk: skip (b) and (c), run (d) after the warm-up")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra environment for the wharf processes (repeatable), e.g. "
                         "WHARF_RECOVERY_INTERVAL=3600")
    ap.add_argument("--keep-logs", action="store_true", help="print the log directory")
    ap.add_argument("--gc-trace", action="store_true",
                    help="time every garbage collection of the wharf processes "
                         "(tests/benchmarks/gctrace) and print, by group, those of 1 ms "
                         "or more during (c): a collection stops its whole process")
    args = ap.parse_args(argv)
    if args.hosts < 1 or args.worker_processes < 1:
        ap.error("--hosts and --worker-processes must be at least 1")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    from wharf.infra.settings import Settings
    threads = args.worker_threads or Settings.from_env({}).worker_threads
    env = Environment(args)
    results: dict = {}
    try:
        env.start_redis()
        env.flush_redis()
        workers = args.hosts * args.worker_processes
        if not args.skip_raw:
            log(f"(a) raw dramatiq: {args.raw_messages} no-op messages, "
                f"{workers} processes x {threads} threads")
            results["raw"] = bench_raw(env.redis_url, args.raw_messages, workers, threads,
                                       env.redis_pid)
            log(f"    {results['raw']['throughput']:.0f} msg/s")
            env.flush_redis()

        log(f"setting up throw-away databases {env.tag} / {env.tag}_units")
        env.create_databases()
        env.migrate()
        env.start_processes(threads)
        if args.hosts > 1:
            how = ("own UTS namespace and hostname" if all(env.host_prefix.values())
                   else "HOSTNAME only (unshare --uts is not available here)")
            log(f"{args.hosts} simulated hosts x {args.worker_processes} worker processes "
                f"({how})")
        env.wait_ready()
        token, space_id = create_user("127.0.0.1", env.port)
        sub = Submitter("127.0.0.1", env.port, token, space_id)
        probe = Probe(env.product_url)
        env.probe_pids.append(probe.backend_pid)

        if args.prefill:
            log(f"prefill: {args.prefill} finished operations in SQL")
            actor_id = probe.conn.execute("SELECT owner_id FROM spaces WHERE id = %s",
                                          (space_id,)).fetchone()[0]
            t = time.perf_counter()
            results["prefill"] = {"n": args.prefill,
                                  "steps": prefill(env.product_url, args.prefill, actor_id,
                                                   space_id),
                                  "seconds": time.perf_counter() - t}
            log(f"    prefilled in {results['prefill']['seconds']:.0f}s")

        log(f"warm-up: {args.warmup} operations")
        bench_throughput(sub, probe, args.warmup, args.clients, prefix="warm")

        if args.idle_seconds > 0:
            log(f"idle: {args.idle_seconds:.0f}s with nothing submitted (the groups' "
                f"background CPU: polling loops, heartbeats, sweeps)")
            results["idle"] = measure_idle(env, args.idle_seconds)

        if args.bulk_only and args.bulk:
            run_bulk(args, env, sub, probe, results)
            probe.close()
            return 0

        log(f"(b) throughput: {args.ops} create_resource operations, {args.clients} clients")
        results["tput"] = b = bench_throughput(sub, probe, args.ops, args.clients,
                                               meter=env.meter(), queue_depth=env.queue_depth)
        b["cpu"] = fold_cpu(b["cpu"])
        b["hosts"] = probe.hosts("tput")
        b["not_completed"] = probe.unfinished_attempts("tput")
        b["connections"] = probe.peak_connections
        if b["connections"][0] >= 0.9 * b["connections"][1]:
            log(f"    WARNING: {b['connections'][0]} connections to this run's databases, "
                f"max_connections is {b['connections'][1]}: other clients of the server "
                f"may have been refused")
        log(f"    {b['throughput']:.1f} ops/s end to end ({b['submit_rate']:.1f} POST/s); "
            f"{b['leftover_messages']} broker messages still queued")
        b["drain_seconds"] = env.wait_queue_drained()
        log(f"    broker queue drained {b['drain_seconds']:.1f}s after the last completion")
        time.sleep(2)

        rate = args.latency_rate or args.latency_fraction * b["throughput"]
        log(f"(c) latency: open loop at {rate:.1f} ops/s for {args.latency_seconds:.0f}s")
        c_started = time.time()
        results["lat"] = c = bench_latency(sub, probe, rate, args.latency_seconds,
                                           args.latency_pool, meter=env.meter(),
                                           prefer_wait=args.prefer_wait)
        c["cpu"] = fold_cpu(c["cpu"])
        if args.gc_trace:
            c["gc"] = gc_pauses(env.logdir / "gc", c_started, time.time())
        if args.bulk:
            time.sleep(2)
            run_bulk(args, env, sub, probe, results)
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
            try:
                env.flush_redis()
            finally:
                env.stop_redis()


def run_bulk(args, env, sub: Submitter, probe: Probe, results: dict) -> None:
    """(d): bulk submission (tests/benchmarks/bench_bulk.py), reported at once."""
    from tests.benchmarks.bench_bulk import bench_bulk, report_bulk
    log(f"(d) bulk: {args.bulk} create_resource operations in batches of {args.bulk_size}, "
        f"{args.clients} clients")
    results["bulk"] = d = bench_bulk(sub, probe, args.bulk, args.clients, args.bulk_size,
                                     meter=env.meter(), queue_depth=env.queue_depth)
    d["cpu"] = fold_cpu(d["cpu"])
    log(f"    {d['throughput']:.0f} ops/s end to end ({d['submit_rate']:.0f} submitted/s)")
    env.wait_queue_drained()
    report_bulk(d, results.get("raw"), per_group_table, results.get("idle"))


GC_TRACE = Path(__file__).resolve().parent / "gctrace"
GC_MIN_MS = 1.0  # what gctrace/sitecustomize.py logs (MIN_MS)


def gc_group(command: str) -> str:
    """The process group of a ``--gc-trace`` line's command line."""
    words = command.split()
    if not words:
        return "other"
    if Path(words[0]).name == "gunicorn" or "api" in words[1:]:
        return "API"
    for group in ("worker", "scheduler"):
        if group in words[1:]:
            return group
    return "other"


def gc_pauses(directory: Path, start: float, end: float) -> dict[str, dict]:
    """The collections ``--gc-trace`` logged that ended between the wall-clock times
    ``start`` and ``end``, by process group: how many, the longest (and its generation),
    their total."""
    out: dict[str, dict] = {}
    for path in sorted(directory.glob("*.log")):
        for line in path.read_text().splitlines():
            fields = line.split("\t", 3)
            if len(fields) != 4:
                continue  # a line its process is still writing
            when, generation, ms, command = fields
            if not start <= float(when) <= end:
                continue
            g = out.setdefault(gc_group(command), {"count": 0, "total_ms": 0.0,
                                                    "longest_ms": 0.0,
                                                    "longest_generation": None})
            g["count"] += 1
            g["total_ms"] += float(ms)
            if float(ms) > g["longest_ms"]:
                g["longest_ms"], g["longest_generation"] = float(ms), int(generation)
    return out


def measure_idle(env: Environment, seconds: float) -> dict | None:
    """The groups' CPU while nothing is submitted: what they spend per second whatever
    the load (consumer polling, heartbeats, the relay, the scheduler's sweeps). At a low
    throughput (a busy machine) that background weighs more per operation; (b)'s table
    prints the per-operation figure net of it beside the gross one."""
    meter = env.meter()
    meter.start()
    time.sleep(seconds)
    return fold_cpu(meter.stop())


def per_op(cpu: dict, count: int) -> dict[str, float]:
    """CPU-ms per operation of each group in GROUPS, and the Wharf-side total."""
    out = {g: 1000 * cpu["groups"].get(g, 0.0) / count for g in GROUPS}
    out["Wharf side"] = sum(out[g] for g in WHARF_SIDE)
    return out


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
    if c["post_p99"] is None:
        rows.append(("(c) POST->202 p50 / p99", "-",
                     f"not observed (Prefer: wait); {c['posts_202']} POSTs answered 202 "
                     f"(no free wait slot, or not done in {CLIENT_WAIT} s) and were "
                     "long-polled"))
    else:
        rows.append(("(c) POST->202 p50 / p99",
                     f"{c['post_p50'] * ms:.1f} / {c['post_p99'] * ms:.1f} ms",
                     f"target p99 <= {TARGET_POST_P99_MS:.0f} ms"))
    how = (f"the POST's own answer (Prefer: wait={CLIENT_WAIT})" if c["prefer_wait"]
           else "long-poll answer")
    rows.append(("(c) submit->completed p50 / p99",
                 f"{c['done_p50'] * ms:.1f} / {c['done_p99'] * ms:.1f} ms",
                 f"client: POST sent -> {how}; target p99 <= "
                 f"{TARGET_DONE_P99_MS:.0f} ms"))
    rows.append(("    long-polls answered at once, not done", f"{c['early']}",
                 "no free wait slot (WHARF_LONG_POLL_MAX_WAITERS): the client sleeps "
                 "Retry-After, then polls again"))
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
          f"{args.hosts} host(s) x {args.worker_processes} process(es) x {threads} threads; "
          f"wharf api {args.api_workers} gunicorn workers x {args.api_threads} threads; "
          f"scheduler {'off' if args.no_scheduler else 'on'}; Redis "
          f"{args.redis_url or 'private redis-server'}")
    if r.get("prefill"):
        pf = r["prefill"]
        print(f"prefilled: {pf['n']} finished operations (+ attempts, audit, nodes, "
              f"resources) in {pf['seconds']:.0f}s before the warm-up")
    if args.hosts > 1:
        print(f"(b) attempts per worker host: {b['hosts']}")
    if b.get("connections"):
        print(f"(b) peak connections to this run's two databases: {b['connections'][0]} "
              f"(server max_connections {b['connections'][1]})")
    if b.get("not_completed"):
        print(f"(b) attempts that did not complete (outcome, error code): "
              f"{b['not_completed']}")
    print("-" * (w1 + w2 + 60))
    for a, v, note in rows:
        print(f"{a:<{w1}}  {v:>{w2}}  {note}")
    print("-" * (w1 + w2 + 60))
    print()
    if raw:
        cpu_table("(a) raw dramatiq", raw["cpu"], raw["n"], "msg")
    per_group_table("(c) latency", c["cpu"], c["n"], r.get("idle"))
    if "gc" in c:
        print(f"Garbage collections of {GC_MIN_MS:g} ms or more during (c) (--gc-trace): "
              + ("; ".join(f"{group} {g['count']}, longest {g['longest_ms']:.1f} ms "
                           f"(generation {g['longest_generation']}), total "
                           f"{g['total_ms']:.1f} ms" for group, g in sorted(c["gc"].items()))
                 or "none"))
    per_group_table("(b) throughput", b["cpu"], b["m"], r.get("idle"))
    if b.get("leftover_messages") is not None:
        print(f"(b) broker messages still queued when the last operation completed: "
              f"{b['leftover_messages']} (drained {b.get('drain_seconds', 0):.1f}s later)")
    print()
    summary(raw, b, c, r.get("idle"))


def per_group_table(title: str, cpu: dict | None, count: int,
                    idle: dict | None = None) -> None:
    """A phase's CPU per operation, one row per group of GROUPS, and the Wharf-side
    total; with an idle measurement also each group's idle rate (cores) and its CPU-ms
    per operation net of that background (what the operations themselves cost)."""
    if not cpu:
        return
    ncpu = os.cpu_count() or 1
    ms = per_op(cpu, count)
    wall = cpu["wall"]

    def idle_cores(g: str) -> float:
        return idle["groups"].get(g, 0.0) / idle["wall"] if idle else 0.0

    def net(groups: tuple[str, ...]) -> str:
        sec = sum(max(0.0, cpu["groups"].get(g, 0.0) - idle_cores(g) * wall) for g in groups)
        return f"{1000 * sec / count:10.2f}" if idle else ""

    print(f"CPU per operation during {title}: {count} operations, {wall:.1f}s wall, "
          f"machine busy {100 * cpu['busy'] / cpu['capacity']:.0f}% of {ncpu} cores, steal "
          f"{cpu['steal'] / wall:.2f} cores, irq + softirq {cpu.get('irq', 0.0) / wall:.2f} "
          f"cores (in \"other\")")
    replaced = {g: n for g, n in cpu.get("replaced", {}).items() if n}
    if replaced:
        print("    processes replaced during the phase (their CPU time stays in the group): "
              + ", ".join(f"{g} {n:.0f}" for g, n in replaced.items())
              + " (a recycled gunicorn worker: gunicorn_conf.max_requests)")
    extra = f" {'idle cores':>10} {'net ms/op':>10}" if idle else ""
    print(f"    {'group':<14} {'cpu-s':>7} {'cores':>6} {'CPU-ms/op':>10}{extra}")
    for g in GROUPS:
        sec = cpu["groups"].get(g, 0.0)
        note = {"client": "  the benchmark process (+ its probe's backend)",
                "other": "  everything else on the machine, steal included"}.get(g, "")
        idle_col = f" {idle_cores(g):10.2f}{net((g,))}" if idle else ""
        print(f"    {g:<14} {sec:7.1f} {sec / wall:6.2f} {ms[g]:10.2f}{idle_col}{note}")
        if g == WHARF_SIDE[-1]:
            side = sum(cpu["groups"].get(x, 0.0) for x in WHARF_SIDE)
            idle_col = (f" {sum(idle_cores(x) for x in WHARF_SIDE):10.2f}{net(WHARF_SIDE)}"
                        if idle else "")
            print(f"    {'= Wharf side':<14} {side:7.1f} {side / wall:6.2f} "
                  f"{ms['Wharf side']:10.2f}{idle_col}  API + worker + scheduler + "
                  f"PostgreSQL + Redis")


def summary(raw: dict | None, b: dict, c: dict, idle: dict | None = None) -> None:
    """One line: the figures the issue sets targets for, each marked met or missed."""
    def mark(ok: bool) -> str:
        return "met" if ok else "MISSED"
    parts = []
    if raw:
        ratio = b["throughput"] / raw["throughput"]
        parts.append(f"ratio {ratio:.3f} ({b['throughput']:.0f}/{raw['throughput']:.0f}) "
                     f"[>= {TARGET_RATIO}: {mark(ratio >= TARGET_RATIO)}]")
    if b.get("cpu"):
        side = per_op(b["cpu"], b["m"])["Wharf side"]
        net = ""
        if idle:
            cpu = b["cpu"]
            sec = sum(max(0.0, cpu["groups"].get(g, 0.0)
                          - idle["groups"].get(g, 0.0) / idle["wall"] * cpu["wall"])
                      for g in WHARF_SIDE)
            net = f" ({1000 * sec / b['m']:.2f} net of idle)"
        parts.append(f"Wharf side {side:.2f} CPU-ms/op{net} "
                     f"[<= {TARGET_CPU_MS_PER_OP:.0f}: {mark(side <= TARGET_CPU_MS_PER_OP)}]")
    done = c["done_p99"] * 1000
    if c["post_p99"] is None:
        parts.append(f"at {c['rate']:.0f} ops/s (Prefer: wait) POST->202 not observed")
    else:
        post = c["post_p99"] * 1000
        parts.append(f"at {c['rate']:.0f} ops/s POST->202 p99 {post:.1f} ms "
                     f"[<= {TARGET_POST_P99_MS:.0f}: {mark(post <= TARGET_POST_P99_MS)}]")
    parts.append(f"submit->completed p99 {done:.1f} ms "
                 f"[<= {TARGET_DONE_P99_MS:.0f}: {mark(done <= TARGET_DONE_P99_MS)}]")
    print("SUMMARY: " + "; ".join(parts))


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
