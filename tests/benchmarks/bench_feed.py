#!/usr/bin/env python
"""The live change feed (issue 39) at scale: one ``wharf feed`` process holding 10,000
WebSocket connections, its fan-out of an event to 1,000 subscribers, and what the feed
costs the API's writes; same run, same machine.

The production shape: ``wharf api`` (gunicorn, one worker) and ``wharf feed`` (uvicorn,
one process) as subprocesses over a throw-away PostgreSQL database (created beside
``WHARF_TEST_POSTGRES_URL``, dropped at the end) and the Redis at ``--redis-url`` under
the namespace ``wharf-bench-feed-<pid>`` (the feed's stream ``<namespace>:feed``; the
namespace's keys are deleted at the end, nothing else in Redis is touched). The clients
are ``--clients`` processes of asyncio ``websockets`` connections (their fd limit raised
to the hard limit), handshakes at most ``--handshakes`` at a time in all.

Setup (not timed): a user ``bench`` made through the API (its API token writes), two team
spaces ``hot`` and ``idle``, ``--users`` (1,000) users inserted straight into the
database, each a member (viewer) of both with a login session. Their feed tickets are
inserted in bulk, ``wharf.feed.tickets``' rows exactly (the SHA-256 digest, bound to the
user's session, 30 s), just before each batch of connections: the feed consumes each one
as it would one from ``POST /api/feed-tickets``. Rows:

1. **idle connections**: the feed process's VmRSS (``/proc/<pid>/status``) after start,
   with the 1,000 ``hot`` subscribers, with ``--connections`` (10,000) open (the other
   9,000: 9 more per user on ``idle``; the default per-user cap of 20 is kept), and again
   after ``--idle`` seconds (a round of pings). Goal < 1 GiB.
2. **fan-out**: ``--events`` (50) nodes created one at a time at the root of ``hot``
   (``POST /api/nodes``, each a ``tree.changed`` to its 1,000 subscribers); per event, the
   time from its commit to the LAST subscriber's receipt (the client's clock, same
   machine). The commit is taken as the event's cursor, the Redis stream id (ms): the
   time the API's publishing thread stored it, after the commit; also shown from the
   POST's return (the response follows the commit; may be negative). Measured with the
   1,000 subscribers alone, and again with all 10,000 connections open. Goal: p99 ≤ 100 ms.
3. **write latency**: ``POST /api/nodes`` sequentially (one keep-alive connection, the
   bearer token), p50/p99, feed "off" (no feed process, no subscriber: the writes still
   publish to the Redis stream, as they always do), then "on" (the feed process with the
   1,000 ``hot`` subscribers receiving every write's event), then "off" again after the
   feed process stopped (drift). Each state runs ``--rounds`` rounds, and each round one
   batch of ``--writes / --rounds`` writes per **placement** (``--placements``, in an
   order rotated each round; after an "on" batch, until its events reached every
   subscriber):

   - ``shared``: nothing pinned, every process at normal priority: the API, the feed and
     the benchmark's 1,000 client connections compete for the same cores (one host runs
     everything, its subscribers included);
   - ``pinned``: the API (gunicorn's arbiter and worker, every thread) on the first CPU,
     the feed process and the client processes on the others (``os.sched_setaffinity``),
     in the "off" batches too, so off and on compare under one placement: the feed and its
     subscribers on another host. PostgreSQL and Redis are shared services, not pinned
     (they go where the scheduler puts them, beside either);
   - ``clients-idle``: nothing pinned, the client processes ``SCHED_IDLE`` (they run only
     on CPU nobody else wants): the subscribers on other machines, the feed on the API's;
   - ``feed-idle``: nothing pinned, the feed and the client processes ``SCHED_IDLE``: the
     feed and its subscribers on other machines.

   With no feed and no client ("off") the last two are the same as ``shared``. Per batch
   also the CPU per write (``/proc``: utime + stime) of the API's processes, of the
   PostgreSQL processes of the run's databases (the feed's audience reads included), of
   Redis, the feed and the clients: the API's CPU per write off vs on is what says
   whether the feed changes the API's work, whatever the other processes take.

    WHARF_TEST_REQUIRE_SERVICES=1 .venv/bin/python tests/benchmarks/bench_feed.py \
        [--connections 10000] [--users 1000] [--events 50] [--writes 300] [--clients 2] \
        [--rounds 3] [--placements shared,pinned,clients-idle,feed-idle]

Run it alone: the clients, the feed, the API, PostgreSQL and Redis share the machine's
cores, and outside the write-latency placements every figure includes the clients' own
work. Changing a process back from ``SCHED_IDLE`` needs CAP_SYS_NICE (root) or a
RLIMIT_NICE of 20; pinning needs 2 CPUs.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import http.client
import json
import multiprocessing as mp
import os
import resource
import secrets
import sys
import tempfile
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.benchmarks.harness import (  # noqa: E402
    CpuMeter,
    WharfProcesses,
    cpu_seconds,
    free_port,
    log,
    pct,
    postgres_of,
    proc_table,
    status_kib,
)

PASSWORD = "correct horse battery staple"


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# -- the client processes ----------------------------------------------------------------------
class Client:
    """One client process's connections (asyncio, ``websockets``), driven by commands over
    a pipe: ``connect`` [(url, hot)], ``stats`` (the tree.changed receipts of the hot
    connections since the last call: {cursor: [count, last time]}), ``open``, ``close``."""

    def __init__(self, pipe: Any, handshakes: int):
        self.pipe = pipe
        self.gate = asyncio.Semaphore(handshakes)
        self.sockets: list[Any] = []
        self.tasks: set[asyncio.Task[Any]] = set()
        self.readers: set[asyncio.Task[None]] = set()
        self.received: dict[str, list[float]] = {}
        self.closed = Counter[str]()
        self.done = asyncio.get_running_loop().create_future()

    async def _open(self, url: str, hot: bool, errors: Counter[str]) -> bool:
        from websockets.asyncio.client import connect
        async with self.gate:
            try:
                ws = await connect(url, ping_interval=None, open_timeout=60,
                                   max_queue=64, compression=None)
                first = json.loads(await asyncio.wait_for(ws.recv(), 60))
            except Exception as exc:
                errors[type(exc).__name__ + ": " + str(exc)[:80]] += 1
                return False
        if first.get("type") != "ready":
            errors[f"first message {first.get('type')}"] += 1
        self.sockets.append(ws)
        task = asyncio.get_running_loop().create_task(self._read(ws, hot))
        self.readers.add(task)
        task.add_done_callback(self.readers.discard)
        return True

    async def _read(self, ws: Any, hot: bool) -> None:
        try:
            async for message in ws:
                now = time.time()
                if hot:
                    event = json.loads(message)
                    if event.get("type") == "tree.changed":
                        seen = self.received.setdefault(event["cursor"], [0, 0.0])
                        seen[0] += 1
                        seen[1] = max(seen[1], now)
        except Exception as exc:
            self.closed[type(exc).__name__] += 1
            return
        self.closed[f"closed {ws.close_code}"] += 1

    async def command(self, cmd: str, arg: Any) -> Any:
        if cmd == "connect":
            errors: Counter[str] = Counter()
            t0 = time.perf_counter()
            ok = await asyncio.gather(*(self._open(url, hot, errors) for url, hot in arg))
            # the connections live to the end: out of this process's full collections,
            # which would otherwise stop its readers (and the figures) for up to a second
            gc.collect()
            gc.freeze()
            return {"ok": sum(ok), "errors": dict(errors), "seconds": time.perf_counter() - t0}
        if cmd == "stats":
            out, self.received = self.received, {}
            return out
        if cmd == "open":
            return {"open": len(self.readers), "closed": dict(self.closed)}
        if cmd == "close":
            await asyncio.gather(*(ws.close() for ws in self.sockets), return_exceptions=True)
            self.sockets = []
            self.done.set_result(None)
            return {"closed": dict(self.closed)}
        raise ValueError(cmd)

    def on_command(self) -> None:
        cmd, arg = self.pipe.recv()
        task = asyncio.get_running_loop().create_task(self.command(cmd, arg))
        task.add_done_callback(lambda t: self.pipe.send(t.result() if not t.exception()
                                                        else {"error": repr(t.exception())}))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


def client_main(pipe: Any, handshakes: int) -> None:
    raise_fd_limit()

    async def run() -> None:
        client = Client(pipe, handshakes)
        asyncio.get_running_loop().add_reader(pipe.fileno(), client.on_command)
        pipe.send({"ready": os.getpid()})
        await client.done
    asyncio.run(run())


class Clients:
    """The client processes, a command to all of them at once."""

    def __init__(self, n: int, handshakes: int):
        ctx = mp.get_context("spawn")
        self.pipes, self.procs = [], []
        for _ in range(n):
            mine, theirs = ctx.Pipe()
            p = ctx.Process(target=client_main, args=(theirs, max(1, handshakes // n)),
                            daemon=True)
            p.start()
            self.pipes.append(mine)
            self.procs.append(p)
        self.pids = [pipe.recv()["ready"] for pipe in self.pipes]

    def all(self, cmd: str, args: list[Any] | None = None) -> list[Any]:
        for i, pipe in enumerate(self.pipes):
            pipe.send((cmd, args[i] if args is not None else None))
        return [pipe.recv() for pipe in self.pipes]

    def connect(self, targets: list[tuple[str, bool]]) -> tuple[int, dict[str, int], float]:
        n = len(self.pipes)
        got = self.all("connect", [targets[i::n] for i in range(n)])
        errors: Counter[str] = Counter()
        for g in got:
            errors.update(g.get("errors", {}))
            if "error" in g:
                errors[g["error"]] += 1
        return (sum(g.get("ok", 0) for g in got), dict(errors),
                max(g.get("seconds", 0.0) for g in got))

    def stats(self) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for part in self.all("stats"):
            for cursor, (count, last) in part.items():
                seen = out.setdefault(cursor, [0, 0.0])
                seen[0] += count
                seen[1] = max(seen[1], last)
        return out

    def open_count(self) -> tuple[int, dict[str, int]]:
        got = self.all("open")
        closed: Counter[str] = Counter()
        for g in got:
            closed.update(g["closed"])
        return sum(g["open"] for g in got), dict(closed)

    def close(self) -> None:
        try:
            self.all("close")
        except (EOFError, OSError):
            pass
        for p in self.procs:
            p.join(30)
            if p.is_alive():
                p.kill()


# -- the API -----------------------------------------------------------------------------------
class Api:
    def __init__(self, port: int, token: str | None = None):
        self.port = port
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def request(self, method: str, path: str, body: Any = None,
                headers: dict[str, str] | None = None) -> tuple[int, Any, Any]:
        data = json.dumps(body).encode() if body is not None else None
        self.conn.request(method, path, data, {**self.headers, **(headers or {})})
        resp = self.conn.getresponse()
        raw = resp.read()
        return resp.status, resp, json.loads(raw) if raw else None

    def node(self, space_id: str, name: str) -> tuple[float, float, float]:
        """POST /api/nodes: (seconds, wall time sent, wall time returned)."""
        sent = time.time()
        t0 = time.perf_counter()
        st, _, body = self.request("POST", "/api/nodes", {"space_id": space_id, "name": name})
        elapsed = time.perf_counter() - t0
        if st != 201:
            raise RuntimeError(f"POST /api/nodes: {st} {body}")
        return elapsed, sent, time.time()


def owner(port: int) -> tuple[str, str, str]:
    """The user ``bench`` and its API token; its spaces ``hot`` and ``idle``."""
    api = Api(port)
    st, _, body = api.request("POST", "/api/users", {"username": "bench", "password": PASSWORD})
    assert st == 201, (st, body)
    st, resp, body = api.request("POST", "/api/login-sessions",
                                 {"username": "bench", "password": PASSWORD})
    assert st == 201, (st, body)
    cookie = resp.getheader("Set-Cookie").split(";", 1)[0]
    st, _, body = api.request("POST", "/api/api-tokens",
                              {"name": "bench", "scopes": ["read", "write"]},
                              headers={"Cookie": cookie})
    assert st == 201, (st, body)
    token = body["token"]
    api = Api(port, token)
    spaces = []
    for name in ("hot", "idle"):
        st, _, body = api.request("POST", "/api/spaces", {"name": name})
        assert st == 201, (st, body)
        spaces.append(body["id"])
    return token, spaces[0], spaces[1]


def listeners(db_url: str, n: int, spaces: list[str]) -> list[tuple[str, str]]:
    """``n`` users, members (viewers) of ``spaces``, each with a login session:
    [(user id, session id)]."""
    from sqlalchemy import create_engine, insert

    from storage.models import LoginSession, SpaceMember, User
    from wharf.infra.clock import utcnow
    from wharf.infra.ids import new_id
    now = utcnow()
    users = [(new_id(), new_id()) for _ in range(n)]
    engine = create_engine(db_url)
    with engine.begin() as c:
        c.execute(insert(User), [{"id": u, "username": f"listener{i:05d}",
                                  "username_key": f"listener{i:05d}", "created_at": now,
                                  "status": "active"} for i, (u, _) in enumerate(users)])
        c.execute(insert(LoginSession), [
            {"id": s, "user_id": u, "secret_hash": secrets.token_hex(32), "created_at": now,
             "expires_at": now + timedelta(days=1)} for u, s in users])
        c.execute(insert(SpaceMember), [
            {"space_id": sp, "user_id": u, "role": "viewer", "created_at": now,
             "updated_at": now} for sp in spaces for u, _ in users])
    engine.dispose()
    return users


def mint(engine: Any, holders: list[tuple[str, str]]) -> list[str]:
    """One feed ticket per (user, session), as ``wharf.feed.tickets.issue`` stores it."""
    from sqlalchemy import insert

    from storage.models import FeedTicket
    from wharf.feed import tickets
    from wharf.infra.clock import utcnow
    out = [secrets.token_urlsafe(32) for _ in holders]
    expires = utcnow() + timedelta(seconds=tickets.TTL)
    with engine.begin() as c:
        c.execute(insert(FeedTicket), [
            {"digest": tickets._digest(t), "user_id": u, "session_id": s, "token_id": None,
             "expires_at": expires} for t, (u, s) in zip(out, holders, strict=True)])
    return out


# -- the measurements --------------------------------------------------------------------------
PLACEMENTS = ("shared", "pinned", "clients-idle", "feed-idle")
WARM = 5  # writes before each batch, not timed


def threads(roots: list[int]) -> list[int]:
    """Every thread of the process trees ``roots``."""
    kids: dict[int, list[int]] = {}
    for pid, (ppid, *_) in proc_table().items():
        kids.setdefault(ppid, []).append(pid)
    todo, out = list(roots), []
    while todo:
        pid = todo.pop()
        try:
            out += [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            continue
        todo += kids.get(pid, [])
    return out


def settle(roots: list[int], cpus: set[int], idle: bool) -> None:
    """Every thread of ``roots``' trees on ``cpus``, ``SCHED_IDLE`` or back to normal."""
    policy = os.SCHED_IDLE if idle else os.SCHED_OTHER
    for tid in threads(roots):
        try:
            os.sched_setaffinity(tid, cpus)
            os.sched_setscheduler(tid, policy, os.sched_param(0))
        except ProcessLookupError:
            pass


class Placement:
    """Where the API, the feed and the client processes run (see the module's docstring)."""

    def __init__(self, api: int):
        self.api, self.feed, self.clients = api, 0, list[int]()
        self.cpus = sorted(os.sched_getaffinity(0))

    def apply(self, name: str) -> None:
        every = set(self.cpus)
        if name == "pinned" and len(every) < 2:
            raise SystemExit("--placements pinned needs 2 CPUs")
        pinned = name == "pinned"
        settle([self.api], {self.cpus[0]} if pinned else every, idle=False)
        rest = set(self.cpus[1:]) if pinned else every
        if self.feed:
            settle([self.feed], rest, idle=name == "feed-idle")
        if self.clients:
            settle(self.clients, rest, idle=name in ("clients-idle", "feed-idle"))


class Batches:
    """The write batches of one state ("off1", "on", "off2"): per placement, the latencies
    and the CPU seconds per group (api, postgres, redis, feed, clients, other processes)
    over its timed writes; the drain after each "on" batch."""

    def __init__(self, api: Api, space: str, place: Placement, databases: list[str]):
        self.api, self.space, self.place, self.databases = api, space, place, databases
        self.results: dict[str, dict[str, dict[str, Any]]] = {}

    def run(self, state: str, placements: list[str], rounds: int, writes: int,
            clients: Clients | None = None, expect: int = 0) -> None:
        per = max(1, writes // rounds)
        out = self.results.setdefault(state, {})
        for r in range(rounds):
            order = placements[r % len(placements):] + placements[:r % len(placements)]
            for name in order:
                self.place.apply(name)
                time.sleep(0.2)
                if clients is not None:
                    clients.stats()
                for i in range(WARM):
                    self.api.node(self.space, f"warm-{state}-{name}-{r}-{i}")
                roots = {"api": self.place.api}
                if self.place.feed:
                    roots["feed"] = self.place.feed
                roots.update({f"client {i}": pid for i, pid in enumerate(self.place.clients)})
                meter = CpuMeter(roots, names={"redis": ("redis-server",)},
                                 select={"postgres": postgres_of(self.databases)},
                                 this_process="benchmark")
                meter.start()
                lat = [self.api.node(self.space, f"{state}-{name}-{r}-{i:05d}")[0]
                       for i in range(per)]
                got = meter.stop()
                res = out.setdefault(name, {"lat": [], "cpu": Counter[str](), "drain": []})
                res["lat"] += lat
                for group, secs in got["groups"].items():
                    key = "clients" if group.startswith("client ") else group
                    res["cpu"][key] += secs
                if clients is not None:
                    res["drain"].append(drained(clients, per + WARM, expect))
        self.place.apply("shared")
        for name in placements:
            res = out[name]
            cpu = {k: v / len(res["lat"]) * 1000 for k, v in res["cpu"].items()}
            extra = "".join(f", {k} {cpu.get(k, 0):.1f}" for k in ("feed", "clients")
                            if k in cpu)
            log(f"writes {state} {name}: p50 {ms(res['lat'], 50)} p99 {ms(res['lat'], 99)} ms;"
                f" CPU-ms per write: api {cpu.get('api', 0):.2f}, postgres "
                f"{cpu.get('postgres', 0):.2f}, redis {cpu.get('redis', 0):.2f}{extra}, "
                f"other {cpu.get('other processes', 0):.1f}"
                + (f"; drained {[f'{n}:{s:.1f}s' for n, s in res['drain']]}"
                   if res["drain"] else ""))


def fanout(api: Api, clients: Clients, feed: int, space: str, events: int, expect: int,
           label: str) -> tuple[list[float], list[float], int, float, float]:
    """(cursor → last receipt, POST return → last receipt) per event, in seconds; how
    many events did not reach every subscriber within 10 s; the CPU seconds per event of
    the feed process and of the clients."""
    clients.stats()
    from_cursor, from_return, short = [], [], 0
    cpu0 = cpu_seconds(feed), sum(cpu_seconds(p) for p in clients.pids)
    for i in range(events):
        _, _, returned = api.node(space, f"fan-{label}-{i:03d}")
        deadline = time.monotonic() + 10
        seen: dict[str, list[float]] = {}
        while True:
            for cursor, (count, last) in clients.stats().items():
                got = seen.setdefault(cursor, [0, 0.0])
                got[0] += count
                got[1] = max(got[1], last)
            if seen and max(c for c, _ in seen.values()) >= expect:
                break
            if time.monotonic() > deadline:
                short += 1
                break
            time.sleep(0.005)
        for cursor, (count, last) in seen.items():
            if count >= expect:
                from_cursor.append(last - int(cursor.split("-")[0]) / 1000)
                from_return.append(last - returned)
        time.sleep(0.05)
    cpu = (cpu_seconds(feed) - cpu0[0]) / events, \
        (sum(cpu_seconds(p) for p in clients.pids) - cpu0[1]) / events
    return from_cursor, from_return, short, *cpu


def drained(clients: Clients, events: int, expect: int,
            timeout: float = 120.0) -> tuple[int, float]:
    """After a batch of ``events`` writes: wait until each reached the ``expect``
    subscribers; (how many did, seconds from now to the last one's last receipt)."""
    t0 = time.time()
    seen: dict[str, list[float]] = {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for cursor, (count, last) in clients.stats().items():
            got = seen.setdefault(cursor, [0, 0.0])
            got[0] += count
            got[1] = max(got[1], last)
        if sum(1 for c, _ in seen.values() if c >= expect) >= events:
            break
        time.sleep(0.1)
    full = [last for c, last in seen.values() if c >= expect]
    return len(full), max(0.0, max(full, default=t0) - t0)


def ms(values: list[float], p: float) -> str:
    return f"{pct(values, p) * 1000:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--connections", type=int, default=10_000)
    ap.add_argument("--users", type=int, default=1000, help="subscribers of the hot space")
    ap.add_argument("--events", type=int, default=50)
    ap.add_argument("--writes", type=int, default=300,
                    help="writes per placement and state, over all rounds")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--placements", default=",".join(PLACEMENTS),
                    help=f"comma-separated, of {', '.join(PLACEMENTS)}")
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--handshakes", type=int, default=16)
    ap.add_argument("--idle", type=float, default=30.0)
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = ap.parse_args()
    placements = [p.strip() for p in args.placements.split(",") if p.strip()]
    if not placements or set(placements) - set(PLACEMENTS):
        ap.error(f"--placements: of {', '.join(PLACEMENTS)}")
    fds = raise_fd_limit()
    log(f"fd limit {fds}; cores {os.cpu_count()}")
    import redis
    from sqlalchemy import create_engine

    from tests.support.processes import throwaway_databases
    namespace = f"wharf-bench-feed-{os.getpid()}"
    r = redis.Redis.from_url(args.redis_url)
    results: dict[str, Any] = {}
    with throwaway_databases("wharf_bench_feed") as urls, \
            tempfile.TemporaryDirectory(prefix="bench-feed-") as tmp:
        assert urls is not None, "PostgreSQL is unreachable"
        product_url, units_url = urls
        api_port, feed_port = free_port(), free_port()
        procs = WharfProcesses(Path(tmp), {
            "WHARF_DATA_DIR": str(Path(tmp) / "data"), "WHARF_DATABASE_URL": product_url,
            "WHARF_UNITSTORE_URL": units_url, "WHARF_BROKER_URL": args.redis_url,
            "WHARF_BROKER_NAMESPACE": namespace, "WHARF_FEED_REDIS_URL": args.redis_url,
            "WHARF_ARGON2_TIME_COST": "1", "WHARF_ARGON2_MEMORY_COST": "8",
            "WHARF_ARGON2_PARALLELISM": "1", "WHARF_LOG_LEVEL": "WARNING",
            "WHARF_HOST": "127.0.0.1", "WHARF_PORT": str(api_port)})
        clients: Clients | None = None
        engine = create_engine(product_url)
        try:
            api_proc = procs.start("wharf api", "api", "--workers", "1")
            procs.wait_http(api_port, "/readyz")
            token, hot, idle = owner(api_port)
            t0 = time.perf_counter()
            users = listeners(product_url, args.users, [hot, idle])
            log(f"setup: {args.users} listeners in {time.perf_counter() - t0:.1f}s")
            api = Api(api_port, token)

            from sqlalchemy.engine import make_url
            place = Placement(api_proc.pid)
            batches = Batches(api, hot, place, [str(make_url(u).database)
                                                for u in (product_url, units_url)])
            for i in range(20):  # the API's first requests (its pools, caches): not timed
                api.node(hot, f"warm-{i}")
            batches.run("off1", placements, args.rounds, args.writes)

            feed = procs.start("wharf feed", "feed", "--port", str(feed_port))
            procs.wait_http(feed_port, "/healthz")
            place.feed = feed.pid
            time.sleep(2)
            rss = {"started": status_kib(feed.pid, "VmRSS")}
            clients = Clients(args.clients, args.handshakes)
            place.clients = clients.pids
            base = f"ws://127.0.0.1:{feed_port}/api/feed?ticket="
            ok, errors, secs = clients.connect(
                [(f"{base}{t}&spaces={hot}", True) for t in mint(engine, users)])
            rss["hot"] = status_kib(feed.pid, "VmRSS")
            log(f"{ok} hot subscribers in {secs:.1f}s {errors or ''}; feed RSS "
                f"{rss['hot'] / 1024:.0f} MiB")
            expect = ok

            fan1 = fanout(api, clients, feed.pid, hot, args.events, expect, "1k")
            log(f"fan-out to {expect}: cursor→last p50 {ms(fan1[0], 50)} p99 "
                f"{ms(fan1[0], 99)} ms; return→last p50 {ms(fan1[1], 50)} p99 "
                f"{ms(fan1[1], 99)} ms; short {fan1[2]}; CPU per event: feed "
                f"{fan1[3] * 1000:.0f} ms, clients {fan1[4] * 1000:.0f} ms")

            batches.run("on", placements, args.rounds, args.writes, clients, expect)

            total, more, idle_secs = ok, 0, 0.0
            per_user = max(1, (args.connections - ok + len(users) - 1) // len(users))
            for round_ in range(per_user):
                want = min(len(users), args.connections - total)
                if want <= 0:
                    break
                got, errors, secs = clients.connect(
                    [(f"{base}{t}&spaces={idle}", False)
                     for t in mint(engine, users[:want])])
                total += got
                more += got
                idle_secs += secs
                if errors:
                    log(f"  round {round_ + 1}: {errors}")
            open_, closed = clients.open_count()
            rss["all"] = status_kib(feed.pid, "VmRSS")
            log(f"{more} idle connections in {idle_secs:.1f}s: {open_} open {closed or ''}; "
                f"feed RSS {rss['all'] / 1024:.0f} MiB")
            fan2 = fanout(api, clients, feed.pid, hot, args.events, expect, "10k")
            log(f"fan-out to {expect} of {open_}: cursor→last p50 {ms(fan2[0], 50)} p99 "
                f"{ms(fan2[0], 99)} ms; return→last p50 {ms(fan2[1], 50)} p99 "
                f"{ms(fan2[1], 99)} ms; short {fan2[2]}; CPU per event: feed "
                f"{fan2[3] * 1000:.0f} ms, clients {fan2[4] * 1000:.0f} ms")
            cpu0 = cpu_seconds(feed.pid), sum(cpu_seconds(p) for p in clients.pids)
            time.sleep(args.idle)
            idle_cpu = ((cpu_seconds(feed.pid) - cpu0[0]) / args.idle,
                        (sum(cpu_seconds(p) for p in clients.pids) - cpu0[1]) / args.idle)
            open_after, closed = clients.open_count()
            rss["idle"] = status_kib(feed.pid, "VmRSS")
            rss["hwm"] = status_kib(feed.pid, "VmHWM")
            log(f"after {args.idle:.0f}s idle: {open_after} open {closed or ''}; feed RSS "
                f"{rss['idle'] / 1024:.0f} MiB (peak {rss['hwm'] / 1024:.0f} MiB); CPU while idle: "
                f"feed {idle_cpu[0]:.3f} cores, clients {idle_cpu[1]:.3f} cores")
            clients.close()
            clients = None
            place.clients = []
            feed.terminate()
            feed.wait(60)
            place.feed = 0

            batches.run("off2", placements, args.rounds, args.writes)
            results = {"rss": rss, "open": open_, "open_after": open_after, "fan1": fan1,
                       "fan2": fan2, "expect": expect, "idle_cpu": idle_cpu,
                       "writes": batches.results, "placements": placements,
                       "load": os.getloadavg()}
        finally:
            if clients is not None:
                clients.close()
            procs.stop_all()
            engine.dispose()
            keys = list(r.scan_iter(match=f"{namespace}:*", count=1000))
            if keys:
                r.delete(*keys)
            log(f"deleted {len(keys)} Redis keys of {namespace}")
    report(results, args)
    return 0


def report(res: dict[str, Any], args: argparse.Namespace) -> None:
    rss = res["rss"]
    mib = {k: v / 1024 for k, v in rss.items()}
    print(f"\nidle connections: {res['open']} open on one feed process "
          f"({res['open_after']} after {args.idle:.0f}s idle)")
    print(f"  feed RSS: started {mib['started']:.0f} MiB, {res['expect']} subscribers "
          f"{mib['hot']:.0f} MiB, {res['open']} connections {mib['all']:.0f} MiB, after "
          f"idle {mib['idle']:.0f} MiB, peak {mib['hwm']:.0f} MiB; per connection "
          f"{(rss['all'] - rss['started']) / max(1, res['open']):.1f} KiB (goal < 1 GiB)")
    for label, (cur, ret, short, feed_cpu, client_cpu) in (
            (f"{res['expect']} open", res["fan1"]), (f"{res['open']} open", res["fan2"])):
        print(f"fan-out to {res['expect']} ({label}), {len(cur)} events: commit (cursor) → "
              f"last delivery p50 {ms(cur, 50)} ms, p99 {ms(cur, 99)} ms, max "
              f"{max(cur) * 1000:.1f} ms; POST return → last p50 {ms(ret, 50)} ms, p99 "
              f"{ms(ret, 99)} ms; {short} short; CPU per event: feed {feed_cpu * 1000:.0f} ms, "
              f"clients {client_cpu * 1000:.0f} ms (goal p99 <= 100 ms)")
    print(f"idle: feed {res['idle_cpu'][0]:.3f} cores, clients {res['idle_cpu'][1]:.3f} cores "
          f"with {res['open_after']} connections open")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in res['load'])}")
    w = res["writes"]
    print("write latency, POST /api/nodes (ms) and CPU-ms per write, per placement; "
          "on ÷ off against both off batches:")
    for name in res["placements"]:
        lat = {state: w[state][name]["lat"] for state in ("off1", "on", "off2")}
        cpu = {state: {k: v / len(lat[state]) * 1000 for k, v in w[state][name]["cpu"].items()}
               for state in lat}
        off = lat["off1"] + lat["off2"]
        api_off = (cpu["off1"]["api"] * len(lat["off1"]) + cpu["off2"]["api"]
                   * len(lat["off2"])) / len(off)
        pg_off = (cpu["off1"]["postgres"] * len(lat["off1"]) + cpu["off2"]["postgres"]
                  * len(lat["off2"])) / len(off)
        drains = w["on"][name]["drain"]
        print(f"  {name}: p50 / p99 off {ms(lat['off1'], 50)} / {ms(lat['off1'], 99)}, on "
              f"{ms(lat['on'], 50)} / {ms(lat['on'], 99)}, off {ms(lat['off2'], 50)} / "
              f"{ms(lat['off2'], 99)} (n={len(lat['on'])} each); on ÷ off p50 "
              f"{pct(lat['on'], 50) / pct(off, 50):.2f}, p99 "
              f"{pct(lat['on'], 99) / pct(off, 99):.2f}")
        print(f"    API CPU-ms per write: off {cpu['off1']['api']:.2f} / on "
              f"{cpu['on']['api']:.2f} / off {cpu['off2']['api']:.2f}, on ÷ off "
              f"{cpu['on']['api'] / api_off:.2f}; PostgreSQL (the run's databases, the "
              f"feed's reads included) off {pg_off:.2f} / on {cpu['on']['postgres']:.2f}; "
              f"Redis off {cpu['off1']['redis']:.2f} / on {cpu['on']['redis']:.2f}; "
              f"in the 'on' batches feed {cpu['on'].get('feed', 0):.1f}, clients "
              f"{cpu['on'].get('clients', 0):.1f}, benchmark {cpu['on']['benchmark']:.2f}, "
              f"other processes {cpu['on']['other processes']:.1f}")
        print(f"    'on' batches drained: {sum(n for n, _ in drains)} events reached all "
              f"{res['expect']} subscribers, the last of a batch at most "
              f"{max((s for _, s in drains), default=0):.1f}s after its last write")


if __name__ == "__main__":
    sys.exit(main())
